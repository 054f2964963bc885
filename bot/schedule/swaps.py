"""Two presenters trading weeks: one offers, the other accepts or declines.

    offer = swaps.offer(store, group, now, Member("U1"), "2026-12-17", "U2")   # U1 presents earlier
    change, offer = swaps.answer(store, group, now, Member("U2"), "accept", "2026-12-17", "U1", then=...)

An offer keeps both talks as they were when it was made; it is answered once, by the member asked,
and an accepted offer changes both weeks in one transaction, or nothing when either week has changed
since (a withdrawal, an admin's assignment): a stale offer never applies. A `Refusal` changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from bot.calendar import BadDate, MeetingCalendar, Week
from bot.catalog import queries as catalog
from bot.rich_text import Bold, Mention, Text, When, command_code, text
from bot.schedule.rows import OpenWeek
from bot.schedule.signups import Change, Member, OnChange, Refusal
from bot.schedule.slots import Booked, read_slot, read_slots
from bot.store.connection import Store


@dataclass(frozen=True)
class Offer:
    """An offer to trade weeks: `offered_by` presents `by_paper` in `by_week`, `offered_to` presents
    `to_paper` in `to_week`, as they did when it was made."""

    id: int
    group_id: int
    offered_by: str
    by_week: Week
    by_paper: int
    offered_to: str
    to_week: Week
    to_paper: int
    state: str


_COLUMNS = "id, group_id, offered_by, by_week, by_paper, offered_to, to_week, to_paper, state"


def _offer(row) -> Offer:
    return Offer(row[0], row[1], row[2], Week.from_key(row[3]), row[4], row[5], Week.from_key(row[6]), row[7], row[8])


def by_id(store: Store, offer_id: int) -> Offer:
    return _offer(store.db.execute(f"SELECT {_COLUMNS} FROM swap_offers WHERE id = ?", [offer_id]).fetchone())


def untold(store: Store) -> list[Offer]:
    """Offers whose direct message is not out yet (notes.send_due_in)."""
    rows = store.db.execute(f"SELECT {_COLUMNS} FROM swap_offers WHERE told = 0 ORDER BY id").fetchall()
    return [_offer(r) for r in rows]


def group_of(store: Store, offerer: str, day: str) -> int | None:
    """The group of `offerer`'s latest offer for the week of `day` (YYYY-MM-DD), whoever it was made to:
    an answer comes from a direct message, which is in no group's channel."""
    try:
        week = Week.of(date.fromisoformat(day))
    except ValueError:
        return None
    row = store.db.execute(
        "SELECT group_id FROM swap_offers WHERE offered_by = ? AND to_week = ? ORDER BY id DESC LIMIT 1",
        [offerer, week.key],
    ).fetchone()
    return row[0] if row else None


def _week(group: MeetingCalendar, arg: str, now: datetime) -> tuple[Week, datetime]:
    try:
        week = group.parse_week(arg, now)
    except BadDate as e:
        raise Refusal(str(e)) from None
    meeting = group.meeting_of(week)
    if meeting <= now:
        raise Refusal("The meeting of that week (", When(meeting), ") is over: only coming weeks can be swapped.")
    return week, meeting


def _talk(store: Store, group: MeetingCalendar, week: Week) -> Booked | None:
    found = read_slot(store.db, week, group.group_id)
    return found if isinstance(found, Booked) else None


def offer(store: Store, group: MeetingCalendar, now: datetime, member: Member, week_arg: str, other: str) -> Offer:
    """`member` offers their next coming talk's week for `other`'s talk in the week of `week_arg`."""
    with store.write() as db:
        week, meeting = _week(group, week_arg, now)
        theirs = _talk(store, group, week)
        if theirs is not None and theirs.presenter == member.id:
            raise Refusal(
                "You present in the week of ", When(meeting, with_time=False), " yourself: name the date of ",
                Mention(other), "'s talk.",
            )  # fmt: skip
        if other == member.id:
            raise Refusal("That is you: name the member you want to swap weeks with.")
        if theirs is None or theirs.presenter != other:
            who: tuple = (Mention(theirs.presenter), " presents then") if theirs else ("nobody presents then",)
            raise Refusal(
                Mention(other), " does not present in the week of ", When(meeting, with_time=False), ": ", *who,
                ". Their weeks: ", command_code("schedule"), ".",
            )  # fmt: skip
        mine = [
            s
            for s in read_slots(
                db,
                "SELECT week, kind, presenter, paper FROM slots WHERE group_id = ? AND kind = 'presenter' "
                "AND presenter = ? ORDER BY week",
                [group.group_id, member.id],
            )
            if isinstance(s, Booked) and group.meeting_of(s.week) > now
        ]
        if not mine:
            raise Refusal(
                "Only a presenter can swap weeks, and you have no coming talk. Sign up with ",
                command_code("signup <paper> [<date>]"),
                ".",
            )
        own = mine[0]
        if db.execute(
            "SELECT 1 FROM swap_offers WHERE group_id = ? AND offered_by = ? AND by_week = ? AND offered_to = ? "
            "AND to_week = ? AND state = 'open'",
            [group.group_id, member.id, own.week.key, other, week.key],
        ).fetchone():
            raise Refusal("You offered that swap already: ", Mention(other), " has Accept and Decline buttons.")
        (offer_id,) = db.execute(
            "INSERT INTO swap_offers (group_id, offered_by, by_week, by_paper, offered_to, to_week, to_paper, "
            "offered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [group.group_id, member.id, own.week.key, own.paper, other, week.key, theirs.paper, _now()],
        ).fetchone()
    return Offer(offer_id, group.group_id, member.id, own.week, own.paper, other, week, theirs.paper, "open")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _paper(store: Store, number: int) -> Text:
    """A paper in a note (which keeps plain segments): its number in bold and its title."""
    found = catalog.by_number(store, number)
    return (Bold(f"#{number}"), f" {found.title}" if found else "")


