"""A hosted install on Slack: every workspace that installs the app through Slack's install flow is a
place of its own (bot/places/), answered with its own token from its own tables.

    hosted = serve.hosted_install(settings, house, stop)   # SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, PAPERBOT_SECRET_KEY
    server = http_door.listen(http_door.Lanes(hosted, hosted.takes_apart), settings.port)

One HTTP server: `/slack/install` and `/slack/oauth_redirect` (Bolt's OAuth flow, its stores in
paperbot's database: bot/slack/installs.py), `/slack/events` (the door, then the request goes to the
Bolt app of the place whose workspace it names), each place's pages and feeds under `/p/<place>/`
(PAPERBOT_PUBLIC_URL), `/healthz`. Each place has a SlackBot of its own, made at its first request or
check: its store, its token (rotated when the app rotates tokens), its outbox, its threads; so one
workspace's rate limits or refusing channel hold no other's work. The workspace of SLACK_BOT_TOKEN,
when it is set, is the install's own place (HOME): the database's own tables.
"""

from __future__ import annotations

import html
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol
from urllib.parse import urlsplit

from slack_bolt import App, BoltResponse
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.oauth.callback_options import CallbackOptions, FailureArgs, SuccessArgs
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_bolt.request.internals import extract_enterprise_id, extract_team_id
from slack_sdk import WebClient
from slack_sdk.oauth.token_rotation import TokenRotator

from bot.chat.commands import AWAY
from bot.delivery import outbox
from bot.delivery.background import Background
from bot.places import registry
from bot.places.fairness import BUSY, InFlight
from bot.places.registry import HOME, PAGES_PREFIX, PLACE_ID, Places
from bot.places.sealing import Seal
from bot.slack.app import SlackBot, build_app, not_here
from bot.slack.door import SlackDoor
from bot.slack.installs import ROTATE_MINUTES, SlackInstalls
from bot.slack.settings import SlackSettings
from bot.store.connection import Store
from bot.web import feeds, http_door
from bot.web.http_door import Refused, ReplayWindow, refuse

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
#: Each place's pages and feeds: under PAPERBOT_PUBLIC_URL's path, `/p/<place>/...`.
#: The bot scopes an install asks for: the manifest's (a test keeps them in step).
BOT_SCOPES = ("commands", "chat:write", "channels:history", "groups:history", "im:history", "im:write", "users:read")
#: The one line for a request from a workspace that has not installed the app (or uninstalled it).
NOT_INSTALLED = "paperbot is not installed in this workspace, so nothing was done: an admin can add it again."


class Checks(Protocol):
    """The scheduler's checks of one place (bot/runtime/scheduler.py's ScheduledChecks)."""

    on_next_slot: Callable[[datetime], None]

    def check_post(self) -> None: ...
    def check_reminders(self) -> None: ...
    def check_discussion(self) -> None: ...
    def wait_idle(self, timeout: float) -> bool: ...


@dataclass
class _Part:
    """One place's bot, Bolt app, checks and pages."""

    place: str
    bot: SlackBot
    answer: Callable
    checks: Checks
    pages: feeds.Feeds | None
    token: str
    expires_at: int | None = None


def place_settings(settings: SlackSettings, place: str, token: str) -> SlackSettings:
    """A hosted place's settings (registry.place_settings), with the place's token."""
    return registry.place_settings(settings, place, bot_token=token)


