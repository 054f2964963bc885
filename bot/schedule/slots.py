"""The schedule as it stands: which week has which slot, read for lists, cards and posts.

    slots.schedule(store, group, now)           # the coming weeks, as SlotLines
    slots.mine_in(store, calendars, now, "U1")  # a member's coming and past slots, in every group

A week has at most one slot: a presenter with their paper, or a skip (no meeting).
Changing the schedule is signups.py's job; this module only reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Literal, NamedTuple

from bot.calendar import MeetingCalendar, Week
from bot.catalog import queries as catalog
from bot.catalog.papers import Paper
from bot.schedule.rows import SlotLine
from bot.store.connection import Store

#: `schedule` lists this many weeks with presenters (half a year of meetings) and open weeks.
SCHEDULE_PRESENTERS = 26
SCHEDULE_OPEN = 4
HORIZON_WEEKS = 520  # ten years: how far ahead a week may be booked, and "the first open week" looked for


class Booked(NamedTuple):
    """A week with a presenter and their paper."""

    week: Week
    kind: Literal["presenter"]
    presenter: str
    paper: int


class Skipped(NamedTuple):
    """A week without a meeting."""

    week: Week
    kind: Literal["skipped"]


#: A row of `slots`; the table's CHECK keeps a presenter and a paper together, and a skip has neither.
Slot = Booked | Skipped


#: The columns of a Slot, in its order (who booked it is kept in the table for the record, not read).
SLOT_COLUMNS = "week, kind, presenter, paper"


def read_slot(db, week: Week, group_id: int = 1) -> Slot | None:
    row = db.execute(
        f"SELECT {SLOT_COLUMNS} FROM slots WHERE group_id = ? AND week = ?", [group_id, week.key]
    ).fetchone()
    return _as_slot(row) if row else None


def _as_slot(row) -> Slot:
    week = Week.from_key(row[0])
    return Booked(week, "presenter", row[2], row[3]) if row[1] == "presenter" else Skipped(week, "skipped")


def slot(store: Store, week: Week, group_id: int = 1) -> Slot | None:
    """Group `group_id`'s slot in `week`."""
    return read_slot(store.db, week, group_id)


def read_slots(db, sql: str, params: Iterable) -> list[Slot]:
    return [_as_slot(r) for r in db.execute(sql, list(params))]


def line_for(
    store: Store, group: MeetingCalendar, week: Week, slot: Slot | None = None, papers: dict | None = None
) -> SlotLine:
    if slot is None:
        slot = read_slot(store.db, week, group.group_id)
    meeting = group.meeting_of(week)
    if slot is None:
        return SlotLine(week, meeting, "open")
    if slot.kind == "skipped":
        return SlotLine(week, meeting, "skipped")
    paper = papers.get(slot.paper) if papers is not None else catalog.by_number(store, slot.paper)
    return SlotLine(week, meeting, "presenter", paper, slot.presenter)


def first_week_ahead(group: MeetingCalendar, now: datetime) -> Week:
    """This week if its meeting is still ahead, else next week."""
    week = group.week_of(now)
    return week if group.meeting_of(week) > now else week.plus(1)


def open_weeks(store: Store, group: MeetingCalendar, now: datetime, n: int) -> list[Week]:
    """The next `n` weeks with no presenter and no skip whose meeting is still ahead."""
    week = first_week_ahead(group, now)
    horizon = week.plus(HORIZON_WEEKS)
    found: list[Week] = []
    while len(found) < n and week < horizon:
        # Booked weeks a year at a time: usually one small query answers.
        until = week.plus(52)
        booked = {
            r[0]
            for r in store.db.execute(
                "SELECT week FROM slots WHERE group_id = ? AND week >= ? AND week < ?",
                [group.group_id, week.key, until.key],
            )
        }
        while week < until and len(found) < n:
            if week.key not in booked and group.meeting_of(week) > now:
                found.append(week)
            week = week.plus(1)
    return found


