"""The group's meetings as an iCalendar file (RFC 5545), for any calendar program to subscribe to.

    events = ical.meetings(store, group_id, calendar, now, ask=names)   # the weeks, each remembered
    text = ical.feed(events, calendar.tz, "Reading group")                # bytes: CRLF, folded, escaped

A week that has a booking or a post is an event; a skipped week, and a week that had an event and
lost it, is CANCELLED. Calendar programs keep an event by its UID and take a change only when its
SEQUENCE grows, so each week's event is remembered (calendar_weeks: what it said, hashed, and its
sequence): a week that says something new gets the next sequence, and the time it changed is its
DTSTAMP, so that an unchanged schedule gives the same bytes (and the same ETag) every time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import icalendar

from bot.calendar import MeetingCalendar, Week
from bot.catalog import queries as catalog
from bot.catalog.papers import Paper
from bot.schedule import weekly
from bot.store.connection import Store
from bot.web import member_names

#: The feed covers these weeks around this one.
WEEKS_BACK = 12
WEEKS_AHEAD = 26
PRODID = "-//paperbot//reading group calendar//EN"


@dataclass(frozen=True)
class Meeting:
    """One week's meeting as the calendar shows it."""

    group_id: int
    week: Week
    start: datetime
    end: datetime
    paper: Paper | None
    presenter: str | None  # the member's id (never shown)
    presenter_name: str | None  # what is shown
    cancelled: bool
    sequence: int
    changed_at: datetime
    place: str | None = None
    #: The group's name (None: it has none): in the event's description, for a feed of several groups.
    group_name: str | None = None

    @property
    def summary(self) -> str:
        if self.cancelled:
            return "No meeting"
        title = self.paper.title if self.paper else "Reading group"
        return f"{title} — {self.presenter_name}" if self.presenter_name else title


def uid(store: Store, group_id: int, week: Week) -> str:
    """The event's UID: the same for a group's week for ever (the install's own domain keeps two
    installs' events apart)."""
    row = store.db.execute("SELECT value FROM meta WHERE key = 'calendar_uid_domain'").fetchone()
    domain = row[0] if row else "local"
    return f"{week.key}-group{group_id}@paperbot-{domain}"


def _fingerprint(
    paper: Paper | None, name: str | None, start: datetime, end: datetime, place: str | None, group_name: str | None
) -> str:
    said: list[str | None] = [paper.title, paper.url, paper.summary] if paper else [None]
    said += [name, start.isoformat(), end.isoformat(), place]
    if group_name:  # only when set: an unnamed group's events keep their fingerprints, and their SEQUENCE
        said.append(group_name)
    return hashlib.sha256(json.dumps(said, ensure_ascii=False).encode()).hexdigest()[:32]


