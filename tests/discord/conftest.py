"""Fixtures of the Discord adapter's tests: the stand-in as Discord, and DiscordBots on a fresh database."""

from __future__ import annotations

import pytest

from bot.discord.app import DiscordBot
from bot.discord.settings import DiscordSettings
from tests.support.databases import database_for
from tests.support.discord_group import ADMIN, CHANNEL, MEMBER, SHY, seeded_store
from tests.support.discord_standin import APP_ID, PUBLIC_KEY, TOKEN, DiscordStandin


@pytest.fixture
def discord():
    with DiscordStandin(channels={CHANNEL}, users={ADMIN: {}, MEMBER: {}, SHY: {"dms": False}}) as d:
        yield d


@pytest.fixture
def make_bot(tmp_path, discord):
    made = []

    def make(**env) -> DiscordBot:
        values = {
            "DISCORD_TOKEN": TOKEN,
            "DISCORD_PUBLIC_KEY": PUBLIC_KEY,
            "DISCORD_API_URL": discord.api_url,
            "PAPERBOT_DB": database_for(tmp_path),
            "PAPERBOT_CHANNEL": CHANNEL,
            "PAPERBOT_TIMEZONE": "Europe/Berlin",
            "PAPERBOT_MEETING": "thu 16:00",
            "PAPERBOT_ADMINS": ADMIN,
            **env,
        }
        settings = DiscordSettings.load(values, dotenv=None)
        bot = DiscordBot(settings, seeded_store(settings.db_path))
        bot.app_id = APP_ID
        made.append(bot)
        return bot

    yield make
    for bot in made:
        bot.close(2)
        bot.store.close()
