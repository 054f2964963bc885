"""`paperbot run` on Discord: register `/paper`, take interactions, run the scheduler.

With DISCORD_PUBLIC_KEY set, Discord's interactions come to PORT at /discord/interactions, served
by the neutral door's waitress server (bot.web.http_door) behind DiscordDoor (signature, replay,
shape). Without it, over the Gateway (bot.discord.gateway): no public URL needed.
"""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable

from apscheduler.triggers.interval import IntervalTrigger

from bot.delivery import outbox
from bot.delivery.sending import Rejected, Uncertain
from bot.discord import definition, rest
from bot.discord.app import DiscordBot
from bot.discord.door import DiscordDoor
from bot.discord.events import MeetingEvents, discord_groups
from bot.discord.gateway import Gateway
from bot.discord.hosted import SERVERS_SECONDS, HostedDiscord
from bot.discord.rest import Rest
from bot.discord.settings import DiscordSettings
from bot.runtime import scheduler
from bot.runtime.hosting import EveryPlace
from bot.store import liveness
from bot.store.connection import Store
from bot.store.engine import shown
from bot.web import feeds, http_door
from bot.web.http_door import Refused, ReplayWindow, StartError, arrival, refuse

log = logging.getLogger(__name__)

INTERACTIONS_PATH = "/discord/interactions"
STOP_SECONDS = 5.0


def require_settings(settings: DiscordSettings) -> None:
    if settings.hosted:  # every server that adds the bot: each starts its groups in chat
        settings.require("DISCORD_TOKEN")
        return
    settings.require("DISCORD_TOKEN", "PAPERBOT_CHANNEL")


def wsgi(bot: DiscordBot | HostedDiscord, public_key: str):
    door = DiscordDoor(public_key, ReplayWindow(store=bot.store))

    def application(environ, start_response):
        path = environ.get("PATH_INFO")
        if path == "/healthz":
            return http_door.healthz(start_response, bot.store)
        if path != INTERACTIONS_PATH:
            return refuse(environ, start_response, Refused(404, "no such route"))
        if environ.get("REQUEST_METHOD") != "POST":
            return refuse(environ, start_response, Refused(400, "that is not a POST"))
        try:
            interaction = door.admit(environ)
        except Refused as refusal:
            return refuse(environ, start_response, refusal)
        try:
            response = bot.handle(interaction, arrival(environ))
        except Exception as e:  # never a 500: one line, and Discord tells the user it failed
            why = " ".join(f"{type(e).__name__}: {e}".split())[:200]
            return refuse(environ, start_response, Refused(400, f"that the bot failed on ({why})"))
        data = json.dumps(response).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]

    return application


def add_events_check(
    jobs, store: Store, bot: DiscordBot, settings: DiscordSettings, *, env_on_discord: bool = True
) -> None:
    """DISCORD_EVENTS=1: the scheduler's checks keep the server's events in step with the groups' schedules."""

    assert settings.guild is not None  # DISCORD_EVENTS=1 needs DISCORD_GUILD (the settings' check)
    groups_now = functools.partial(discord_groups, store, settings, env_on_discord=env_on_discord)  # at each check
    events = MeetingEvents(
        store, bot.rest, settings.guild, groups_now, ask=feeds.names_of(settings), wake=bot.wake_outbox
    )
    every = IntervalTrigger(seconds=scheduler.CHECK_SECONDS, timezone=settings.timezone)
    jobs.add_job(
        lambda: events.check(settings.now()), every, id="discord-events", name="Discord events",
        next_run_time=settings.now(),
    )  # fmt: skip


def register(bot: DiscordBot, settings: DiscordSettings) -> None:
    """Who the application is, then `/paper` by bulk overwrite (in DISCORD_GUILD, else globally);
    StartError, in one line, when Discord refuses or does not answer."""
    bot.app_id = registered(bot.rest, settings)


