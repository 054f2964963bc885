"""Who is due to present, and a late withdrawal's open slot.

    openings.due(store, group, now)       # the group's members, longest since their last talk first
    openings.open_late(store, group, now, talk, "U1")   # inside the withdrawal's transaction

A member is one who took part in the group: presented or signed up, asked a question, said going,
or voted (votes are on papers, for the whole install). A withdrawal inside the reminder window
(`remind_days` before the meeting) leaves the week without a stand-in and little time to find one:
it is kept as an opening, with the members due first, each told once (bot/schedule/notes.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from bot.calendar import MeetingCalendar, Week
from bot.schedule.rows import TalkWeek
from bot.store.connection import Store

#: How many of the members due first hear of an open slot directly.
TOLD = 3


@dataclass(frozen=True)
class Due:
    """A member of the group and their talks: the latest given and the next booked (None: none)."""

    member: str
    last: datetime | None
    coming: datetime | None
    first_seen: str

    @property
    def order(self) -> tuple:
        """Members without a coming talk first; among them, never presented first, then the longest
        since their last talk, then the longest in the group."""
        never = datetime.min.replace(tzinfo=UTC)
        return (self.coming is not None, self.last is not None, self.last or never, self.first_seen, self.member)


def due(store: Store, group: MeetingCalendar, now: datetime) -> list[Due]:
    """The group's members in the order they are due to present (see `Due.order`)."""
    gid = group.group_id
    seen = {
        member: first or ""
        for member, first in store.db.execute(
            "SELECT member, MIN(at) FROM ("
            "SELECT presenter AS member, booked_at AS at FROM slots WHERE group_id = ? AND kind = 'presenter' "
            "UNION ALL SELECT asked_by, asked_at FROM questions WHERE group_id = ? "
            "UNION ALL SELECT member, said_at FROM attendance WHERE group_id = ? AND going = 1 "
            "UNION ALL SELECT member, voted_at FROM votes"
            ") AS taking_part GROUP BY member",
            [gid, gid, gid],
        )
        if member
    }
    last: dict[str, datetime] = {}
    coming: dict[str, datetime] = {}
    for member, week_key in store.db.execute(
        "SELECT presenter, week FROM slots WHERE group_id = ? AND kind = 'presenter' ORDER BY week", [gid]
    ):
        meeting = group.meeting_of(Week.from_key(week_key))
        if meeting <= now:
            last[member] = meeting  # in week order: the latest wins
        else:
            coming.setdefault(member, meeting)
    found = [Due(m, last.get(m), coming.get(m), first) for m, first in seen.items()]
    return sorted(found, key=lambda d: d.order)


def late(group: MeetingCalendar, week: Week, now: datetime) -> bool:
    """Is it inside the week's reminder window: `remind_days` before its meeting, until it starts?"""
    return group.reminder_of(week) <= now < group.meeting_of(week)


def open_late(store: Store, group: MeetingCalendar, now: datetime, talk: TalkWeek, left_by: str) -> bool:
    """Keep a withdrawal from `talk` as an opening when it is late (inside the caller's transaction),
    naming the members due first to be told; False when it is not late."""
    if not late(group, talk.week, now):
        return False
    told = [d.member for d in due(store, group, now) if d.member != left_by and d.coming is None][:TOLD]
    store.db.execute(
        "INSERT INTO openings (group_id, week, paper, left_by, members, opened_at) VALUES (?, ?, ?, ?, ?, ?)",
        [
            group.group_id,
            talk.week.key,
            talk.paper.number if talk.paper else None,
            left_by,
            ",".join(told),
            datetime.now(UTC).isoformat(timespec="seconds"),
        ],
    )
    return True