def meetings(
    store: Store,
    group_id: int,
    calendar: MeetingCalendar,
    now: datetime,
    *,
    minutes: int = 60,
    channel: str | None = None,
    place: str | None = None,
    ask: member_names.Ask | None = None,
    member: str | None = None,
) -> list[Meeting]:
    """The weeks from WEEKS_BACK before `now`'s to WEEKS_AHEAD after, each remembered (a change
    raises its sequence); with `member`, only that member's talks (and those they lost)."""
    this = calendar.week_of(now)
    first, last = this.plus(-WEEKS_BACK), this.plus(WEEKS_AHEAD)
    rows = store.db.execute(
        "SELECT week, kind, presenter, paper FROM slots WHERE group_id = ? AND week >= ? AND week <= ?",
        [group_id, first.key, last.key],
    ).fetchall()
    booked = {Week.from_key(r[0]): r for r in rows}
    posts: dict[Week, int] = {}
    own, own_args = weekly.own_posts(group_id)  # a channel is one group's: its posts are that group's
    post_sql = (
        f"SELECT key, paper FROM deliveries WHERE kind = 'post' AND state = 'sent' AND {own} AND key >= ? AND key <= ?"
    )
    args: list = [*own_args, first.key, last.key]
    if channel:
        post_sql += " AND dest = ?"
        args.append(channel)
    for key, paper in store.db.execute(post_sql, args):
        if paper is not None:
            posts[Week.from_key(key)] = paper
    known = {
        Week.from_key(r[0]): r[1:]
        for r in store.db.execute(
            "SELECT week, fingerprint, sequence, changed_at, presenter FROM calendar_weeks "
            "WHERE group_id = ? AND week >= ? AND week <= ?",
            [group_id, first.key, last.key],
        )
    }
    papers = catalog.many(store, {r[3] for r in rows if r[3] is not None} | set(posts.values()))

    # What each week says now: (paper, presenter) for a meeting, None for no meeting.
    wanted: dict[Week, tuple[Paper | None, str | None] | None] = {}
    for week, row in booked.items():
        wanted[week] = None if row[1] == "skipped" else (papers.get(row[3]), row[2])
    for week, number in posts.items():
        wanted.setdefault(week, (papers.get(number), None))
    for week in known:
        wanted.setdefault(week, None)  # had an event, has none now: cancelled

    drawn: list[tuple[Week, Paper | None, str | None, str | None, str]] = []
    for week in sorted(wanted):
        said = wanted[week]
        start = calendar.meeting_of(week)
        end = start + timedelta(minutes=minutes)
        if said is None:
            drawn.append((week, None, None, None, ""))
            continue
        paper, presenter = said
        name = member_names.display_name(store, presenter, ask) if presenter else None
        drawn.append((week, paper, presenter, name, _fingerprint(paper, name, start, end, place, calendar.name)))

    changed_at = datetime.now(UTC).replace(microsecond=0)
    result: list[Meeting] = []
    with store.write() as db:
        for week, paper, presenter, name, fingerprint in drawn:
            before = known.get(week)
            if before is None:
                sequence, when, last_presenter = 0, changed_at, presenter
                db.execute(
                    "INSERT INTO calendar_weeks (group_id, week, fingerprint, sequence, changed_at, presenter) "
                    "VALUES (?, ?, ?, 0, ?, ?) ON CONFLICT DO NOTHING",
                    [group_id, week.key, fingerprint, changed_at.isoformat(), presenter],
                )
            elif before[0] != fingerprint:
                sequence, when = before[1] + 1, changed_at
                last_presenter = presenter if presenter is not None else before[3]
                db.execute(
                    "UPDATE calendar_weeks SET fingerprint = ?, sequence = ?, changed_at = ?, presenter = ? "
                    "WHERE group_id = ? AND week = ?",
                    [fingerprint, sequence, when.isoformat(), last_presenter, group_id, week.key],
                )
            else:
                sequence, when, last_presenter = before[1], datetime.fromisoformat(before[2]), before[3]
            if member is not None and member not in (presenter, last_presenter):
                continue
            start = calendar.meeting_of(week)
            result.append(
                Meeting(
                    group_id,
                    week,
                    start,
                    start + timedelta(minutes=minutes),
                    paper,
                    presenter,
                    name,
                    cancelled=not fingerprint or (member is not None and presenter != member),
                    sequence=sequence,
                    changed_at=when,
                    place=place,
                    group_name=calendar.name,
                )
            )
    return result


def feed(store: Store, meetings_: Iterable[Meeting], tz: ZoneInfo, name: str) -> bytes:
    """The iCalendar file of `meetings_` (in `tz`, with its VTIMEZONE): CRLF lines folded at 75
    octets, text escaped, as icalendar writes them."""
    meetings_ = list(meetings_)
    cal = icalendar.Calendar()
    cal.add("prodid", PRODID)
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("x-wr-calname", name)
    cal.add("x-wr-timezone", tz.key)
    if meetings_:
        first = min(m.start for m in meetings_).date() - timedelta(days=1)
        last = max(m.end for m in meetings_).date() + timedelta(days=1)
        cal.add_component(icalendar.Timezone.from_tzid(tz.key, first_date=first, last_date=last))
    for m in meetings_:
        event = icalendar.Event()
        event.add("uid", uid(store, m.group_id, m.week))
        event.add("dtstamp", m.changed_at)
        event.add("last-modified", m.changed_at)
        event.add("sequence", m.sequence)
        event.add("dtstart", m.start.astimezone(tz))
        event.add("dtend", m.end.astimezone(tz))
        event.add("summary", m.summary)
        event.add("status", "CANCELLED" if m.cancelled else "CONFIRMED")
        if m.place:
            event.add("location", m.place)
        if not m.cancelled:
            lines = [m.paper.summary.strip()] if m.paper and m.paper.summary.strip() else []
            if m.paper is not None and m.presenter_name:
                lines.append(f"Presenter: {m.presenter_name}")
            if m.group_name:
                lines.append(f"Reading group: {m.group_name}")
            if m.paper is not None and m.paper.url:
                lines.append(m.paper.url)
                event.add("url", m.paper.url)
            if lines:
                event.add("description", "\n\n".join(lines))
        cal.add_component(event)
    return cal.to_ical()


def last_changed(meetings_: Iterable[Meeting]) -> datetime | None:
    """When the newest of `meetings_` changed: the feed's Last-Modified."""
    return max((m.changed_at for m in meetings_), default=None)