def registered(rest: Rest, settings: DiscordSettings) -> str:
    """The application's id, once `/paper` is registered: in DISCORD_GUILD, else globally; a hosted install's
    globally, and none in DISCORD_GUILD (where a one-server install had it: it would show twice there)."""
    try:
        app_id = rest.application(timeout=10)["id"]
        if settings.hosted:
            rest.register(app_id, definition.definition(), None, timeout=10)
            if settings.guild:
                rest.register(app_id, [], settings.guild, timeout=10)
        else:
            rest.register(app_id, definition.definition(), settings.guild or None, timeout=10)
    except Rejected as e:
        if e.code in ("0", "401"):
            raise StartError(f"DISCORD_TOKEN: Discord refused it ({e})") from None
        raise StartError(f"cannot start: Discord refused registering /paper at {settings.api_url} ({e})") from None
    except Uncertain as e:
        raise StartError(f"cannot start: Discord did not answer at {settings.api_url} ({e})") from None
    one_server = settings.guild and not settings.hosted
    where = f"in server {settings.guild}" if one_server else "globally (it may take up to an hour to show)"
    log.info("registered /paper %s; invite the bot with %s", where, definition.invite_url(app_id))
    return app_id


#: How long `run` waits for the Gateway's READY before it says it cannot connect.
READY_SECONDS = 30.0


#: How often a process without the Gateway asks for it: it takes a dead holder's over within this.
GATEWAY_ASK_SECONDS = 10.0
#: How often the holder makes sure it still holds it (a restarted database lost every lock).
GATEWAY_CHECK_SECONDS = 5.0
GATEWAY_WORK = "discord gateway"


def _gateway_turn(store: Store, jobs, stop: threading.Event) -> liveness.Held | None:
    """The Gateway for this process, once no other holds it (replicas: Discord would send each
    interaction to one of their sessions, and a session too many counts against the bot's limits);
    meanwhile the scheduler runs. None when `stop` came first."""
    waiting = False
    while True:
        try:
            held = liveness.take(store, GATEWAY_WORK)
        except sqlite3.Error as e:  # the database away: asked again in a moment
            log.warning("cannot ask whether another process holds Discord's Gateway: %s", e)
            held = None
        if held is not None:
            if waiting:
                log.info("took Discord's Gateway over")
            return held
        if not waiting:
            log.info("another process holds Discord's Gateway: this one posts, and takes it over when that one stops")
            waiting = True
            jobs.start()
        if stop.wait(GATEWAY_ASK_SECONDS):
            return None


def serve_gateway(bot: DiscordBot, settings: DiscordSettings, stop: threading.Event, jobs) -> None:
    """Interactions over the Gateway until `stop`, held by one process at a time; the scheduler starts
    once the session is ready (or while another process holds it)."""
    gateway = Gateway(bot.rest, settings.token or "", bot.from_gateway, stop)
    _serve_gateway(gateway, bot.store, settings, stop, jobs, lambda: bot.later(bot.check_channel))


def _serve_gateway(  # noqa: PLR0913 - the session, where it is held, and what starts with it
    gateway: Gateway,
    store: Store,
    settings: DiscordSettings,
    stop: threading.Event,
    jobs,
    started: Callable[[], object],
) -> None:
    assert settings.token is not None  # require_settings checked it
    held = _gateway_turn(store, jobs, stop)
    if held is None:
        return
    thread = threading.Thread(target=gateway.run, name="paperbot-gateway-reader", daemon=True)
    thread.start()
    try:
        if not gateway.ready.wait(READY_SECONDS) and not stop.is_set():
            raise StartError(f"cannot connect to the Discord Gateway (asked of {settings.api_url}/gateway/bot)")
        if gateway.fatal:
            raise StartError(gateway.fatal)
        if stop.is_set():
            return
        if not jobs.running:
            jobs.start()
        started()
        log.info(
            "serving Discord interactions over the Gateway; database %s, %s",
            shown(settings.db_path),
            _what_is_posted(settings),
        )
        checked = time.monotonic()
        while not stop.wait(0.5):
            if gateway.fatal:  # refused for good while running: say so and stop
                log.error("%s; stopping", gateway.fatal)
                break
            if time.monotonic() - checked > GATEWAY_CHECK_SECONDS:
                checked = time.monotonic()
                if not held.still_held():
                    held = _taken_again(store, held)
                    if held is None:
                        break
    finally:
        stop.set()
        gateway.close()
        thread.join(3.0)
        if held is not None:
            held.release()


