"""Presenter reminders: the right day in the group's zone, once, to whoever presents then."""

from __future__ import annotations

import html

import pytest
from slack_sdk import WebClient

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.schedule import reminders, signups
from bot.schedule.signups import Member
from bot.slack.client import SlackTransport
from tests.support.clock import TZ, at
from tests.support.slack_standin import check_message


@pytest.fixture
def group():
    return MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ), remind_days=2)


@pytest.fixture
def transport(slack):
    return SlackTransport(WebClient(base_url=slack.api_url, token="xoxb-test", retry_handlers=[]))


def dms(slack, user):
    return slack.messages("D" + user)


def test_reminded_once_two_days_before_at_the_meetings_time(store, group, transport, slack):
    signups.signup(store, group, at("2026-12-01 12:00"), Member("U1"), "streaming-diloco", "2026-12-10")
    assert reminders.send_due(store, group, transport, at("2026-12-08 15:59")) == []
    [sent] = reminders.send_due(store, group, transport, at("2026-12-08 16:00"))
    assert sent.result.status == "sent"
    [dm] = dms(slack, "U1")
    check_message(dm)
    text = html.unescape(dm["text"])
    assert "#29 Streaming DiLoCo" in text and "Thu 10 Dec 2026 16:00" in text and "/paper withdraw 2026-12-10" in text
    assert "<!date^" in str(dm["blocks"])
    # Later checks, another process's check, and a check after a restart send nothing more.
    for when in ("2026-12-08 16:00:30", "2026-12-09 10:00", "2026-12-10 15:59"):
        assert reminders.send_due(store, group, transport, at(when)) == []
    assert len(dms(slack, "U1")) == 1


def test_a_late_first_check_still_reminds_but_not_after_the_meeting(store, group, transport, slack):
    signups.signup(store, group, at("2026-12-01 12:00"), Member("U1"), "7", "2026-12-10")
    signups.signup(store, group, at("2026-12-01 12:00"), Member("U2"), "8", "2026-12-17")
    assert len(reminders.send_due(store, group, transport, at("2026-12-10 15:00"))) == 1  # bot was down until now
    assert reminders.send_due(store, group, transport, at("2026-12-17 16:00")) == []  # meeting started: too late
    assert len(dms(slack, "U1")) == 1 and dms(slack, "U2") == []


def test_a_new_presenter_gets_their_own_reminder(store, group, transport, slack):
    admin = Member("UADMIN", lambda: True)
    signups.signup(store, group, at("2026-12-01 12:00"), Member("U1"), "7", "2026-12-10")
    reminders.send_due(store, group, transport, at("2026-12-08 16:00"))
    signups.withdraw(store, group, at("2026-12-08 17:00"), Member("U1"), "7")
    signups.assign(store, group, at("2026-12-08 17:00"), admin, "U2", "7", "2026-12-10")
    reminders.send_due(store, group, transport, at("2026-12-08 17:01"))
    assert len(dms(slack, "U1")) == 1 and len(dms(slack, "U2")) == 1


def test_reminder_day_follows_the_groups_zone(store, transport, slack):
    from zoneinfo import ZoneInfo

    tokyo = ZoneInfo("Asia/Tokyo")
    group = MeetingCalendar(tokyo, Meeting.parse("mon 10:00"), PostSchedule("0 9 * * mon", tokyo), remind_days=1)
    signups.signup(store, group, at("2026-12-01 12:00", tokyo), Member("U1"), "7", "2026-12-14")
    # Sunday 10:00 in Tokyo is Sunday 01:00 UTC; a UTC-based reminder would wait 9 more hours.
    assert reminders.send_due(store, group, transport, at("2026-12-13 09:59", tokyo)) == []
    assert len(reminders.send_due(store, group, transport, at("2026-12-13 10:00", tokyo))) == 1


def test_a_dropped_connection_after_slack_accepted_still_means_one_dm(store, group, transport, slack):
    signups.signup(store, group, at("2026-12-01 12:00"), Member("U1"), "7", "2026-12-10")
    slack.fail_next("chat.postMessage", accept_then="drop")
    [sent] = reminders.send_due(store, group, transport, at("2026-12-08 16:00"), sleep=lambda s: None)
    assert sent.result.status == "found" and len(dms(slack, "U1")) == 1


def test_a_rate_limited_reminder_waits_unless_an_operator_asks_now(store, group, transport, slack):
    signups.signup(store, group, at("2026-12-01 12:00"), Member("U1"), "7", "2026-12-10")
    slack.fail_next("chat.postMessage", status=429, retry_after=200)  # longer than the bot waits in a check
    [first] = reminders.send_due(store, group, transport, at("2026-12-08 16:00"))
    # Not a failure: nothing was refused, so no admin is told; it waits for Slack's time to be up.
    assert first.result.status == "waiting" and "rate limited" in first.result.detail
    [later] = reminders.send_due(store, group, transport, at("2026-12-08 16:01"))  # the scheduler's next check
    assert later.result.status == "waiting" and dms(slack, "U1") == []
    [asked] = reminders.send_due(store, group, transport, at("2026-12-08 16:01"), force=True)  # `paperbot remind`
    assert asked.result.status == "sent" and len(dms(slack, "U1")) == 1


def test_a_presenter_who_left_the_workspace_is_named_not_the_channel(store, group, transport, slack):
    signups.signup(store, group, at("2026-12-01 12:00"), Member("U9GONE"), "7", "2026-12-10")
    [sent] = reminders.send_due(store, group, transport, at("2026-12-08 16:00"))
    assert sent.result.status == "failed"
    assert "cannot send U9GONE a direct message" in sent.result.detail
    assert "PAPERBOT_CHANNEL" not in sent.result.detail


def test_a_presenter_who_withdraws_while_their_reminder_waits_out_a_rate_limit_is_not_reminded(
    store, group, transport, slack
):
    signups.signup(store, group, at("2026-12-01 12:00"), Member("U1"), "7", "2026-12-10")
    slack.fail_next("chat.postMessage", status=429, retry_after=6)

    def meanwhile(seconds):  # during Slack's Retry-After, U1 gives the week up and U2 takes it
        signups.withdraw(store, group, at("2026-12-08 16:00"), Member("U1"), "7")
        signups.signup(store, group, at("2026-12-08 16:00"), Member("U2"), "8", "2026-12-10")

    [sending] = reminders.send_due(store, group, transport, at("2026-12-08 16:00"), sleep=meanwhile)
    assert sending.result.status == "moot" and dms(slack, "U1") == []
    [u2] = reminders.send_due(store, group, transport, at("2026-12-08 16:01"))
    assert u2.result.status == "sent" and "#8" in html.unescape(dms(slack, "U2")[0]["text"])
    # U1 takes the week back: reminded at once, since nothing was sent to them.
    signups.withdraw(store, group, at("2026-12-08 16:02"), Member("U2"), "8")
    signups.signup(store, group, at("2026-12-08 16:02"), Member("U1"), "7", "2026-12-10")
    [again] = reminders.send_due(store, group, transport, at("2026-12-08 16:03"))
    assert again.result.status == "sent" and len(dms(slack, "U1")) == 1
