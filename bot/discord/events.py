"""Discord scheduled events for the coming meetings of every Discord group (DISCORD_EVENTS=1), kept
in step with each group's schedule.

    events = MeetingEvents(store, rest, guild, lambda: discord_groups(store, settings))
    events.check(now)      # the scheduler's check: make, move and cancel events as the weeks say

Each coming meeting with a presenter in a group's next WEEKS weeks is an external event in
DISCORD_GUILD, at the group's meeting time, zone and length, at its place (group 1:
PAPERBOT_MEETING_PLACE, else a link to the group's channel). The groups are read afresh at each
check, so a group started or stopped in chat counts from the next check on, and a stopped group's
coming events are cancelled. paperbot keeps at most MOST events in a server (Discord holds 100,
the server's own events first): past that, the nearest meetings of all groups come first.

Discord has no idempotency key, so each event's id is kept (discord_events); a row is written
before the event is asked for, so that a crash between Discord making it and paperbot keeping its
id leaves a row without an id, which the next check matches to the server's events by the group
and week its description names, as the weekly post is found again in the channel's history. Each
check lists the server's events once, for every group.

Who is Interested in an event counts as going to its meeting (bot.schedule.attendance): read again
at a check when the event's user count differs from what is kept, and the week's post brought up to date.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from bot.announcing import sender
from bot.calendar import Week
from bot.delivery.sending import Rejected
from bot.discord.rest import Rest
from bot.schedule import attendance, groups, slots
from bot.store import liveness
from bot.store.connection import Store
from bot.web import feeds, member_names
from bot.web.site import Group

log = logging.getLogger(__name__)

#: Events cover this many coming weeks of each group.
WEEKS = 8
#: A server holds at most this many scheduled events (Discord's 30038 past it).
SERVER_LIMIT = 100
#: paperbot's events in one server, whatever the number of groups: half of what it holds, the rest
#: left to the server's own events (eight weeks of six groups fit).
MOST = 50
#: The line of an event's description that says which group's week it is, for matching after a crash.
_MARK = "paperbot {week} · group {group}"
_MARK_RE = re.compile(r"paperbot (\d{4}-W\d{2}) · group (\d+)")

#: An event's key: the group's id and the week's key.
Key = tuple[int, str]


def discord_groups(store: Store, settings, *, env_on_discord: bool = True) -> list[Group]:
    """The groups whose meetings are events: those started on Discord and group 1 (when this
    process serves it on Discord), each with a channel and not stopped, read afresh."""
    env = groups.from_settings(settings)
    return [
        feeds.page_group(settings, g) for g in groups.posting(store, env, "discord") if env_on_discord or not g.from_env
    ]


def _name(title: str, presenter: str, limit: int = 100) -> str:
    """`title — presenter` within Discord's 100 characters: the title is cut, the presenter kept."""
    tail = f" — {presenter[:40]}"
    if len(title) + len(tail) > limit:
        title = title[: limit - len(tail) - 1].rstrip() + "…"
    return title + tail


def _fingerprint(event: dict) -> str:
    return hashlib.sha256(json.dumps(event, sort_keys=True).encode()).hexdigest()[:32]


def _start(event: dict) -> datetime | None:
    try:
        return datetime.fromisoformat(str(event.get("scheduled_start_time")))
    except ValueError:
        return None


