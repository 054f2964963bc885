"""A Discord process never sends to another platform's channel: a Slack `C…` group (one started
from the console before groups kept their platform) is skipped, said once in one log line."""

from __future__ import annotations

import logging
import time

import pytest

from bot.announcing import changes as announce
from bot.announcing import sender as outbox_sender
from bot.rich_text import text
from bot.schedule import groups
from tests.support.discord_group import ADMIN, CHANNEL, MEMBER
from tests.support.discord_standin import DiscordStandin

SLACK_CHANNEL = "C0SECOND"


@pytest.fixture
def discord():
    with DiscordStandin(channels={CHANNEL}, users={ADMIN: {}, MEMBER: {}}) as d:
        yield d


def _slack_group(store) -> None:
    """A group started from the console before it kept a platform."""
    with store.write() as db:
        db.execute(
            "INSERT INTO groups (platform, channel, started_by, updated_at) VALUES (NULL, ?, 'console', '')",
            [SLACK_CHANNEL],
        )


def test_a_slack_channels_announcement_is_left_alone_in_one_log_line(make_bot, discord, caplog, monkeypatch):  # noqa: F811
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_QUIET", 0.0)
    bot = make_bot()
    _slack_group(bot.store)
    group = groups.of_channel(bot.store, bot.env, SLACK_CHANNEL)
    meeting = groups.next_meeting(group.calendar, bot.clock())
    with bot.store.write():
        announce.queue_note(
            bot.store, SLACK_CHANNEL, text("⚙️ changed"), group.calendar.week_of(meeting), meeting, "console"
        )
    with caplog.at_level(logging.INFO):
        bot.outbox.send()
        bot.outbox.send()  # a second look, as the scheduler's every 30 s: nothing more said
    said = [r for r in caplog.records if SLACK_CHANNEL in r.getMessage() and r.levelno >= logging.WARNING]
    assert len(said) == 1 and said[0].exc_info is None, [r.getMessage() for r in said]
    assert "is not a Discord channel ID" in said[0].getMessage()
    assert not [r for r in caplog.records if r.exc_info], "no traceback"
    (next_try,) = bot.store.db.execute("SELECT next_try FROM outbox").fetchone()
    assert next_try > time.time() + 600  # left for Slack's process, not tried again soon
    assert discord.messages(CHANNEL) == []  # and no admin told of a refusal


def test_a_discord_process_does_not_post_to_a_slack_channels_group(make_bot, discord):  # noqa: F811
    bot = make_bot()
    _slack_group(bot.store)
    env = groups.from_settings(bot.settings)
    assert [g.channel for g in groups.posting(bot.store, env, "Discord")] == [CHANNEL]
    assert [g.channel for g in groups.posting(bot.store, env, "Slack")] == [CHANNEL, SLACK_CHANNEL]
