"""The group's calendar feed, each member's feed and the group's page, served at secret addresses.

    PUBLIC/g/<group secret>/                the group's page (?q= searches the catalog)
    PUBLIC/g/<group secret>/calendar.ics    the group's meetings
    PUBLIC/g/<group secret>/stats.png       the group's history as a picture (Slack's `stats` shows it)
    PUBLIC/m/<member secret>/calendar.ics   one member's own talks

PUBLIC is PAPERBOT_PUBLIC_URL, which may carry a path (`https://example.org/paperbot`). The secret
parts come from `secrets.token_urlsafe`, are kept in the database and can be renewed; a wrong or
renewed one gets the same 404 as any unknown address, saying nothing of which part was wrong.
Answers carry an ETag and a Last-Modified, so that calendar programs polling every few minutes
get 304 and nothing else while the schedule stands.

Pages and feeds never starve chat: `around` serves them in a lane of their own (http_door.Lanes);
what is drawn is kept until the page version changes (meta.page_version, bumped by every write
to what pages show) or a minute passes; at most RENDERS are drawn at once, and a request past
that, or one that waited LANE_WAIT_SECONDS for a thread, gets a quick 503 with Retry-After.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import NamedTuple
from urllib.parse import urlsplit

from bot import platforms
from bot.schedule import groups, history
from bot.settings import SettingError
from bot.store.connection import Store
from bot.web import chart_png, charts, http_door, ical, member_names, site
from bot.web.http_door import healthz
from bot.web.site import Group

log = logging.getLogger(__name__)

#: The pages and feeds whose first-drawn time is remembered (past it, all are forgotten and start again).
SEEN_KEPT = 1000
SECRET_BYTES = 24  # 32 characters of token_urlsafe: not guessed
_SECRET = r"[A-Za-z0-9_-]{16,64}"
_ROUTE = re.compile(rf"^/(g|m)/({_SECRET})/(calendar\.ics|stats\.png)?$")

#: Pages and feeds drawn at once; more are answered 503 at once rather than queued behind them.
RENDERS = 2
#: Drawn pages and feeds kept (each keyed by its address, what it asks, the page version and the minute),
#: and the most bytes they hold together (a 40,000-paper catalog's page is under 1 MB).
KEPT = 64
KEPT_BYTES = 16 * 1024 * 1024
#: How long a drawn page is kept even when nothing is written: its weeks move on with the clock.
KEPT_SECONDS = 60
#: A request that waited this long for a page thread is answered 503: its reader has likely gone.
LANE_WAIT_SECONDS = 10.0
#: How long a request waits for the same page being drawn by another before it gives up (503).
DRAWING_WAIT_SECONDS = 10.0

NOT_FOUND = (
    b"<!doctype html><html lang=en><meta charset=utf-8><meta name=viewport content='width=device-width'>"
    b"<title>Not found</title><p>There is nothing at this address. Calendar and page addresses change when "
    b"they are renewed: ask the bot for the current ones with <code>/paper calendar</code>.</p></html>"
)


# -- the secrets ---------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


#: Where each kind of secret is kept: its table and the column that names whose it is.
_SECRETS = {"group": ("group_secrets", "group_id"), "member": ("member_secrets", "member")}


def _secret(store: Store, kind: str, owner) -> str:
    """The secret part of `owner`'s addresses (made on first use)."""
    table, column = _SECRETS[kind]
    row = store.db.execute(f"SELECT secret FROM {table} WHERE {column} = ?", [owner]).fetchone()
    if row:
        return row[0]
    with store.write() as db:
        db.execute(
            f"INSERT INTO {table} ({column}, secret, made_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [owner, secrets.token_urlsafe(SECRET_BYTES), _now()],
        )
        return db.execute(f"SELECT secret FROM {table} WHERE {column} = ?", [owner]).fetchone()[0]