class MeetingEvents:
    def __init__(
        self,
        store: Store,
        rest: Rest,
        guild: str,
        groups_now: Callable[[], list[Group]],
        *,
        ask=None,
        timeout: float = 10.0,
        wake: Callable[[], None] | None = None,
    ):
        self.store, self.rest, self.guild, self.groups_now, self.ask = store, rest, guild, groups_now, ask
        self.timeout = timeout
        self.wake = wake  # has the outbox sent soon: a post's count changed
        self._busy = threading.Lock()
        self._left_out = 0  # meetings past the cap at the last check: said once, not every check

    # -- what the schedules say ------------------------------------------------------------

    def place(self, group: Group) -> str:
        link = f"https://discord.com/channels/{self.guild}/{group.channel}" if group.channel else "Discord"
        return (group.place or link)[:100]

    def wanted(self, group: Group, now: datetime) -> dict[Key, dict]:
        """The event each coming week of `group` with a presenter should be, by key."""
        calendar = group.calendar
        first = slots.first_week_ahead(calendar, now)
        last = first.plus(WEEKS - 1)
        rows = self.store.db.execute(
            "SELECT s.week, s.presenter, p.title, p.url, p.summary FROM slots s JOIN papers p ON p.number = s.paper "
            "WHERE s.group_id = ? AND s.kind = 'presenter' AND s.week >= ? AND s.week <= ? ORDER BY s.week",
            [group.group_id, first.key, last.key],
        ).fetchall()
        wanted = {}
        for key, presenter, title, url, summary in rows:
            start = calendar.meeting_of(Week.from_key(key))
            if start <= now:
                continue
            name = member_names.display_name(self.store, presenter, self.ask)
            mark = _MARK.format(week=key, group=group.group_id)
            about = "\n\n".join(p for p in (summary.strip()[:700], url, f"Presenter: {name}") if p)
            wanted[(group.group_id, key)] = {
                "name": _name(title, name),
                "privacy_level": 2,
                "entity_type": 3,
                "entity_metadata": {"location": self.place(group)},
                "scheduled_start_time": start.astimezone(UTC).isoformat(),
                "scheduled_end_time": (start + timedelta(minutes=group.minutes)).astimezone(UTC).isoformat(),
                "description": f"{about}\n\n{mark}"[-1000:],
            }
        return wanted

    # -- keeping the server in step ----------------------------------------------------------

    def check(self, now: datetime) -> None:
        """Make, move and cancel events so that the server shows what the schedules say. One check
        at a time, in this process and across processes (replicas: another's check is under way, and
        would make the same events); a failure is logged and left to the next check."""
        if not self._busy.acquire(blocking=False):
            return
        try:
            with liveness.exclusive(self.store, f"discord events {self.guild}") as mine:
                if mine:
                    self._check(now)
        except Exception as e:
            log.warning("could not bring Discord's events in step: %s: %s", type(e).__name__, e)
        finally:
            self._busy.release()

    def _check(self, now: datetime) -> None:
        listed = {
            str(e["id"]): e
            for e in self.rest.call("GET", f"/guilds/{self.guild}/scheduled-events", timeout=self.timeout) or []
        }
        kept = self._kept(listed)
        theirs = len(set(listed) - {event_id for event_id, _ in kept.values()})
        wanted: dict[Key, dict] = {}
        channels: dict[int, str | None] = {}
        for group in self.groups_now():
            wanted.update(self.wanted(group, now))
            channels[group.group_id] = group.channel
        self._read_interest(listed, kept, channels)
        room = max(0, min(MOST, SERVER_LIMIT - theirs))
        nearest = sorted(wanted, key=lambda k: (wanted[k]["scheduled_start_time"], k))[:room]
        if len(wanted) - len(nearest) != self._left_out:
            self._left_out = len(wanted) - len(nearest)
            if self._left_out:
                log.warning("%d later meetings have no Discord event yet: at most %d here", self._left_out, room)
        chosen = set(nearest)
        for key, (event_id, _) in kept.items():  # first, to make room for the new ones
            if key in chosen:
                continue
            try:
                # A week that lost its talk, or a stopped group's.
                if event_id is not None and (start := _start(listed[event_id])) is not None and start > now:
                    self._cancel(key, event_id)
            except Rejected as e:
                log.warning("Discord refused to cancel the event of group %s, %s: %s", key[0], key[1], e)
                continue
            self._forget(key)
        for key in nearest:
            event = wanted[key]
            event_id, was = kept.get(key, (None, None))
            try:
                if event_id is None:
                    self._make(key, event)
                elif was != _fingerprint(event):
                    self._move(key, event_id, event)
            except Rejected as e:  # this event's trouble: the others go on
                log.warning("Discord refused the event of group %s, %s: %s", key[0], key[1], e)

    def _read_interest(self, listed: dict[str, dict], kept: dict[Key, tuple[str | None, str]], channels) -> None:
        """Who is Interested in each of paperbot's events, kept for the meeting's count of who goes
        (bot.schedule.attendance), read again only when the event's count differs from what is kept;
        a week's post is brought up to date (at a quiet moment) when it changed."""
        changed = False
        for (gid, key), (event_id, _) in kept.items():
            event = listed.get(event_id) if event_id else None
            if event is None or gid not in channels:
                continue
            week = Week.from_key(key)
            if event.get("user_count") == len(attendance.interested(self.store, gid, week)):
                continue
            try:
                path = f"/guilds/{self.guild}/scheduled-events/{event_id}/users"
                users = set(self.rest.call("GET", path, timeout=self.timeout) or [])
            except Rejected as e:
                log.warning("could not read who is interested in the event of group %s, %s: %s", gid, key, e)
                continue
            channel = channels[gid]
            update = functools.partial(sender.hold_post_update, self.store, channel, week)
            changed = attendance.replace_interested(self.store, gid, week, users, then=update) or changed
        if changed and self.wake is not None:
            self.wake()

    def _kept(self, listed: dict[str, dict]) -> dict[Key, tuple[str | None, str]]:
        """The events paperbot keeps, by key: a row without an id (a crash after asking) matched to
        the listed event that names its group and week; a row whose event is no longer listed
        (deleted in Discord, or over) let go, to be made again if still wanted."""
        rows = self.store.db.execute("SELECT group_id, week, event_id, fingerprint FROM discord_events").fetchall()
        marked: dict[Key, str] = {}
        for event_id, event in listed.items():
            m = _MARK_RE.search(event.get("description") or "")
            if m:
                marked[(int(m[2]), m[1])] = event_id
        kept: dict[Key, tuple[str | None, str]] = {}
        for gid, week, event_id, fingerprint in rows:
            key = (gid, week)
            if event_id is None and key in marked:
                event_id, fingerprint = marked[key], ""  # its content is checked (and patched) below
                self._remember(key, event_id, fingerprint)
                log.info("found the Discord event of group %s, %s made before a restart", gid, week)
            elif event_id is not None and event_id not in listed:
                self._forget(key)
                log.info("the Discord event of group %s, %s is gone from the server", gid, week)
                continue
            kept[key] = (event_id, fingerprint)
        return kept

    def _make(self, key: Key, event: dict) -> None:
        self._remember(key, None, "")  # before asking: a crash now is matched next time
        try:
            made = self.rest.call("POST", f"/guilds/{self.guild}/scheduled-events", event, timeout=self.timeout)
        except Rejected:
            self._forget(key)  # refused, so not made: nothing to match
            raise
        self._remember(key, str(made["id"]), _fingerprint(event))
        log.info("made the Discord event of group %s, %s", *key)

    def _move(self, key: Key, event_id: str, event: dict) -> None:
        try:
            self.rest.call("PATCH", f"/guilds/{self.guild}/scheduled-events/{event_id}", event, timeout=self.timeout)
        except Rejected as e:
            if e.code != "10070":
                raise
            self._forget(key)  # deleted in Discord since the listing: made again at the next check
            return
        self._remember(key, event_id, _fingerprint(event))
        log.info("moved the Discord event of group %s, %s", *key)

    def _cancel(self, key: Key, event_id: str) -> None:
        try:
            self.rest.call("DELETE", f"/guilds/{self.guild}/scheduled-events/{event_id}", timeout=self.timeout)
        except Rejected as e:
            if e.code != "10070":
                raise
        log.info("cancelled the Discord event of group %s, %s", *key)

    def _remember(self, key: Key, event_id: str | None, fingerprint: str) -> None:
        with self.store.write() as db:
            db.execute(
                "INSERT INTO discord_events (group_id, week, event_id, fingerprint) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (group_id, week) DO UPDATE SET event_id = excluded.event_id, "
                "fingerprint = excluded.fingerprint",
                [*key, event_id, fingerprint],
            )

    def _forget(self, key: Key) -> None:
        with self.store.write() as db:
            db.execute("DELETE FROM discord_events WHERE group_id = ? AND week = ?", list(key))
