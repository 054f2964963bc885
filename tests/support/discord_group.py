"""The test group on Discord: its channel, an admin, a member and one who takes no direct messages; its
database, seeded as the CLI seeds it; and an interaction handled as Discord would see it answered."""

from __future__ import annotations

import time

from bot.discord.app import DiscordBot
from bot.store.connection import Store
from tests.support.discord_standin import DiscordStandin

CHANNEL = "1000000000000000003"
ADMIN, MEMBER, SHY = "1300000000000000001", "1300000000000000002", "1300000000000000003"


def seeded_store(path) -> Store:
    """The database with the seed catalog, as the CLI opens it (catalog.open_store where the core
    has it, else Store, which seeded by itself)."""
    from bot.catalog import queries as catalog

    opener = getattr(catalog, "open_store", None)
    return opener(path) if opener is not None else Store(path)


def respond(bot: DiscordBot, discord: DiscordStandin, interaction: dict) -> dict:
    response = bot.handle(interaction, time.monotonic())
    discord.took(interaction, response)
    return response
