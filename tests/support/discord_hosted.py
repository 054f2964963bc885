"""A hosted install on Discord in a test: two servers besides the install's own, their channels and members,
the stand-in as Discord, and interactions from each POSTed to the install's real door.

    with hosted_install(tmp_path) as (hosted, discord, clock):
        said = post(hosted, discord, from_a(slash("add", ALICE, permissions=ADMINISTRATOR)))
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator

from bot.discord import serve
from bot.discord.app import DiscordBot
from bot.discord.hosted import HostedDiscord
from bot.discord.settings import DiscordSettings
from bot.runtime.scheduler import ScheduledChecks
from tests.support.clock import Clock, at
from tests.support.databases import database_for
from tests.support.discord_group import seeded_store
from tests.support.discord_standin import APP_ID, PUBLIC_KEY, TOKEN, DiscordStandin, in_server, sign

SERVER_A, SERVER_B = "1000000000000000101", "1000000000000000202"
CHANNEL_A, CHANNEL_B = "1000000000000000111", "1000000000000000222"
#: Alice is in server A, Bob in server B, Carol in both.
ALICE, BOB, CAROL = "1300000000000000101", "1300000000000000202", "1300000000000000303"
PUBLIC_URL = "https://paperbot.example"


def from_a(interaction: dict) -> dict:
    return in_server(interaction, SERVER_A, CHANNEL_A)


def from_b(interaction: dict) -> dict:
    return in_server(interaction, SERVER_B, CHANNEL_B)


def direct(interaction: dict) -> dict:
    """`interaction` in a direct message: no server, the user outside `member`."""
    dm = {k: v for k, v in interaction.items() if k not in ("guild_id", "member")}
    return {**dm, "user": interaction["member"]["user"], "channel_id": "1000000000000000999"}


@contextlib.contextmanager
def hosted_install(tmp_path, **env: str) -> Iterator[tuple[HostedDiscord, DiscordStandin, Clock]]:
    """A hosted install (PAPERBOT_HOSTED=true, no server of its own unless `env` names one) on a fresh
    database, its places' checks on `clock` (a Wednesday, before any group's first post)."""
    guilds = {
        SERVER_A: {"name": "Lab A", "channels": {CHANNEL_A}},
        SERVER_B: {"name": "Lab B", "channels": {CHANNEL_B}},
    }
    users = {ALICE: {"guilds": {SERVER_A}}, BOB: {"guilds": {SERVER_B}}, CAROL: {}}
    clock = Clock(at("2026-12-02 10:00"))
    with DiscordStandin(users=users, guilds=guilds) as discord:
        values = {
            "DISCORD_TOKEN": TOKEN,
            "DISCORD_PUBLIC_KEY": PUBLIC_KEY,
            "DISCORD_API_URL": discord.api_url,
            "PAPERBOT_DB": database_for(tmp_path),
            "PAPERBOT_HOSTED": "true",
            "PAPERBOT_PUBLIC_URL": PUBLIC_URL,
            **env,
        }
        settings = DiscordSettings.load(values, dotenv=None)
        house = seeded_store(settings.db_path)

        def checks_of(bot: DiscordBot) -> ScheduledChecks:
            return ScheduledChecks(bot.store, bot.settings, bot.transport, clock=bot.clock, outbox=bot.wake_outbox)

        hosted = HostedDiscord(settings, house, checks_of, clock=clock)
        hosted.app_id = APP_ID
        if settings.guild:
            home = DiscordBot(
                settings, house, clock=clock, rest=hosted.rest, answers=hosted.answers, background=hosted.background
            )
            home.app_id = APP_ID
            hosted.start_home(home)
        try:
            yield hosted, discord, clock
        finally:
            hosted.close(2)
            house.close()


def post(hosted: HostedDiscord, discord: DiscordStandin, interaction: dict) -> dict:
    """The interaction response to `interaction`, through the install's door; the status must be 200."""
    body = json.dumps(interaction).encode()
    environ = {
        "PATH_INFO": serve.INTERACTIONS_PATH,
        "REQUEST_METHOD": "POST",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    for k, v in sign(body).items():
        environ["HTTP_" + k.upper().replace("-", "_")] = v
    said: list[str] = []
    application = hosted.around(serve.wsgi(hosted, PUBLIC_KEY))
    answer = b"".join(application(environ, lambda status, headers: said.append(status)))
    assert said == ["200 OK"], (said, answer[:300])
    response = json.loads(answer)
    discord.took(interaction, response)
    return response


def get(hosted: HostedDiscord, path: str) -> tuple[str, str]:
    """GET `path` of the install's HTTP server: (status, body)."""
    environ = {"PATH_INFO": path, "REQUEST_METHOD": "GET", "QUERY_STRING": "", "wsgi.input": io.BytesIO(b"")}
    said: list[str] = []
    answer = b"".join(hosted.around(None)(environ, lambda status, headers: said.append(status)))
    return said[0], answer.decode("utf-8", "replace")
