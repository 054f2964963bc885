"""`paperbot run`: connect to Slack and serve until SIGTERM or SIGINT.

Socket Mode when SLACK_APP_TOKEN is set; otherwise HTTP on PORT, served by
waitress (a production WSGI server: Bolt's own `app.start()` handles one request
at a time and drops connections under load), with Slack's request URL at
/slack/events. The scheduler runs in the same process.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from slack_bolt import App
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler

from bot.delivery import outbox
from bot.delivery.answer_time import arrived_at
from bot.delivery.sending import Rejected
from bot.runtime import scheduler
from bot.slack.app import SlackBot, build_app
from bot.slack.door import SlackDoor
from bot.slack.settings import SlackSettings
from bot.store.connection import Store
from bot.store.engine import shown
from bot.web import feeds, http_door
from bot.web.http_door import Refused, ReplayWindow, StartError, arrival, refuse

if TYPE_CHECKING:
    from bot.slack.hosted import HostedSlack  # cryptography: imported when a hosted install runs

log = logging.getLogger(__name__)
T = TypeVar("T")

EVENTS_PATH = "/slack/events"
#: What Slack answers for a token it does not take.
TOKEN_REFUSALS = ("invalid_auth", "not_authed", "not_allowed_token_type", "token_revoked", "account_inactive")
#: A stop sends what is due for this long, then leaves what hangs to the next start.
STOP_SECONDS = 5.0


def wsgi(app: App, signing_secret: str, store: Store | None = None) -> Callable:
    """Bolt at /slack/events behind the door (slack.door: signature, replay, shape), and a health
    check at /healthz (whether `store` answers)."""
    answer = bolt_answer(app)
    door = SlackDoor(signing_secret, ReplayWindow(store=store))

    def application(environ, start_response):
        if environ.get("PATH_INFO") == "/healthz":
            return http_door.healthz(start_response, store)
        if environ.get("PATH_INFO") != EVENTS_PATH:
            return refuse(environ, start_response, Refused(404, "no such route"))
        try:
            door.admit(environ)
        except Refused as refusal:
            return refuse(environ, start_response, refusal)
        return answer(environ, start_response)

    return application


def bolt_answer(app: App) -> Callable:
    """Bolt's answer to a request the door let in: a failure of Bolt's in one line and a 400, never a 500."""
    bolt = SlackRequestHandler(app, path=EVENTS_PATH)
    bolt_log = logging.getLogger("bot.slack.bolt")
    if _without_traceback not in bolt_log.filters:
        bolt_log.addFilter(_without_traceback)

    def answer(environ, start_response):
        started: list[str] = []

        def respond(status, headers, *rest):
            started.append(status)
            if status.startswith("5"):  # Bolt failed on something the door let through: said in one line
                log.warning("Bolt answered %s to a request to %s; answered 400", status, environ.get("PATH_INFO"))
                status = "400 Bad Request"
            return start_response(status, headers, *rest)

        try:
            with arrived_at(arrival(environ)):
                return bolt(environ, respond)
        except Exception as e:
            if started:  # the answer has begun: it ends here
                log.warning("Bolt failed while answering %s: %s: %s", environ.get("PATH_INFO"), type(e).__name__, e)
                return [b""]
            why = " ".join(f"{type(e).__name__}: {e}".split())[:200]
            return refuse(environ, start_response, Refused(400, f"that Bolt failed on ({why})"))

    return answer


def hosted_install(
    settings: SlackSettings, house: Store, stop: threading.Event, clock: Callable[[], datetime] | None = None
) -> HostedSlack | None:
    """A hosted install on Slack (bot/slack/hosted.py) as `run` serves it, its own workspace's (SLACK_BOT_TOKEN)
    started, StartError when Slack refuses that token; None when `stop` came first. `clock`: a test's."""
    from bot.slack.hosted import HostedSlack  # noqa: PLC0415 - cryptography: a hosted install's alone

    def checks_of(bot: SlackBot) -> scheduler.ScheduledChecks:
        return scheduler.ScheduledChecks(
            bot.store,
            bot.settings,
            bot.transport,
            clock=bot.clock,
            tell_admins=bot.tell_admins,
            stop=stop,
            outbox=bot.wake_outbox,
        )

    hosted = HostedSlack(settings, house, stop, checks_of, bolt_answer, clock=clock)
    if settings.bot_token:  # the workspace of SLACK_BOT_TOKEN besides: the install's own place
        bot = SlackBot(settings, house, clock=clock)
        app = _started(bot, stop)
        if app is None:
            bot.close(0)
            return None
        outbox.due_now(house)
        hosted.start_home(bot, bolt_answer(app))
    return hosted


