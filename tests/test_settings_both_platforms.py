"""Both platforms' tokens set: one install serves both, and PAPERBOT_CHANNEL's form says which
platform group 1 is on; PAPERBOT_ADMINS may mix ids of both (bot/platforms.served)."""

from __future__ import annotations

import pytest

from bot import platforms
from bot.discord.settings import DiscordSettings
from bot.settings import SettingError
from bot.slack.settings import SlackSettings

DISCORD = "MTEwMDAwMDAwMDAwMDAwMDAx.GabcDe.abcdefghijklmnopqrstuvwxyz0123456789AB"
SLACK_CHANNEL, DISCORD_CHANNEL = "C0PAPERS", "1100000000000000001"
SLACK_ADMIN, DISCORD_ADMIN = "U0ADMIN", "1300000000000000001"


def served(**env):
    base = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s3cret", "DISCORD_TOKEN": DISCORD}
    return platforms.served({k: v for k, v in {**base, **env}.items() if v is not None}, dotenv=None)


def test_a_slack_channel_puts_group_1_on_slack_and_both_are_served():
    slack, discord = served(PAPERBOT_CHANNEL=SLACK_CHANNEL, PAPERBOT_ADMINS=f"{SLACK_ADMIN}, {DISCORD_ADMIN}")
    assert isinstance(slack, SlackSettings) and isinstance(discord, DiscordSettings)
    assert slack.channel == SLACK_CHANNEL and slack.bot_token == "xoxb-1" and slack.admins == {SLACK_ADMIN}
    # Discord's side knows group 1's channel, so that a change made from Discord is announced there.
    assert discord.channel == SLACK_CHANNEL and discord.token == DISCORD and discord.admins == {DISCORD_ADMIN}
    assert platforms.home({}, dotenv=None).__class__ is SlackSettings  # no token: Slack, as before


def test_a_discord_channel_puts_group_1_on_discord():
    discord, slack = served(PAPERBOT_CHANNEL=DISCORD_CHANNEL, PAPERBOT_ADMINS=DISCORD_ADMIN)
    assert isinstance(discord, DiscordSettings) and discord.channel == DISCORD_CHANNEL
    assert isinstance(slack, SlackSettings) and slack.admins == frozenset()


def test_one_token_serves_one_platform_as_before():
    (only,) = served(SLACK_BOT_TOKEN=None, PAPERBOT_CHANNEL=DISCORD_CHANNEL)
    assert isinstance(only, DiscordSettings)
    (only,) = served(DISCORD_TOKEN=None, PAPERBOT_CHANNEL=SLACK_CHANNEL)
    assert isinstance(only, SlackSettings)


@pytest.mark.parametrize(
    "env, named, says",
    [
        ({}, "PAPERBOT_CHANNEL", "is not set"),
        ({"PAPERBOT_CHANNEL": "general"}, "PAPERBOT_CHANNEL", "not a channel ID of exactly one platform"),
        ({"PAPERBOT_CHANNEL": "D0DIRECT"}, "PAPERBOT_CHANNEL", "not a channel ID of exactly one platform"),
        ({"PAPERBOT_CHANNEL": SLACK_CHANNEL, "PAPERBOT_ADMINS": "ada"}, "PAPERBOT_ADMINS", "no platform's user ID"),
        ({"PAPERBOT_CHANNEL": SLACK_CHANNEL, "DISCORD_TOKEN": "nope"}, "DISCORD_TOKEN", "not a Discord bot token"),
        ({"PAPERBOT_CHANNEL": DISCORD_CHANNEL, "SLACK_BOT_TOKEN": "xoxp-1"}, "SLACK_BOT_TOKEN", "xoxb-"),
    ],
)
def test_what_does_not_fit_together_is_one_line_naming_the_setting(env, named, says):
    with pytest.raises(SettingError) as e:
        served(**env)
    line = str(e.value)
    assert line.startswith(f"{named}: ") and says in line and "\n" not in line


def test_the_ambiguous_channel_line_names_both_tokens():
    with pytest.raises(SettingError) as e:
        served()
    assert "SLACK_BOT_TOKEN" in str(e.value) and "DISCORD_TOKEN" in str(e.value)


def test_both_tokens_in_dotenv_count(tmp_path):
    env = tmp_path / ".env"
    env.write_text(f"SLACK_BOT_TOKEN=xoxb-1\nDISCORD_TOKEN={DISCORD}\nPAPERBOT_CHANNEL={SLACK_CHANNEL}\n")
    slack, discord = platforms.served({}, dotenv=env)
    assert slack.channel == discord.channel == SLACK_CHANNEL and discord.token == DISCORD


def test_each_platform_checks_its_own_way_in():
    """Slack needs SLACK_APP_TOKEN or SLACK_SIGNING_SECRET; Discord serves the Gateway without a key."""
    from bot.discord import serve as discord_serve
    from bot.slack import serve as slack_serve

    slack, discord = served(PAPERBOT_CHANNEL=SLACK_CHANNEL, SLACK_SIGNING_SECRET=None)
    with pytest.raises(SettingError) as e:
        slack_serve.require_settings(slack)
    assert str(e.value).startswith("SLACK_SIGNING_SECRET: ")
    discord_serve.require_settings(discord)
    assert discord.socket_mode  # the Gateway
