"""Who presents which paper in which week: sign-ups, withdrawals, assignments, skips.

    change = signups.signup(store, group, now, Member("U1"), "streaming-diloco")
    change.line.week, change.line.presenter      # the first open week, U1

A week has at most one slot: a presenter with their paper, or a skip (no
meeting). The table's primary key makes that true under any race; every change
runs in one BEGIN IMMEDIATE transaction, so whoever comes second reads the
winner's row and gets a `Refusal` that says who has the week and which weeks
are still open. A `Refusal` always means nothing changed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, NamedTuple

from bot import catalog
from bot.calendar import BadDate, MeetingCalendar, Week
from bot.catalog import Paper
from bot.replies import Code, Mention, PaperRef, SlotLine, Text, When, command_code, text
from bot.store import Store

SCHEDULE_PRESENTERS = 26
SCHEDULE_OPEN = 4
HORIZON_WEEKS = 520  # ten years: how far ahead a week may be booked, and "the first open week" looked for


class Refusal(Exception):
    """The request was wrong or impossible and changed nothing; `.text` says what to do instead."""

    def __init__(self, *segments):
        self.text: Text = text(*segments)
        super().__init__("".join(s if isinstance(s, str) else "…" for s in self.text))


class AdminOnly(Refusal):
    pass


@dataclass(frozen=True)
class Member:
    """A person using the bot: their platform user ID, and how to tell whether they are an admin."""

    id: str
    is_admin: Callable[[], bool] = lambda: False


#: A row of `slots`: a week with a presenter, or a week without a meeting.
SlotKind = Literal["presenter", "skipped"]
#: What a change to the schedule did.
Action = Literal["signup", "withdraw", "assign", "unassign", "skip"]


class Slot(NamedTuple):
    week: Week
    kind: SlotKind
    presenter: str | None
    paper: int | None


@dataclass(frozen=True)
class Change:
    """A change to the schedule, to confirm to its author and announce to the group."""

    action: Action
    line: SlotLine  # the week as it is now
    by: str
    before: SlotLine | None = None  # the week as it was, for withdraw/unassign


# -- reading -----------------------------------------------------------------


#: The columns of a Slot, in its order (who booked it is kept in the table for the record, not read).
SLOT_COLUMNS = "week, kind, presenter, paper"


def _slot(db, week: Week) -> Slot | None:
    row = db.execute(f"SELECT {SLOT_COLUMNS} FROM slots WHERE week = ?", [week.key]).fetchone()
    return _as_slot(row) if row else None


def _as_slot(row) -> Slot:
    return Slot(Week.from_key(row[0]), row[1], row[2], row[3])


def slot(store: Store, week: Week) -> Slot | None:
    return _slot(store.db, week)


def _slots(db, sql: str, params: Iterable) -> list[Slot]:
    return [_as_slot(r) for r in db.execute(sql, list(params))]


def _papers_for(store: Store, slots: Iterable[Slot]) -> dict[int, Paper]:
    return catalog.many(store, {s.paper for s in slots if s.paper is not None})


def line_for(
    store: Store, group: MeetingCalendar, week: Week, slot: Slot | None = None, papers: dict | None = None
) -> SlotLine:
    if slot is None:
        slot = _slot(store.db, week)
    meeting = group.meeting_of(week)
    if slot is None:
        return SlotLine(week, meeting, "open")
    if slot.kind == "skipped":
        return SlotLine(week, meeting, "skipped")
    paper = papers.get(slot.paper) if papers is not None else catalog.by_number(store, slot.paper)
    return SlotLine(week, meeting, "presenter", paper, slot.presenter)


def _lines(store: Store, group: MeetingCalendar, slots: list[Slot]) -> list[SlotLine]:
    papers = _papers_for(store, slots)
    return [line_for(store, group, s.week, s, papers) for s in slots]


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
            r[0] for r in store.db.execute("SELECT week FROM slots WHERE week >= ? AND week < ?", [week.key, until.key])
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
            "LEFT JOIN papers p ON p.number = s.paper WHERE s.week >= ? AND s.week < ? ORDER BY s.week LIMIT ?",
            [cursor.key, end.key, batch],
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


def mine(store: Store, group: MeetingCalendar, now: datetime, member: str) -> tuple[list[SlotLine], list[SlotLine]]:
    """A member's upcoming and past slots (past: most recent first)."""
    slots = _slots(
        store.db,
        f"SELECT {SLOT_COLUMNS} FROM slots WHERE presenter = ? ORDER BY week",
        [member],
    )
    lines = _lines(store, group, slots)
    upcoming = [line for line in lines if line.meeting > now]
    past = [line for line in reversed(lines) if line.meeting <= now]
    return upcoming, past


