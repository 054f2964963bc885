"""Reminding presenters before their meeting, each reminder once.

    sent = reminders.send_due(store, group, transport, now)   # the scheduler and `paperbot remind`

A reminder is due from PAPERBOT_REMIND_DAYS days before the meeting, at the
meeting's time of day, until the meeting starts; it goes to whoever presents
that week then. It is a `delivery` keyed by week and presenter, so it is sent
once across restarts and processes, and a new presenter gets their own.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from bot import catalog, delivery, slots
from bot.calendar import MeetingCalendar, Week
from bot.delivery import Delivery, NoLongerWanted, NothingToSend, Result, Transport
from bot.replies import Reminder
from bot.store import Store


@dataclass(frozen=True)
class Sending:
    reminder: Reminder
    result: Result


def due(store: Store, group: MeetingCalendar, now: datetime) -> list[Reminder]:
    """Reminders whose time has come and whose meeting has not started, not yet sent."""
    # Due window [meeting - N days, meeting): only weeks from last week to N+1 weeks ahead can qualify.
    this = group.week_of(now)
    first, last = this.plus(-1), this.plus(group.remind_days // 7 + 2)
    found: list[Reminder] = []
    rows = store.db.execute(
        "SELECT s.week, s.presenter, s.paper FROM slots s "
        "LEFT JOIN deliveries d "
        "ON d.kind = 'reminder' AND d.dest = s.presenter AND d.key = s.week AND d.state = 'sent' "
        "WHERE s.kind = 'presenter' AND s.week >= ? AND s.week <= ? AND d.key IS NULL ORDER BY s.week",
        [first.key, last.key],
    ).fetchall()
    for week_key, presenter, number in rows:
        week = Week.from_key(week_key)
        meeting = group.meeting_of(week)
        if group.reminder_of(week) <= now < meeting:
            paper = catalog.by_number(store, number)
            if paper is not None:
                found.append(Reminder(week, paper, meeting, presenter))
    return found


def send_due(
    store: Store, group: MeetingCalendar, transport: Transport, now: datetime, *, force: bool = False, sleep=None
) -> list[Sending]:
    """Send what is due. `force` (`paperbot remind`: an operator asks now) skips the wait after a refusal."""
    out: list[Sending] = []
    for reminder in due(store, group, now):
        if not transport.reaches(reminder.presenter):  # the console's operator: no one to message, no failure
            out.append(Sending(reminder, Result("unreachable", f"{reminder.presenter} cannot get a direct message")))
            continue
        d = Delivery("reminder", reminder.presenter, reminder.week.key)
        kwargs = {"sleep": sleep} if sleep else {}
        build = functools.partial(_as_it_stands, store, reminder)
        result = delivery.deliver(store, d, build, transport, force=force, **kwargs)
        out.append(Sending(reminder, result))
    return out


def _as_it_stands(store: Store, reminder: Reminder) -> tuple[Reminder, int]:
    """The reminder as the week stands at this attempt: one retried after a rate limit must not
    tell someone who withdrew meanwhile that they present, nor name a paper they changed."""
    slot = slots.slot(store, reminder.week)
    if slot is None or slot.kind != "presenter" or slot.presenter != reminder.presenter:
        raise NoLongerWanted(f"{reminder.presenter} no longer presents in {reminder.week}")
    paper = reminder.paper if slot.paper == reminder.paper.number else catalog.by_number(store, slot.paper)
    if paper is None:
        raise NothingToSend(f"the paper of {reminder.week} was removed")
    return Reminder(reminder.week, paper, reminder.meeting, reminder.presenter), paper.number
