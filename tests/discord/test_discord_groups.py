"""Groups on Discord: `/paper group …` is a subcommand group; a command acts on its channel's group."""

from __future__ import annotations

import pytest
from discord_standin import DiscordStandin, slash
from test_discord_interactions import ADMIN, CHANNEL, MEMBER, make_bot, respond  # noqa: F401 (make_bot: fixture)

OTHER = "1000000000000000004"


@pytest.fixture
def discord():
    with DiscordStandin(channels={CHANNEL, OTHER}, users={ADMIN: {}, MEMBER: {}}) as d:
        yield d


def group(sub: str, who: str, channel: str, **options) -> dict:
    """`/paper group <sub> option:value …` typed in `channel`."""
    interaction = slash("group", who)
    opts = [{"name": k, "type": 3, "value": v} for k, v in options.items()]
    interaction["data"]["options"] = [
        {"name": "group", "type": 2, "options": [{"name": sub, "type": 1, "options": opts}]}
    ]
    interaction["channel_id"] = channel
    return interaction


def in_channel(interaction: dict, channel: str) -> dict:
    interaction["channel_id"] = channel
    return interaction


def content(response: dict) -> str:
    return response["data"]["content"]


def test_a_group_started_and_set_on_discord_keeps_its_own_sign_ups(make_bot, discord):  # noqa: F811
    bot = make_bot()
    assert "Started a reading group" in content(respond(bot, discord, group("start", ADMIN, OTHER)))
    said = content(respond(bot, discord, group("set", ADMIN, OTHER, setting="timezone", value="Asia/Shanghai")))
    assert said.startswith("Set timezone to `Asia/Shanghai`"), said
    refused = content(respond(bot, discord, group("set", MEMBER, OTHER, setting="meeting", value="thu 16:00")))
    assert "Only admins can" in refused and "\n" not in refused, refused
    assert bot.store.db.execute(
        "SELECT platform, timezone, meeting FROM groups WHERE channel = ?", [OTHER]
    ).fetchone() == (
        "discord",
        "Asia/Shanghai",
        None,
    )
    said = content(respond(bot, discord, in_channel(slash("signup", MEMBER, paper="7", date="next"), OTHER)))
    assert "You're signed up" in said, said
    assert bot.store.db.execute("SELECT group_id FROM slots").fetchall() == [(2,)]
    listed = content(respond(bot, discord, group("list", MEMBER, CHANNEL)))
    assert listed.startswith("2 reading groups") and f"<#{OTHER}>" in listed, listed
