"""Weeks, meeting times and the weekly post's slots, in the group's time zone.

    >>> tz = ZoneInfo("Asia/Shanghai")
    >>> week = Week.containing(datetime(2026, 12, 6, 20, 0, tzinfo=ZoneInfo("UTC")), tz)
    >>> week.key                      # Monday 04:00 in Shanghai: already week 50 there
    '2026-W50'
    >>> PostSchedule("0 9 * * mon", tz).slot(week)
    datetime.datetime(2026, 12, 7, 9, 0, tzinfo=zoneinfo.ZoneInfo(key='Asia/Shanghai'))

A week is an ISO week of the group's zone, never of UTC: a Monday 09:00 post in
Shanghai happens on Sunday in UTC and still belongs to Monday's week.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import NamedTuple
from zoneinfo import ZoneInfo

from apscheduler.triggers.cron import CronTrigger

DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_WORDS = {name: i for i, name in enumerate(DAY_NAMES)} | {
    full: i for i, full in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
}


class Week(NamedTuple):
    """An ISO week: `Week(2026, 49)` is Monday 30 Nov to Sunday 6 Dec 2026.

    A named tuple, so weeks hash, compare and sort at C speed: a schedule handles dozens a request.
    """

    year: int
    number: int

    @classmethod
    def of(cls, day: date) -> Week:
        return _week_of(day)

    @classmethod
    def containing(cls, moment: datetime, tz: ZoneInfo) -> Week:
        return cls.of(moment.astimezone(tz).date())

    @classmethod
    def from_key(cls, key: str) -> Week:
        return _week_from_key(key)

    @property
    def key(self) -> str:
        return _key(self)

    @property
    def monday(self) -> date:
        return _monday(self)

    def day(self, weekday: int) -> date:
        return self.monday + timedelta(days=weekday)

    def start(self, tz: ZoneInfo) -> datetime:
        """Monday 00:00 in `tz`."""
        return datetime.combine(self.monday, time(0), tzinfo=tz)

    def end(self, tz: ZoneInfo) -> datetime:
        """The next Monday 00:00 in `tz`: the first moment after this week."""
        return self.plus(1).start(tz)

    def plus(self, weeks: int) -> Week:
        return _plus(self, weeks)

    def __str__(self) -> str:
        return self.key


class Meeting(NamedTuple):
    """When the group meets each week: `Meeting.parse("thu 16:00")`."""

    weekday: int
    at: time

    @classmethod
    def parse(cls, text: str) -> Meeting:
        m = re.fullmatch(r"\s*([A-Za-z]+)\s+(\d{1,2}):(\d{2})\s*", text)
        if not m or m[1].lower() not in _DAY_WORDS:
            raise ValueError(f"{text!r} is not a weekday and a time such as 'thu 16:00'")
        hour, minute = int(m[2]), int(m[3])
        if hour > 23 or minute > 59:
            raise ValueError(f"{text!r} has no such time of day (use 24-hour HH:MM)")
        return cls(_DAY_WORDS[m[1].lower()], time(hour, minute))

    def time_in(self, week: Week, tz: ZoneInfo) -> datetime:
        """This week's meeting as an aware datetime."""
        return _meeting_time(self, week, tz)

    def reminder_in(self, week: Week, tz: ZoneInfo, days_before: int) -> datetime:
        """`days_before` calendar days before the meeting, at its time of day (DST-safe)."""
        return _local(week.day(self.weekday) - timedelta(days=days_before), self.at, tz)

    def __str__(self) -> str:
        return f"{DAY_NAMES[self.weekday]} {self.at:%H:%M}"


# Weeks and meeting times are pure functions of their inputs, asked for many
# times a request (a schedule walks dozens of weeks): remember recent ones.


@lru_cache(maxsize=8192)
def _week_of(day: date) -> Week:
    iso = day.isocalendar()
    return Week(iso.year, iso.week)


@lru_cache(maxsize=8192)
def _monday(week: Week) -> date:
    return date.fromisocalendar(week.year, week.number, 1)


@lru_cache(maxsize=8192)
def _key(week: Week) -> str:
    return f"{week.year}-W{week.number:02d}"