def history(store: Store, group: MeetingCalendar, paper: Paper) -> list[SlotLine]:
    """Every week that paper was or will be presented."""
    slots = _slots(
        store.db,
        f"SELECT {SLOT_COLUMNS} FROM slots WHERE paper = ? AND kind = 'presenter' ORDER BY week",
        [paper.number],
    )
    return [line_for(store, group, s.week, s, {paper.number: paper}) for s in slots]


# -- deciding ----------------------------------------------------------------


def find_paper(store: Store, ref: str, *, with_tags: bool = False) -> Paper:
    paper = catalog.find(store, ref, with_tags=with_tags)
    if paper is not None:
        return paper
    similar = catalog.similar_ids(store, ref)
    hint: tuple = (
        (" Did you mean ", Code(similar[0]), "?")
        if similar
        else (" Find it with ", command_code("search <words>"), ".")
    )
    raise Refusal("There is no paper ", Code(ref[:60]), ".", *hint)


def _week(group: MeetingCalendar, arg: str, now: datetime, *, booking: bool = True) -> Week:
    """The week a <date> argument names; to book it, within the ten years that bookings may reach."""
    try:
        week = group.parse_week(arg, now)
    except BadDate as e:
        raise Refusal(str(e)) from None
    last = first_week_ahead(group, now).plus(HORIZON_WEEKS - 1)
    if booking and week > last:
        raise Refusal(
            "That week is too far ahead: bookings reach 520 weeks, about ten years. Pick a week up to ",
            Code(group.day_of(last).isoformat()),
            ".",
        )
    return week


def _open_hint(store: Store, group: MeetingCalendar, now: datetime) -> tuple:
    free = open_weeks(store, group, now, 3)
    if not free:
        return (" No week is open yet.",)
    parts: list = [" Open weeks: "]
    for i, week in enumerate(free):
        parts += [", " if i else "", Code(group.day_of(week).isoformat())]
    return (*parts, ".")


def _check_bookable(
    store: Store,
    group: MeetingCalendar,
    now: datetime,
    week: Week,
    *,
    admin_hint: bool = False,
    member: str | None = None,
) -> None:
    meeting = group.meeting_of(week)
    if meeting <= now:
        raise Refusal("The meeting of that week (", When(meeting), ") is over.", *_open_hint(store, group, now))
    existing = _slot(store.db, week)
    if existing is None:
        return
    if existing.kind == "skipped":
        raise Refusal(
            "There is no meeting in the week of ",
            When(meeting, with_time=False),
            ": it is skipped.",
            *(
                (" Clear the skip with ", command_code(f"unassign {group.day_of(week)}"), " first.")
                if admin_hint
                else ()
            ),
            *_open_hint(store, group, now),
        )
    paper = catalog.by_number(store, existing.paper)
    if existing.presenter == member:  # a second click of the same button, say
        raise Refusal(
            "You're already signed up for the week of ",
            When(meeting, with_time=False),
            ": you present ",
            *((PaperRef(paper),) if paper else ("a paper",)),
            ". Your slots: ",
            command_code("mine"),
        )
    raise Refusal(
        "The week of ",
        When(meeting, with_time=False),
        " is taken: ",
        Mention(existing.presenter),
        " presents ",
        *((PaperRef(paper),) if paper else ("a paper",)),
        ".",
        *((" Clear it with ", command_code(f"unassign {group.day_of(week)}"), " first.") if admin_hint else ()),
        *_open_hint(store, group, now),
    )


def latest_presenter(store: Store, paper: Paper, besides: Week | None = None) -> tuple[Week, str] | None:
    """The paper's latest presenter slot (a coming one before a past one), in a week other than `besides`."""
    row = store.db.execute(
        "SELECT week, presenter FROM slots WHERE paper = ? AND kind = 'presenter' AND week != ? "
        "ORDER BY week DESC LIMIT 1",
        [paper.number, besides.key if besides else ""],
    ).fetchone()
    return (Week.from_key(row[0]), row[1]) if row else None


