"""`paperbot run` as a hosted install on Discord (PAPERBOT_HOSTED=true), a real process: `/paper` registered
globally; each server answered from its own place; DISCORD_GUILD's server, with PAPERBOT_CHANNEL's group,
the install's own, its database as before; over the Gateway, servers joining and leaving as Discord says."""

from __future__ import annotations

import pytest

from bot.discord.app import ADMINISTRATOR
from tests.support.databases import db_rows
from tests.support.discord_group import CHANNEL, MEMBER
from tests.support.discord_hosted import ALICE, BOB, CHANNEL_A, CHANNEL_B, SERVER_A, SERVER_B, direct, from_a, from_b
from tests.support.discord_process import Bot
from tests.support.discord_standin import GUILD, DiscordStandin, slash

pytestmark = pytest.mark.slow

PLACE_A, PLACE_B = f"discord-{SERVER_A}", f"discord-{SERVER_B}"


@pytest.fixture
def discord():
    guilds = {
        SERVER_A: {"name": "Lab A", "channels": {CHANNEL_A}},
        SERVER_B: {"name": "Lab B", "channels": {CHANNEL_B}},
    }
    users = {MEMBER: {"guilds": {GUILD}}, ALICE: {"guilds": {SERVER_A}}, BOB: {"guilds": {SERVER_B}}}
    with DiscordStandin(channels={CHANNEL}, users=users, guilds=guilds) as d:
        yield d


@pytest.fixture
def run_hosted(tmp_path, discord):
    made: list[Bot] = []

    def start(mode: str = "http") -> Bot:
        bot = Bot(tmp_path, discord, mode, PAPERBOT_HOSTED="true")  # DISCORD_GUILD and PAPERBOT_CHANNEL set
        made.append(bot)
        return bot

    yield start
    for bot in made:
        bot.stop()


def content(bot: Bot, interaction: dict) -> str:
    status, response = bot.interact(interaction)
    assert status == 200 and isinstance(response, dict), response
    return str(response["data"])


def places(tmp_path) -> dict[str, tuple[str, str]]:
    return {row[0]: (row[1], row[2]) for row in db_rows(tmp_path, "SELECT id, name, state FROM places")}


@pytest.mark.parametrize("mode", ["http", "gateway"])
def test_a_hosted_run_answers_each_server_from_its_own_place_and_its_own_server_as_before(
    run_hosted, discord, tmp_path, mode
):
    bot = run_hosted(mode)
    [command] = discord.registered["global"]
    assert command["name"] == "paper"
    assert discord.registered[GUILD] == []  # a one-server install's registration there taken back: /paper once
    # The install's own server: PAPERBOT_CHANNEL's group, and the starter list of the install's database.
    assert "#7" in content(bot, slash("show", MEMBER, paper="7"))
    # Another server: a place of its own, empty, with the hint on adding papers.
    assert "The catalog is empty" in content(bot, from_a(slash("show", ALICE, paper="7")))
    assert "in a server" in content(bot, direct(slash("show", ALICE, paper="7")))  # a direct message: no place
    assert "Only" in content(bot, from_b(slash("delete", BOB, paper="7")))
    assert "Started" in content(bot, from_b(_group_start(BOB)))
    assert db_rows(tmp_path, "SELECT channel FROM groups WHERE channel = ?", [CHANNEL_B]) == []  # not in the house
    assert {PLACE_A, PLACE_B} <= set(places(tmp_path))
    assert "Traceback" not in bot.log.read_text()


def _group_start(who: str) -> dict:
    interaction = slash("group", who, permissions=ADMINISTRATOR)
    interaction["data"]["options"] = [{"name": "group", "type": 2, "options": [{"name": "start", "type": 1}]}]
    return interaction


def test_over_the_gateway_servers_join_by_their_names_and_a_removed_one_leaves(run_hosted, discord, tmp_path):
    bot = run_hosted("gateway")
    [session] = discord.gateway_sessions
    assert session["identify"]["intents"] == 1  # GUILDS: GUILD_CREATE and GUILD_DELETE, nothing privileged
    assert discord.wait_for(lambda d: places(tmp_path).get(PLACE_B) == ("Lab B", "active"), 15), places(tmp_path)
    assert places(tmp_path)[PLACE_A] == ("Lab A", "active")
    assert f"discord-{GUILD}" not in places(tmp_path)  # DISCORD_GUILD's server is the install's own
    discord.remove_guild(SERVER_B)
    assert discord.wait_for(lambda d: places(tmp_path)[PLACE_B][1] == "gone", 15), places(tmp_path)
    assert places(tmp_path)[PLACE_A][1] == "active"
    bot.proc.terminate()
    assert bot.proc.wait(15) == 0 and "Traceback" not in bot.log.read_text()
