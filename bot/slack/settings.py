"""Slack's settings: its tokens, its Web API's address, the HTTP port, and its ID formats.

    settings = SlackSettings.load(os.environ, dotenv=".env")
    settings.require("SLACK_BOT_TOKEN", "PAPERBOT_CHANNEL")   # per verb

The group's own settings (bot.settings.Settings) plus what only Slack needs; the one-line
errors name the setting and, for a missing token, where Slack shows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from bot import settings as core
from bot.settings import SettingError

#: Slack's own settings, then the group's: `.env.example` and README list them in this order.
SLACK_SETTINGS: dict[str, tuple[str | None, str]] = {
    "SLACK_BOT_TOKEN": (None, "bot token (xoxb-...): needed by run, post-week and remind"),
    "SLACK_APP_TOKEN": (None, "app-level token (xapp-...): when set, run uses Socket Mode"),
    "SLACK_SIGNING_SECRET": (None, "verifies Slack's HTTP requests: needed by run in HTTP mode"),
    "SLACK_API_URL": ("https://slack.com/api/", "Web API base URL (a proxy or a local test server)"),
    "SLACK_CLIENT_ID": (None, "a hosted install's app: with SLACK_CLIENT_SECRET, run serves /slack/install"),
    "SLACK_CLIENT_SECRET": (None, "a hosted install's app secret (Basic Information → App Credentials)"),
    "PORT": ("3000", "HTTP mode port; Slack's request URL is http(s)://HOST:PORT/slack/events"),
}
SETTINGS: dict[str, tuple[str | None, str]] = {
    **SLACK_SETTINGS,
    **core.SETTINGS,
    "PAPERBOT_CHANNEL": (None, "channel ID that gets the weekly post and schedule changes"),
    "PAPERBOT_ADMINS": ("", "comma-separated Slack user IDs with admin rights"),
}

#: Where Slack shows a missing value, said with the "is not set" line.
WHERE = {
    "SLACK_BOT_TOKEN": "api.slack.com/apps → your app → OAuth & Permissions → Bot User OAuth Token",
    "SLACK_APP_TOKEN": "api.slack.com/apps → your app → Basic Information → App-Level Tokens",
    "SLACK_SIGNING_SECRET": "api.slack.com/apps → your app → Basic Information → Signing Secret",
    "PAPERBOT_CHANNEL": "the channel's name → About → Channel ID, at the bottom",
    "SLACK_CLIENT_ID": "api.slack.com/apps → your app → Basic Information → App Credentials",
    "SLACK_CLIENT_SECRET": "api.slack.com/apps → your app → Basic Information → App Credentials",
}

USER_ID = re.compile(r"^[UW][A-Z0-9]+$")
CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]+$")


@dataclass(frozen=True)
class SlackSettings(core.PlatformSettings):
    CHANNEL_FORM: ClassVar[str] = "a Slack channel ID like C012ABCDEF"
    MEMBER_FORM: ClassVar[str] = "a Slack user ID like U012ABCDEF"
    bot_token: str | None = None
    app_token: str | None = None
    signing_secret: str | None = None
    api_url: str = "https://slack.com/api/"
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)

    NAMES: ClassVar[dict[str, tuple[str | None, str]]] = SETTINGS

    @classmethod
    def _fields(cls, get: core.Get) -> dict[str, Any]:
        bot_token = get("SLACK_BOT_TOKEN")
        if bot_token is not None and not bot_token.startswith("xoxb-"):
            raise SettingError("SLACK_BOT_TOKEN", "must be a bot token starting with xoxb-")
        app_token = get("SLACK_APP_TOKEN")
        if app_token is not None and not app_token.startswith("xapp-"):
            raise SettingError("SLACK_APP_TOKEN", "must be an app-level token starting with xapp-")

        api_url = get("SLACK_API_URL") or ""
        if not re.match(r"^https?://[^\s/]+", api_url):
            raise SettingError("SLACK_API_URL", f"must be an http(s) URL, not {api_url!r}")
        if not api_url.endswith("/"):
            api_url += "/"

        port = core.integer("PORT", get("PORT") or "", 1, 65535)
        group = super()._fields(get)

        for admin in sorted(group["admins"]):
            if not USER_ID.match(admin):
                raise SettingError(
                    "PAPERBOT_ADMINS",
                    f"{admin!r} is not a Slack user ID (like U012ABCDEF: a member's profile → ⋮ → Copy member ID)",
                )
        channel = group["channel"]
        if channel is not None and not CHANNEL_ID.match(channel):
            raise SettingError(
                "PAPERBOT_CHANNEL", f"{channel!r} is not a channel ID (like C012ABCDEF; see the channel's details)"
            )
        client_id, client_secret = get("SLACK_CLIENT_ID"), get("SLACK_CLIENT_SECRET")
        if not group["hosted"]:  # PAPERBOT_HOSTED=false: a one-workspace install, whatever else .env holds
            client_id = client_secret = None
        if (client_id is None) != (client_secret is None):
            missing = "SLACK_CLIENT_SECRET" if client_secret is None else "SLACK_CLIENT_ID"
            raise SettingError(missing, f"is not set: a hosted install needs both; find them at {WHERE[missing]}")
        if client_id is not None:
            if app_token is not None:
                raise SettingError(
                    "SLACK_APP_TOKEN", "a hosted install (SLACK_CLIENT_ID) serves Slack over HTTP only: unset it"
                )
            if group["secret_key"] is None:
                raise SettingError(
                    "PAPERBOT_SECRET_KEY",
                    "is not set: SLACK_CLIENT_ID makes a hosted install, which seals its tokens with it "
                    "(docs/hosting.md: how to make one); for one workspace, set PAPERBOT_HOSTED=false",
                )
        return {
            **group,
            "client_id": client_id,
            "client_secret": client_secret,
            "bot_token": bot_token,
            "app_token": app_token,
            "signing_secret": get("SLACK_SIGNING_SECRET"),
            "api_url": api_url,
            "port": port,
        }

    @classmethod
    def _hosted_by_default(cls, get: core.Get) -> bool:
        return get("SLACK_CLIENT_ID") is not None

    @property
    def installs(self) -> bool:
        """Does `run` serve Slack's install flow (a hosted install's)?"""
        return self.client_id is not None

    def _values(self) -> dict[str, object]:
        return {
            **super()._values(),
            "SLACK_BOT_TOKEN": self.bot_token,
            "SLACK_APP_TOKEN": self.app_token,
            "SLACK_SIGNING_SECRET": self.signing_secret,
        }

    def _unset(self, name: str) -> str:
        if name == "SLACK_SIGNING_SECRET":  # HTTP mode asked for it: Socket Mode is the other way in
            return (
                "is not set: run needs SLACK_APP_TOKEN (Socket Mode, which the manifest sets up) or "
                f"SLACK_SIGNING_SECRET (HTTP mode); find them at {WHERE['SLACK_APP_TOKEN']}, or Signing Secret"
            )
        where = f"; find it at {WHERE[name]}" if name in WHERE else ""
        return f"{super()._unset(name)}{where}"

    @staticmethod
    def is_channel(text: str) -> bool:
        """Is `text` in the form of a Slack channel's id (bot.platforms: which platform group 1 is on)?
        A direct message's (D…) is no group's."""
        return bool(CHANNEL_ID.match(text)) and not text.startswith("D")

    @staticmethod
    def is_member(text: str) -> bool:
        """Is `text` in the form of a Slack member's id?"""
        return bool(USER_ID.match(text))

    @property
    def socket_mode(self) -> bool:
        return self.app_token is not None
