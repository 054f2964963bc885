"""Discord scheduled events for the coming meetings (DISCORD_EVENTS=1), kept in step with the schedule.

    events = MeetingEvents(store, rest, settings)
    events.check(now)      # the scheduler's check: make, move and cancel events as the weeks say

Each coming meeting with a presenter in the next WEEKS weeks is an external event in DISCORD_GUILD
at PAPERBOT_MEETING_PLACE (default: a link to the group's channel). Discord has no idempotency key,
so each event's id is kept (discord_events); a row is written before the event is asked for, so
that a crash between Discord making it and paperbot keeping its id leaves a row without an id,
which the next check matches to the server's events by the week its description names, as the
weekly post is found again in the channel's history.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from datetime import UTC, datetime, timedelta

from bot import member_names, slots
from bot.calendar import Week
from bot.delivery import Rejected
from bot.discord.rest import Rest
from bot.site import Group
from bot.store import Store

log = logging.getLogger(__name__)

#: Events cover this many coming weeks (a server holds at most 100 events).
WEEKS = 8
#: The line of an event's description that says which group's week it is, for matching after a crash.
_MARK = "paperbot {week} · group {group}"
_MARK_RE = re.compile(r"paperbot (\d{4}-W\d{2}) · group (\d+)")


def _name(title: str, presenter: str, limit: int = 100) -> str:
    """`title — presenter` within Discord's 100 characters: the title is cut, the presenter kept."""
    tail = f" — {presenter[:40]}"
    if len(title) + len(tail) > limit:
        title = title[: limit - len(tail) - 1].rstrip() + "…"
    return title + tail


class MeetingEvents:
    def __init__(
        self,
        store: Store,
        rest: Rest,
        guild: str,
        group: Group,
        *,
        place: str | None = None,
        ask=None,
        timeout: float = 10.0,
    ):
        self.store, self.rest, self.guild, self.group, self.ask = store, rest, guild, group, ask
        self.timeout = timeout
        channel_link = f"https://discord.com/channels/{guild}/{group.channel}" if group.channel else "Discord"
        self.place = (place or channel_link)[:100]
        self._busy = threading.Lock()

    # -- what the schedule says ------------------------------------------------------------

    def wanted(self, now: datetime) -> dict[str, dict]:
        """The event each coming week with a presenter should be, by week key."""
        calendar = self.group.calendar
        first = slots.first_week_ahead(calendar, now)
        last = first.plus(WEEKS - 1)
        rows = self.store.db.execute(
            "SELECT s.week, s.presenter, p.title, p.url, p.summary FROM slots s JOIN papers p ON p.number = s.paper "
            "WHERE s.kind = 'presenter' AND s.week >= ? AND s.week <= ? ORDER BY s.week",
            [first.key, last.key],
        ).fetchall()
        wanted = {}
        for key, presenter, title, url, summary in rows:
            week = Week.from_key(key)
            start = calendar.meeting_of(week)
            if start <= now:
                continue
            name = member_names.display_name(self.store, presenter, self.ask)
            mark = _MARK.format(week=key, group=self.group.group_id)
            about = "\n\n".join(p for p in (summary.strip()[:700], url, f"Presenter: {name}") if p)
            wanted[key] = {
                "name": _name(title, name),
                "privacy_level": 2,
                "entity_type": 3,
                "entity_metadata": {"location": self.place},
                "scheduled_start_time": start.astimezone(UTC).isoformat(),
                "scheduled_end_time": (start + timedelta(minutes=self.group.minutes)).astimezone(UTC).isoformat(),
                "description": f"{about}\n\n{mark}"[-1000:],
            }
        return wanted

    # -- keeping the server in step ----------------------------------------------------------

    def check(self, now: datetime) -> None:
        """Make, move and cancel events so that the server shows what the schedule says. One check at
        a time; a failure is logged and left to the next check."""
        if not self._busy.acquire(blocking=False):
            return
        try:
            self._check(now)
        except Exception as e:
            log.warning("could not bring Discord's events in step: %s: %s", type(e).__name__, e)
        finally:
            self._busy.release()

    def _check(self, now: datetime) -> None:
        wanted = self.wanted(now)
        gid = self.group.group_id
        kept = {
            r[0]: (r[1], r[2])
            for r in self.store.db.execute(
                "SELECT week, event_id, fingerprint FROM discord_events WHERE group_id = ?", [gid]
            )
        }
        if any(event_id is None for event_id, _ in kept.values()):
            kept = self._match(kept)
        for key, event in wanted.items():
            fingerprint = hashlib.sha256(json.dumps(event, sort_keys=True).encode()).hexdigest()[:32]
            event_id, was = kept.get(key, (None, None))
            if event_id is None:
                self._remember(key, None, "")  # before asking: a crash now is matched next time
                made = self.rest.call("POST", f"/guilds/{self.guild}/scheduled-events", event, timeout=self.timeout)
                self._remember(key, str(made["id"]), fingerprint)
                log.info("made the Discord event of %s", key)
            elif was != fingerprint:
                try:
                    self.rest.call(
                        "PATCH", f"/guilds/{self.guild}/scheduled-events/{event_id}", event, timeout=self.timeout
                    )
                except Rejected as e:
                    if e.code != "10070":  # deleted by hand in Discord: made again at the next check
                        raise
                    self._forget(key)
                    continue
                self._remember(key, event_id, fingerprint)
                log.info("moved the Discord event of %s", key)
        for key, (event_id, _) in kept.items():
            if key in wanted:
                continue
            if event_id is not None and self._ahead(key, now):  # a week that lost its talk
                try:
                    self.rest.call("DELETE", f"/guilds/{self.guild}/scheduled-events/{event_id}", timeout=self.timeout)
                except Rejected as e:
                    if e.code != "10070":
                        raise
                log.info("cancelled the Discord event of %s", key)
            self._forget(key)

    def _ahead(self, key: str, now: datetime) -> bool:
        return self.group.calendar.meeting_of(Week.from_key(key)) > now

    def _match(self, kept: dict) -> dict:
        """Rows without an event id (a crash after asking): the server's events named by their week."""
        found = {}
        for event in self.rest.call("GET", f"/guilds/{self.guild}/scheduled-events", timeout=self.timeout) or []:
            m = _MARK_RE.search(event.get("description") or "")
            if m and int(m[2]) == self.group.group_id:
                found[m[1]] = str(event["id"])
        for key, (event_id, _) in list(kept.items()):
            if event_id is None:
                if key in found:
                    self._remember(key, found[key], "")  # its content is checked (and patched) below
                    kept[key] = (found[key], "")
                    log.info("found the Discord event of %s made before a restart", key)
                else:
                    kept[key] = (None, None)
        return kept

    def _remember(self, key: str, event_id: str | None, fingerprint: str) -> None:
        with self.store.write() as db:
            db.execute(
                "INSERT INTO discord_events (group_id, week, event_id, fingerprint) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (group_id, week) DO UPDATE SET event_id = excluded.event_id, "
                "fingerprint = excluded.fingerprint",
                [self.group.group_id, key, event_id, fingerprint],
            )

    def _forget(self, key: str) -> None:
        with self.store.write() as db:
            db.execute("DELETE FROM discord_events WHERE group_id = ? AND week = ?", [self.group.group_id, key])
