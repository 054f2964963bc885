"""An install with many groups answers a member's own lines without reading every group."""

from __future__ import annotations

import html
from datetime import UTC, datetime

import pytest

from bot.schedule import groups
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL
from tests.support.slack_standin import SlackStandin

OTHER = "C0OTHER"
MANY = 200


@pytest.fixture
def slack():
    with SlackStandin(channels={CHANNEL, OTHER}, users={u: {} for u in ("UADMIN", "U1", "U2")}) as standin:
        yield standin


@pytest.fixture
def many(make_harness):
    """Group 1 (C0PAPERS), a group in C0OTHER, and MANY more groups started in chat."""
    h = make_harness(Clock(at("2026-12-03 12:00")))
    assert "Started a reading group" in html.unescape(h.command("group start", user="UADMIN", channel_id=OTHER)["text"])
    env = groups.from_settings(h.bot.settings)
    for i in range(MANY):
        groups.start(h.bot.store, env, f"C0MANY{i:04d}", "slack", "UADMIN")
    return h


def test_mine_and_show_read_only_the_groups_their_lines_name(many, monkeypatch):
    many.command("signup 7 2026-12-16", user="U1", channel_id=OTHER)
    many.command("signup 3 2026-12-16", user="U1", channel_id=CHANNEL)
    read_all = []
    every = groups.every

    def counted(*args, **kwargs):
        read_all.append(1)
        return every(*args, **kwargs)

    monkeypatch.setattr(groups, "every", counted)
    reply = html.unescape(many.command("mine", user="U1", channel_id=OTHER)["text"])
    assert f"<#{CHANNEL}>" in reply and f"<#{OTHER}>" in reply, reply  # each line names its group
    shown = str(many.command("show 7", user="U2", channel_id=CHANNEL)["blocks"])
    assert f"<#{OTHER}>" in shown and "<@U1>" in shown, shown
    assert read_all == [], "a member's lines read every group of the install"


def test_the_scheduler_looks_at_each_groups_slot_not_only_the_environments(make_harness, slack, request):
    """Group 1 posts on Mondays at 09:00 (Berlin); a group started in chat on Tuesdays at 10:00 (UTC).
    After a look on Monday, the scheduler is set to look again at the Tuesday slot itself."""
    from bot.runtime.scheduler import ScheduledChecks, create

    clock = Clock(at("2026-12-03 12:00"))
    h = make_harness(clock)
    assert "Started" in html.unescape(h.command("group start", user="UADMIN", channel_id=OTHER)["text"])
    assert html.unescape(h.command('group set schedule "0 10 * * tue"', user="UADMIN", channel_id=OTHER)["text"])
    ticker = ScheduledChecks(h.bot.store, h.bot.settings, h.bot.transport, clock=clock)
    scheduler = create(ticker, h.bot.settings)
    scheduler.start(paused=True)  # its jobs are kept, none is run: the test's clock says when
    request.addfinalizer(scheduler.shutdown)
    clock.set(at("2026-12-07 09:30"))
    ticker.check_post()
    job = scheduler.get_job("group-slot")
    assert job is not None and job.trigger.run_date == datetime(2026, 12, 8, 10, 0, tzinfo=UTC)
    clock.set(at("2026-12-08 10:00", UTC))  # the job's look: the group's post, and the next slot planned
    ticker.check_post()
    assert len([m for m in slack.messages(OTHER) if m["metadata"]["event_type"] == "paper_of_the_week"]) == 1
    assert scheduler.get_job("group-slot").trigger.run_date == at("2026-12-14 09:00")  # group 1's, next
