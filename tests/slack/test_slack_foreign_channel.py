"""A Slack process never sends to another platform's channel: a Discord id (digits) is refused
before Slack is asked, in the words the outbox sender logs once."""

from __future__ import annotations

import pytest
from slack_sdk import WebClient

from bot.announcing.sender import FOREIGN_CHANNEL
from bot.delivery.sending import Delivery, Rejected
from bot.slack.client import SlackTransport

DISCORD_CHANNEL = "123456789012345678"


def test_a_discord_channel_is_refused_without_asking_slack():
    # Nothing listens on port 9: had Slack been asked, the refusal would be Unreachable instead.
    transport = SlackTransport(WebClient(token="xoxb-test", base_url="http://127.0.0.1:9/"))
    with pytest.raises(Rejected) as refused:
        transport.send(Delivery("post", DISCORD_CHANNEL, "2026-W50"), object())
    assert refused.value.code == FOREIGN_CHANNEL
    assert str(refused.value) == f"{DISCORD_CHANNEL} is not a Slack channel ID (another platform's channel)"