def _taken_again(store: Store, lost: liveness.Held) -> liveness.Held | None:
    """The Gateway's lock taken again after it was lost (the database restarted); None, and said,
    when another process took it meanwhile: this one stops, for its supervisor to start it again."""
    lost.release()
    try:
        held = liveness.take(store, GATEWAY_WORK)
    except sqlite3.Error:
        return lost  # the database still away: nobody else can take it either; asked again soon
    if held is None:
        log.error("another process took Discord's Gateway over while the database was away; stopping")
    return held


def _what_is_posted(settings: DiscordSettings) -> str:
    said = f"weekly post to {settings.channel} at {settings.schedule.expr!r} in {settings.timezone.key}"
    if not settings.hosted:
        return said
    own = f"; in the install's own server {settings.guild}, {said}" if settings.guild and settings.channel else ""
    return f"every server that adds the bot a place of its own{own}"


def run(settings: DiscordSettings, store: Store, stop: threading.Event) -> int:
    http_door.warn_of_schedule(settings, store, log)
    if settings.hosted:
        return run_hosted(settings, store, stop)
    bot = DiscordBot(settings, store)
    jobs = checks = stop_feeds = None
    try:
        register(bot, settings)
        outbox.due_now(store)
        checks = scheduler.ScheduledChecks(
            store, settings, bot.transport, tell_admins=bot.tell_admins, stop=stop, outbox=bot.wake_outbox
        )
        jobs = scheduler.create(checks, settings)
        if settings.events:
            add_events_check(jobs, store, bot, settings)
        calendars = feeds.serve(settings, store)
        if not settings.public_key:
            stop_feeds = feeds.beside_connection(calendars, settings.port, log)
            serve_gateway(bot, settings, stop, jobs)
            return 0
        application = wsgi(bot, settings.public_key)
        if calendars is not None:
            application = feeds.around(application, calendars)
        server = http_door.listen(application, settings.port)
        jobs.start()
        bot.later(bot.check_channel)
        log.info(
            "serving Discord interactions on http://0.0.0.0:%s%s; database %s, %s",
            settings.port,
            INTERACTIONS_PATH,
            shown(settings.db_path),
            _what_is_posted(settings),
        )
        try:
            server.run()
        finally:
            server.close()
    finally:
        stop.set()
        if stop_feeds is not None:
            stop_feeds()
        if jobs is not None and jobs.running:
            log.info("stopping")
            jobs.shutdown(wait=False)
        deadline = time.monotonic() + STOP_SECONDS
        idle = bot.close(STOP_SECONDS)
        idle = (checks is None or checks.wait_idle(deadline - time.monotonic())) and idle
        if idle:
            store.close()
            rest.shutdown()  # the REST clients' loop thread, once nothing under way can need it
    log.info("stopped")
    return 0


def run_hosted(settings: DiscordSettings, house: Store, stop: threading.Event) -> int:
    """`run` for every server that adds the bot, each a place (bot/discord/hosted.py); DISCORD_GUILD's the
    install's own, on `house`. One scheduler looks at every place's groups on a pool (EveryPlace) and
    lists the bot's servers every SERVERS_SECONDS."""

    def checks_of(bot: DiscordBot) -> scheduler.ScheduledChecks:
        return scheduler.ScheduledChecks(
            bot.store, bot.settings, bot.transport, tell_admins=bot.tell_admins, stop=stop, outbox=bot.wake_outbox
        )

    hosted = HostedDiscord(settings, house, checks_of)
    jobs = checks = stop_pages = None
    try:
        hosted.app_id = registered(hosted.rest, settings)
        if settings.guild:  # the install's own server: its group and tables as a one-server install's
            home = DiscordBot(settings, house, rest=hosted.rest, answers=hosted.answers, background=hosted.background)
            home.app_id = hosted.app_id
            outbox.due_now(house)
            hosted.start_home(home)
        checks = EveryPlace(hosted.checks)
        jobs = scheduler.create(checks, settings)
        if settings.events and hosted.home is not None:
            add_events_check(jobs, house, hosted.home.bot, settings)
        every = IntervalTrigger(seconds=SERVERS_SECONDS, timezone=settings.timezone)
        jobs.add_job(
            hosted.check_servers, every, id="discord-servers", name="Discord servers", next_run_time=settings.now()
        )

        def started() -> None:
            if hosted.home is not None:
                hosted.home.bot.later(hosted.home.bot.check_channel)

        if not settings.public_key:
            if settings.public_url:  # the places' pages beside the Gateway's connection
                stop_pages = http_door.serve_beside(http_door.listen(hosted.around(None), settings.port))
            gateway = Gateway(hosted.rest, settings.token or "", hosted.from_gateway, stop, hosted.guild_event)
            _serve_gateway(gateway, house, settings, stop, jobs, started)
            return 0
        server = http_door.listen(hosted.around(wsgi(hosted, settings.public_key)), settings.port)
        jobs.start()
        started()
        log.info(
            "serving Discord interactions on http://0.0.0.0:%s%s; database %s, %s",
            settings.port,
            INTERACTIONS_PATH,
            shown(settings.db_path),
            _what_is_posted(settings),
        )
        try:
            server.run()
        finally:
            server.close()
    finally:
        stop.set()
        if stop_pages is not None:
            stop_pages()
        if jobs is not None and jobs.running:
            log.info("stopping")
            jobs.shutdown(wait=False)
        if checks is not None:
            checks.shutdown()
        deadline = time.monotonic() + STOP_SECONDS
        idle = hosted.close(STOP_SECONDS)
        idle = (checks is None or checks.wait_idle(deadline - time.monotonic())) and idle
        if idle:
            house.close()
            rest.shutdown()
    log.info("stopped")
    return 0


