"""Discord's settings: its token, the application's public key, the REST address, and its ID formats.

    settings = DiscordSettings.load(os.environ, dotenv=".env")
    settings.require("DISCORD_TOKEN", "PAPERBOT_CHANNEL")   # per verb

The group's own settings (bot.settings.Settings) plus what only Discord needs. Channel and
member ids are Discord snowflakes: digits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from dotenv import dotenv_values

from bot import settings as core
from bot.settings import SettingError

API_URL = "https://discord.com/api/v10"

#: Discord's own settings: `.env.example` and docs/settings.md list them in this order.
DISCORD_SETTINGS: dict[str, tuple[str | None, str]] = {
    "DISCORD_TOKEN": (None, "bot token: run, post-week and remind serve Discord"),
    "DISCORD_PUBLIC_KEY": (None, "the application's public key (hex): HTTP interactions; unset, the Gateway"),
    "DISCORD_API_URL": (API_URL, "REST base URL, for a proxy or a local test server"),
    "DISCORD_GUILD": (None, "register /paper in this server only (at once), not globally; hosted: the install's own"),
    "DISCORD_EVENTS": ("0", "1: each coming meeting with a presenter is a scheduled event in the server"),
}
SETTINGS: dict[str, tuple[str | None, str]] = {
    **DISCORD_SETTINGS,
    "PORT": ("3000", "HTTP port; Discord's Interactions Endpoint URL is https://HOST/discord/interactions"),
    **core.SETTINGS,
    "PAPERBOT_CHANNEL": (None, "Discord channel ID (digits) that gets the weekly post and schedule changes"),
    "PAPERBOT_ADMINS": ("", "comma-separated Discord user IDs with admin rights"),
}

WHERE = {
    "DISCORD_TOKEN": "discord.com/developers/applications → your app → Bot → Reset Token",
    "DISCORD_PUBLIC_KEY": "discord.com/developers/applications → your app → General Information → Public Key",
    "PAPERBOT_CHANNEL": "User Settings → Advanced → Developer Mode on, then the channel → Copy Channel ID",
}

SNOWFLAKE = re.compile(r"^[0-9]{15,21}$")
#: A bot token: three dot-separated base64url parts (the first is the bot's id in base64).
TOKEN = re.compile(r"^[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}$")
PUBLIC_KEY = re.compile(r"^[0-9a-fA-F]{64}$")


def wanted(environ: Mapping[str, str], dotenv: str | Path | None = ".env") -> bool:
    """Is this a Discord install: DISCORD_TOKEN set in the environment or in `.env`?"""
    if (environ.get("DISCORD_TOKEN") or "").strip():
        return True
    if dotenv is not None and Path(dotenv).is_file():
        try:
            values = dotenv_values(Path(dotenv))
        except (OSError, UnicodeDecodeError):
            return False  # Slack's loader says what is wrong with the file
        return bool((values.get("DISCORD_TOKEN") or "").strip())
    return False


@dataclass(frozen=True)
class DiscordSettings(core.PlatformSettings):
    CHANNEL_FORM: ClassVar[str] = "a Discord channel ID of digits"
    MEMBER_FORM: ClassVar[str] = "a Discord user ID of digits"
    token: str | None = None
    public_key: str | None = None
    api_url: str = API_URL
    guild: str | None = None
    events: bool = False

    NAMES: ClassVar[dict[str, tuple[str | None, str]]] = SETTINGS

    @classmethod
    def _fields(cls, get: core.Get) -> dict[str, Any]:
        token = get("DISCORD_TOKEN")
        if token is not None:
            if token.lower().startswith("bot "):
                token = token[4:].strip()
            if not TOKEN.match(token):
                raise SettingError(
                    "DISCORD_TOKEN", "is not a Discord bot token (three parts joined by dots, from the Bot page)"
                )
        public_key = get("DISCORD_PUBLIC_KEY")
        if public_key is not None and not PUBLIC_KEY.match(public_key):
            raise SettingError("DISCORD_PUBLIC_KEY", "must be the application's public key: 64 hex characters")
        api_url = (get("DISCORD_API_URL") or "").rstrip("/")
        if not re.match(r"^https?://[^\s/]+(/\S*)?$", api_url):
            raise SettingError("DISCORD_API_URL", f"must be an http(s) URL, not {api_url!r}")
        guild = get("DISCORD_GUILD")
        if guild is not None and not SNOWFLAKE.match(guild):
            raise SettingError("DISCORD_GUILD", f"{guild!r} is not a server ID (digits: the server → Copy Server ID)")
        port = core.integer("PORT", get("PORT") or "", 1, 65535)
        events = get("DISCORD_EVENTS") or "0"
        if events not in ("0", "1"):
            raise SettingError("DISCORD_EVENTS", f"must be 1 (scheduled events) or 0, not {events!r}")
        if events == "1" and get("DISCORD_GUILD") is None:
            raise SettingError("DISCORD_EVENTS", "needs DISCORD_GUILD: events are made in one server")
        group = super()._fields(get)
        for admin in sorted(group["admins"]):
            if not SNOWFLAKE.match(admin):
                raise SettingError(
                    "PAPERBOT_ADMINS", f"{admin!r} is not a Discord user ID (digits: a member → Copy User ID)"
                )
        channel = group["channel"]
        if channel is not None and not SNOWFLAKE.match(channel):
            raise SettingError("PAPERBOT_CHANNEL", f"{channel!r} is not a Discord channel ID (digits)")
        if group["hosted"] and channel is not None and guild is None:
            raise SettingError(
                "DISCORD_GUILD",
                "is not set: a hosted install (PAPERBOT_HOSTED) serves PAPERBOT_CHANNEL's group in the server "
                "DISCORD_GUILD names (the server → Copy Server ID)",
            )
        return {
            **group,
            "token": token,
            "public_key": public_key.lower() if public_key else None,
            "api_url": api_url,
            "guild": guild,
            "port": port,
            "events": events == "1",
        }

    def _values(self) -> dict[str, object]:
        return {**super()._values(), "DISCORD_TOKEN": self.token, "DISCORD_PUBLIC_KEY": self.public_key}

    def _unset(self, name: str) -> str:
        where = f"; find it at {WHERE[name]}" if name in WHERE else ""
        return f"{super()._unset(name)}{where}"

    @staticmethod
    def is_channel(text: str) -> bool:
        """Is `text` in the form of a Discord channel's id (bot.platforms: which platform group 1 is on)?"""
        return bool(SNOWFLAKE.match(text))

    @staticmethod
    def is_member(text: str) -> bool:
        """Is `text` in the form of a Discord member's id?"""
        return bool(SNOWFLAKE.match(text))

    @property
    def socket_mode(self) -> bool:
        """Whether `run` holds a connection open (the Gateway) rather than serving HTTP (cli's signals)."""
        return self.public_key is None
