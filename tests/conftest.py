"""Shared fixtures: a real SQLite file, the Slack stand-in, and a Bolt app driven by signed requests.

No mocks below the transport: every test runs the real store, the real command
layer and real Bolt request handling; Slack's side is `slack_standin.py`, a
server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import pytest
from slack_bolt.request import BoltRequest
from slack_sdk.signature import SignatureVerifier

# The layers of tests/: unit (the core, no platform), slack and discord (each platform's flows over
# its stand-in), processes (real `paperbot` processes), support (the stand-ins). Each is importable
# by module name, as the tests import the stand-ins and each other's helpers.
for _layer in ("", "support", "unit", "slack", "discord", "processes"):
    sys.path.insert(0, str(Path(__file__).parent / _layer))

from slack_standin import SlackStandin  # noqa: E402

from bot.catalog.queries import open_store  # noqa: E402
from bot.slack.settings import SlackSettings  # noqa: E402
from bot.store.connection import Store  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SECRET = "test-signing-secret"
CHANNEL = "C0PAPERS"
TZ = ZoneInfo("Europe/Berlin")


class Clock:
    """A clock that tests move by hand: no test sleeps until something is due."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def set(self, moment: datetime) -> None:
        self.now = moment


def at(text: str, tz: ZoneInfo = TZ) -> datetime:
    """`at("2026-12-07 09:00")` in the test group's zone."""
    return datetime.fromisoformat(text).replace(tzinfo=tz)


def group_settings(tmp_path: Path, api_url: str) -> dict[str, str]:
    """The test group's settings, as environment variables."""
    return {
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": api_url,
        "PAPERBOT_DB": str(tmp_path / "paperbot.db"),
        "PAPERBOT_CHANNEL": CHANNEL,
        "PAPERBOT_TIMEZONE": "Europe/Berlin",
        "PAPERBOT_SCHEDULE": "0 9 * * mon",
        "PAPERBOT_MEETING": "thu 16:00",
        "PAPERBOT_ADMINS": "UADMIN",
        # Look-ups never leave the machine: a test that wants answers points these at a stand-in.
        "PAPERBOT_ARXIV_API": "http://127.0.0.1:9/api/query",
        "PAPERBOT_CROSSREF_API": "http://127.0.0.1:9",
    }


def settings_for(tmp_path: Path, api_url: str = "http://127.0.0.1:9/api/", **env: str) -> SlackSettings:
    values = {**group_settings(tmp_path, api_url), **env}
    return SlackSettings.load({k: v for k, v in values.items() if v is not None}, dotenv=None)


@pytest.fixture(scope="session")
def seeded_file(tmp_path_factory) -> Path:
    """A database as first use leaves it, made once a session: a copy costs far less than seeding."""
    path = tmp_path_factory.mktemp("template") / "paperbot.db"
    open_store(path).close()
    return path


@pytest.fixture
def store(tmp_path, seeded_file) -> Store:
    shutil.copyfile(seeded_file, tmp_path / "paperbot.db")
    s = open_store(tmp_path / "paperbot.db")
    yield s
    s.close()


@pytest.fixture
def slack():
    with SlackStandin(
        channels={CHANNEL, "C0OTHER"},
        members={CHANNEL},
        users={
            "UADMIN": {},
            "UOWNER": {"is_owner": True},
            "UWSADMIN": {"is_admin": True},
            "U1": {},
            "U2": {},
            "U3": {},
        },
    ) as standin:
        yield standin


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
            payload["channel"] = {"id": CHANNEL}
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


@pytest.fixture
def make_harness(tmp_path, slack, monkeypatch):
    """make_harness(clock, **env) -> SlackHarness on a fresh database. Its announcements are not held
    (each goes as soon as its reply has): a test of the hold sets outbox_sender's ANNOUNCE_* itself."""
    from bot.announcing import sender as outbox_sender
    from bot.slack.app import SlackBot, build_app

    monkeypatch.setattr(outbox_sender, "ANNOUNCE_QUIET", 0.0)
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_LONGEST_HOLD", 0.0)

    made = []

    def make(clock: Clock | None = None, **env) -> SlackHarness:
        settings = settings_for(tmp_path, slack.api_url, **env)
        store = open_store(settings.db_path)
        bot = SlackBot(settings, store, clock=clock)  # the clients `run` makes, aimed at the stand-in
        harness = SlackHarness(bot, build_app(bot), slack)
        made.append(harness)
        return harness

    yield make
    for h in made:
        h.bot.close()
        h.bot.store.close()


def env_for_process(tmp_path: Path, api_url: str, **extra: str) -> dict[str, str]:
    """Environment for a real `python -m bot` process (no .env is read from tmp_path)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERBOT_"))}
    return {**env, **group_settings(tmp_path, api_url), "PYTHONUNBUFFERED": "1", **extra}