def _renew(store: Store, kind: str, owner, then: Callable[[], None] | None = None) -> str:
    """A new secret for `owner`: the old addresses answer 404 from now on. `then` is called inside
    the write (a renewal's announcement is saved with it or not at all)."""
    table, column = _SECRETS[kind]
    secret = secrets.token_urlsafe(SECRET_BYTES)
    with store.write() as db:
        db.execute(
            f"INSERT INTO {table} ({column}, secret, made_at) VALUES (?, ?, ?) "
            f"ON CONFLICT ({column}) DO UPDATE SET secret = excluded.secret, made_at = excluded.made_at",
            [owner, secret, _now()],
        )
        if then is not None:
            then()
    return secret


def group_secret(store: Store, group_id: int) -> str:
    """The secret part of the group's page and feed addresses."""
    return _secret(store, "group", group_id)


def renew_group_secret(store: Store, group_id: int, then: Callable[[], None] | None = None) -> str:
    return _renew(store, "group", group_id, then)


def member_secret(store: Store, member: str) -> str:
    """The secret part of `member`'s own feed address."""
    return _secret(store, "member", member)


def renew_member_secret(store: Store, member: str) -> str:
    return _renew(store, "member", member)


def urls(store: Store, public_url: str, group_id: int, member: str) -> dict[str, str]:
    """The addresses a member is given: the group's page and feed, and their own feed."""
    public = public_url.rstrip("/")
    group = group_secret(store, group_id)
    return {
        "page": f"{public}/g/{group}/",
        "group": f"{public}/g/{group}/calendar.ics",
        "member": f"{public}/m/{member_secret(store, member)}/calendar.ics",
    }


# -- serving -------------------------------------------------------------------


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


#: The longest conditional header read; a longer one is junk, ignored as if absent (a real one is under 100).
MAX_CONDITION_CHARS = 1024


def _http_date(text: str) -> datetime | None:
    """An HTTP date as a time in UTC, or None for anything else (junk, a year past 9999, an hour of 99):
    a bad date header is treated as absent (RFC 9110 13.1.3), never an error."""
    if len(text) > MAX_CONDITION_CHARS:
        return None
    try:
        when = parsedate_to_datetime(text)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return when.astimezone(UTC)  # a zone's offset may carry a date past datetime's range
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _not_modified(environ, etag: str, modified: datetime, now: datetime) -> bool:
    """RFC 9110 13.1: If-None-Match wins over If-Modified-Since; a date later than `now` is ignored
    (13.1.3), since it would make every later change look old; a header too long or unreadable is
    ignored, as if absent."""
    match = environ.get("HTTP_IF_NONE_MATCH")
    if match is not None and len(match) <= MAX_CONDITION_CHARS:
        tags = [t.strip().removeprefix("W/") for t in match.split(",")]
        return "*" in tags or etag in tags
    when = _http_date(environ.get("HTTP_IF_MODIFIED_SINCE") or "")
    if when is None or when > now:
        return False
    return modified.replace(microsecond=0) <= when


class Busy(Exception):
    """More pages are being drawn than RENDERS, or the request waited too long: a 503, said quickly."""


class Drawn(NamedTuple):
    """A drawn answer: its body, content type, ETag and Last-Modified."""

    body: bytes
    content_type: str
    etag: str
    modified: datetime


def _drawn(body: bytes, content_type: str, modified: datetime) -> Drawn:
    return Drawn(body, content_type, _etag(body), modified)


