"""Groups on Discord: `/paper group …` is a subcommand group; a command acts on its channel's group."""

from __future__ import annotations

import pytest

from tests.support.discord_group import ADMIN, CHANNEL, MEMBER, respond
from tests.support.discord_standin import DiscordStandin, slash

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


def test_with_both_platforms_a_discord_groups_failed_post_is_told_to_discords_admins(make_harness, slack, tmp_path):
    from bot.discord.app import DiscordBot
    from bot.discord.settings import DiscordSettings
    from bot.runtime.scheduler import ScheduledChecks
    from bot.schedule import groups
    from tests.support.clock import Clock, at
    from tests.support.discord_standin import TOKEN

    clock = Clock(at("2026-12-07 10:05"))  # past both groups' posts: 09:00 in Berlin and in UTC
    h = make_harness(clock, PAPERBOT_ADMINS="UADMIN")
    with DiscordStandin(users={ADMIN: {}}) as discord:
        env = {"DISCORD_TOKEN": TOKEN, "DISCORD_API_URL": discord.api_url, "PAPERBOT_ADMINS": ADMIN}
        env["PAPERBOT_DB"] = str(tmp_path / "d.db")
        theirs = DiscordBot(DiscordSettings.load(env, dotenv=None), h.bot.store)
        env_group = groups.from_settings(h.bot.settings)
        # A Discord group whose channel Discord refuses.
        groups.start(h.bot.store, env_group, OTHER, "discord", ADMIN, at=at("2026-11-30 09:00"))
        checks = ScheduledChecks(
            h.bot.store,
            h.bot.settings,
            h.bot.transport,
            clock=clock,
            transports={"slack": h.bot.transport, "discord": theirs.transport},
            home="slack",
            tell_admins=h.bot.tell_admins,
            admins_of={"slack": h.bot.tell_admins, "discord": theirs.tell_admins},
        )
        checks.check_post()
        told = lambda d: d.dm_channel(ADMIN) and d.messages(d.dm_channel(ADMIN))  # noqa: E731
        assert discord.wait_for(told, 10), "Discord's admin was not told"
        [said] = told(discord)
        assert f"<#{OTHER}>" in said["content"] and "couldn't post" in said["content"]
    assert not slack.messages("DUADMIN")  # Slack's admins cannot open a Discord channel