def run_hosted(settings: SlackSettings, house: Store, stop: threading.Event) -> int:
    """Serve a hosted install on Slack (bot/slack/hosted.py) until `stop`, or SystemExit unwinds waitress."""
    from bot.runtime.hosting import EveryPlace  # noqa: PLC0415 - a hosted install's alone
    from bot.slack.hosted import INSTALL_PATH, REDIRECT_PATH  # noqa: PLC0415 - cryptography: hosted only

    hosted = hosted_install(settings, house, stop)
    if hosted is None:
        log.info("stopped before Slack answered auth.test")
        return 0
    checks = EveryPlace(hosted.checks)
    jobs = scheduler.create(checks, settings)
    try:
        server = http_door.listen(http_door.Lanes(hosted, hosted.takes_apart), settings.port)
        jobs.start()
        log.info(
            "serving a hosted install on http://0.0.0.0:%s (%s, %s, %s); %d places",
            settings.port,
            INSTALL_PATH,
            REDIRECT_PATH,
            EVENTS_PATH,
            len(hosted.places.active()),
        )
        try:
            server.run()
        finally:
            server.close()
    finally:
        stop.set()  # a post waiting out a rate limit lets go now; the next start takes it up
        if jobs.running:
            jobs.shutdown(wait=False)
        checks.shutdown()
        idle = hosted.close(STOP_SECONDS)  # every place's bot, the install's own workspace's too
        if checks.wait_idle(STOP_SECONDS) and idle:
            hosted.places.close()
            house.close()
        # else a Slack call hangs: its thread still holds a store (see run)
    log.info("stopped")
    return 0


def _without_traceback(record: logging.LogRecord) -> bool:
    """Bolt logs a listener's or middleware's failure with its traceback: the line stays, with the
    error's type and message, and the traceback goes."""
    if record.exc_info and record.exc_info[1] is not None:
        error = record.exc_info[1]
        record.msg = f"{record.getMessage()} ({type(error).__name__}: {' '.join(str(error).split())})"
        record.args = None
        record.exc_info = record.exc_text = None
    return True


def http_server(  # noqa: PLR0913 - the door's limits pass through
    app: App, port: int, signing_secret: str, host: str = "0.0.0.0", *, calendars=None, store=None, **door
):
    """A waitress server for the app (call .run() to serve, .close() to stop), with the door's
    slow-connection defence (http_door.http_server: `door` passes its limits), and the calendars
    and the group's page beside Slack's route when `calendars` (feeds.Feeds) is given; StartError
    when the port cannot be had."""
    application = wsgi(app, signing_secret, store)
    if calendars is not None:
        application = feeds.around(application, calendars)
    return http_door.listen(application, port, host, **door)


def require_settings(settings: SlackSettings) -> None:
    if settings.installs:  # a hosted install: tokens come with each workspace's install, channels with its groups
        settings.require("SLACK_SIGNING_SECRET", "PAPERBOT_SECRET_KEY")
        return
    settings.require("SLACK_BOT_TOKEN", "PAPERBOT_CHANNEL")
    if not settings.socket_mode:
        settings.require("SLACK_SIGNING_SECRET")


