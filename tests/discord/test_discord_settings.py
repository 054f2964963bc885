"""Discord's settings: one-line errors naming the setting, and one platform a process."""

from __future__ import annotations

import pytest

from bot.discord.settings import DiscordSettings, wanted
from bot.settings import SettingError

TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAx.GabcDe.abcdefghijklmnopqrstuvwxyz0123456789AB"
KEY = "ab" * 32


def load(**env):
    base = {"DISCORD_TOKEN": TOKEN, "DISCORD_PUBLIC_KEY": KEY, "PAPERBOT_CHANNEL": "1100000000000000001"}
    return DiscordSettings.load({k: v for k, v in {**base, **env}.items() if v is not None}, dotenv=None)


def test_a_whole_discord_setting_loads():
    s = load(
        DISCORD_API_URL="http://127.0.0.1:9/api/v10/",
        DISCORD_GUILD="1200000000000000001",
        PAPERBOT_ADMINS="1300000000000000001, 1300000000000000002",
    )
    assert s.token == TOKEN and s.public_key == KEY and s.api_url == "http://127.0.0.1:9/api/v10"
    assert s.guild == "1200000000000000001" and s.admins == {"1300000000000000001", "1300000000000000002"}
    assert load(DISCORD_API_URL=None).api_url == "https://discord.com/api/v10"


@pytest.mark.parametrize(
    "env, named",
    [
        ({"DISCORD_TOKEN": "xoxb-123"}, "DISCORD_TOKEN"),
        ({"DISCORD_PUBLIC_KEY": "abc"}, "DISCORD_PUBLIC_KEY"),
        ({"DISCORD_PUBLIC_KEY": "zz" * 32}, "DISCORD_PUBLIC_KEY"),
        ({"DISCORD_API_URL": "discord.com/api"}, "DISCORD_API_URL"),
        ({"DISCORD_GUILD": "my-server"}, "DISCORD_GUILD"),
        ({"PAPERBOT_CHANNEL": "C012ABCDEF"}, "PAPERBOT_CHANNEL"),
        ({"PAPERBOT_ADMINS": "U012ABCDEF"}, "PAPERBOT_ADMINS"),
    ],
)
def test_a_malformed_setting_is_one_line_naming_it(env, named):
    with pytest.raises(SettingError) as e:
        load(**env)
    assert str(e.value).startswith(f"{named}: ") and "\n" not in str(e.value)


def test_a_slack_token_beside_discords_is_no_error_of_discords():
    assert load(SLACK_BOT_TOKEN="xoxb-1").token == TOKEN  # both platforms in one process: bot/platforms.served


def test_discord_is_chosen_by_its_token_in_the_environment_or_dotenv(tmp_path):
    assert wanted({"DISCORD_TOKEN": TOKEN}, dotenv=None)
    assert not wanted({"SLACK_BOT_TOKEN": "xoxb-1"}, dotenv=None)
    env = tmp_path / ".env"
    env.write_text(f"DISCORD_TOKEN={TOKEN}\n")
    assert wanted({}, dotenv=env)


def test_the_public_key_chooses_http_and_its_absence_the_gateway():
    assert not load().socket_mode
    assert load(DISCORD_PUBLIC_KEY=None).socket_mode


def test_a_hosted_install_needs_only_the_token_and_names_its_own_server_beside_its_channel():
    from bot.discord import serve

    hosted = load(PAPERBOT_HOSTED="true", PAPERBOT_CHANNEL=None)
    assert hosted.hosted and not load().hosted  # a one-server install unless PAPERBOT_HOSTED says so
    serve.require_settings(hosted)  # no PAPERBOT_CHANNEL: each server starts its groups in chat
    with pytest.raises(SettingError) as e:
        serve.require_settings(load(PAPERBOT_CHANNEL=None))
    assert str(e.value).startswith("PAPERBOT_CHANNEL")
    with pytest.raises(SettingError) as e:  # whose server PAPERBOT_CHANNEL's group is in must be said
        load(PAPERBOT_HOSTED="true")
    assert str(e.value).startswith("DISCORD_GUILD: ") and "\n" not in str(e.value)
    assert load(PAPERBOT_HOSTED="true", DISCORD_GUILD="1200000000000000001").guild == "1200000000000000001"
