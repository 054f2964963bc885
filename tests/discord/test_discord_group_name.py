"""A group's name on Discord: the weekly post's first words and the end of its reminders, escaped
(a name pings nobody and draws no markdown); `group set name` from a chat group."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.schedule import groups, reminders, weekly
from tests.support.discord_group import ADMIN, CHANNEL, MEMBER, respond
from tests.support.discord_standin import DiscordStandin, check_message, pings, slash

TZ = ZoneInfo("Europe/Berlin")
OTHER = "1000000000000000004"
NAME = "@everyone **Systems** <@&1> Club"
ESCAPED = "@\u200beveryone \\*\\*Systems\\*\\* \\<@&1\\> Club"


@pytest.fixture
def discord():
    with DiscordStandin(channels={CHANNEL, OTHER}, users={ADMIN: {}, MEMBER: {}}) as d:
        yield d


def test_the_name_opens_the_post_and_ends_the_reminder_and_pings_nobody(make_bot, discord):
    bot = make_bot(PAPERBOT_GROUP_NAME=NAME)
    week = bot.group.coming(datetime.now(TZ))
    respond(bot, discord, slash("assign", ADMIN, user=MEMBER, paper="3", date=week.monday.isoformat()))
    slot = bot.group.slot_of(week)
    assert weekly.post_week(bot.store, bot.group, bot.transport, CHANNEL, slot, force=True).status == "sent"
    reminders.send_due(bot.store, bot.group, bot.transport, bot.group.meeting_of(week) - timedelta(hours=1), force=True)
    post = discord.messages(CHANNEL)[-1]
    reminder = discord.messages(discord.dm_channel(MEMBER))[-1]
    check_message(post)
    assert post["content"] == f"📚 {ESCAPED} · **Paper of the week** · {week.key}", post["content"]
    assert f"** at {ESCAPED}.\n" in reminder["embeds"][0]["description"], reminder
    assert pings(post) == set() and pings(reminder) == set()


def test_a_group_with_no_name_posts_as_before(make_bot, discord):
    bot = make_bot()
    week = bot.group.coming(datetime.now(TZ))
    weekly.post_week(bot.store, bot.group, bot.transport, CHANNEL, bot.group.slot_of(week), force=True)
    assert discord.messages(CHANNEL)[-1]["content"] == f"**Paper of the week** · {week.key}"


def test_group_set_name_on_discord_names_the_chat_group(make_bot, discord):
    bot = make_bot()

    def group(sub: str, **options) -> str:
        interaction = slash("group", ADMIN)
        opts = [{"name": k, "type": 3, "value": v} for k, v in options.items()]
        interaction["data"]["options"] = [
            {"name": "group", "type": 2, "options": [{"name": sub, "type": 1, "options": opts}]}
        ]
        interaction["channel_id"] = OTHER
        return respond(bot, discord, interaction)["data"]["content"]

    group("start")
    assert group("set", setting="name", value=NAME).startswith(f"Set name to `{NAME}`")
    named = groups.of_channel(bot.store, bot.env, OTHER)
    assert named is not None and named.name == NAME
    listed = group("list")
    assert f"• {ESCAPED} in <#{OTHER}>" in listed, listed
    refused = group("set", setting="name", value="x" * 81)
    assert refused.startswith("⚠️ name: is 81 characters long; a group's name is at most 80") and "\n" not in refused
