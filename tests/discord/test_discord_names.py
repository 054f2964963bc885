"""Members' names on pages and in events, asked of Discord through the stand-in: the name in the
server first, then the member's own name, never an id."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bot.discord.adapter import ADAPTER
from bot.discord.settings import DiscordSettings
from bot.web import member_names
from tests.support.discord_standin import GUILD, TOKEN, DiscordStandin

NICKED = "1000000000000000011"  # a nickname in the server
NAMED = "1000000000000000012"  # no nickname: their global name
LEFT = "1000000000000000013"  # not in the server (any more): their user's global name
PLAIN = "1000000000000000014"  # neither: their user name
STRANGER = "1000000000000000015"  # Discord knows no such user


@pytest.fixture
def discord():
    users = {
        NICKED: {"name": "Ada Lovelace", "nick": "Ada (reading group)"},
        NAMED: {"name": "Bob Barker"},
        LEFT: {"name": "Cy Young", "nick": "Cy", "member": False},
        PLAIN: {},
    }
    with DiscordStandin(users=users) as standin:
        yield standin


def ask(discord, tmp_path, guild: str | None = GUILD):
    env = {"DISCORD_TOKEN": TOKEN, "DISCORD_API_URL": discord.api_url, "PAPERBOT_DB": str(tmp_path / "p.db")}
    if guild:
        env["DISCORD_GUILD"] = guild
    return ADAPTER.member_names(DiscordSettings.load(env, dotenv=None))


def test_a_members_name_is_their_name_in_the_server_else_their_own(store, discord, tmp_path):
    names = ask(discord, tmp_path)
    shown = {m: member_names.display_name(store, m, names) for m in (NICKED, NAMED, LEFT, PLAIN)}
    assert shown == {NICKED: "Ada (reading group)", NAMED: "Bob Barker", LEFT: "Cy Young", PLAIN: "user014"}
    assert {c.route for c in discord.calls} == {"member", "user"}


def test_without_a_server_the_users_own_name(store, discord, tmp_path):
    names = ask(discord, tmp_path, guild=None)
    assert member_names.display_name(store, NICKED, names) == "Ada Lovelace"
    assert [c.route for c in discord.calls] == ["user"]


def test_a_user_discord_does_not_know_is_a_member_never_an_id(store, discord, tmp_path):
    assert member_names.display_name(store, STRANGER, ask(discord, tmp_path)) == member_names.UNKNOWN


def test_a_server_that_fails_to_answer_is_not_asked_a_second_time(store, discord, tmp_path):
    discord.fail_next("member", 500)
    assert member_names.display_name(store, NICKED, ask(discord, tmp_path)) == member_names.UNKNOWN
    assert [c.route for c in discord.calls] == ["member"]  # not the user's name instead, a second call


def test_with_both_platforms_each_members_name_is_asked_of_their_own(store, discord, tmp_path):
    from bot.runtime import both_platforms
    from tests.support.slack_group import settings_for
    from tests.support.slack_standin import SlackStandin

    users = {"U1": {"profile": {"display_name": "Ada on Slack"}}, "U2": {"profile": {"display_name": "Bo"}}}
    with SlackStandin(users=users) as slack:
        discord_settings = DiscordSettings.load(
            {"DISCORD_TOKEN": TOKEN, "DISCORD_API_URL": discord.api_url, "DISCORD_GUILD": GUILD}, dotenv=None
        )
        slack_settings = settings_for(tmp_path, slack.api_url, PAPERBOT_PUBLIC_URL="https://example.org/")
        parts = [SimpleNamespace(settings=slack_settings), SimpleNamespace(settings=discord_settings)]
        names = both_platforms.calendars(parts, slack_settings, store).ask  # as `run` serves the pages
        assert member_names.display_name(store, NICKED, names) == "Ada (reading group)"
        assert member_names.display_name(store, "U1", names) == "Ada on Slack"
        assert [c.params["user"] for c in slack.calls_to("users.info")] == ["U1"]  # no Discord id sent to Slack
        # Slack fails: its members are not asked for a while, Discord's still are.
        slack.fail_next("users.info", status=500)
        assert member_names.display_name(store, "U2", names) == member_names.UNKNOWN
        assert member_names.display_name(store, "U3", names) == member_names.UNKNOWN
        assert len(slack.calls_to("users.info")) == 2
        assert member_names.display_name(store, NAMED, names) == "Bob Barker"
