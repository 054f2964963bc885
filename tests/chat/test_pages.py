"""How many papers a list reply holds is the platform's to say, not the core's."""

from __future__ import annotations

import dataclasses

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.chat import commands, context
from bot.chat.replies import PaperList
from bot.schedule.signups import Member
from bot.slack.members import PLATFORM as SLACK
from tests.support.clock import TZ, at


def _list(store, line: str, platform: context.Platform) -> PaperList:
    group = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))
    ctx = context.Context(store, group, Member("U1", lambda: False), at("2026-12-02 10:00"), platform=platform)
    reply = commands.run(ctx, line).reply
    assert isinstance(reply, PaperList), reply
    return reply


def test_a_platform_with_smaller_messages_gets_smaller_pages(store):
    small = dataclasses.replace(SLACK, papers_page=10)
    first = _list(store, "tag parallelism-dp", small)
    assert [p.number for p in first.papers] == list(range(1, 11))
    assert [b.label for b in first.pager] == ["Next 10 ▶"]
    fourth = _list(store, "tag parallelism-dp --page 4", small)
    assert [p.number for p in fourth.papers] == [31, 32]
    assert [b.label for b in fourth.pager] == ["◀ Previous 10"]
    found = _list(store, "search training", dataclasses.replace(SLACK, papers_page=3))
    assert len(found.papers) == 3 and found.pager[-1].command.endswith("--page 2")


def test_slack_lists_the_contracts_forty_in_one_reply(store):
    assert len(_list(store, "tag parallelism-dp", SLACK).papers) == 32