class HostedSlack:
    """The WSGI application of a hosted install on Slack, and every place's checks (`checks()`)."""

    def __init__(
        self,
        settings: SlackSettings,
        house: Store,
        stop: threading.Event,
        checks_of: Callable[[SlackBot], Checks],
        answer_of: Callable[[App], Callable],
        *,
        clock: Callable[[], datetime] | None = None,
    ):
        """`checks_of(bot)`: the scheduler's checks of a place's bot (run's: runtime is above this module);
        `answer_of(app)`: a Bolt app's answer to a request the door let in (serve.bolt_answer);
        `clock`: every place's time (a test's; default the settings' zone's now)."""
        assert settings.client_id and settings.client_secret and settings.secret_key  # settings checked it
        self.settings = settings
        self.house = house
        self.stop = stop
        self.checks_of, self.answer_of = checks_of, answer_of
        self.clock = clock
        self.places = Places(house, settings.db_path)
        api = WebClient(base_url=settings.api_url, timeout=10)
        self.installs = SlackInstalls(
            self.places,
            Seal(settings.secret_key),
            TokenRotator(client_id=settings.client_id, client_secret=settings.client_secret, client=api),
        )
        if resealed := self.installs.reseal():  # PAPERBOT_SECRET_KEY changed: the new first key seals all
            log.info("sealed %d workspaces' tokens again with PAPERBOT_SECRET_KEY's first key", resealed)
        self.door = SlackDoor(settings.signing_secret or "", ReplayWindow(store=house))
        # Every place's bot shares these threads (and so the database connections they may hold): a
        # lane each, as a bot of its own has, sized for many places at once.
        self.background = Background({"answer": 16, "channel": 8})
        self.inflight = InFlight()
        self._parts: dict[str, _Part] = {}
        self._lock = threading.Lock()
        self.home: _Part | None = None
        self.front = App(
            client=api,
            signing_secret=settings.signing_secret or "",
            oauth_settings=OAuthSettings(
                client_id=settings.client_id,
                client_secret=settings.client_secret,
                scopes=list(BOT_SCOPES),
                install_path=INSTALL_PATH,
                redirect_uri_path=REDIRECT_PATH,
                redirect_uri=f"{settings.public_url}{REDIRECT_PATH}" if settings.public_url else None,
                installation_store=self.installs,
                state_store=self.installs,
                token_rotation_expiration_minutes=ROTATE_MINUTES,
                callback_options=CallbackOptions(success=_installed, failure=_not_installed),
            ),
            process_before_response=True,
            logger=logging.getLogger("bot.slack.bolt"),
        )
        self.oauth = SlackRequestHandler(self.front)
        #: PAPERBOT_PUBLIC_URL's path: a proxy in front may hand requests on with it or without it.
        self.prefix = urlsplit(settings.public_url).path.rstrip("/") if settings.public_url else ""
        self.home_pages: feeds.Feeds | None = None

    # -- places ------------------------------------------------------------------------

    def start_home(self, bot: SlackBot, answer: Callable) -> None:
        """The workspace of SLACK_BOT_TOKEN (its auth.test already done): the install's own place (HOME:
        the house store), its pages where they were before the install was hosted (PUBLIC/g/...)."""
        self.home_pages = feeds.serve(bot.settings, bot.store)
        self.home = _Part(HOME, bot, answer, self.checks_of(bot), self.home_pages, bot.client.token or "")
        bot.later(bot.check_channel)

    def part(self, place: str) -> _Part | None:
        """`place`'s bot and app, made at its first need, with the token the database holds now (rotated
        first when due; another process's rotation or a new install's); None when it is not installed."""
        held = self.installs.held(place)
        if held is None:  # uninstalled (here or by another process), or sealed with another key
            self.drop(place)
            return None
        token, expires_at = held
        with self._lock:
            part = self._parts.get(place)
            if part is not None and part.token != token:
                part.bot.use_token(token)  # which Bolt's app asks for at each request (SlackBot.authorized)
                part.token, part.expires_at = token, expires_at
        return part if part is not None else self._made(place, token, expires_at)

    def _made(self, place: str, token: str, expires_at: int | None) -> _Part:
        settings = place_settings(self.settings, place, token)
        store = self.places.store(place)
        bot = SlackBot(settings, store, clock=self.clock, background=self.background)
        outbox.due_now(store)  # a restart tries at once what the platform refused before, as `run` does
        pages = feeds.serve(settings, store, ask=_names(bot))
        made = _Part(place, bot, self.answer_of(build_app(bot)), self.checks_of(bot), pages, token, expires_at)
        with self._lock:
            part = self._parts.setdefault(place, made)
        if part is not made:  # another thread made it first
            made.bot.close(0)
        return part

    def drop(self, place: str) -> None:
        """Stop a place's bot (uninstalled): what it was sending stays in its outbox; its store is closed
        (`paperbot forget` may delete its tables before it is installed again)."""
        with self._lock:
            part = self._parts.pop(place, None)
        if part is not None and part.bot.close(1.0):  # a store still in use stays open
            self.places.release(place)

    def checks(self) -> Sequence[Checks]:
        """Every installed place's checks (the home place's first), for the scheduler."""
        found = [self.home.checks] if self.home is not None else []
        for place in self.places.active():
            if place.platform != "slack":
                continue
            try:
                part = self.part(place.id)
            except Exception as e:  # noqa: BLE001 - one place's failure is no other's
                log.warning("Slack place %s cannot be checked now: %s", place.id, " ".join(str(e).split())[:200])
                continue
            if part is not None:
                found.append(part.checks)
        return found

    def close(self, timeout: float) -> bool:
        """Stop every place's bot (the home's too), all by one deadline: True when none has work left
        running, so that the stores can be closed under nobody (`places.close()`, then the house)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            parts = list(self._parts.values())
        if self.home is not None:
            parts.append(self.home)
        idle = True
        for part in parts:
            idle = part.bot.close(max(deadline - time.monotonic(), 0.0)) and idle
        return self.background.close(max(deadline - time.monotonic(), 0.0)) and idle

    # -- requests ------------------------------------------------------------------------

    def __call__(self, environ, start_response):
        path = self._local(environ.get("PATH_INFO") or "")
        if path == "/healthz":
            return http_door.healthz(start_response, self.house)
        if path in (INSTALL_PATH, REDIRECT_PATH):
            return self._install_flow({**environ, "PATH_INFO": path}, start_response)
        if path == EVENTS_PATH:
            return self._event(environ, start_response)
        if path.startswith(PAGES_PREFIX):
            place, _, rest = path[len(PAGES_PREFIX) :].partition("/")
            pages = self._pages(place)
            if pages is not None:  # the place's own Feeds, which read the path after its prefix
                return pages({**environ, "PATH_INFO": "/" + rest}, start_response)
        elif self.home_pages is not None and self.home_pages.takes(path):
            return self.home_pages(environ, start_response)
        return refuse(environ, start_response, Refused(404, "no such route"))

    def takes_apart(self, path: str) -> bool:
        """Pages and feeds are served by threads of their own (http_door.Lanes): readers never hold chat.
        Asked by the server's loop before a thread has the request: a look at the path, nothing more."""
        path = self._local(path)
        return path.startswith(PAGES_PREFIX) or (self.home_pages is not None and self.home_pages.takes(path))

    def _local(self, path: str) -> str:
        """`path` without PAPERBOT_PUBLIC_URL's path in front, if it has it."""
        if self.prefix and (path == self.prefix or path.startswith(self.prefix + "/")):
            return path[len(self.prefix) :] or "/"
        return path

    def _pages(self, place: str) -> feeds.Feeds | None:
        """An installed place's pages and feeds (None: no such place, or it is not installed now)."""
        if not self.settings.public_url or not PLACE_ID.match(place) or place == HOME:
            return None
        found = self.places.get(place)
        if found is None or not found.active or found.platform != "slack":
            return None
        part = self.part(place)
        return part.pages if part is not None else None

    def _install_flow(self, environ, start_response):
        """Bolt's install page or its end; a page that says so when Slack did not answer or the install
        could not be saved (Bolt lets those through: a 500 and a traceback)."""
        try:
            return self.oauth(environ, start_response)
        except Exception as e:  # noqa: BLE001 - whatever it was, the admin gets a page and the log one line
            log.warning("an install did not complete: %s", " ".join(f"{type(e).__name__}: {e}".split())[:200])
        said = _page(
            503,
            "paperbot was not installed",
            "paperbot was not installed: Slack did not answer, or the install could not be saved. "
            f'<a href="{html.escape(INSTALL_PATH)}">Start the install again</a>.',
        )
        return _respond(start_response, "503 Service Unavailable", str(said.body), "text/html; charset=utf-8")

    def _event(self, environ, start_response):
        try:
            body = self.door.admit(environ)
        except Refused as refusal:
            return refuse(environ, start_response, refusal)
        if body.get("type") == "url_verification":
            return _respond(start_response, "200 OK", str(body.get("challenge") or ""), "text/plain")
        team, enterprise = _whose(body)
        event = body.get("event") or {}
        if body.get("type") == "event_callback" and event.get("type") in ("app_uninstalled", "tokens_revoked"):
            if event.get("type") == "app_uninstalled" or (event.get("tokens") or {}).get("bot"):
                self._uninstalled(enterprise, team)
            return _respond(start_response, "200 OK", "", "text/plain")
        try:
            part = self._part_of(team, enterprise)
        except Exception as e:  # noqa: BLE001 - the database away, Slack silent on a rotation: one line, no 500
            log.warning("could not answer workspace %s now: %s", team or enterprise, " ".join(str(e).split())[:200])
            return self._one_line(start_response, body, AWAY)
        if part is None:
            return self._one_line(start_response, body, NOT_INSTALLED)
        if part.place != HOME:
            self.places.seen(part.place)
        with self.inflight.one(part.place) as admitted:
            if not admitted:  # this place's flood holds its share of the threads, and no more
                return self._one_line(start_response, body, BUSY)
            return part.answer(environ, start_response)

    def _part_of(self, team: str | None, enterprise: str | None) -> _Part | None:
        if self.home is not None and not self.home.bot.place(team, enterprise).foreign:
            return self.home
        place = self.installs.place_of(enterprise, team)
        return self.part(place) if place is not None else None

    def _uninstalled(self, enterprise: str | None, team: str | None) -> None:
        place = self.installs.uninstalled(enterprise, team)
        if place is not None:
            self.drop(place)

    def _one_line(self, start_response, body: dict, line: str) -> list[bytes]:
        said = not_here(self._later, body, line)
        return _respond(start_response, "200 OK", said.body, said.headers.get("content-type", ["text/plain"])[0])

    def _later(self, fn: Callable, *args) -> None:
        self.background.later(fn, *args, lane="answer")


