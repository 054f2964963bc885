"""A hosted install on Discord: every server that adds the bot is a place of its own (bot/places/),
answered from its own tables, with rights from that server alone.

    hosted = HostedDiscord(settings, house, checks_of)   # PAPERBOT_HOSTED=true; checks_of(bot): its ScheduledChecks
    response = hosted.handle(interaction, arrived)       # HTTP interactions, once the door admitted one
    hosted.from_gateway(interaction, arrived)            # or over the Gateway
    application = hosted.around(platform_app)            # each place's pages, under /p/<place>/

One application, one bot token, global commands: every interaction names its server (`guild_id`), and
that server is its place, `discord-<guild>`, with a DiscordBot of its own (its store, outbox, threads
and pages; no group of the install's: PAPERBOT_CHANNEL, PAPERBOT_ADMINS, the focus tag and the name
belong to the install's own server), made at the server's first interaction or check. The places'
bots share one pair of REST clients: Discord's rate limits are the bot's whichever server a call is
for (a route's bucket is per channel or server, the 50 requests a second global), so one client keeps
them for all. DISCORD_GUILD, when set, is the install's own server (HOME): its tables are the
install's database and its group PAPERBOT_CHANNEL's, as in a one-server install.

Servers come and go. Over the Gateway, GUILD_CREATE joins a place and GUILD_DELETE (not an outage)
leaves it. In either mode the scheduler lists the bot's servers every SERVERS_SECONDS
(`GET /users/@me/guilds`, 200 a request): a server the bot was removed from while no Gateway was
connected, or one served over HTTP, which gets no event for it (Discord's webhook events tell an
install, and an uninstall from a user's account only, never a server's), leaves then. A place that
left posts nothing more; its data stays until `paperbot forget`.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from bot.chat.replies import Notice
from bot.delivery import outbox
from bot.delivery.background import Background
from bot.delivery.sending import Rejected, Uncertain
from bot.discord import door, render
from bot.discord.app import CHOICES, EPHEMERAL, MESSAGE, PONG, DiscordBot
from bot.discord.rest import Rest
from bot.discord.settings import DiscordSettings
from bot.places import registry
from bot.places.fairness import BUSY, InFlight
from bot.places.registry import HOME, PAGES_PREFIX, Places
from bot.rich_text import Code, text
from bot.store.connection import Store
from bot.web import feeds, http_door
from bot.web.http_door import Refused, refuse

log = logging.getLogger(__name__)

#: Each place's pages and feeds: under PAPERBOT_PUBLIC_URL's path, `/p/<place>/...` (as Slack's).


def discord_place(guild: str) -> str:
    """The place of a Discord server."""
    return f"discord-{guild}"


PLACE_PREFIX = discord_place("")
#: How often the bot's servers are listed, to leave the places whose server removed it.
SERVERS_SECONDS = 300
#: A server's id as a place takes it.
_GUILD = re.compile(r"[0-9]{5,20}")
#: The one line for an interaction from no server (a direct message): each server is a place of its own.
IN_A_SERVER = text("paperbot answers in a server, not here: type ", Code("/paper"), " in your reading group's server.")


def _busy(interaction: dict) -> dict:
    """The response to an interaction past its server's share of the answering threads."""
    if interaction["type"] == door.AUTOCOMPLETE:
        return {"type": CHOICES, "data": {"choices": []}}
    return {"type": MESSAGE, "data": {**render.message(Notice(text(BUSY), ok=False)), "flags": EPHEMERAL}}


@dataclass
class _Part:
    """One place's bot, its scheduler's checks, and its pages."""

    place: str
    bot: DiscordBot
    checks: Any
    pages: feeds.Feeds | None


def place_settings(settings: DiscordSettings, guild: str) -> DiscordSettings:
    """A hosted place's settings (registry.place_settings): in server `guild`, without the install's events."""
    return registry.place_settings(settings, discord_place(guild), guild=guild, events=False)


