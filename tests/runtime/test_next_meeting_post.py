"""Each post announces the group's next meeting: a Friday slot posts for the Monday after it, a
meeting that is over is never posted (a new install's first day included), and a database from an
earlier version announces no meeting twice. Through `paperbot post-week` and the scheduler's checks."""

from __future__ import annotations

import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.runtime.scheduler import ScheduledChecks
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL, post_week
from tests.support.slack_standin import SlackStandin

BERLIN = ZoneInfo("Europe/Berlin")
OLD_DB = Path(__file__).parents[1] / "data" / "paperbot-16cc2ce.db"
#: A group that meets on Monday evening and posts on the Friday before.
FRIDAY_FOR_MONDAY = {"PAPERBOT_SCHEDULE": "0 9 * * fri", "PAPERBOT_MEETING": "mon 17:00"}


@pytest.fixture
def slack():
    with SlackStandin(channels={CHANNEL, "C0OLD"}, users={"UADMIN": {}, "U1": {}}) as standin:
        yield standin


def posts(slack, channel=CHANNEL) -> list[dict]:
    return [m for m in slack.messages(channel) if (m.get("metadata") or {}).get("event_type") == "paper_of_the_week"]


def weeks(slack, channel=CHANNEL) -> list[str]:
    return [m["metadata"]["event_payload"]["week"] for m in posts(slack, channel)]


def shows_meeting(message: dict, when: str) -> bool:
    """Does the post name the meeting at `when` (Berlin), as Slack's date token every reader sees in their zone?"""
    return f"<!date^{int(at(when).timestamp())}^" in str(message["blocks"])


def test_a_friday_post_announces_the_monday_after_it_once(slack, monkeypatch, tmp_path, capsys):
    friday = ("--at", "2026-12-11T10:00")
    for _ in range(2):
        code, out, err = post_week(monkeypatch, tmp_path, capsys, slack, *friday, **FRIDAY_FOR_MONDAY)
        assert code == 0, err
    [post] = posts(slack)
    assert weeks(slack) == ["2026-W51"]  # the week of the meeting it announces, not of the Friday
    assert shows_meeting(post, "2026-12-14 17:00"), post["text"]
    assert "already has its post" in out
    code, out, err = post_week(monkeypatch, tmp_path, capsys, slack, "--at", "2026-12-18T10:00", **FRIDAY_FOR_MONDAY)
    assert code == 0, err
    assert weeks(slack) == ["2026-W51", "2026-W52"]
    assert shows_meeting(posts(slack)[1], "2026-12-21 17:00")


def test_a_dry_run_on_friday_prints_the_monday_after(slack, monkeypatch, tmp_path, capsys):
    code, out, err = post_week(
        monkeypatch, tmp_path, capsys, slack, "--dry-run", "--at", "2026-12-11T10:00", **FRIDAY_FOR_MONDAY
    )
    assert code == 0 and err == "", err
    assert "2026-W51" in out and "Mon 14 Dec 2026 17:00" in out, out
    assert posts(slack) == []


def test_a_slot_missed_while_down_is_posted_while_its_meeting_is_ahead_never_after(slack, make_harness):
    h = make_harness(Clock(at("2026-12-13 20:00")), **FRIDAY_FOR_MONDAY)  # down since before Friday's slot
    ticker = ScheduledChecks(h.bot.store, h.bot.settings, h.bot.transport, clock=h.bot.clock)
    ticker.check_post()
    assert weeks(slack) == ["2026-W51"]  # Sunday evening: Monday's meeting is ahead, so it is caught up
    h.bot.clock.set(at("2026-12-21 18:00"))  # down over the next Friday, back as its Monday meeting ends
    ticker.check_post()
    assert weeks(slack) == ["2026-W51"]


def test_a_fresh_install_on_the_friday_after_a_thursday_meeting_posts_nothing_until_the_next_slot(
    slack, make_harness, monkeypatch, tmp_path, capsys
):
    code, out, err = post_week(monkeypatch, tmp_path, capsys, slack, "--at", "2026-12-11T10:00")
    assert code == 0, err
    assert posts(slack) == [] and slack.calls_to("chat.postMessage") == []
    assert "No post is due: 2026-W50's meeting is over; 2026-W51's post is due at 2026-12-14T09:00:00+01:00" in out
    h = make_harness(Clock(at("2026-12-11 10:00")))  # `run`'s first checks, on the same database
    ticker = ScheduledChecks(h.bot.store, h.bot.settings, h.bot.transport, clock=h.bot.clock)
    ticker.check_post()
    h.bot.clock.set(at("2026-12-14 08:59"))
    ticker.check_post()
    assert posts(slack) == []
    h.bot.clock.set(at("2026-12-14 09:00"))
    ticker.check_post()
    assert weeks(slack) == ["2026-W51"] and shows_meeting(posts(slack)[0], "2026-12-17 16:00")


@pytest.mark.sqlite_only
def test_an_upgraded_database_announces_no_meeting_twice(slack, make_harness, monkeypatch, tmp_path, capsys):
    """paperbot-16cc2ce.db holds W49's post to C0OLD (made at Monday 30 Nov's slot, for Thursday's meeting).
    Moved to a Tuesday slot, which announces that same meeting, the new code does not post it again."""
    shutil.copyfile(OLD_DB, tmp_path / "paperbot.db")
    tuesday = {"PAPERBOT_CHANNEL": "C0OLD", "PAPERBOT_SCHEDULE": "0 9 * * tue"}
    code, out, err = post_week(monkeypatch, tmp_path, capsys, slack, "--at", "2026-12-01T09:30", **tuesday)
    assert code == 0, err
    assert "2026-W49 already has its post in C0OLD" in out, out
    h = make_harness(Clock(at("2026-12-01 09:30")), **tuesday)
    ticker = ScheduledChecks(h.bot.store, h.bot.settings, h.bot.transport, clock=h.bot.clock)
    ticker.check_post()
    assert posts(slack, "C0OLD") == []
    h.bot.clock.set(at("2026-12-08 09:00"))  # the next Tuesday: the next meeting, once
    ticker.check_post()
    ticker.check_post()
    assert weeks(slack, "C0OLD") == ["2026-W50"]
