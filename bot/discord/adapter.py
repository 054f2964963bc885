"""How the verbs reach Discord: its settings, its transport and its server (see bot/platforms.py)."""

from __future__ import annotations

import importlib

from bot.delivery.sending import Rejected
from bot.discord.settings import DiscordSettings, wanted
from bot.platforms import Adapter

# Every verb loads each platform's adapter: hikari is imported only by the verbs that reach Discord.


def _transport(settings: DiscordSettings):
    from bot.discord.rest import Rest  # noqa: PLC0415 (start-up time, above)
    from bot.discord.transport import DiscordTransport  # noqa: PLC0415

    return DiscordTransport(Rest(settings.api_url, settings.token), settings.admins)


#: Discord's error code for a user who is not a member of the server.
UNKNOWN_MEMBER = "10007"


def _member_names(settings: DiscordSettings):
    """The member's nickname in DISCORD_GUILD when there is one, else their global or user name."""
    from bot.discord.rest import Rest  # noqa: PLC0415 (start-up time, above)

    rest = Rest(settings.api_url, settings.token, timeout=5)

    def ask(member: str) -> str | None:
        if settings.guild:
            try:
                found = rest.call("GET", f"/guilds/{settings.guild}/members/{member}")
                user = found.get("user") or {}
                return found.get("nick") or user.get("global_name") or user.get("username")
            except Rejected as e:  # not a member of the server (any more): their user's name
                if e.code != UNKNOWN_MEMBER:
                    raise
        user = rest.call("GET", f"/users/{member}")
        return user.get("global_name") or user.get("username")

    return ask


def _place_settings(settings: DiscordSettings, places, place: str, *, sending: bool) -> DiscordSettings:
    """A hosted place's settings (hosted.place_settings): the application (DISCORD_TOKEN) in the place's server."""
    from bot.discord.hosted import place_settings  # noqa: PLC0415 (start-up time, above)

    if sending:
        settings.require("DISCORD_TOKEN")
    return place_settings(settings, place.removeprefix("discord-"))


ADAPTER = Adapter(
    name="Discord",
    token="DISCORD_TOKEN",
    settings=DiscordSettings,
    wanted=wanted,
    transport=_transport,
    serve=lambda: importlib.import_module("bot.discord.serve"),
    member_names=_member_names,
    place_settings=_place_settings,
)