def answer(
    store: Store,
    group: MeetingCalendar,
    now: datetime,
    member: Member,
    decision: str,
    week_arg: str,
    offerer: str,
    *,
    then: OnChange = None,
) -> tuple[Offer, Change | None]:
    """`member` accepts or declines `offerer`'s offer for their week of `week_arg`: the offer, and the
    change an accepted one made (a note for the channel, naming both weeks)."""
    with store.write() as db:
        try:
            week = group.parse_week(week_arg, now)
        except BadDate as e:
            raise Refusal(str(e)) from None
        row = db.execute(
            f"SELECT {_COLUMNS} FROM swap_offers WHERE group_id = ? AND offered_by = ? AND to_week = ? "
            "ORDER BY offered_to = ? DESC, id DESC LIMIT 1",
            [group.group_id, offerer, week.key, member.id],
        ).fetchone()
        if row is None:
            raise Refusal(Mention(offerer), " has offered no swap for the week of ", When(group.meeting_of(week)), ".")
        found = _offer(row)
        if found.offered_to != member.id:
            raise Refusal("This offer is for ", Mention(found.offered_to), " to answer, not you: nothing changed.")
        if found.state != "open":
            raise Refusal(f"You {found.state} this offer already: nothing changed.")
        if decision == "decline":
            db.execute("UPDATE swap_offers SET state = 'declined', answered_at = ? WHERE id = ?", [_now(), found.id])
            return found, None
        by_meeting, to_meeting = group.meeting_of(found.by_week), group.meeting_of(found.to_week)
        if min(by_meeting, to_meeting) <= now:
            raise Refusal("One of the two meetings is over: the weeks can no longer be swapped. Nothing changed.")
        ours, theirs = _talk(store, group, found.by_week), _talk(store, group, found.to_week)
        if ours != Booked(found.by_week, "presenter", offerer, found.by_paper) or theirs != Booked(
            found.to_week, "presenter", member.id, found.to_paper
        ):
            raise Refusal(
                "The weeks changed since ", Mention(offerer), " offered this swap, so it no longer stands: "
                "nothing changed. See ", command_code("schedule"), ".",
            )  # fmt: skip
        _trade(store, group, found, member.id)
        db.execute("UPDATE swap_offers SET state = 'accepted', answered_at = ? WHERE id = ?", [_now(), found.id])
        note = text(
            "🔁 ", Mention(offerer), " and ", Mention(member.id), " swapped weeks: ", Mention(member.id),
            " presents ", *_paper(store, found.to_paper), " on ", When(by_meeting), ", and ", Mention(offerer),
            " presents ", *_paper(store, found.by_paper), " on ", When(to_meeting), ".",
        )  # fmt: skip
        change = Change(
            "note", OpenWeek(found.by_week, by_meeting), member.id, note=note, weeks=(found.by_week, found.to_week)
        )
        if then is not None:
            then(change)
        return found, change


def _trade(store: Store, group: MeetingCalendar, offer: Offer, accepter: str) -> None:
    """Both weeks change hands, each talk with its links (which the slots' triggers drop on a change)."""
    db = store.db
    links = db.execute(
        "SELECT week, url, added_by, added_at FROM talk_links WHERE group_id = ? AND week IN (?, ?)",
        [group.group_id, offer.by_week.key, offer.to_week.key],
    ).fetchall()
    moved = {offer.by_week.key: offer.to_week.key, offer.to_week.key: offer.by_week.key}
    for week, presenter, paper in (
        (offer.by_week, accepter, offer.to_paper),
        (offer.to_week, offer.offered_by, offer.by_paper),
    ):
        db.execute(
            "UPDATE slots SET presenter = ?, paper = ?, booked_by = ?, booked_at = ? WHERE group_id = ? AND week = ?",
            [presenter, paper, accepter, _now(), group.group_id, week.key],
        )
    for week, url, added_by, added_at in links:
        db.execute(
            "INSERT INTO talk_links (group_id, week, url, added_by, added_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (group_id, week, url) DO NOTHING",
            [group.group_id, moved[week], url, added_by, added_at],
        )
