"""A group's first post is for the first slot at or after it was started (or resumed), and
`post-week --at` reads a bare time in each group's own zone."""

from __future__ import annotations

import html
from zoneinfo import ZoneInfo

import pytest

from bot.runtime.scheduler import ScheduledChecks
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL, post_week
from tests.support.slack_standin import SlackStandin

SECOND = "C0SECOND"
ZURICH = ZoneInfo("Europe/Zurich")
SHANGHAI = ZoneInfo("Asia/Shanghai")


@pytest.fixture
def slack():
    with SlackStandin(channels={CHANNEL, SECOND}, users={"UADMIN": {}, "U1": {}}) as standin:
        yield standin


def said(reply: dict) -> str:
    return html.unescape(reply.get("text") or "")


def posts(slack, channel) -> list[str]:
    """The weeks of the channel's posts of the paper of the week, in order."""
    return [
        m["metadata"]["event_payload"]["week"]
        for m in slack.messages(channel)
        if (m.get("metadata") or {}).get("event_type") == "paper_of_the_week"
    ]


def start_second(h) -> None:
    """Start the group of C0SECOND: Zurich, posts Monday 09:00, meets Monday 17:00."""
    assert "Started a reading group" in said(h.command("group start", user="UADMIN", channel_id=SECOND))
    for setting in ("timezone Europe/Zurich", 'meeting "mon 17:00"'):
        reply = h.command(f"group set {setting}", user="UADMIN", channel_id=SECOND)
        assert said(reply).startswith("Set "), said(reply)


@pytest.fixture
def started(make_harness):
    """Group 1 (Berlin, Monday 09:00) and C0SECOND, started on Thursday 3 December (W49) at noon."""
    clock = Clock(at("2026-12-03 12:00", ZURICH))
    h = make_harness(clock)
    start_second(h)
    h.clock = clock
    return h


def ticker(h) -> ScheduledChecks:
    return ScheduledChecks(h.bot.store, h.bot.settings, h.bot.transport, clock=h.clock)


def test_the_first_run_posts_a_new_group_at_its_first_slot_not_the_week_before_it_existed(started, slack):
    started.clock.set(at("2026-12-03 12:05", ZURICH))
    ticker(started).check_post()
    assert posts(slack, CHANNEL) == ["2026-W49"]  # group 1 catches up its week as it always did
    assert posts(slack, SECOND) == []  # W49's slot (and meeting) passed before the group existed
    started.clock.set(at("2026-12-07 08:59", ZURICH))
    ticker(started).check_post()
    assert posts(slack, SECOND) == []
    started.clock.set(at("2026-12-07 09:00", ZURICH))
    ticker(started).check_post()
    assert posts(slack, SECOND) == ["2026-W50"]


def test_a_slot_after_the_start_missed_while_down_is_still_caught_up(started, slack):
    started.clock.set(at("2026-12-07 12:00", ZURICH))  # down from Thursday to Monday noon: 17:00 is ahead
    ticker(started).check_post()
    assert posts(slack, SECOND) == ["2026-W50"]


def test_a_resumed_group_posts_from_its_first_slot_after_the_resume(started, slack):
    started.clock.set(at("2026-12-06 12:00", ZURICH))
    assert "Stopped" in said(started.command("group stop", user="UADMIN", channel_id=SECOND))
    started.clock.set(at("2026-12-08 12:00", ZURICH))  # resumed after Monday's slot, which went by stopped
    assert "Resumed" in said(started.command("group start", user="UADMIN", channel_id=SECOND))
    ticker(started).check_post()
    assert posts(slack, SECOND) == []
    started.clock.set(at("2026-12-14 09:00", ZURICH))
    ticker(started).check_post()
    assert posts(slack, SECOND) == ["2026-W51"]


def started_at(h, when: str | None) -> None:
    h.bot.store.db.execute("UPDATE groups SET started_at = ? WHERE channel = ?", [when, SECOND])


def test_a_group_started_before_its_start_was_kept_posts_as_it_always_did(started, slack):
    started_at(started, at("2026-12-07 10:00", ZURICH).isoformat())  # after Monday's slot, before its meeting
    started.clock.set(at("2026-12-07 12:00", ZURICH))
    ticker(started).check_post()
    assert posts(slack, SECOND) == []
    started_at(started, None)  # m012 leaves started_at empty for the groups it finds: "long ago"
    ticker(started).check_post()
    assert posts(slack, SECOND) == ["2026-W50"]


def test_post_week_of_every_group_leaves_out_the_week_before_a_group_began_but_by_channel_posts_it(
    started, slack, monkeypatch, tmp_path, capsys
):
    started_at(started, at("2026-12-07 10:00", ZURICH).isoformat())  # after Monday's slot, before its meeting
    code, out, err = post_week(monkeypatch, tmp_path, capsys, slack, "--at", "2026-12-07T12:00")
    assert code == 0, err
    assert posts(slack, CHANNEL) == ["2026-W50"] and posts(slack, SECOND) == [], out
    code, out, err = post_week(monkeypatch, tmp_path, capsys, slack, "--at", "2026-12-07T12:00", "--channel", SECOND)
    assert code == 0, err
    assert posts(slack, SECOND) == ["2026-W50"], out  # the operator asked for it by its channel
    assert "before the group started" in err and "posting it as asked" in err


def test_post_week_at_a_bare_time_reads_it_in_each_groups_own_zone(make_harness, slack, monkeypatch, tmp_path, capsys):
    h = make_harness(Clock(at("2026-12-03 12:00", ZURICH)), PAPERBOT_TIMEZONE="Asia/Shanghai")
    start_second(h)

    def dry_run(when: str) -> tuple[int, str, str]:
        zone = {"PAPERBOT_TIMEZONE": "Asia/Shanghai"}
        return post_week(monkeypatch, tmp_path, capsys, slack, "--dry-run", "--at", when, **zone)

    # Monday 09:30 is past both groups' slot, each at 09:00 in its own zone.
    code, out, err = dry_run("2026-12-07T09:30")
    assert code == 0, err
    assert f"nothing was posted to {CHANNEL})" in out and f"nothing was posted to {SECOND})" in out, out
    assert "not due" not in out, out
    # 08:30: neither is due, and each says when it is, in its own zone.
    code, out, err = dry_run("2026-12-07T08:30")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[0].startswith("No group's post is due"), out
    assert (
        f"{CHANNEL}: not due: 2026-W49's meeting is over; 2026-W50's post is due at 2026-12-07T09:00:00+08:00." in lines
    )
    assert (
        f"{SECOND}: not due: 2026-W49's meeting is over; 2026-W50's post is due at 2026-12-07T09:00:00+01:00." in lines
    )
    # The Thursday it was started: group 1's W49 is due (its meeting at 16:00 is ahead); C0SECOND's
    # Monday meeting is over, and it says when its first post is.
    code, out, err = dry_run("2026-12-03T15:00")
    assert code == 0, err
    assert f"{SECOND}: not due: 2026-W49's meeting is over; 2026-W50's post is due at 2026-12-07T09:00:00+01:00." in out
    assert f"{CHANNEL}: not due" not in out, out
    assert posts(slack, CHANNEL) == [] and posts(slack, SECOND) == []  # a dry run posts nothing