def run(settings: SlackSettings, store: Store, stop: threading.Event) -> int:
    """Serve until `stop` is set (Socket Mode) or SystemExit unwinds waitress (HTTP): see cli.cmd_run.

    The caller has checked the settings (require_settings). The scheduler starts only once
    Slack can reach the bot: a `run` that cannot listen or connect ends without having posted anything.
    """
    http_door.warn_of_schedule(settings, store, log)  # a choice the operator may mean, so said, not refused
    if settings.installs:  # a hosted install: every workspace that installs the app
        return run_hosted(settings, store, stop)
    bot = SlackBot(settings, store)
    jobs = checks = stop_feeds = None
    try:
        app = _started(bot, stop)
        if app is None:
            log.info("stopped before Slack answered auth.test")
            return 0
        outbox.due_now(store)
        checks = scheduler.ScheduledChecks(
            store, settings, bot.transport, tell_admins=bot.tell_admins, stop=stop, outbox=bot.wake_outbox
        )
        # Created before it starts, so that a signal that ends start() half-way still shuts it down.
        jobs = scheduler.create(checks, settings)
        calendars = feeds.serve(settings, store)
        if settings.app_token is not None:  # Socket Mode
            if stop.is_set():  # a signal during start-up: no connection, no post
                return 0
            stop_feeds = feeds.beside_connection(calendars, settings.port, log)
            handler = _AnsweringHandler(app, settings.app_token)
            try:
                if not _connect(handler, stop):
                    log.info("stopped before the Socket Mode connection was open")
                    return 0
                log.info("connected to Slack in Socket Mode; %s", _what_runs(settings))
                if not stop.is_set():
                    jobs.start()
                    bot.later(bot.check_channel)
                    stop.wait()
            finally:
                # Commands under way are acked over the connection: it closes once they are (or in 3 s).
                handler.answered_all(3.0)
                # close() waits for slack_sdk's threads, which may be inside a reconnect that Slack
                # rate-limits or that hangs: give it 3 s, then leave it (cli.cmd_run ends past it).
                closing = threading.Thread(target=handler.close, name="paperbot-close", daemon=True)
                closing.start()
                closing.join(3.0)
                if stop_feeds is not None:
                    stop_feeds()
        else:
            server = http_server(app, settings.port, settings.signing_secret or "", calendars=calendars, store=store)
            jobs.start()
            bot.later(bot.check_channel)
            log.info(
                "serving Slack requests on http://0.0.0.0:%s%s; %s", settings.port, EVENTS_PATH, _what_runs(settings)
            )
            try:
                server.run()
            finally:
                server.close()
    finally:
        stop.set()  # a post waiting out a rate limit lets go now; the next start takes it up
        if jobs is not None and jobs.running:
            log.info("stopping")
            jobs.shutdown(wait=False)
        deadline = time.monotonic() + STOP_SECONDS
        idle = bot.close(STOP_SECONDS)
        idle = (checks is None or checks.wait_idle(deadline - time.monotonic())) and idle
        if idle:
            store.close()
        # else a Slack call hangs (a post, a reminder, an announcement): its thread still holds a
        # connection, which must not be closed under it; cli.cmd_run ends the process past it.
    log.info("stopped")
    return 0


_ENVELOPE_ID = re.compile(r'"envelope_id"\s*:\s*"([^"]+)"')


class _AnsweringHandler(SocketModeHandler):
    """Bolt's Socket Mode handler, counting each request until its ack has gone, so that a stop
    closes the connection only after the commands under way are answered."""

    def __init__(self, app: App, app_token: str):
        super().__init__(app, app_token)
        self._answering = 0
        self._answered = threading.Condition()
        self._closing = False
        # When each envelope came in: it may wait for one of slack_sdk's workers (see answer_deadline).
        self._arrived: dict[str, float] = {}
        self.client.on_message_listeners.append(self._stamp)

    def _stamp(self, message: str) -> None:
        m = _ENVELOPE_ID.search(message)
        if m:
            if len(self._arrived) > 10_000:  # envelopes never handled (a stop): forget the oldest
                self._arrived.pop(next(iter(self._arrived)), None)
            self._arrived.setdefault(m[1], time.monotonic())

    def handle(self, client, req) -> None:
        arrived = self._arrived.pop(req.envelope_id, None)
        with self._answered:
            if self._closing:
                # Taken from the connection before the stop, not started: left unanswered and unmade,
                # never made and then not acked (Slack tells the user it failed, which is then true).
                return
            self._answering += 1
        try:
            with arrived_at(arrived):
                super().handle(client, req)
        finally:
            with self._answered:
                self._answering -= 1
                self._answered.notify_all()

    def answered_all(self, timeout: float) -> bool:
        """Start no more requests; wait up to `timeout` seconds for those under way to be acked
        (True if they were)."""
        with self._answered:
            self._closing = True
            return self._answered.wait_for(lambda: self._answering == 0, timeout)


def _started(bot: SlackBot, stop: threading.Event) -> App | None:
    """auth.test, then Bolt's app: None when `stop` came first; StartError when Slack refuses or does not answer."""

    def start() -> App:
        # auth.test of our own first: Bolt's (in App()) says a refused token in a Python dict.
        bot.learn_home()  # whose workspace the install is: every request from another is refused
        return build_app(bot)

    # auth.test may hang or wait out a rate limit: a stop meanwhile is a stop.
    finished, app, error = _until_stopped(start, stop, "paperbot-auth")
    if not finished:
        return None
    if isinstance(error, Rejected) and error.code in TOKEN_REFUSALS:
        raise StartError(f"SLACK_BOT_TOKEN: Slack refused it ({error.code})")
    if error is not None:  # an unreachable Slack ends here
        where = bot.settings.api_url
        raise StartError(f"cannot start: Slack refused or did not answer auth.test at {where} ({_one_line(error)})")
    return app


