"""Who comes to a meeting: members say going or can't go, and Discord's "Interested" counts too.

    said = attendance.say(store, group, now, "U1", True, None, then=queue_post_refresh)   # `going`
    attendance.count(store, group_id, [week])            # {week key: going}, for posts, `past`, the page
    attendance.replace_interested(store, group_id, week, {"1300…"})   # Discord's event, as last read

A member has one answer a meeting (a row of `attendance`): saying the same again takes it back
(the row goes), saying the other changes it. Discord's Interested members (`event_interest`) count
as going unless they said they can't go; a member counts once, however many ways they said it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from bot.calendar import BadDate, MeetingCalendar, Week
from bot.rich_text import When
from bot.schedule.signups import Refusal
from bot.schedule.slots import read_slot
from bot.store.connection import Store

#: How far ahead a member may say they come or bring a question: a year and a week.
WEEKS_AHEAD = 53

#: What saying it did: a new answer, the other answer than before, or the same again (taken back).
Outcome = Literal["said", "changed", "took back"]


@dataclass(frozen=True)
class Said:
    week: Week
    meeting: datetime
    going: bool
    outcome: Outcome


def meeting_week(store: Store, group: MeetingCalendar, now: datetime, date: str | None, then: str = "") -> Week:
    """The meeting a member answers for or asks about: the coming one (the one `week` shows), or the
    one in the week of `date`; Refusal when that week has no meeting, its meeting is over (`then`
    says what to do instead) or is over a year away."""
    if date is None:
        week = group.coming(now)
    else:
        try:
            week = group.parse_week(date, now)
        except BadDate as e:
            raise Refusal(str(e)) from None
    meeting = group.meeting_of(week)
    if group.ends(week) <= now:
        raise Refusal("The meeting of that week (", When(meeting), ") is over", then, ".")
    if week.key > group.week_of(now).plus(WEEKS_AHEAD).key:
        raise Refusal("That meeting is over a year away: ask nearer the time.")
    slot = read_slot(store.db, week, group.group_id)
    if slot is not None and slot.kind == "skipped":
        raise Refusal("There is no meeting in the week of ", When(meeting, with_time=False), ": it is skipped.")
    return week


def say(
    store: Store,
    group: MeetingCalendar,
    now: datetime,
    member: str,
    going: bool,
    date: str | None,
    then: Callable[[Week], None] | None = None,
) -> Said:
    """Record that `member` will (or will not) come to the meeting `date` names; the same answer
    again takes it back. `then(week)` runs inside the write (the post's update is queued with it)."""
    week = meeting_week(store, group, now, date)
    with store.write() as db:
        row = db.execute(
            "SELECT going FROM attendance WHERE group_id = ? AND week = ? AND member = ?",
            [group.group_id, week.key, member],
        ).fetchone()
        outcome: Outcome
        if row is not None and bool(row[0]) == going:
            db.execute(
                "DELETE FROM attendance WHERE group_id = ? AND week = ? AND member = ?",
                [group.group_id, week.key, member],
            )
            outcome = "took back"
        else:
            db.execute(
                "INSERT INTO attendance (group_id, week, member, going, said_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (group_id, week, member) DO UPDATE SET going = excluded.going, said_at = excluded.said_at",
                [group.group_id, week.key, member, int(going), datetime.now(UTC).isoformat(timespec="seconds")],
            )
            outcome = "said" if row is None else "changed"
        if then is not None:
            then(week)
    return Said(week, group.meeting_of(week), going, outcome)


def count(store: Store, group_id: int, weeks: Iterable[Week]) -> dict[str, int]:
    """How many go to each of `weeks`' meetings (those with none left out), by week key: who said
    going, and Discord's Interested who did not say they can't, each member once."""
    keys = sorted({w.key for w in weeks})
    if not keys:
        return {}
    marks = ",".join("?" * len(keys))
    rows = store.db.execute(
        "SELECT week, count(*) FROM ("
        f" SELECT week, member FROM attendance WHERE group_id = ? AND going = 1 AND week IN ({marks})"
        " UNION"
        " SELECT i.week, i.member FROM event_interest i"
        f" WHERE i.group_id = ? AND i.week IN ({marks}) AND NOT EXISTS ("
        "  SELECT 1 FROM attendance a WHERE a.group_id = i.group_id AND a.week = i.week"
        "  AND a.member = i.member AND a.going = 0)"
        ") AS going GROUP BY week",
        [group_id, *keys, group_id, *keys],
    ).fetchall()
    return {week: n for week, n in rows}


def interested(store: Store, group_id: int, week: Week) -> set[str]:
    """The members Discord showed as Interested in the week's event, as last read."""
    rows = store.db.execute(
        "SELECT member FROM event_interest WHERE group_id = ? AND week = ?", [group_id, week.key]
    ).fetchall()
    return {r[0] for r in rows}


def replace_interested(
    store: Store, group_id: int, week: Week, members: set[str], then: Callable[[], None] | None = None
) -> bool:
    """Keep `members` as the week's Interested (read from its Discord event); True when that changed
    anything, and then `then()` runs inside the write (the post's update is queued with it)."""
    with store.write() as db:
        had = {
            r[0]
            for r in db.execute(
                "SELECT member FROM event_interest WHERE group_id = ? AND week = ?", [group_id, week.key]
            ).fetchall()
        }
        if had == members:
            return False
        for member in had - members:
            db.execute(
                "DELETE FROM event_interest WHERE group_id = ? AND week = ? AND member = ?",
                [group_id, week.key, member],
            )
        for member in sorted(members - had):
            db.execute(
                "INSERT INTO event_interest (group_id, week, member) VALUES (?, ?, ?) "
                "ON CONFLICT (group_id, week, member) DO NOTHING",
                [group_id, week.key, member],
            )
        if then is not None:
            then()
    return True


def questions(store: Store, group_id: int, week: Week) -> int:
    """How many questions members brought to the week's meeting."""
    row = store.db.execute(
        "SELECT count(*) FROM questions WHERE group_id = ? AND week = ?", [group_id, week.key]
    ).fetchone()
    return int(row[0])