class Feeds:
    """The WSGI application of the feeds and the page, for `groups` (a callable: groups change)."""

    def __init__(
        self,
        store: Store,
        groups: Callable[[], Iterable[Group]],
        public_url: str,
        *,
        ask=None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ):
        self.store, self.groups, self.ask, self.clock = store, groups, ask, clock
        self.prefix = urlsplit(public_url).path.rstrip("/")
        # When each page was first drawn as it is (a page has no single time it changed), for at most
        # SEEN_KEPT addresses and searches, each key of bounded size.
        self._first_seen: dict[str, tuple[str, datetime]] = {}
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple, Drawn] = OrderedDict()
        self._kept_bytes = 0
        self._drawing: dict[tuple, threading.Event] = {}
        self._renders = threading.BoundedSemaphore(RENDERS)

    def takes(self, path: str) -> bool:
        """Whether `path` is a page's or a feed's: served in the pages' own lane (http_door.Lanes)."""
        return self.route(path) is not None

    def route(self, path: str) -> re.Match | None:
        """The feed or page `path` asks for (with or without PAPERBOT_PUBLIC_URL's path in front)."""
        if self.prefix and (path == self.prefix or path.startswith(self.prefix + "/")):
            path = path[len(self.prefix) :]
        return _ROUTE.match(path)

    def __call__(self, environ, start_response):
        match = self.route(environ.get("PATH_INFO") or "")
        if match is None:
            return self._not_found(environ, start_response)
        method = environ.get("REQUEST_METHOD")
        if method not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Allow", "GET, HEAD"), ("Content-Type", "text/plain")])
            return [b"GET or HEAD only\n"]
        try:  # never a 500 or a traceback: one line in the log, the secret in it hashed
            came = http_door.arrival(environ)
            if came is not None and time.monotonic() - came > LANE_WAIT_SECONDS:
                raise Busy(f"it waited {time.monotonic() - came:.0f} s for a thread")
            answer = self._answer(environ, match)
            if answer is None:
                return self._not_found(environ, start_response)
            body, content_type, etag, modified = answer
            headers = [
                ("ETag", etag),
                ("Last-Modified", format_datetime(modified.astimezone(UTC), usegmt=True)),
                ("Cache-Control", "private, no-cache"),
                ("Referrer-Policy", "no-referrer"),
                ("X-Robots-Tag", "noindex"),
                ("X-Content-Type-Options", "nosniff"),
            ]
            if content_type.startswith("text/html"):
                headers.append(("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'"))
            unchanged = _not_modified(environ, etag, modified, self.clock())
        except Exception as e:
            what = (
                {None: "the page", "stats.png": "the picture"}.get(match[3], "the feed")
                if match[1] == "g"
                else "the feed"
            )
            why = " ".join(f"{type(e).__name__}: {e}".split())[:200]
            level = logging.INFO if isinstance(e, Busy) else logging.WARNING
            log.log(
                level, "could not draw %s at %s: %s", what, http_door.unsecret_path(match[0]), http_door.unsecret(why)
            )
            retry = "5" if isinstance(e, Busy) else "30"
            start_response("503 Service Unavailable", [("Retry-After", retry), ("Content-Type", "text/plain")])
            return [b"Busy; try again in a moment.\n"]
        if unchanged:
            start_response("304 Not Modified", headers)
            return [b""]
        headers += [("Content-Type", content_type), ("Content-Length", str(len(body)))]
        start_response("200 OK", headers)
        return [b""] if method == "HEAD" else [body]

    def _not_found(self, environ, start_response):
        log.info("no page at the address %s asked for", environ.get("REMOTE_ADDR"))  # never the secret
        start_response("404 Not Found", [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")])
        return [NOT_FOUND]

    def _answer(self, environ, match: re.Match) -> Drawn | None:
        kind, secret, file = match[1], match[2], match[3]
        if kind == "m":
            if file != "calendar.ics":
                return None
            row = self.store.db.execute("SELECT member FROM member_secrets WHERE secret = ?", [secret]).fetchone()
            if row is None:
                return None
            member = row[0]
            return self._kept_or_drawn((match[0],), lambda: self._member_feed(match[0], member))
        row = self.store.db.execute("SELECT group_id FROM group_secrets WHERE secret = ?", [secret]).fetchone()
        group = next((g for g in self.groups() if row is not None and g.group_id == row[0]), None)
        if group is None:
            return None
        if file == "stats.png":
            return self._kept_or_drawn((match[0],), lambda: self._picture(group))
        if file:
            return self._kept_or_drawn((match[0],), lambda: self._group_feed(match[0], group))
        asked = site.asked(environ.get("QUERY_STRING") or "")
        return self._kept_or_drawn(
            (match[0], group.group_id, asked), lambda: self._page(match[0], secret, group, asked)
        )

    def _page(self, path: str, secret: str, group: Group, asked: site.Asked) -> Drawn:
        html = site.page(
            self.store,
            group,
            self.clock().astimezone(group.calendar.tz),
            ask=self.ask,
            asked=asked,
            feed_url=f"{self.prefix}/g/{secret}/calendar.ics",
        ).encode()
        # Keyed by a hash of what is asked: what each remembered request holds is the same few bytes.
        wanted = repr((asked.query, asked.tag, asked.untagged, asked.page)) if asked != site.Asked() else ""
        searched = hashlib.sha256(wanted.encode()).hexdigest()[:16] if wanted else ""
        return _drawn(html, "text/html; charset=utf-8", self._seen(f"{path}?{searched}", html))

    def _kept_or_drawn(self, what: tuple, draw: Callable[[], Drawn]) -> Drawn:
        """`what` as drawn while the page version and the minute stand: kept, or drawn by `draw` once
        (a request for what another is drawing waits for it); Busy past RENDERS drawn at once."""
        version = self.store.db.execute("SELECT value FROM meta WHERE key = 'page_version'").fetchone()
        key = (*what, version[0] if version else None, int(self.clock().timestamp() // KEPT_SECONDS))
        while True:
            with self._lock:
                kept = self._kept.get(key)
                if kept is not None:
                    self._kept.move_to_end(key)
                    return kept
                drawing = self._drawing.get(key)
                if drawing is None:
                    if not self._renders.acquire(blocking=False):
                        raise Busy(f"{RENDERS} pages are being drawn")
                    drawing = self._drawing[key] = threading.Event()
                    break
            if not drawing.wait(DRAWING_WAIT_SECONDS):
                raise Busy("the page took too long to draw")
            with self._lock:
                if key not in self._kept:  # its drawing failed: say so, rather than draw it again
                    raise Busy("the page could not be drawn")
        try:
            drawn = draw()
            with self._lock:
                self._kept[key] = drawn
                self._kept_bytes += len(drawn.body)
                while len(self._kept) > 1 and (len(self._kept) > KEPT or self._kept_bytes > KEPT_BYTES):
                    self._kept_bytes -= len(self._kept.popitem(last=False)[1].body)
            return drawn
        finally:
            with self._lock:
                del self._drawing[key]
            self._renders.release()
            drawing.set()

    def _seen(self, key: str, body: bytes) -> datetime:
        etag = _etag(body)
        with self._lock:
            seen = self._first_seen.get(key)
            if seen is None or seen[0] != etag:
                if len(self._first_seen) >= SEEN_KEPT:
                    self._first_seen.clear()
                seen = self._first_seen[key] = (etag, self.clock().replace(microsecond=0))
            return seen[1]

    def _picture(self, group: Group) -> Drawn:
        """The group's history as a PNG: its charts as the page draws them, for chat."""
        now = self.clock().astimezone(group.calendar.tz)
        past = history.of_group(self.store, group.calendar, now)
        name = lambda member: member_names.display_name(self.store, member, self.ask)  # noqa: E731
        body = chart_png.png(charts.of_history(past, name))
        return _drawn(body, "image/png", self._seen(f"stats.png {group.group_id}", body))

    def _group_feed(self, path: str, group: Group) -> Drawn:
        events = group_meetings(self.store, group, self.clock(), self.ask)
        body = ical.feed(self.store, events, group.calendar.tz, group.title)
        # The weeks shown move on with time (an old event leaves the window): a body never seen
        # before is news even when no event in it changed.
        changed = max(ical.last_changed(events) or _EPOCH, self._seen(path, body))
        return _drawn(body, "text/calendar; charset=utf-8", changed)

    def _member_feed(self, path: str, member: str) -> Drawn:
        events, tz = member_meetings(self.store, list(self.groups()), self.clock(), self.ask, member)
        body = ical.feed(self.store, events, tz, "My talks")
        return _drawn(
            body, "text/calendar; charset=utf-8", max(ical.last_changed(events) or _EPOCH, self._seen(path, body))
        )


_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def group_meetings(store: Store, group: Group, now: datetime, ask=None, member: str | None = None):
    return ical.meetings(
        store,
        group.group_id,
        group.calendar,
        now.astimezone(group.calendar.tz),
        minutes=group.minutes,
        channel=group.channel,
        place=group.place,
        ask=ask,
        member=member,
    )


def member_meetings(store: Store, groups_: list[Group], now: datetime, ask, member: str):
    """`member`'s talks in every one of `groups_`, and the time zone to show them in (the first group's:
    each event is at its own group's time, written in that zone)."""
    events = [m for g in groups_ for m in group_meetings(store, g, now, ask, member=member)]
    return events, groups_[0].calendar.tz if groups_ else UTC


def environment_group(settings) -> Group:
    """The install's first group, as the environment's settings define it (group id 1)."""
    return Group(
        group_id=1,
        calendar=settings.group,
        channel=settings.channel,
        minutes=settings.meeting_minutes,
        place=settings.meeting_place,
    )


def page_group(settings, group: groups.Group) -> Group:
    """What the page and the feeds need of `group`: group 1's from the environment, a chat group's
    from its row (its own meeting length and name)."""
    if group.from_env:  # its name may be its channel's, which its row keeps
        return replace(environment_group(settings), calendar=group.calendar)
    return Group(
        group_id=group.id,
        calendar=group.calendar,
        channel=group.channel,
        minutes=group.meeting_minutes,
    )


def install_groups(settings, store: Store) -> list[Group]:
    """Every group of the install, read afresh: a group started in chat is served at once."""
    return [page_group(settings, g) for g in groups.every(store, groups.from_settings(settings))]


def of_channel(settings, store: Store, channel: str | None) -> Group | None:
    """The group of `channel` (None: the environment's), or None when no group has that channel."""
    env = groups.from_settings(settings)
    found = groups.by_id(store, env, groups.ENV) if channel is None else groups.of_channel(store, env, channel)
    return page_group(settings, found) if found is not None else None


def channels(settings, store: Store) -> list[str]:
    """The groups' channels, the environment's first (what to name when a channel is no group's)."""
    return [g.channel for g in groups.every(store, groups.from_settings(settings)) if g.channel]


def around(platform_app: Callable | None, feeds: Feeds) -> Callable:
    """One WSGI application: the feeds' and page's addresses to `feeds`, the rest (the platform's
    routes, /healthz) to `platform_app`; with no platform app, only /healthz besides."""

    def application(environ, start_response):
        if feeds.route(environ.get("PATH_INFO") or "") is not None:
            return feeds(environ, start_response)
        if platform_app is not None:
            return platform_app(environ, start_response)
        if environ.get("PATH_INFO") == "/healthz":
            return healthz(start_response, feeds.store)
        return feeds(environ, start_response)  # its 404

    # The pages and feeds in a lane of their own: page readers never take the platforms' threads.
    return http_door.Lanes(application, feeds.takes)


def beside_connection(calendars: Feeds | None, port: int, logger: logging.Logger) -> Callable[[], None] | None:
    """The calendars and the group's page on `port`, in a thread beside a platform's connection (Socket
    Mode, the Gateway) that holds the main thread: the function that stops them, None with no calendars."""
    if calendars is None:
        return None
    stop = http_door.serve_beside(http_door.listen(around(None, calendars), port))
    logger.info("serving the calendars and the group's page on http://0.0.0.0:%s", port)
    return stop


def names_of(*settings) -> Callable[[str], str | None]:
    """The look-up of members' names for pages and calendars, from each served platform's settings:
    its own look-up, asked only for members whose ids have its form (a failing one leaves the others
    asked); a platform without its token gives names as typed (the console's)."""

    asks: list[tuple[Callable[[str], bool], member_names.Ask]] = []
    for each in settings:
        adapter = platforms.of(each)
        try:
            each.require(adapter.token)
        except SettingError:
            asks.append((adapter.settings.is_member, member_names.as_typed))
            continue
        ask = adapter.member_names(each) if adapter.member_names is not None else member_names.as_typed
        asks.append((adapter.settings.is_member, ask))
    if len(asks) == 1:  # one platform: every member is its own
        return asks[0][1]
    return member_names.ByPlatform(asks)


def serve(settings, store: Store, ask=None) -> Feeds | None:
    """The feeds of the install's groups, when PAPERBOT_PUBLIC_URL says where users reach them."""
    if not settings.public_url:
        return None
    return Feeds(
        store,
        lambda: install_groups(settings, store),
        settings.public_url,
        ask=ask if ask is not None else names_of(settings),
    )