@lru_cache(maxsize=8192)
def _plus(week: Week, weeks: int) -> Week:
    return _week_of(_monday(week) + timedelta(weeks=weeks))


@lru_cache(maxsize=8192)
def _week_from_key(key: str) -> Week:
    m = re.fullmatch(r"(\d{4})-W(\d{2})", key)
    if not m:
        raise ValueError(f"not a week key: {key!r}")
    week = Week(int(m[1]), int(m[2]))
    date.fromisocalendar(week.year, week.number, 1)  # raises for W53 of a 52-week year
    return week


@lru_cache(maxsize=8192)
def _meeting_time(meeting: Meeting, week: Week, tz: ZoneInfo) -> datetime:
    return _local(week.day(meeting.weekday), meeting.at, tz)


def _local(day: date, at: time, tz: ZoneInfo) -> datetime:
    # Round-trip through UTC so that a wall time skipped by a DST change lands on
    # a real instant instead of a datetime that compares oddly.
    return datetime.combine(day, at, tzinfo=tz).astimezone(ZoneInfo("UTC")).astimezone(tz)


class ScheduleError(ValueError):
    pass


class PostSchedule:
    """The weekly post's crontab, read with crontab's own day numbers.

    APScheduler 3 numbers weekdays from Monday = 0, so handing it `0 9 * * 1`
    would post on Tuesdays. We translate crontab's Sunday = 0 (or 7) into day
    names before APScheduler sees the expression.
    """

    def __init__(self, expr: str, tz: ZoneInfo):
        self.expr = expr.strip()
        self.tz = tz
        fields = self.expr.split()
        if len(fields) != 5:
            raise ScheduleError(
                f"{expr!r} must have 5 fields (minute hour day-of-month month day-of-week), e.g. '0 9 * * mon'"
            )
        minute, hour, dom, month, dow = fields
        try:
            self.trigger = CronTrigger(
                minute=minute,
                hour=hour,
                day=dom,
                month=month,
                day_of_week=_crontab_weekdays(dow),
                timezone=tz,
            )
            # The same fields over wall-clock time (UTC has no gaps), for `slot`: see there.
            self._wall = CronTrigger(
                minute=minute, hour=hour, day=dom, month=month, day_of_week=_crontab_weekdays(dow), timezone=UTC
            )
        except ValueError as e:
            raise ScheduleError(f"{expr!r} is not a valid crontab: {e}") from None
        if dom not in ("*", "?") and dow not in ("*", "?"):
            # crontab ORs the two fields, APScheduler ANDs them: refuse rather than guess.
            raise ScheduleError(f"{expr!r} restricts both day of month and day of week; use one of them")
        if self.trigger.get_next_fire_time(None, datetime.now(tz)) is None or self._never_fires():
            raise ScheduleError(f"{expr!r} never fires")

    def _never_fires(self) -> bool:
        now = datetime.now(self.tz)
        nxt = self.trigger.get_next_fire_time(None, now)
        return nxt is None or nxt - now > timedelta(days=8 * 366)

    def next_after(self, moment: datetime) -> datetime | None:
        return self.trigger.get_next_fire_time(None, moment)

    def slot(self, week: Week) -> datetime | None:
        """The first time the schedule fires in `week`, or None if it does not.

        Found on the wall clock, then placed in the zone: a time that a DST change skips is moved
        on by the jump (00:00 on the night Santiago's clocks go from 00:00 to 01:00 is 01:00), not
        a week without a post, which is what APScheduler alone gives; a time that comes twice is
        the first.
        """
        wall = self._wall_slot(week)
        return None if wall is None else wall.replace(tzinfo=self.tz).astimezone(UTC).astimezone(self.tz)

    def _wall_slot(self, week: Week) -> datetime | None:
        """The slot as the crontab names it, on the wall clock (tzinfo UTC stands for "none")."""
        start = datetime.combine(week.monday, time(0), tzinfo=UTC)
        fire = self._wall.get_next_fire_time(None, start)
        return None if fire is None or fire >= start + timedelta(days=7) else fire

    def several_a_week(self, week: Week, weeks: int = 5) -> bool:
        """Does the crontab fire more than once in `week` or one of the `weeks` after it (`* * * * *`)? The
        group still posts once a week, at the first (see `slot`), which a person setting it should hear."""
        for _ in range(weeks + 1):
            first = self._wall_slot(week)
            if first is not None:
                again = self._wall.get_next_fire_time(first, first + timedelta(seconds=1))
                if again is not None and again < datetime.combine(week.monday, time(0), tzinfo=UTC) + timedelta(7):
                    return True
            week = week.plus(1)
        return False

    def default_meeting(self) -> Meeting:
        """The post's own weekday and time, for groups that set no PAPERBOT_MEETING."""
        week = Week.containing(datetime.now(self.tz), self.tz)
        for _ in range(60):
            slot = self._wall_slot(week)  # as written: not moved by a DST change that week
            if slot is not None:
                return Meeting(slot.weekday(), slot.time().replace(second=0, microsecond=0))
            week = week.plus(1)
        fire = self.next_after(datetime.now(self.tz))
        assert fire is not None  # checked in __init__
        fire = fire.astimezone(self.tz)
        return Meeting(fire.weekday(), fire.time().replace(second=0, microsecond=0))