class Part:
    """Discord's part in a process that serves several platforms (bot/runtime/both_platforms.py): its bot, its
    route (HTTP interactions) or its Gateway session; the process runs one scheduler and one server."""

    name = "discord"

    def __init__(self, settings: DiscordSettings, store: Store, stop: threading.Event):
        self.settings, self.store, self.stop = settings, store, stop
        self.bot = DiscordBot(settings, store)
        self.transport = self.bot.transport
        self.poster = self.bot.outbox.poster
        self.routes: dict = {}
        self._gateway: Gateway | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> bool:
        """Register `/paper`; StartError when Discord refuses."""
        settings = self.settings
        if settings.hosted:
            raise StartError("PAPERBOT_HOSTED: a hosted install serves Discord in a process of its own, not with Slack")
        register(self.bot, settings)
        if settings.public_key:
            self.routes = {INTERACTIONS_PATH: wsgi(self.bot, settings.public_key)}
        return not self.stop.is_set()

    def connect(self) -> bool:
        """The Gateway's session, when DISCORD_PUBLIC_KEY is unset; False when `stop` came first."""
        if self.settings.public_key:
            return True
        assert self.settings.token is not None  # require_settings checked it
        self._gateway = Gateway(self.bot.rest, self.settings.token, self.bot.from_gateway, self.stop)
        self._thread = threading.Thread(target=self._gateway.run, name="paperbot-gateway-reader", daemon=True)
        self._thread.start()
        if not self._gateway.ready.wait(READY_SECONDS) and not self.stop.is_set():
            raise StartError(f"cannot connect to the Discord Gateway (asked of {self.settings.api_url}/gateway/bot)")
        if self._gateway.fatal:
            raise StartError(self._gateway.fatal)
        threading.Thread(target=self._watch, name="paperbot-gateway-watch", daemon=True).start()
        return not self.stop.is_set()

    def _watch(self) -> None:
        """A session refused for good while running is said once; the other platform keeps serving."""
        while not self.stop.wait(0.5):
            if self._gateway is not None and self._gateway.fatal:
                log.error("%s; Discord's interactions stop here, the other platform goes on", self._gateway.fatal)
                return

    def add_jobs(self, jobs, home: bool) -> None:
        if self.settings.events:  # group 1's meetings are Discord events only when it is on Discord
            add_events_check(jobs, self.store, self.bot, self.settings, env_on_discord=home)

    def serving(self) -> str:
        return f"Discord interactions at {INTERACTIONS_PATH}" if self.settings.public_key else "Discord's Gateway"

    def started(self, home: bool) -> None:
        if home:
            self.bot.later(self.bot.check_channel)

    def close(self, timeout: float) -> bool:
        if self._gateway is not None:
            self._gateway.close()
            if self._thread is not None:
                self._thread.join(3.0)
        return self.bot.close(timeout)

    def closed(self) -> None:
        """After the store is closed: the REST clients' loop thread."""
        rest.shutdown()
