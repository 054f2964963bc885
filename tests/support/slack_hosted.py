"""A hosted install on Slack in tests: its settings, the install flow as an admin's browser goes
through it, and Slack's signed requests from several workspaces, over HTTP.

    env = hosted_env(tmp_path, slack.api_url)         # SLACK_CLIENT_ID, ..., PAPERBOT_SECRET_KEY
    visit = Visitor(port, slack)                      # a hosted install listening on 127.0.0.1:port
    visit.install("T0A")                              # /slack/install, Slack's consent, /slack/oauth_redirect
    said = visit.command("T0A", "C0A", "tags", "UA1")  # a signed /paper from workspace T0A

    running = Running(hosted_settings(tmp_path, slack.api_url), slack)   # HostedSlack served in this process
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

from bot.catalog import opening
from bot.slack import serve
from bot.slack.settings import SlackSettings
from bot.web.http_door import Lanes
from tests.support.databases import database_for
from tests.support.slack_door import Door
from tests.support.slack_group import SECRET
from tests.support.slack_harness import sign
from tests.support.slack_standin import APP_ID, CLIENT_ID, CLIENT_SECRET, SlackStandin

#: The install's PAPERBOT_SECRET_KEY (a Fernet key).
KEY = "yzMWc0fHo7oqrJex8gf66U_VtUieX3eVIib0ue6tslI="
#: Where users reach the install: with a path, as behind a proxy that keeps it.
PUBLIC = "https://paperbot.example/club"
#: Bolt's cookie that ties the install's end to the browser that began it.
STATE_COOKIE = "slack-app-oauth-state"
#: Two workspaces (two_workspaces): each its channel, an admin (…0) and two members.
A, B = "T0ALPHA", "T0BETA"
CHANNELS = {A: "C0ALPHA", B: "C0BETA"}
ADMINS = {A: "UA0", B: "UB0"}
MEMBERS = {A: "UA1", B: "UB1"}


def two_workspaces(slack: SlackStandin) -> None:
    """Workspaces A ("Alpha lab") and B ("Beta lab") in the stand-in, the bot in each one's channel."""
    for team, name in ((A, "Alpha lab"), (B, "Beta lab")):
        letter = team[2]
        slack.add_workspace(
            team, name, channels={CHANNELS[team]}, admins={ADMINS[team]}, users={f"U{letter}1", f"U{letter}2"}
        )


def place_of(team: str) -> str:
    return f"slack-{team}"


def hosted_env(tmp_path: Path, api_url: str, **extra: str) -> dict[str, str]:
    """A hosted install's settings, as environment variables: no bot token, no channel of its own."""
    return {
        "SLACK_CLIENT_ID": CLIENT_ID,
        "SLACK_CLIENT_SECRET": CLIENT_SECRET,
        "SLACK_SIGNING_SECRET": SECRET,
        "PAPERBOT_SECRET_KEY": KEY,
        "SLACK_API_URL": api_url,
        "PAPERBOT_DB": database_for(tmp_path),
        "PAPERBOT_PUBLIC_URL": PUBLIC,
        "PAPERBOT_TIMEZONE": "Europe/Berlin",
        # Look-ups never leave the machine.
        "PAPERBOT_ARXIV_API": "http://127.0.0.1:9/api/query",
        "PAPERBOT_CROSSREF_API": "http://127.0.0.1:9",
        **extra,
    }


def as_run_has_them(monkeypatch) -> None:
    """The app's credentials in this process's environment, as `run` has them (libraries read them there)."""
    monkeypatch.setenv("SLACK_CLIENT_ID", CLIENT_ID)
    monkeypatch.setenv("SLACK_CLIENT_SECRET", CLIENT_SECRET)


def hosted_settings(tmp_path: Path, api_url: str, **extra: str) -> SlackSettings:
    return SlackSettings.load(hosted_env(tmp_path, api_url, **extra), dotenv=None)


@dataclass
class Answer:
    status: int
    headers: Message
    body: str

    def json(self) -> dict:
        return json.loads(self.body) if self.body else {}


@dataclass
class Begun:
    """What /slack/install gave the browser: the link to Slack's consent page, its state, and the cookie."""

    link: str
    state: str
    cookie: str


