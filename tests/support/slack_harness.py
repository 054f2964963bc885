"""Slack's requests as Slack signs and sends them, fed through the real Bolt app."""

from __future__ import annotations

import json
import time
from urllib.parse import urlencode

from slack_bolt.request import BoltRequest
from slack_sdk.signature import SignatureVerifier

from tests.support.slack_group import CHANNEL, SECRET
from tests.support.slack_standin import SlackStandin


def sign(body: str, timestamp: int | None = None, secret: str = SECRET) -> dict[str, str]:
    timestamp = int(time.time()) if timestamp is None else timestamp
    signature = SignatureVerifier(secret).generate_signature(timestamp=str(timestamp), body=body)
    return {
        "content-type": "application/x-www-form-urlencoded",
        "x-slack-request-timestamp": str(timestamp),
        "x-slack-signature": signature,
    }


def slash_form(text: str, user: str, response_url: str, **extra) -> str:
    """The form body of a /paper slash command, as Slack posts it."""
    return urlencode(
        {
            "team_id": "T0TEST",
            "channel_id": CHANNEL,
            "channel_name": "reading-club",
            "user_id": user,
            "command": "/paper",
            "text": text,
            "response_url": response_url,
            "trigger_id": "1337.42.abcd",
            "api_app_id": "A0TEST",
            **extra,
        }
    )


class SlackHarness:
    """The Bolt app, fed with requests signed as Slack signs them."""

    def __init__(self, bot, app, slack: SlackStandin):
        self.bot, self.app, self.slack = bot, app, slack

    def dispatch(self, body: str, headers: dict | None = None, *, drain: bool = True):
        """One signed request through Bolt; then (with `drain`) wait for the work it left for later."""
        response = self.app.dispatch(BoltRequest(body=body, headers=headers or sign(body)))
        if drain:
            self.bot.drain()
        return response

    def command(self, text: str, user: str = "U1", *, drain: bool = True, **extra) -> dict:
        """POST /paper as Slack does; returns the reply (the HTTP response body)."""
        response = self.dispatch(slash_form(text, user, self.slack.response_url(), **extra), drain=drain)
        assert response.status == 200, response.body
        return json.loads(response.body) if response.body else {}

    def click(
        self,
        button: dict,
        user: str = "U1",
        *,
        message: dict | None = None,
        container: str = "message",
        response_url: str | None = None,
        drain: bool = True,
    ) -> str:
        """A block_actions payload for a button as Slack sends it; returns the response_url used."""
        response_url = response_url or self.slack.response_url()
        payload = {
            "type": "block_actions",
            "team": {"id": "T0TEST"},
            "user": {"id": user},
            "api_app_id": "A0TEST",
            "trigger_id": "1337.43.abcd",
            "actions": [
                {
                    "type": "button",
                    "action_id": button["action_id"],
                    "value": button["value"],
                    "block_id": "b",
                    "action_ts": str(time.time()),
                }
            ],
        }
        if container == "view":
            payload["container"] = {"type": "view", "view_id": "V1"}
            payload["view"] = {"id": "V1", "type": "home"}
        else:
            payload["container"] = {
                "type": "message",
                "message_ts": (message or {}).get("ts", "1.2"),
                "channel_id": CHANNEL,
                "is_ephemeral": message is None,
            }
            payload["channel"] = {"id": CHANNEL, "name": "reading-club"}
            payload["response_url"] = response_url
            if message:
                payload["message"] = message
        response = self.dispatch(urlencode({"payload": json.dumps(payload)}), drain=drain)
        assert response.status == 200, response.body
        return response_url

    def submit(self, callback_id: str, values: dict, user: str = "UADMIN", private_metadata: str = CHANNEL) -> dict:
        payload = {
            "type": "view_submission",
            "team": {"id": "T0TEST"},
            "user": {"id": user},
            "api_app_id": "A0TEST",
            "view": {
                "id": "V2",
                "type": "modal",
                "callback_id": callback_id,
                "private_metadata": private_metadata,
                "state": {"values": {k: {k: {"type": "plain_text_input", "value": v}} for k, v in values.items()}},
            },
        }
        response = self.dispatch(urlencode({"payload": json.dumps(payload)}))
        assert response.status == 200, response.body
        return json.loads(response.body) if response.body else {}

    def event(self, event: dict, event_id: str = "Ev1") -> int:
        body = json.dumps(
            {
                "type": "event_callback",
                "team_id": "T0TEST",
                "api_app_id": "A0TEST",
                "event_id": event_id,
                "event_time": int(time.time()),
                "event": event,
            }
        )
        headers = {**sign(body), "content-type": "application/json"}
        return self.dispatch(body, headers).status