def schedule(store: Store, group: MeetingCalendar, now: datetime) -> list[SlotLine]:
    """The coming weeks: the next presenters, the next open weeks, and skips among them (papers by
    their titles: no summaries).

    One walk over the slots in week order, papers joined; the open weeks are the gaps
    between them. Presenters after the first SCHEDULE_PRESENTERS are not listed but
    still fill their weeks: those before a listed week are one 'booked' line, so
    that the list shows no gap. A skip is listed when a listed week comes after it.
    """
    cursor = first_week_ahead(group, now)  # the first week the walk has not accounted for
    end = cursor.plus(HORIZON_WEEKS)  # bookings stop there, so the walk does too
    lines: list[SlotLine] = []
    presenters = opened = 0
    unlisted: list[Week] = []  # presenters' weeks past the first SCHEDULE_PRESENTERS, since the last line

    def listing() -> None:
        """A line is about to be listed: the presenters not listed before it come first, as one line."""
        if unlisted:
            lines.append(SlotLine(unlisted[0], group.meeting_of(unlisted[0]), "booked", weeks=len(unlisted)))
            unlisted.clear()

    def list_open_weeks(until: Week) -> None:
        nonlocal opened
        week = cursor
        while week < until and opened < SCHEDULE_OPEN:
            meeting = group.meeting_of(week)
            if meeting > now:
                listing()
                lines.append(SlotLine(week, meeting, "open"))
                opened += 1
            week = week.plus(1)

    batch = SCHEDULE_PRESENTERS + SCHEDULE_OPEN + 8
    while True:
        rows = store.db.execute(
            f"SELECT s.week, s.kind, s.presenter, {catalog.PAPER_TITLE_COLUMNS} FROM slots s "
            "LEFT JOIN papers p ON p.number = s.paper WHERE s.group_id = ? AND s.week >= ? AND s.week < ? "
            "ORDER BY s.week LIMIT ?",
            [group.group_id, cursor.key, end.key, batch],
        ).fetchall()
        for row in rows:
            week = Week.from_key(row[0])
            list_open_weeks(week)
            if row[1] == "skipped":
                listing()
                lines.append(SlotLine(week, group.meeting_of(week), "skipped"))
            elif presenters < SCHEDULE_PRESENTERS:
                lines.append(SlotLine(week, group.meeting_of(week), "presenter", catalog.joined_paper(row, 3), row[2]))
                presenters += 1
            else:
                unlisted.append(week)
            cursor = week.plus(1)
            if presenters == SCHEDULE_PRESENTERS and opened == SCHEDULE_OPEN:
                break
        else:
            if len(rows) == batch:
                continue
            list_open_weeks(end)  # no slots after these: the rest are open
        break
    while lines and lines[-1].state in ("skipped", "booked"):  # nothing listed after them
        lines.pop()
    return lines


def history(store: Store, group: MeetingCalendar, paper: Paper) -> list[SlotLine]:
    """Every week that paper was or will be presented."""
    slots = read_slots(
        store.db,
        f"SELECT {SLOT_COLUMNS} FROM slots WHERE paper = ? AND kind = 'presenter' AND group_id = ? ORDER BY week",
        [paper.number, group.group_id],
    )
    return [line_for(store, group, s.week, s, {paper.number: paper}) for s in slots]


def latest_presenter(
    store: Store, paper: Paper, besides: Week | None = None, group_id: int = 1
) -> tuple[Week, str] | None:
    """The paper's latest presenter slot in group `group_id` (a coming one before a past one), in a
    week other than `besides`."""
    row = store.db.execute(
        "SELECT week, presenter FROM slots WHERE paper = ? AND kind = 'presenter' AND group_id = ? AND week != ? "
        "ORDER BY week DESC LIMIT 1",
        [paper.number, group_id, besides.key if besides else ""],
    ).fetchone()
    return (Week.from_key(row[0]), row[1]) if row else None


def waiting_papers(store: Store, n: int, focus_tag: str | None = None, group_id: int = 1) -> list[Paper]:
    """Papers nobody in group `group_id` has presented or signed up for, lowest number first."""
    focus = ""
    args: list = []
    if focus_tag:
        focus = "AND p.number IN (SELECT paper FROM paper_tags WHERE tag = (SELECT id FROM tags WHERE name = ?))"
        args.append(focus_tag)
    rows = store.db.execute(
        "SELECT p.number FROM papers p WHERE p.number NOT IN "
        "(SELECT paper FROM slots WHERE kind = 'presenter' AND group_id = ?) "
        "AND p.archived_at IS NULL "
        f"{focus} ORDER BY p.number LIMIT ?",
        [group_id, *args, n],
    ).fetchall()
    return [p for (number,) in rows if (p := catalog.by_number(store, number)) is not None]


#: A group's calendar and channel, by its id: what lines of several groups are drawn with.
Calendars = Mapping[int, tuple[MeetingCalendar, str | None]]


def _lines_in(store: Store, calendars: Calendars, rows: list) -> list[SlotLine]:
    """Lines of (group_id, week, kind, presenter, paper) rows of several groups, by meeting, each
    naming its group's channel; rows of a group not in `calendars` are left out."""
    papers = catalog.many(store, {r[4] for r in rows if r[4] is not None})
    lines = []
    for gid, week_key, kind, presenter, number in rows:
        if gid not in calendars:
            continue
        calendar, channel = calendars[gid]
        week = Week.from_key(week_key)
        line = line_for(store, calendar, week, _as_slot((week_key, kind, presenter, number)), papers)
        line.channel, line.group_id = channel, gid
        lines.append(line)
    return sorted(lines, key=lambda line: line.meeting)


def mine_in(store: Store, calendars: Calendars, now: datetime, member: str) -> tuple[list[SlotLine], list[SlotLine]]:
    """A member's upcoming and past slots in every group of `calendars` (past: most recent first)."""
    rows = store.db.execute(
        "SELECT group_id, week, kind, presenter, paper FROM slots WHERE presenter = ? ORDER BY week", [member]
    ).fetchall()
    lines = _lines_in(store, calendars, rows)
    return [x for x in lines if x.meeting > now], [x for x in reversed(lines) if x.meeting <= now]


def history_in(store: Store, calendars: Calendars, paper: Paper) -> list[SlotLine]:
    """Every week that the paper was or will be presented, in every group of `calendars`."""
    rows = store.db.execute(
        "SELECT group_id, week, kind, presenter, paper FROM slots WHERE paper = ? AND kind = 'presenter' ORDER BY week",
        [paper.number],
    ).fetchall()
    return _lines_in(store, calendars, rows)
