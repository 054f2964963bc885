"""How the verbs reach Slack: its settings, its transport and its server (see bot/platforms.py)."""

from __future__ import annotations

import importlib

from bot.platforms import Adapter
from bot.slack.settings import SlackSettings


def _transport(settings: SlackSettings):
    from bot.slack.client import SlackTransport, make_client

    return SlackTransport(make_client(settings, retries=False))


ADAPTER = Adapter(
    name="Slack",
    token="SLACK_BOT_TOKEN",
    settings=SlackSettings,
    wanted=lambda environ: True,
    transport=_transport,
    serve=lambda: importlib.import_module("bot.slack.serve"),
    quiet_loggers=("slack_sdk.web", "slack_sdk.webhook"),
    fallback=True,
)