_CRON_DAYS = {n: i for i, n in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}


def _crontab_weekdays(field: str) -> str:
    """`'1-5'` -> `'mon,tue,wed,thu,fri'`: crontab day numbers to APScheduler day names."""
    if field in ("*", "?"):
        return "*"

    def number(token: str) -> int:
        token = token.lower()
        if token in _CRON_DAYS:
            return _CRON_DAYS[token]
        if token.isdigit() and 0 <= int(token) <= 7:
            return int(token) % 7
        raise ScheduleError(f"day of week {token!r} is not 0-7 or sun-sat")

    days: set[int] = set()
    for part in field.split(","):
        rng, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ScheduleError(f"day of week step {step_text!r} is not a positive number")
            step = int(step_text)
        if rng == "*":
            lo, hi = 0, 6
        elif "-" in rng:
            a, b = rng.split("-", 1)
            lo, hi = number(a), number(b)
            if b.strip() == "7":
                hi = 7
            if hi < lo:
                raise ScheduleError(f"day of week range {rng!r} runs backwards")
        else:
            lo = hi = number(rng)
        days.update(d % 7 for d in range(lo, hi + 1, step))
    # crontab Sunday=0 .. Saturday=6  ->  names
    names = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
    return ",".join(names[d] for d in sorted(days))


class BadDate(ValueError):
    """A <date> argument that names no week we can use; str() says what to type."""