def _names(bot: SlackBot) -> Callable[[str], str | None]:
    """Members' names for a place's pages (users.info), asked with the place's token as it is then."""

    def ask(member: str) -> str | None:
        return feeds.names_of(replace(bot.settings, bot_token=bot.client.token))(member)

    return ask


def _whose(body: dict[str, Any]) -> tuple[str | None, str | None]:
    """The workspace and Grid organisation a request names (a command, a click, an event), as Bolt reads them."""
    return extract_team_id(body), extract_enterprise_id(body)


def _respond(start_response, status: str, body: str, content_type: str) -> list[bytes]:
    data = body.encode()
    start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(data)))])
    return [data]


def _installed(args: SuccessArgs) -> BoltResponse:
    """The page after an install: what to do next, in the workspace."""
    where = html.escape(args.installation.team_name or args.installation.enterprise_name or "your workspace")
    return _page(
        200,
        "paperbot is installed",
        f"paperbot is installed in {where}. In the channel of your reading group, type "
        "<code>/paper group start</code>, then <code>/paper add &lt;link&gt;</code> to add the first papers; "
        "<code>/paper help</code> lists every command.",
    )


def _not_installed(args: FailureArgs) -> BoltResponse:
    """The page after a refused or failed install: why, in one line, and how to try again."""
    reasons = {
        "access_denied": "the install was cancelled in Slack",
        "invalid_state": "the install link has expired or was used already",
        "invalid_browser": "the install was begun in another browser",
        "invalid_code": "Slack did not confirm the install",
        "missing_code": "Slack did not confirm the install",
        "storage_error": "the install could not be saved",
    }
    why = reasons.get(args.reason, "the install did not complete")
    status = 400 if args.reason in ("invalid_state", "invalid_browser", "missing_code") else args.suggested_status_code
    return _page(
        min(max(status, 200), 499) if status < 500 else 503,
        "paperbot was not installed",
        f"paperbot was not installed: {html.escape(why)}. "
        f'<a href="{html.escape(INSTALL_PATH)}">Start the install again</a>.',
    )


def _page(status: int, title: str, said: str) -> BoltResponse:
    body = (
        f'<!doctype html><html lang="en"><meta charset="utf-8"><title>{title}</title>'
        f"<body><h1>{title}</h1><p>{said}</p></body></html>"
    )
    return BoltResponse(status=status, body=body, headers={"Content-Type": "text/html; charset=utf-8"})