class HostedDiscord:
    """Every server's place: its interactions routed to its bot, its checks for the scheduler, its pages."""

    def __init__(
        self,
        settings: DiscordSettings,
        house: Store,
        checks_of: Callable[[DiscordBot], Any],
        *,
        clock: Callable[[], datetime] | None = None,
    ):
        """`checks_of(bot)`: a place's ScheduledChecks (the scheduler's, passed down); `clock`: the bots' time."""
        self.settings = settings
        self.clock = clock
        self.store = house  # the door's replay window and /healthz
        self.checks_of = checks_of
        self.places = Places(house, settings.db_path)
        self.rest = Rest(settings.api_url, settings.token)
        self.answers = Rest(settings.api_url, settings.token, timeout=5)
        # Every server's answers, on threads shared by all (each server's own channel lane aside: DiscordBot):
        # "work" answers, "answer" sends what follows, "gateway" takes interactions off the Gateway's reader;
        # "servers": servers joining and leaving. One server holds at most `inflight`'s share of them.
        self.background = Background({"work": 8, "answer": 4, "gateway": 8, "servers": 1})
        self.inflight = InFlight()
        self.app_id: str | None = None
        self.home: _Part | None = None
        self._parts: dict[str, _Part] = {}
        self._joined: dict[str, float] = {}  # places this process joined, and when (monotonic)
        self._left: dict[str, float] = {}  # places whose server removed the bot, and when (monotonic)
        self._lock = threading.Lock()

    # -- places --------------------------------------------------------------------------

    def start_home(self, bot: DiscordBot) -> None:
        """DISCORD_GUILD's server: the install's own place, its bot made on the install's settings and database."""
        self.home = _Part(HOME, bot, self.checks_of(bot), feeds.serve(bot.settings, bot.store))

    def part(self, place: str) -> _Part:
        """`place`'s bot, checks and pages, made at its first need."""
        with self._lock:
            found = self._parts.get(place)
        if found is not None:
            return found
        settings = place_settings(self.settings, place.removeprefix(PLACE_PREFIX))
        store = self.places.store(place)
        bot = DiscordBot(
            settings, store, clock=self.clock, rest=self.rest, answers=self.answers, background=self.background
        )
        bot.app_id = self.app_id
        outbox.due_now(store)  # a restart tries at once what Discord refused before, as `run` does
        made = _Part(place, bot, self.checks_of(bot), feeds.serve(settings, store))
        with self._lock:
            part = self._parts.setdefault(place, made)
        if part is not made:  # another thread made it first
            made.bot.close(0)
        return part

    def of_guild(self, guild: str) -> _Part:
        """The part of server `guild`: the install's own, or its place's (joined now, the first time)."""
        if self.home is not None and guild == self.settings.guild:
            return self.home
        place = discord_place(guild)
        with self._lock:
            known = place in self._parts
        if known:
            self.places.seen(place)
        else:
            self.joined(guild)
        return self.part(place)

    def joined(self, guild: str, name: str = "") -> None:
        """The bot is in server `guild` (named `name`, when told): its place is active."""
        if guild == self.settings.guild:
            return
        place = discord_place(guild)
        found = self.places.get(place)
        if found is not None and found.active and (not name or name == found.name):
            return
        if found is None:  # new, or forgotten by another process while its bot was kept here
            self.drop(place)
        self.places.join(place, "discord", name)
        with self._lock:
            self._joined[place] = time.monotonic()
        if found is None or not found.active:
            log.info("Discord server %s is a place: %s", guild, place)

    def left(self, guild: str) -> None:
        """The bot was removed from server `guild`: its place's groups stop; its data stays until `forget`."""
        place = discord_place(guild)
        found = self.places.get(place)
        if found is None or not found.active:
            return
        self.places.leave(place)
        with self._lock:
            self._left[place] = time.monotonic()
        self.drop(place)
        log.info(
            "Discord server %s removed the bot: %s posts nothing more (`paperbot forget` deletes it)", guild, place
        )

    def drop(self, place: str) -> None:
        """Stop a place's bot: what it was sending stays in its outbox."""
        with self._lock:
            part = self._parts.pop(place, None)
        if part is not None:
            part.bot.close(1.0)

    def checks(self) -> list[Any]:
        """Every active place's checks (the install's own first), for the scheduler; the bots of places that
        left (told by another process) are dropped."""
        found = [self.home.checks] if self.home is not None else []
        active = [p.id for p in self.places.active() if p.platform == "discord"]
        for place in active:
            try:
                found.append(self.part(place).checks)
            except Exception as e:  # noqa: BLE001 - one place's failure is no other's
                log.warning("Discord place %s cannot be checked now: %s", place, " ".join(str(e).split())[:200])
        with self._lock:
            unlisted = [p for p in self._parts if p not in set(active)]
        for place in unlisted:
            now = self.places.get(place)
            if now is None or not now.active:  # not one joined since the list was read
                self.drop(place)
        return found

    def check_servers(self) -> None:
        """The servers the bot is in, as Discord lists them: each is a place; a place whose server is not
        listed any more leaves. An empty or failed listing changes nothing."""
        asked = time.monotonic()
        try:
            servers = self.rest.guilds(timeout=30)
        except (Rejected, Uncertain) as e:
            log.warning("could not list the bot's Discord servers: %s", e)
            return
        if not servers:
            log.warning("Discord lists no server for the bot: no place leaves on that alone")
            return
        listed = {s["id"]: s.get("name") or "" for s in servers if _GUILD.fullmatch(str(s.get("id")))}
        for place in self.places.active():
            guild = place.id.removeprefix(PLACE_PREFIX)
            with self._lock:
                just_joined = self._joined.get(place.id, 0.0) > asked  # joined while Discord was asked
            if place.platform == "discord" and guild not in listed and not just_joined:
                self.left(guild)
        for guild, name in listed.items():
            with self._lock:  # removed while Discord was asked (GUILD_DELETE): the listing is older than that
                just_left = self._left.get(discord_place(guild), 0.0) > asked
            if not just_left:
                self.joined(guild, name)

    # -- interactions ----------------------------------------------------------------------

    def route(self, interaction: dict) -> DiscordBot | dict:
        """The bot of the interaction's server, or the response itself when it comes from none."""
        guild = str(interaction.get("guild_id") or "")
        if not guild and interaction["type"] == door.COMPONENT:  # a button of a direct message names its server
            named = render.place_of(interaction["data"]["custom_id"]) or ""
            guild = named if self._active(named) else ""
        if not _GUILD.fullmatch(guild):
            if interaction["type"] == door.AUTOCOMPLETE:
                return {"type": CHOICES, "data": {"choices": []}}
            return {"type": MESSAGE, "data": {**render.message(Notice(IN_A_SERVER, ok=False)), "flags": EPHEMERAL}}
        return self.of_guild(guild).bot

    def _active(self, guild: str) -> bool:
        if not _GUILD.fullmatch(guild):
            return False
        if self.home is not None and guild == self.settings.guild:
            return True
        found = self.places.get(discord_place(guild))
        return found is not None and found.active

    def handle(self, interaction: dict, arrived: float | None = None) -> dict:
        """The response to an interaction the door admitted (as DiscordBot.handle); one line, and nothing
        done, past its server's share of the answering threads."""
        if interaction["type"] == door.PING:
            return {"type": PONG}
        routed = self.route(interaction)
        if isinstance(routed, dict):
            return routed
        with self.inflight.one(routed.settings.guild or "") as admitted:
            return routed.handle(interaction, arrived) if admitted else _busy(interaction)

    def from_gateway(self, interaction, arrived: float) -> None:
        """An INTERACTION_CREATE from the Gateway's reader: routed in a thread (finding a place may read
        the database), answered by the place's bot through the callback route."""
        try:
            checked = door.check(interaction)
        except Refused as refusal:
            log.warning("ignored an interaction from the Gateway of a shape Discord does not send (%s)", refusal)
            return
        self.background.later(self._routed, checked, arrived, lane="gateway")

    def _routed(self, interaction: dict, arrived: float) -> None:
        routed = self.route(interaction)
        if not isinstance(routed, dict):
            with self.inflight.one(routed.settings.guild or "") as admitted:
                if admitted:
                    routed.answer_callback(interaction, arrived)
                    return
            routed = _busy(interaction)
        path = f"/interactions/{interaction['id']}/{interaction['token']}/callback"
        try:
            self.answers.call("POST", path, routed, auth=False)
        except (Rejected, Uncertain) as e:
            log.warning("could not answer an interaction: %s", e)

    def guild_event(self, name: str, payload: dict) -> None:
        """GUILD_CREATE or GUILD_DELETE from the Gateway's reader: seen to in a thread."""
        self.background.later(self._guild_changed, name, payload, lane="servers")

    def _guild_changed(self, name: str, payload: dict) -> None:
        guild = str(payload.get("id") or "")
        if not _GUILD.fullmatch(guild) or payload.get("unavailable"):  # an outage: the server is still there
            return
        if name == "GUILD_CREATE":
            self.joined(guild, str(payload.get("name") or ""))
        elif name == "GUILD_DELETE":
            self.left(guild)

    # -- pages -----------------------------------------------------------------------------

    def pages(self, path: str) -> feeds.Feeds | None:
        """The feeds and pages `path` is for: the install's own, or an active place's under /p/<place>/."""
        home = self.home.pages if self.home is not None else None
        if home is not None and home.route(path) is not None:
            return home
        place = self._page_place(path)
        if place is None:
            return None
        found = self.places.get(place)
        if found is None or not found.active or found.platform != "discord":
            return None
        return self.part(place).pages

    def _page_place(self, path: str) -> str | None:
        if not self.settings.public_url:
            return None
        prefix = urlsplit(self.settings.public_url).path.rstrip("/") + PAGES_PREFIX + PLACE_PREFIX
        if not path.startswith(prefix):
            return None
        guild = path[len(prefix) :].split("/", 1)[0]
        return discord_place(guild) if _GUILD.fullmatch(guild) else None

    def around(self, platform_app: Callable | None) -> Callable:
        """One WSGI application: the places' pages and feeds (in a lane of their own), the rest to
        `platform_app` (the interactions' route); /healthz besides."""

        def application(environ, start_response):
            path = environ.get("PATH_INFO") or ""
            pages = self.pages(path)
            if pages is not None:
                return pages(environ, start_response)
            if platform_app is not None:
                return platform_app(environ, start_response)
            if path == "/healthz":
                return http_door.healthz(start_response, self.store)
            return refuse(environ, start_response, Refused(404, "no such route"))

        def apart(path: str) -> bool:  # cheap: waitress asks it for every request
            home = self.home.pages if self.home is not None else None
            return (home is not None and home.takes(path)) or self._page_place(path) is not None

        return http_door.Lanes(application, apart)

    def close(self, timeout: float) -> bool:
        """Stop every place's bot and the install's own; True when nothing is left running."""
        with self._lock:
            parts = list(self._parts.values())
        bots = [part.bot for part in parts] + ([self.home.bot] if self.home is not None else [])
        idle = all([bot.close(timeout) for bot in bots])
        idle = self.background.close(timeout) and idle
        if idle:
            self.places.close()
        return idle
