"""Weeks, meetings and post slots in the group's zone: year ends, DST, zones ahead of UTC."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.calendar import BadDate, Meeting, MeetingCalendar, PostSchedule, ScheduleError, Week

UTC = ZoneInfo("UTC")
SHANGHAI = ZoneInfo("Asia/Shanghai")
BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


@pytest.mark.parametrize(
    "day, key",
    [
        (date(2026, 12, 28), "2026-W53"),  # 2026 has 53 ISO weeks
        (date(2027, 1, 1), "2026-W53"),  # a Friday of the previous ISO year
        (date(2027, 1, 3), "2026-W53"),
        (date(2027, 1, 4), "2027-W01"),
        (date(2024, 12, 30), "2025-W01"),  # a Monday that belongs to the next ISO year
        (date(2026, 12, 2), "2026-W49"),
    ],
)
def test_week_keys_across_year_ends(day, key):
    assert Week.of(day).key == key
    assert Week.from_key(key).monday <= day
    assert Week.from_key(key).plus(1).monday > day


def test_week_53_only_exists_in_long_years():
    assert Week.from_key("2026-W53").monday == date(2026, 12, 28)
    with pytest.raises(ValueError):
        Week.from_key("2025-W53")


def test_shanghai_monday_is_still_sunday_in_utc():
    schedule = PostSchedule("0 9 * * mon", SHANGHAI)
    week = Week.containing(datetime(2026, 12, 6, 20, 0, tzinfo=UTC), SHANGHAI)  # Sunday 20:00 UTC
    assert week.key == "2026-W50"
    assert Week.containing(datetime(2026, 12, 6, 20, 0, tzinfo=UTC), UTC).key == "2026-W49"
    slot = schedule.slot(week)
    assert slot == datetime(2026, 12, 7, 9, 0, tzinfo=SHANGHAI)
    assert slot.astimezone(UTC) == datetime(2026, 12, 7, 1, 0, tzinfo=UTC)
    late_sunday = PostSchedule("30 23 * * sun", SHANGHAI).slot(week)
    assert late_sunday.astimezone(UTC).date() == date(2026, 12, 13)


@pytest.mark.parametrize(
    "expr, weekday",
    [("0 9 * * 1", 0), ("0 9 * * mon", 0), ("0 9 * * 0", 6), ("0 9 * * 7", 6), ("0 9 * * sun", 6), ("0 9 * * 5", 4)],
)
def test_crontab_weekday_numbers_mean_what_cron_means(expr, weekday):
    # APScheduler 3 alone would read "1" as Tuesday.
    slot = PostSchedule(expr, UTC).slot(Week(2026, 50))
    assert slot.weekday() == weekday and slot.time() == time(9, 0)


def test_first_slot_of_the_week_when_the_crontab_names_several():
    schedule = PostSchedule("0 9 * * 1-5", UTC)
    assert schedule.slot(Week(2026, 50)) == datetime(2026, 12, 7, 9, 0, tzinfo=UTC)
    assert PostSchedule("0 9 * * fri,tue", UTC).slot(Week(2026, 50)).weekday() == 1


def test_weeks_without_a_slot():
    monthly = PostSchedule("0 9 1 * *", UTC)
    assert monthly.slot(Week(2026, 50)) is None
    assert monthly.slot(Week(2027, 1)) is None  # 1 Jan 2027 belongs to 2026-W53
    assert monthly.slot(Week(2026, 53)) == datetime(2027, 1, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "expr, problem",
    [
        ("0 9 * *", "5 fields"),
        ("61 9 * * mon", "not a valid crontab"),
        ("0 9 * * funday", "day of week"),
        ("0 9 31 2 *", "never fires"),
        ("0 9 1 * mon", "both day of month and day of week"),
        ("0 9 * * 5-1", "backwards"),
        ("a b c d e", "not a valid crontab"),
        ("0 9 x * mon", "not a valid crontab"),
        ("0 9 ? * mon", "not a valid crontab"),
    ],
)
def test_bad_crontabs_are_refused_with_a_reason(expr, problem):
    with pytest.raises(ScheduleError, match=problem):
        PostSchedule(expr, UTC)


def test_dst_changes_keep_wall_time():
    # Europe/Berlin springs forward on 29 Mar 2026 and falls back on 25 Oct 2026.
    schedule = PostSchedule("0 9 * * mon", BERLIN)
    before, after = schedule.slot(Week(2026, 13)), schedule.slot(Week(2026, 14))
    assert (before.hour, after.hour) == (9, 9)
    assert before.utcoffset().total_seconds() == 3600 and after.utcoffset().total_seconds() == 7200
    meeting = Meeting.parse("sun 02:30")  # 02:30 does not exist on 29 Mar 2026 in Berlin
    moment = meeting.time_in(Week(2026, 13), BERLIN)
    assert moment.date() == date(2026, 3, 29) and moment.astimezone(UTC) == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    "zone, expr, week, slot_utc",
    [
        # Clocks jump from 00:00 to 01:00: a midnight post goes out at 01:00, in its own week.
        ("America/Santiago", "0 0 * * sun", Week(2027, 35), datetime(2027, 9, 5, 4, 0, tzinfo=UTC)),
        ("Asia/Beirut", "0 0 * * sun", Week(2027, 12), datetime(2027, 3, 27, 22, 0, tzinfo=UTC)),
        ("Europe/Berlin", "30 2 * * sun", Week(2027, 12), datetime(2027, 3, 28, 1, 30, tzinfo=UTC)),
        ("Europe/Berlin", "30 2 * * sun", Week(2027, 43), datetime(2027, 10, 31, 0, 30, tzinfo=UTC)),  # the first 02:30
    ],
)
def test_a_post_time_that_a_dst_change_skips_still_gives_the_week_its_post(zone, expr, week, slot_utc):
    slot = PostSchedule(expr, ZoneInfo(zone)).slot(week)
    assert slot is not None and slot.astimezone(UTC) == slot_utc
    assert Week.containing(slot, ZoneInfo(zone)) == week


def test_reminder_is_calendar_days_before_across_dst():
    meeting = Meeting.parse("mon 16:00")
    # New York falls back on Sun 1 Nov 2026: two days before Mon 2 Nov is Sat 31 Oct, still at 16:00
    # on the wall, which is 49 real hours before the meeting.
    week = Week.of(date(2026, 11, 2))
    remind = meeting.reminder_in(week, NEW_YORK, 2)
    assert (remind.date(), remind.time()) == (date(2026, 10, 31), time(16, 0))
    real = meeting.time_in(week, NEW_YORK).astimezone(UTC) - remind.astimezone(UTC)
    assert real.total_seconds() == 49 * 3600


@pytest.mark.parametrize("text", ["thu 16:00", "Thursday 16:00", " THU 4:05 "])
def test_meeting_parse(text):
    assert Meeting.parse(text).weekday == 3


@pytest.mark.parametrize("text", ["thu", "16:00", "thu 25:00", "thu 16:60", "someday 10:00", "thu 4pm"])
def test_meeting_parse_refuses(text):
    with pytest.raises(ValueError):
        Meeting.parse(text)


@pytest.fixture
def group():
    return MeetingCalendar(BERLIN, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", BERLIN))


@pytest.mark.parametrize(
    "arg, key",
    [
        ("2026-12-07", "2026-W50"),
        ("2026-12-13", "2026-W50"),  # any day of the week names the week
        ("2026-12-31", "2026-W53"),
        ("2027-01-03", "2026-W53"),
        ("next", "2026-W50"),
        ("NEXT", "2026-W50"),
        ("2026-W51", "2026-W51"),
    ],
)
def test_date_arguments(group, arg, key):
    now = datetime(2026, 12, 2, 10, 0, tzinfo=BERLIN)
    assert group.parse_week(arg, now).key == key


@pytest.mark.parametrize(
    "arg", ["2026-02-30", "2026-13-01", "tomorrow", "12/07/2026", "2025-W53", "", "2026-12-07T09:00"]
)
def test_impossible_dates(group, arg):
    with pytest.raises(BadDate):
        group.parse_week(arg, datetime(2026, 12, 2, 10, 0, tzinfo=BERLIN))


def test_a_long_bad_date_is_shortened_so_the_advice_still_shows(group):
    with pytest.raises(BadDate) as e:
        group.parse_week("x" * 3500, datetime(2026, 12, 2, 10, 0, tzinfo=BERLIN))
    assert len(str(e.value)) < 120 and str(e.value).endswith("or next")
    with pytest.raises(BadDate, match="'2026-12-31T10:00' is not a date"):  # as typed, not lowercased
        group.parse_week("2026-12-31T10:00", datetime(2026, 12, 2, 10, 0, tzinfo=BERLIN))


@pytest.mark.parametrize(
    "schedule, meeting, slot",
    [
        ("0 9 * * fri", "mon 17:00", datetime(2026, 12, 4, 9, 0)),  # the Friday before, in the week before
        ("0 18 * * sun", "mon 10:00", datetime(2026, 12, 6, 18, 0)),  # "the evening before"
        ("0 9 * * mon", "thu 16:00", datetime(2026, 12, 7, 9, 0)),  # the same week, as always
        ("0 9 * * mon", "mon 09:00", datetime(2026, 12, 7, 9, 0)),  # the default: the meeting is the post's time
        ("0 9 * * mon", "mon 08:00", datetime(2026, 11, 30, 9, 0)),  # a week ahead: 08:00 is before that day's slot
        ("0 9 * * mon,fri", "mon 17:00", datetime(2026, 12, 7, 9, 0)),  # the first slot of each week only
    ],
)
def test_each_meeting_is_announced_by_the_first_slot_after_the_meeting_before_it(schedule, meeting, slot):
    group = MeetingCalendar(BERLIN, Meeting.parse(meeting), PostSchedule(schedule, BERLIN))
    week = Week(2026, 50)
    assert group.slot_of(week) == slot.replace(tzinfo=BERLIN)
    assert group.announced_by(group.slot_of(week)) == week
    assert group.last_slot(slot.replace(tzinfo=BERLIN) + timedelta(hours=1)) == slot.replace(tzinfo=BERLIN)


def test_a_schedule_that_announces_no_meeting_in_a_year_is_named():
    leap_day = MeetingCalendar(BERLIN, Meeting.parse("thu 16:00"), PostSchedule("0 9 29 2 *", BERLIN))
    assert "announces none of the next 53 meetings" in leap_day.never_pairs(datetime(2026, 12, 2, tzinfo=BERLIN))
    weekly = MeetingCalendar(BERLIN, Meeting.parse("mon 17:00"), PostSchedule("0 9 * * fri", BERLIN))
    assert weekly.never_pairs(datetime(2026, 12, 2, tzinfo=BERLIN)) is None


def test_this_weeks_meeting_is_the_next_one_not_over():
    group = MeetingCalendar(BERLIN, Meeting.parse("mon 17:00"), PostSchedule("0 9 * * fri", BERLIN), minutes=90)
    assert group.coming(datetime(2026, 12, 7, 18, 0, tzinfo=BERLIN)) == Week(2026, 50)  # under way
    assert group.coming(datetime(2026, 12, 7, 18, 30, tzinfo=BERLIN)) == Week(2026, 51)  # over
    assert group.coming(datetime(2026, 12, 11, 10, 0, tzinfo=BERLIN)) == Week(2026, 51)


@pytest.mark.parametrize(
    "schedule, without",
    [
        ("0 9 * * mon", 0),
        ("0 9 * * mon,thu", 0),
        ("0 9 * 1 mon", 48),  # mistyped for `0 9 * * mon`: Mondays of January only (4 in January 2027)
        ("0 9 1 * *", 40),  # the first of each month: a monthly group, said so that it is not a surprise
    ],
)
def test_a_schedule_that_leaves_weeks_without_a_post_is_named(schedule, without):
    group = MeetingCalendar(BERLIN, Meeting.parse("thu 16:00"), PostSchedule(schedule, BERLIN))
    problem = group.weeks_without_post(datetime(2026, 12, 2, 10, 0, tzinfo=BERLIN))
    if without:
        assert f"no slot in {without} of the next 52 weeks" in problem and "PAPERBOT_SCHEDULE" in problem
    else:
        assert problem is None


@pytest.mark.parametrize(
    ("zone", "meeting", "typed", "said"),
    [
        ("Europe/Berlin", "sun 20:00", "9999-12-31", "too far ahead"),
        ("Europe/Berlin", "sun 20:00", "9999-W52", "too far ahead"),
        ("Asia/Shanghai", "mon 00:30", "0001-01-01", "too long ago"),
    ],
)
def test_a_week_whose_meeting_would_leave_the_calendar_is_a_bad_date(zone, meeting, typed, said):
    tz = ZoneInfo(zone)
    group = MeetingCalendar(tz, Meeting.parse(meeting), PostSchedule("0 9 * * mon", tz))
    with pytest.raises(BadDate, match=said):
        group.parse_week(typed, datetime(2026, 12, 2, 10, tzinfo=tz))
    assert group.meeting_of(group.parse_week("9999-12-13", datetime(2026, 12, 2, 10, tzinfo=tz))).year == 9999
