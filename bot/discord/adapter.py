"""How the verbs reach Discord: its settings, its transport and its server (see bot/platforms.py)."""

from __future__ import annotations

import importlib

from bot.discord.settings import DiscordSettings, wanted
from bot.platforms import Adapter


def _transport(settings: DiscordSettings):
    from bot.discord.rest import Rest
    from bot.discord.transport import DiscordTransport

    return DiscordTransport(Rest(settings.api_url, settings.token), settings.admins)


ADAPTER = Adapter(
    name="Discord",
    token="DISCORD_TOKEN",
    settings=DiscordSettings,
    wanted=wanted,
    transport=_transport,
    serve=lambda: importlib.import_module("bot.discord.serve"),
)