def _check_not_presented(store: Store, group: MeetingCalendar, now: datetime, paper: Paper, member: str) -> None:
    latest = latest_presenter(store, paper)
    if latest is None:
        return
    week, presenter = latest
    meeting = group.meeting_of(week)
    if meeting > now:  # coming up
        if presenter == member:
            raise Refusal(
                "You already present ", PaperRef(paper), " on ", When(meeting), ". Your slots: ", command_code("mine")
            )
        raise Refusal(
            PaperRef(paper),
            " is taken: ",
            Mention(presenter),
            " presents it on ",
            When(meeting),
            ". Pick another paper.",
        )
    who: tuple = ("you",) if presenter == member else (Mention(presenter),)
    raise Refusal(
        PaperRef(paper),
        " was presented by ",
        *who,
        " (",
        When(meeting, with_time=False),
        "). Pick another paper, or ask an admin to repeat it.",
    )


#: Called with each change inside its write transaction: what it writes (the change's
#: announcement in the outbox) is saved with the change or not at all.
OnChange = Callable[[Change], None] | None


def _made(change: Change, then: OnChange) -> Change:
    if then is not None:
        then(change)
    return change


def require_admin(member: Member, what: str) -> None:
    if not member.is_admin():
        raise AdminOnly(f"Only admins can {what}. Ask one of the group's admins.")


def _book(
    store: Store, group: MeetingCalendar, now: datetime, week: Week, presenter: str, paper: Paper, by: str
) -> SlotLine:
    try:
        store.db.execute(
            "INSERT INTO slots (week, kind, presenter, paper, booked_by, booked_at) "
            "VALUES (?, 'presenter', ?, ?, ?, ?)",
            [week.key, presenter, paper.number, by, datetime.now(UTC).isoformat(timespec="seconds")],
        )
    except sqlite3.IntegrityError:
        # Cannot happen under BEGIN IMMEDIATE, but if it did, the row that won says why.
        _check_bookable(store, group, now, week)
        raise
    return SlotLine(week, group.meeting_of(week), "presenter", paper, presenter)


def _target_week(
    store: Store,
    group: MeetingCalendar,
    now: datetime,
    week_arg: str | None,
    *,
    admin_hint: bool = False,
    member: str | None = None,
) -> Week:
    """The week that `week_arg` names, if it can be booked, or the first open week."""
    if week_arg:
        week = _week(group, week_arg, now)
        _check_bookable(store, group, now, week, admin_hint=admin_hint, member=member)
        return week
    free = open_weeks(store, group, now, 1)
    if not free:
        raise Refusal("No week is open in the coming ten years.")
    return free[0]


def _coming_week(
    group: MeetingCalendar, week_arg: str, now: datetime, over: str = ".", *, booking: bool = True
) -> tuple[Week, datetime]:
    """The week that `week_arg` names and its meeting, refused if the meeting is over."""
    week = _week(group, week_arg, now, booking=booking)
    meeting = group.meeting_of(week)
    if meeting <= now:
        raise Refusal("The meeting of that week (", When(meeting), ") is over", over)
    return week, meeting


def signup(
    store: Store,
    group: MeetingCalendar,
    now: datetime,
    member: Member,
    paper_ref: str,
    week_arg: str | None = None,
    *,
    then: OnChange = None,
) -> Change:
    """Sign `member` up to present a paper, in the week of `week_arg` or the first open one."""
    with store.write():
        paper = find_paper(store, paper_ref)
        week = _target_week(store, group, now, week_arg, member=member.id)
        _check_not_presented(store, group, now, paper, member.id)
        line = _book(store, group, now, week, member.id, paper, member.id)
        return _made(Change("signup", line, member.id), then)


def _own_upcoming(store: Store, group: MeetingCalendar, now: datetime, member: Member, ref: str) -> Slot:
    try:
        week = group.parse_week(ref, now)
    except BadDate:
        week = None
    if week is not None:
        found = _slot(store.db, week)
        meeting = group.meeting_of(week)
        if found is None or found.kind != "presenter":
            raise Refusal(
                "Nobody presents in the week of ",
                When(meeting, with_time=False),
                ". Your slots: ",
                command_code("mine"),
            )
        if found.presenter != member.id:
            raise Refusal(
                "The week of ",
                When(meeting, with_time=False),
                " is ",
                Mention(found.presenter),
                "'s slot, not yours: only they can withdraw (or an admin can unassign it).",
            )
        if meeting <= now:
            raise Refusal("That meeting (", When(meeting), ") is over.")
        return found
    paper = find_paper(store, ref)
    rows = _slots(
        store.db,
        f"SELECT {SLOT_COLUMNS} FROM slots WHERE paper = ? AND presenter = ? ORDER BY week",
        [paper.number, member.id],
    )
    ahead = [s for s in rows if group.meeting_of(s.week) > now]
    if not ahead:
        raise Refusal("You have no coming slot for ", PaperRef(paper), ". Your slots: ", command_code("mine"))
    return ahead[0]


