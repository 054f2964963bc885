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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from bot.calendar import BadDate, MeetingCalendar, Week
from bot.catalog import queries as catalog
from bot.catalog.papers import Paper
from bot.rich_text import Code, Mention, PaperRef, Text, When, command_code, text
from bot.schedule import openings
from bot.schedule.rows import OpenWeek, SkippedWeek, SlotLine, TalkWeek
from bot.schedule.slots import (
    HORIZON_WEEKS,
    SLOT_COLUMNS,
    Slot,
    first_week_ahead,
    latest_presenter,
    line_for,
    open_weeks,
    read_slot,
    read_slots,
)
from bot.store.connection import Store


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


#: What a change to the schedule did.
Action = Literal["signup", "withdraw", "assign", "unassign", "skip", "note"]


@dataclass(frozen=True)
class Change:
    """A change to the schedule, to confirm to its author and announce to the group."""

    action: Action
    line: SlotLine  # the week as it is now
    by: str
    before: SlotLine | None = None  # the week as it was, for withdraw/unassign
    #: What a 'note' says (a group's settings changed in chat, a swap): no week changed, or `weeks` did.
    note: Text = ()
    #: A withdrawal inside the reminder window: the week needs a stand-in soon (openings.open_late).
    opening: bool = False
    #: The weeks a note's change touched (a swap's two), whose posts are brought up to date.
    weeks: tuple[Week, ...] = ()

    @property
    def talk(self) -> TalkWeek:
        """The talk that a signup or an assign booked, or that a withdraw or an unassign cleared."""
        for line in (self.line, self.before):
            if isinstance(line, TalkWeek):
                return line
        raise ValueError(f"a {self.action} changes no talk")


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
    existing = read_slot(store.db, week, group.group_id)
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


def _check_not_presented(store: Store, group: MeetingCalendar, now: datetime, paper: Paper, member: str) -> None:
    latest = latest_presenter(store, paper, group_id=group.group_id)
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


def require_admin(member: Member, what: str, *, catalog: bool = False) -> None:
    """`catalog`: a change to the catalog, which every group shares, so only the install's admins make it
    (a group's admins act in their group only), and the refusal sends the member to them."""
    if not member.is_admin():
        who = "the install's admins, who keep the catalog" if catalog else "the group's admins"
        raise AdminOnly(f"Only admins can {what}. Ask one of {who}.")


def _book(
    store: Store, group: MeetingCalendar, now: datetime, week: Week, presenter: str, paper: Paper, by: str
) -> TalkWeek:
    try:
        store.db.execute(
            "INSERT INTO slots (group_id, week, kind, presenter, paper, booked_by, booked_at) "
            "VALUES (?, ?, 'presenter', ?, ?, ?, ?)",
            [group.group_id, week.key, presenter, paper.number, by, datetime.now(UTC).isoformat(timespec="seconds")],
        )
    except sqlite3.IntegrityError:
        # Cannot happen under BEGIN IMMEDIATE, but if it did, the row that won says why.
        _check_bookable(store, group, now, week)
        raise
    return TalkWeek(week, group.meeting_of(week), paper, presenter)


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
        found = read_slot(store.db, week, group.group_id)
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
    rows = read_slots(
        store.db,
        f"SELECT {SLOT_COLUMNS} FROM slots WHERE paper = ? AND presenter = ? AND group_id = ? ORDER BY week",
        [paper.number, member.id, group.group_id],
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
        store.db.execute(
            "DELETE FROM slots WHERE group_id = ? AND week = ? AND presenter = ?",
            [group.group_id, found.week.key, member.id],
        )
        assert isinstance(before, TalkWeek)
        opening = openings.open_late(store, group, now, before, member.id)
        change = Change("withdraw", OpenWeek(found.week, before.meeting), member.id, before, opening=opening)
        return _made(change, then)


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
        found = read_slot(store.db, week, group.group_id)
        if found is None:
            raise Refusal("The week of ", When(meeting, with_time=False), " has nobody to clear: it is open.")
        before = line_for(store, group, week, found)
        store.db.execute("DELETE FROM slots WHERE group_id = ? AND week = ?", [group.group_id, week.key])
        return _made(Change("unassign", OpenWeek(week, meeting), admin.id, before), then)


def skip(
    store: Store, group: MeetingCalendar, now: datetime, admin: Member, week_arg: str, *, then: OnChange = None
) -> Change:
    """Admin: no meeting that week: no post, no presenter."""
    require_admin(admin, "skip weeks")
    with store.write():
        week, meeting = _coming_week(group, week_arg, now)
        found = read_slot(store.db, week, group.group_id)
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
            "INSERT INTO slots (group_id, week, kind, booked_by, booked_at) VALUES (?, ?, 'skipped', ?, ?)",
            [group.group_id, week.key, admin.id, datetime.now(UTC).isoformat(timespec="seconds")],
        )
        return _made(Change("skip", SkippedWeek(week, meeting), admin.id), then)