def _until_stopped(fn: Callable[[], T], stop: threading.Event, name: str) -> tuple[bool, T | None, Exception | None]:
    """Run `fn` in a thread of its own until it returns or `stop` is set, whichever comes first:
    (finished, its result, the exception it raised). slack_sdk waits out rate limits and hung
    calls in whatever thread calls it, and SIGTERM must not wait with it."""
    result: list[T] = []
    error: list[Exception] = []
    done = threading.Event()

    def call() -> None:
        try:
            result.append(fn())
        except Exception as e:
            error.append(e)
        finally:
            done.set()

    threading.Thread(target=call, name=name, daemon=True).start()
    while not done.wait(0.1):
        if stop.is_set():
            return False, None, None
    return True, result[0] if result else None, error[0] if error else None


def _connect(handler: SocketModeHandler, stop: threading.Event) -> bool:
    """Open the Socket Mode connection; False if `stop` came first (see _until_stopped)."""
    # The reason is said once, below; slack_sdk's own lines about it are for later reconnects.
    bolt_log = logging.getLogger("bot.slack.bolt")

    def quiet(record) -> bool:
        return not record.getMessage().startswith("Failed to retrieve WSS URL")

    bolt_log.addFilter(quiet)
    try:
        finished, _, e = _until_stopped(handler.connect, stop, "paperbot-connect")
    finally:
        bolt_log.removeFilter(quiet)
    if not finished:
        return False
    if e is not None:
        response = getattr(e, "response", None)
        error = response.get("error") if response is not None else None
        if error in TOKEN_REFUSALS:
            raise StartError(f"SLACK_APP_TOKEN: Slack refused it for Socket Mode ({error})") from None
        if response is not None:
            why = f"Slack answered apps.connections.open with HTTP {response.status_code} ({error})"
        else:
            why = _one_line(e)
        raise StartError(f"cannot open a Socket Mode connection: {why}") from None
    return True


def _what_runs(settings: SlackSettings) -> str:
    """The settings an operator checks first, in the line that says the bot is up."""
    focus = f", papers tagged {settings.focus_tag}" if settings.focus_tag else ""
    return (
        f"database {shown(settings.db_path)}, weekly post to {settings.channel} at {settings.schedule.expr!r} "
        f"in {settings.timezone.key}{focus}, meeting {settings.meeting}, reminders {settings.remind_days} days before"
    )


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())


class Part:
    """Slack's part in a process that serves several platforms (bot/runtime/both_platforms.py): its bot, its
    route (HTTP mode) or its Socket Mode connection; the process runs one scheduler and one server."""

    name = "slack"

    def __init__(self, settings: SlackSettings, store: Store, stop: threading.Event):
        self.settings, self.store, self.stop = settings, store, stop
        self.bot = SlackBot(settings, store)
        self.transport = self.bot.transport
        self.poster = self.bot.outbox.poster
        self.routes: dict[str, Callable] = {}
        self._app: App | None = None
        self._handler: _AnsweringHandler | None = None

    def start(self) -> bool:
        """auth.test and the app: False when `stop` came first; StartError when Slack refuses."""
        app = _started(self.bot, self.stop)
        if app is None:
            return False
        self._app = app
        if not self.settings.socket_mode:
            self.routes = {EVENTS_PATH: wsgi(app, self.settings.signing_secret or "", self.bot.store)}
        return True

    def connect(self) -> bool:
        """Socket Mode's connection, when SLACK_APP_TOKEN is set; False when `stop` came first."""
        if self.settings.app_token is None:
            return True
        assert self._app is not None  # start() made it
        self._handler = _AnsweringHandler(self._app, self.settings.app_token)
        return _connect(self._handler, self.stop)

    def add_jobs(self, jobs, home: bool) -> None:
        """Slack has no jobs of its own in the scheduler."""

    def serving(self) -> str:
        return "Slack in Socket Mode" if self.settings.socket_mode else f"Slack requests at {EVENTS_PATH}"

    def started(self, home: bool) -> None:
        if home:
            self.bot.later(self.bot.check_channel)

    def close(self, timeout: float) -> bool:
        """Stop taking requests; True when no background work is left running."""
        if self._handler is not None:
            self._handler.answered_all(3.0)
            closing = threading.Thread(target=self._handler.close, name="paperbot-close", daemon=True)
            closing.start()
            closing.join(3.0)
        return self.bot.close(timeout)

    def closed(self) -> None:
        """After the store is closed: nothing of Slack's to let go of."""
