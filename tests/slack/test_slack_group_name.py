"""A group's name on Slack: atop its weekly post and in its reminders, escaped (a name pings nobody);
the post's metadata, and a group with no name's post, as before."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from bot.schedule import groups, reminders, weekly
from bot.slack import blocks
from tests.support.block_kit import blocks_text, valid
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL
from tests.support.slack_standin import check_message

NAME = "<!channel> Systems & <@U999> Club"


@pytest.fixture
def clock():
    return Clock(at("2026-12-02 10:00"))  # a Wednesday; the meetings are on Thursdays at 16:00


def test_the_name_heads_the_post_and_ends_the_reminder_and_pings_nobody(make_harness, clock):
    h = make_harness(clock, PAPERBOT_GROUP_NAME=NAME)
    h.command("signup 7 next", user="U1")  # W50: Thu 10 Dec
    weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    reminders.send_due(h.bot.store, h.bot.group, h.bot.transport, at("2026-12-08 16:00"))
    post, reminder = h.slack.messages(CHANNEL)[-1], h.slack.messages("DU1")[-1]
    check_message(post)
    assert blocks_text(post).splitlines()[:2] == ["📄 Paper of the week · 2026-W50", f"📚 *{NAME}*"]
    assert post["text"].startswith("&lt;!channel&gt; Systems &amp; &lt;@U999&gt; Club · Paper of the week 2026-W50")
    assert f"at {NAME}.\n" in blocks_text(reminder), blocks_text(reminder)
    for message in (post, reminder):
        raw = json.dumps(message)
        assert "<!channel>" not in raw and "<@U999>" not in raw, raw
    metadata = json.loads(post["metadata"]) if isinstance(post["metadata"], str) else post["metadata"]
    assert metadata == {  # as a group with no name's post has it
        "event_type": "paper_of_the_week",
        "event_payload": {"week": "2026-W50", "paper_id": metadata["event_payload"]["paper_id"], "paper_number": 7},
    }


def test_a_post_with_no_name_is_the_named_post_without_its_line(make_harness, clock):
    h = make_harness(clock)
    post = weekly.plan(h.bot.store, h.bot.group, h.bot.group.week_of(at("2026-12-07 09:00")), None, CHANNEL, clock())
    assert post is not None and post.group_name is None
    unnamed, named = blocks.weekly_post(post), blocks.weekly_post(replace(post, group_name="Systems Club"))
    line = {"type": "context", "elements": [{"type": "mrkdwn", "text": "📚 *Systems Club*"}]}
    assert named["blocks"][1] == line and [b for b in named["blocks"] if b != line] == unnamed["blocks"]
    assert named["text"] == "Systems Club · " + unnamed["text"] and named["metadata"] == unnamed["metadata"]


def test_group_set_name_in_a_chat_group_is_listed_and_shown_and_pings_nobody(make_harness, clock):
    h = make_harness(clock)
    h.command("group start", user="UADMIN", channel_id="C0OTHER")
    said = valid(h.command(f"group set name {NAME}", user="UADMIN", channel_id="C0OTHER"))
    group = groups.of_channel(h.bot.store, h.bot.env, "C0OTHER")
    assert group is not None and group.name == "@channel Systems & @U999 Club"  # as Slack's text reads: inert
    assert blocks_text(said).startswith(f"Set name to `{group.name}`."), blocks_text(said)
    listed = valid(h.command("groups", user="U1"))
    assert f"• {group.name} in <#C0OTHER>" in blocks_text(listed), blocks_text(listed)
    shown = valid(h.command("group", user="U1", channel_id="C0OTHER"))
    assert blocks_text(shown).startswith(f"{group.name} — reading group in <#C0OTHER>"), blocks_text(shown)
    for message in (said, listed, shown):
        raw = json.dumps(message)
        assert "<!channel>" not in raw and "<@U999>" not in raw, raw