def withdraw(
    store: Store, group: MeetingCalendar, now: datetime, member: Member, ref: str, *, then: OnChange = None
) -> Change:
    """Give up one of `member`'s own coming slots, named by its paper or its date."""
    with store.write():
        found = _own_upcoming(store, group, now, member, ref)
        before = line_for(store, group, found.week, found)
        store.db.execute("DELETE FROM slots WHERE week = ? AND presenter = ?", [found.week.key, member.id])
        return _made(Change("withdraw", SlotLine(found.week, before.meeting, "open"), member.id, before), then)


def assign(
    store: Store,
    group: MeetingCalendar,
    now: datetime,
    admin: Member,
    user: str,
    paper_ref: str,
    week_arg: str | None = None,
    *,
    then: OnChange = None,
) -> Change:
    """Admin: put `user` in a week (default: the first open one) with a paper; papers may repeat."""
    require_admin(admin, "assign weeks")
    with store.write():
        paper = find_paper(store, paper_ref)
        week = _target_week(store, group, now, week_arg, admin_hint=True)
        line = _book(store, group, now, week, user, paper, admin.id)
        return _made(Change("assign", line, admin.id), then)


def unassign(
    store: Store, group: MeetingCalendar, now: datetime, admin: Member, week_arg: str, *, then: OnChange = None
) -> Change:
    """Admin: clear a week's presenter or skip."""
    require_admin(admin, "clear weeks")
    with store.write():
        # Clearing is not booking: a week booked beyond the horizon before there was one can be cleared.
        week, meeting = _coming_week(group, week_arg, now, over="; its record stays.", booking=False)
        found = _slot(store.db, week)
        if found is None:
            raise Refusal("The week of ", When(meeting, with_time=False), " has nobody to clear: it is open.")
        before = line_for(store, group, week, found)
        store.db.execute("DELETE FROM slots WHERE week = ?", [week.key])
        return _made(Change("unassign", SlotLine(week, meeting, "open"), admin.id, before), then)


def skip(
    store: Store, group: MeetingCalendar, now: datetime, admin: Member, week_arg: str, *, then: OnChange = None
) -> Change:
    """Admin: no meeting that week: no post, no presenter."""
    require_admin(admin, "skip weeks")
    with store.write():
        week, meeting = _coming_week(group, week_arg, now)
        found = _slot(store.db, week)
        if found is not None and found.kind == "skipped":
            raise Refusal("The week of ", When(meeting, with_time=False), " is already skipped.")
        if found is not None:
            raise Refusal(
                "The week of ",
                When(meeting, with_time=False),
                " has a presenter (",
                Mention(found.presenter),
                "). Clear it with ",
                command_code(f"unassign {group.day_of(week)}"),
                " first.",
            )
        store.db.execute(
            "INSERT INTO slots (week, kind, booked_by, booked_at) VALUES (?, 'skipped', ?, ?)",
            [week.key, admin.id, datetime.now(UTC).isoformat(timespec="seconds")],
        )
        return _made(Change("skip", SlotLine(week, meeting, "skipped"), admin.id), then)


def waiting_papers(store: Store, n: int, focus_tag: str | None = None) -> list[Paper]:
    """Papers nobody has presented or signed up for, lowest number first."""
    focus = ""
    args: list = []
    if focus_tag:
        focus = "AND p.number IN (SELECT paper FROM paper_tags WHERE tag = (SELECT id FROM tags WHERE name = ?))"
        args.append(focus_tag)
    rows = store.db.execute(
        "SELECT p.number FROM papers p WHERE p.number NOT IN (SELECT paper FROM slots WHERE kind = 'presenter') "
        f"{focus} ORDER BY p.number LIMIT ?",
        [*args, n],
    ).fetchall()
    return [p for (number,) in rows if (p := catalog.by_number(store, number)) is not None]