@dataclass(frozen=True)
class MeetingCalendar:
    """The reading group's calendar: its zone, weekly meeting, post schedule and reminders, and which
    group it is (`group_id`: its slots, posts and reminders are read and written as that group's)."""

    tz: ZoneInfo
    meeting: Meeting
    schedule: PostSchedule
    remind_days: int = 2
    group_id: int = 1
    #: How long a meeting lasts (PAPERBOT_MEETING_MINUTES): a meeting is over at its start plus these.
    minutes: int = 60
    #: What the group is called (PAPERBOT_GROUP_NAME, `group set name`), in its posts, reminders,
    #: page and calendar; None: it has no name, and its posts say none.
    name: str | None = None

    def week_of(self, moment: datetime) -> Week:
        return Week.containing(moment, self.tz)

    def meeting_of(self, week: Week) -> datetime:
        return self.meeting.time_in(week, self.tz)

    def ends(self, week: Week) -> datetime:
        """When `week`'s meeting is over: its start plus the meeting's length."""
        return self.meeting_of(week) + timedelta(minutes=self.minutes)

    def coming(self, now: datetime) -> Week:
        """The week of the next meeting that is not over at `now`: "this week's" paper is that meeting's."""
        week = self.week_of(now)
        return week if self.ends(week) > now else week.plus(1)

    def announced_by(self, slot: datetime) -> Week:
        """The week of the meeting that a post at `slot` announces: the first meeting at or after it."""
        week = self.week_of(slot)
        return week if self.meeting_of(week) >= slot else week.plus(1)

    def last_slot(self, at: datetime) -> datetime | None:
        """The latest first-of-its-week slot at or before `at` (within a year and a bit), or None."""
        week = self.week_of(at)
        for _ in range(60):
            slot = self.schedule.slot(week)
            if slot is not None and slot <= at:
                return slot
            week = week.plus(-1)
        return None

    def next_slot(self, after: datetime, *, inclusive: bool = False) -> datetime | None:
        """The first first-of-its-week slot after `after` (or at it, `inclusive`), within a year and a bit."""
        week = self.week_of(after)
        for _ in range(60):
            slot = self.schedule.slot(week)
            if slot is not None and (slot > after or (inclusive and slot == after)):
                return slot
            week = week.plus(1)
        return None

    def never_pairs(self, now: datetime) -> str | None:
        """Why no meeting of the coming year gets a post, or None. A weekly meeting has one within 7 days
        of any slot, so only a crontab that fires less than once a year (`0 9 29 2 *`) leaves them all bare."""
        week = self.week_of(now)
        if any(self.slot_of(week.plus(i)) is not None for i in range(53)):
            return None
        return (
            f"{self.schedule.expr!r} announces none of the next 53 meetings ({self.meeting}): "
            "a post announces the first meeting within 7 days after it"
        )

    def weeks_without_post(self, now: datetime) -> str | None:
        """What a crontab that leaves meetings without a slot to announce them means for the group (`0 9 * 1 mon`,
        mistyped for `0 9 * * mon`, posts in January only), or None when every meeting of the coming year has one."""
        week = self.week_of(now)
        missing = [w for w in (week.plus(i) for i in range(52)) if self.slot_of(w) is None]
        if not missing:
            return None
        return (
            f"PAPERBOT_SCHEDULE ({self.schedule.expr}) has no slot in {len(missing)} of the next 52 weeks "
            f"(the first: {missing[0].key}): those weeks get no paper of the week"
        )

    def day_of(self, week: Week) -> date:
        """The date that names `week` in a hint to type: its meeting's, which the member sees."""
        return self.meeting_of(week).date()

    def slot_of(self, week: Week) -> datetime | None:
        """The slot that announces `week`'s meeting, or None: the first slot that is the first of its own
        ISO week, after the meeting before and not after this one (so last week's Friday slot announces
        a Monday meeting). Weeks stay keyed by their meeting, whichever week the post goes out in."""
        after, meeting = self.meeting_of(week.plus(-1)), self.meeting_of(week)
        for candidate in (week.plus(-1), week):
            slot = self.schedule.slot(candidate)
            if slot is not None and after < slot <= meeting:
                return slot
        return None

    def reminder_of(self, week: Week) -> datetime:
        return self.meeting.reminder_in(week, self.tz, self.remind_days)

    def parse_week(self, arg: str, now: datetime) -> Week:
        """`2026-12-10` (any day of its week), `2026-W50` or `next` (the week after this one)."""
        typed = arg.strip()
        arg = typed.lower()
        if arg == "next":
            return self.week_of(now).plus(1)
        if arg in ("this", "now", "today"):
            return self.week_of(now)
        m = re.fullmatch(r"(\d{4})-w(\d{1,2})", arg)
        if m:
            try:
                week = Week.from_key(f"{m[1]}-W{int(m[2]):02d}")
            except ValueError:
                raise BadDate(f"{m[1]} has no week {int(m[2])}") from None
            return self._within_calendar(week, typed)
        m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", arg)
        if not m:
            shown = typed if len(typed) <= 40 else typed[:39] + "…"  # the advice must not drown in it
            raise BadDate(f"{shown!r} is not a date: use YYYY-MM-DD (any day of the week) or next")
        try:
            day = date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            raise BadDate(f"{typed} is not a real date: use YYYY-MM-DD (any day of the week) or next") from None
        return self._within_calendar(Week.of(day), typed)

    def _within_calendar(self, week: Week, typed: str) -> Week:
        """`week`, when its meeting can be written down: at the ends of the calendar (years 1 and 9999)
        a weekday or a time zone may carry the meeting off it (an OverflowError wherever it is used)."""
        try:
            self.meeting_of(week).astimezone(UTC)
            self.ends(week).astimezone(UTC)
        except OverflowError:
            if week.year > 5000:
                raise BadDate(f"{typed} is too far ahead: no meeting is that late. Use YYYY-MM-DD or next") from None
            raise BadDate(f"{typed} is too long ago: no meeting was that early. Use YYYY-MM-DD or next") from None
        return week
