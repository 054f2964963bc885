"""Direct messages that must arrive once: a swap's offer to the member asked, an open slot's call to
the members due first.

    notes.send_due_in(store, calendars, transport, now)    # after the command, and at each scheduler check

Each is a `delivery` (kind 'note') keyed by what it is about (`swap/3`, `opening/5`), so it goes
once across a replayed request, a crash mid-send, restarts and processes; the row it comes from is
marked `told` once every delivery of it is settled, so that later checks pass it by. A note no
longer true when its turn comes (the offer answered, the slot taken, the meeting begun) is not sent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from bot.calendar import MeetingCalendar, Week
from bot.catalog import queries as catalog
from bot.delivery import sending as delivery
from bot.delivery.sending import Delivery, NoLongerWanted, Result, Transport
from bot.rich_text import Button, Mention, PaperRef, Text, When, command_code, text
from bot.schedule import groups, slots, swaps
from bot.store.connection import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Note:
    """A direct message to `to`, with buttons that run commands as they who click them."""

    to: str
    key: str  # the delivery's key: what the note is about, found again by it
    said: Text
    buttons: tuple[Button, ...] = ()


#: Results after which a note is settled: delivered, not wanted any more, or no one to send it to.
SETTLED = ("sent", "found", "done", "moot", "unreachable")


def _send(store: Store, note: Note, transport: Transport, check, **how) -> Result:
    """Deliver `note` once; `check()` raises NoLongerWanted when it is no longer true."""
    if not transport.reaches(note.to):
        return Result("unreachable", f"{note.to} cannot get a direct message")

    def build() -> tuple[Note, None]:
        check()
        return note, None

    return delivery.deliver(store, Delivery("note", note.to, note.key), build, transport, **how)


def offer_note(store: Store, group: MeetingCalendar, offer) -> Note:
    """What the member asked to swap is told, with Accept and Decline buttons."""
    mine, theirs = catalog.by_number(store, offer.to_paper), catalog.by_number(store, offer.by_paper)
    day = group.day_of(offer.to_week).isoformat()
    said = text(
        "🔁 ",
        Mention(offer.offered_by),
        " asks to swap weeks with you: you would present ",
        *((PaperRef(mine),) if mine else ("your paper",)),
        " on ",
        When(group.meeting_of(offer.by_week)),
        " instead of ",
        When(group.meeting_of(offer.to_week)),
        ", and they would present ",
        *((PaperRef(theirs),) if theirs else ("theirs",)),
        " in your week. Or type ",
        command_code(f"swap accept {day} {offer.offered_by}"),
        ".",
    )
    buttons = (
        Button("Accept", f"swap accept {day} {offer.offered_by}", primary=True),
        Button("Decline", f"swap decline {day} {offer.offered_by}"),
    )
    return Note(offer.offered_to, f"swap/{offer.id}", said, buttons)


def opening_note(store: Store, group: MeetingCalendar, week: Week, paper: int | None, member: str, key: str) -> Note:
    """What a member due to present is told of a week left open inside the reminder window."""
    found = catalog.by_number(store, paper) if paper is not None else None
    day = group.day_of(week).isoformat()
    signup = f"signup {found.number} {day}" if found else f"signup <paper> {day}"
    said = text(
        "🆘 Nobody presents on ",
        When(group.meeting_of(week)),
        " any more",
        *((": the talk was to be ", PaperRef(found)) if found else ()),
        ". You are among the members due to present: could you step in? ",
        command_code(signup),
    )
    buttons = (Button("Sign up", signup, primary=True),) if found else ()
    return Note(member, key, said, buttons)


def send_due_for(
    store: Store, env: groups.Group, platform: str | None, transport: Transport, now: datetime, **how
) -> int:
    """send_due_in for the groups that `platform`'s bot posts to (`env`: the install's settings)."""
    return send_due_in(store, [g.calendar for g in groups.posting(store, env, platform)], transport, now, **how)


def send_due_in(store: Store, calendars: list[MeetingCalendar], transport: Transport, now: datetime, **how) -> int:
    """Send the notes not yet told of the groups of `calendars` (the ones `transport` reaches); how many
    were sent now. `how`: deliver's keywords."""
    by_id = {c.group_id: c for c in calendars}
    sent = 0
    for offer in swaps.untold(store):
        group = by_id.get(offer.group_id)
        if group is None:
            continue

        def still_open(offer=offer, group=group) -> None:
            if swaps.by_id(store, offer.id).state != "open":
                raise NoLongerWanted(f"swap offer {offer.id} was answered")
            if min(group.meeting_of(offer.by_week), group.meeting_of(offer.to_week)) <= now:
                raise NoLongerWanted(f"a meeting of swap offer {offer.id} has begun")

        result = _send(store, offer_note(store, group, offer), transport, still_open, **how)
        sent += result.status == "sent"
        if result.status in SETTLED:
            _told(store, "swap_offers", offer.id)
    rows = store.db.execute(
        "SELECT id, group_id, week, paper, members FROM openings WHERE told = 0 ORDER BY id"
    ).fetchall()
    for opening_id, gid, week_key, paper, members in rows:
        group = by_id.get(gid)
        if group is None:
            continue
        week = Week.from_key(week_key)

        def still_free(week=week, group=group) -> None:
            if slots.slot(store, week, group.group_id) is not None:
                raise NoLongerWanted(f"{week} has a presenter again")
            if group.meeting_of(week) <= now:
                raise NoLongerWanted(f"the meeting of {week} has begun")

        settled = True
        for member in filter(None, members.split(",")):
            note = opening_note(store, group, week, paper, member, f"opening/{opening_id}")
            result = _send(store, note, transport, still_free, **how)
            sent += result.status == "sent"
            settled = settled and result.status in SETTLED
        if settled:
            _told(store, "openings", opening_id)
    return sent


def _told(store: Store, table: str, row: int) -> None:
    with store.write() as db:
        db.execute(f"UPDATE {table} SET told = 1 WHERE id = ?", [row])