class Visitor:
    """A hosted install on 127.0.0.1:`port`, visited as an admin's browser and as Slack."""

    def __init__(self, port: int, slack: SlackStandin, prefix: str = urlsplit(PUBLIC).path):
        self.port, self.slack, self.prefix = port, slack, prefix

    def request(self, method: str, path: str, body: str = "", headers: dict | None = None) -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
        try:
            conn.request(method, path, body=body.encode(), headers=headers or {})
            response = conn.getresponse()
            return Answer(response.status, response.headers, response.read().decode("utf-8", "replace"))
        finally:
            conn.close()

    def get(self, path: str, headers: dict | None = None) -> Answer:
        return self.request("GET", path, headers=headers)

    # -- the install flow ------------------------------------------------------

    def begin(self, path: str = "/slack/install") -> Begun:
        """GET /slack/install: the page with the "Add to Slack" link, and the state cookie."""
        page = self.get(path)
        assert page.status == 200, page
        link = unescape(re.search(r'href="(https://slack\.com/oauth/v2/authorize\?[^"]+)"', page.body)[1])
        state = parse_qs(urlsplit(link).query)["state"][0]
        cookies = [c for c in page.headers.get_all("Set-Cookie") or [] if c.startswith(STATE_COOKIE + "=")]
        assert cookies, page.headers
        return Begun(link, state, cookies[0].split(";", 1)[0])

    def finish(self, code: str, state: str, cookie: str | None) -> Answer:
        """GET /slack/oauth_redirect as Slack sends the browser back: the code and the state."""
        query = urlencode({"code": code, "state": state})
        return self.get(f"/slack/oauth_redirect?{query}", {"Cookie": cookie} if cookie else {})

    def install(self, team: str, user: str | None = None) -> Answer:
        """An admin of `team` installs the app: the install page, Slack's consent, and back."""
        begun = self.begin()
        return self.finish(self.slack.authorize(team, user), begun.state, begun.cookie)

    # -- Slack's requests ---------------------------------------------------------

    def post(self, body: str, content_type: str = "application/x-www-form-urlencoded") -> Answer:
        return self.request("POST", "/slack/events", body, {**sign(body), "content-type": content_type})

    def command(self, team: str, channel: str, text: str, user: str) -> dict:
        """A signed /paper from `user` in `team`'s `channel`: the reply."""
        form = {
            "team_id": team,
            "channel_id": channel,
            "channel_name": "reading-club",
            "user_id": user,
            "command": "/paper",
            "text": text,
            "response_url": self.slack.response_url(),
            "trigger_id": f"1337.{uuid.uuid4().int % 10**9}.abcd",
            "api_app_id": APP_ID,
        }
        answer = self.post(urlencode(form))
        assert answer.status == 200, answer
        return answer.json()

    def click(self, team: str, channel: str, user: str, value: str, action_id: str = "run:0") -> str:
        """A button in a message in `team`'s `channel` whose value is `value` (a /paper command): its response_url."""
        url = self.slack.response_url()
        payload = {
            "type": "block_actions",
            "team": {"id": team},
            "user": {"id": user},
            "api_app_id": APP_ID,
            "trigger_id": f"1337.{uuid.uuid4().int % 10**9}.abcd",
            "container": {"type": "message", "message_ts": "1.2", "channel_id": channel, "is_ephemeral": True},
            "channel": {"id": channel, "name": "reading-club"},
            "response_url": url,
            "actions": [
                {
                    "type": "button",
                    "action_id": action_id,
                    "value": value,
                    "block_id": "b",
                    "action_ts": str(time.time()),
                }
            ],
        }
        answer = self.post(urlencode({"payload": json.dumps(payload)}))
        assert answer.status == 200, answer
        return url

    def submit(self, team: str, user: str, callback_id: str, values: dict, private_metadata: str = "") -> Answer:
        """A form (modal) submitted in `team`: Slack's view_submission."""
        payload = {
            "type": "view_submission",
            "team": {"id": team},
            "user": {"id": user, "team_id": team},
            "api_app_id": APP_ID,
            "view": {
                "id": f"V{uuid.uuid4().hex[:8].upper()}",
                "team_id": team,
                "type": "modal",
                "callback_id": callback_id,
                "private_metadata": private_metadata,
                "state": {"values": {k: {k: {"type": "plain_text_input", "value": v}} for k, v in values.items()}},
            },
        }
        return self.post(urlencode({"payload": json.dumps(payload)}))

    def event(self, body: dict) -> Answer:
        """An Events API delivery (as the stand-in's uninstall() and revoke() give them, or App Home's)."""
        return self.post(json.dumps(body), "application/json")

    def home_opened(self, team: str, user: str) -> Answer:
        event = {"type": "app_home_opened", "user": user, "tab": "home", "channel": f"D{user}"}
        body = {
            "type": "event_callback",
            "team_id": team,
            "api_app_id": APP_ID,
            "event_id": f"Ev{uuid.uuid4().hex[:10].upper()}",
            "event_time": int(time.time()),
            "event": {**event, "event_ts": f"{time.time():.6f}"},
        }
        return self.event(body)

    # -- pages -----------------------------------------------------------------------

    def page(self, address: str, query: str = "") -> Answer:
        """A page or feed at its public address (PUBLIC/...), as the proxy in front hands it on."""
        path = urlsplit(address).path
        return self.get(path + (f"?{urlencode({'q': query})}" if query else ""))


class Running:
    """A hosted install served in this process as `run` serves it (HostedSlack behind http_door's server),
    and a Visitor to it; `clock`: every place's time."""

    def __init__(self, settings: SlackSettings, slack: SlackStandin, clock: Callable | None = None):
        self.settings = settings
        self.house = opening.open_database(settings.db_path)
        app = serve.hosted_install(settings, self.house, threading.Event(), clock)
        assert app is not None
        self.app = app
        self.door = Door(None, Lanes(self.app, self.app.takes_apart))
        self.visit = Visitor(self.door.port, slack)
        self._closed = False

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.door.close()
        self.app.stop.set()
        self.app.close(5)
        self.app.places.close()
        self.house.close()
