"""Reminding presenters before their meeting, each reminder once.

    sent = reminders.send_due(store, group, transport, now)   # the scheduler and `paperbot remind`

A reminder is due from PAPERBOT_REMIND_DAYS days before the meeting, at the
meeting's time of day, until the meeting starts; it goes to whoever presents
that week then. It is a `delivery` keyed by week and presenter, so it is sent
once across restarts and processes, and a new presenter gets their own.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from datetime import datetime

from bot.calendar import MeetingCalendar, Week
from bot.catalog import queries as catalog
from bot.delivery import sending as delivery
from bot.delivery.sending import Delivery, NoLongerWanted, NothingToSend, Result, Transport
from bot.schedule import questions, slots
from bot.schedule.rows import Reminder
from bot.store.connection import Store


@dataclass(frozen=True)
class Sending:
    reminder: Reminder
    result: Result


def key(week: Week, group_id: int) -> str:
    """A reminder's delivery key: its week, and for a group other than the first its number too, so
    that one member presenting in two groups in a week is reminded of each (group 1's reminders
    keep the keys they had before there were groups, so none is sent again)."""
    return week.key if group_id == 1 else f"{week.key}/{group_id}"


#: `key` in SQL, on a slot `s`.
KEY_SQL = "CASE s.group_id WHEN 1 THEN s.week ELSE s.week || '/' || s.group_id END"


def due_in(store: Store, calendars: list[MeetingCalendar], now: datetime) -> list[tuple[MeetingCalendar, Reminder]]:
    """The reminders due in each group of `calendars`, with one query for them all."""
    if not calendars:
        return []
    by_id = {c.group_id: c for c in calendars}
    # Due window [meeting - N days, meeting): only weeks from last week to N+1 weeks ahead can qualify.
    first = min(c.week_of(now).plus(-1) for c in calendars)
    last = max(c.week_of(now).plus(c.remind_days // 7 + 2) for c in calendars)
    only = "s.group_id = ? AND " if len(calendars) == 1 else ""
    found: list[tuple[MeetingCalendar, Reminder]] = []
    rows = store.db.execute(
        "SELECT s.group_id, s.week, s.presenter, s.paper FROM slots s "
        "LEFT JOIN deliveries d "
        f"ON d.kind = 'reminder' AND d.dest = s.presenter AND d.key = {KEY_SQL} AND d.state = 'sent' "
        f"WHERE {only}s.kind = 'presenter' AND s.week >= ? AND s.week <= ? AND d.key IS NULL "
        "ORDER BY s.week, s.group_id",
        [*([calendars[0].group_id] if only else []), first.key, last.key],
    ).fetchall()
    for group_id, week_key, presenter, number in rows:
        group = by_id.get(group_id)
        if group is None:
            continue
        week = Week.from_key(week_key)
        meeting = group.meeting_of(week)
        if group.reminder_of(week) <= now < meeting:
            paper = catalog.by_number(store, number)
            if paper is not None:
                found.append((group, Reminder(week, paper, meeting, presenter, group.name)))
    return found


def send_due(
    store: Store, group: MeetingCalendar, transport: Transport, now: datetime, *, force: bool = False, sleep=None
) -> list[Sending]:
    """Send what is due. `force` (`paperbot remind`: an operator asks now) skips the wait after a refusal."""
    return send_due_in(store, [group], transport, now, force=force, sleep=sleep)


def send_due_in(
    store: Store,
    calendars: list[MeetingCalendar],
    transport: Transport,
    now: datetime,
    *,
    force: bool = False,
    sleep=None,
) -> list[Sending]:
    """Send what is due in every group of `calendars` (see send_due)."""
    out: list[Sending] = []
    for group, reminder in due_in(store, calendars, now):
        if not transport.reaches(reminder.presenter):  # the console's operator: no one to message, no failure
            out.append(Sending(reminder, Result("unreachable", f"{reminder.presenter} cannot get a direct message")))
            continue
        d = Delivery("reminder", reminder.presenter, key(reminder.week, group.group_id))
        kwargs = {"sleep": sleep} if sleep else {}
        build = functools.partial(_as_it_stands, store, reminder, group.group_id)
        result = delivery.deliver(store, d, build, transport, force=force, **kwargs)
        out.append(Sending(reminder, result))
    return out


def _as_it_stands(store: Store, reminder: Reminder, group_id: int = 1) -> tuple[Reminder, int]:
    """The reminder as the week stands at this attempt: one retried after a rate limit must not
    tell someone who withdrew meanwhile that they present, nor name a paper they changed."""
    slot = slots.slot(store, reminder.week, group_id)
    if slot is None or slot.kind != "presenter" or slot.presenter != reminder.presenter:
        raise NoLongerWanted(f"{reminder.presenter} no longer presents in {reminder.week}")
    paper = reminder.paper if slot.paper == reminder.paper.number else catalog.by_number(store, slot.paper)
    if paper is None:
        raise NothingToSend(f"the paper of {reminder.week} was removed")
    asked = tuple(questions.of_meeting(store, group_id, reminder.week))
    return replace(reminder, paper=paper, questions=asked), paper.number
