"""How the verbs reach Slack: its settings, its transport and its server (see bot/platforms.py)."""

from __future__ import annotations

import importlib

from bot.platforms import Adapter
from bot.slack.settings import SlackSettings

# Every verb loads each platform's adapter: slack_sdk is imported only by the verbs that reach Slack.


def _transport(settings: SlackSettings):
    from bot.slack.client import SlackTransport, make_client  # noqa: PLC0415 (start-up time, above)

    return SlackTransport(make_client(settings, retries=False))


def _member_names(settings: SlackSettings):
    """users.info: the member's display name, else their full name (scope users:read)."""
    from bot.slack.client import call, make_client  # noqa: PLC0415 (start-up time, above)

    client = make_client(settings, retries=False, timeout=5)  # a page waits for it: no retries, a short wait

    def ask(member: str) -> str | None:
        user = call(client.users_info, user=member)["user"]
        profile = user.get("profile") or {}
        return profile.get("display_name") or profile.get("real_name") or user.get("real_name") or user.get("name")

    return ask


ADAPTER = Adapter(
    name="Slack",
    token="SLACK_BOT_TOKEN",
    settings=SlackSettings,
    wanted=lambda environ: True,
    transport=_transport,
    serve=lambda: importlib.import_module("bot.slack.serve"),
    quiet_loggers=("slack_sdk.web", "slack_sdk.webhook"),
    fallback=True,
    member_names=_member_names,
    installs="SLACK_CLIENT_ID",
)
