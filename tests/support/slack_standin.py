"""A local stand-in for Slack's Web API and Socket Mode, for tests.

    with SlackStandin(channels={"C0PAPERS"}, users={"U1": {}}) as slack:
        client = WebClient(base_url=slack.api_url, token="xoxb-test")
        client.chat_postMessage(channel="C0PAPERS", text="hi")
        assert slack.messages("C0PAPERS")[0]["text"] == "hi"

Public API of SlackStandin (everything thread-safe):
  api_url, socket_url          WebClient base_url / the URL apps.connections.open hands out
  calls, calls_to(method)      recorded Call(method, params, token, status, response) snapshots
  messages(channel)            stored messages, oldest first ("D"+user for DMs), edits applied
  replies(channel, ts)         the replies in a message's thread, oldest first
  responses, responses_to(url), ephemerals, home_views, views   other recorded state
  fail_next(method, ...)       queue a fault (429 / 5xx / error / accept_then="hang"|"drop")
  SlackStandin(limits=PostLimits(...))   rate-limit chat.postMessage as Slack does: per
                               channel and workspace-wide, 429 with Retry-After (off by default)
  rate_limited                 how many posts were answered 429 by those limits
  SlackStandin(history=HistoryLimits())  conversations.history and .replies as Slack gives them
                               to apps outside its Marketplace: each once a minute (429 with
                               Retry-After), at most 15 messages a page (off by default)
  on_accept                    callback(Call) after a write is accepted, before the response
  wait_for(predicate, timeout) poll predicate(slack); True/False
  response_url()               a fresh response_url; POSTs are validated and recorded
  socket_send(type, payload)   send a Socket Mode envelope, return the ack payload
  socket_connected, socket_connection_count, socket_disconnect()
  reset(), close()             (or use it as a context manager)

Several workspaces, for a hosted install (bot/slack/hosted.py); the constructor's channels and users are
the first one's, T0TEST, which answers any token it did not issue, as Slack's single workspace did:
  add_workspace(team, name, channels=, admins=, users=)   another workspace, its own people and channels
  authorize(team, user=None) -> code   what Slack's consent page hands back to the app's redirect URL
  oauth.v2.access              (client_id/client_secret as HTTP Basic auth or form fields) a code, once,
                               for a bot token of its own (`xoxb-<team>-<n>`); with `rotating` on, with a
                               refresh token and `expires_in` (`expires_in` seconds), and grant_type=
                               refresh_token renews it (a refresh token is good once)
  every Web API call is answered as the workspace of its token: auth.test names it, users.info knows
  its members, another workspace's channel is channel_not_found
  uninstall(team), revoke(team) the tokens are revoked (`token_revoked`); each returns the event
                               (app_uninstalled, tokens_revoked) Slack would send the app
  expire_tokens(team)          its bot tokens expire now (`token_expired`)
  hammer(team, until)          its posts answered 429 until then (one place hammered, the others not)
  limits                       chat.postMessage's, per channel and per workspace (the token's)
  team_of(token), tokens(team) whose token it is; a workspace's bot tokens, oldest first

It rejects what Slack would reject, plus project rules (see check_message).
Standard library + slack_sdk (Block Kit models) + websockets only.  Import it as
``slack_standin`` or ``tests.slack_standin``.
"""

import base64
import contextlib
import copy
import itertools
import json
import math
import threading
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View
from websockets.exceptions import ConnectionClosed
from websockets.sync.server import serve

TEAM_ID, BOT_USER_ID, BOT_ID, APP_ID = "T0TEST", "UBOT", "BBOT", "A0TEST"
#: The app's credentials that oauth.v2.access checks (SLACK_CLIENT_ID, SLACK_CLIENT_SECRET).
CLIENT_ID, CLIENT_SECRET = "1111.2222", "standin-client-secret"
#: A rotating bot token's life, as Slack gives it (12 hours).
TOKEN_SECONDS = 12 * 3600
MAX_MESSAGE_BLOCKS, MAX_VIEW_BLOCKS, MAX_TEXT = 50, 100, 40_000
RESPONSE_URL_MAX_USES = 5  # Slack: a response_url works up to 5 times
# Methods that change state; on_accept fires after one of them succeeds.
WRITE_METHODS = {
    "chat.postMessage",
    "chat.update",
    "chat.postEphemeral",
    "views.open",
    "views.update",
    "views.publish",
    "response_url",
}
# Fields that Slack only accepts as plain_text objects.
_PLAIN_TEXT_FIELDS = {
    "header": ("text",),
    "button": ("text",),
    "input": ("label", "hint"),
    "modal": ("title", "submit", "close"),
}


@dataclass(frozen=True)
class Call:
    """One recorded request.  status 0 means the connection was dropped on
    purpose (accept_then="drop"); response then holds what would have been sent."""

    method: str  # Web API method, or "response_url"
    params: dict  # JSON-string fields (blocks, metadata, view...) decoded
    token: str | None
    status: int
    response: dict


@dataclass
class Workspace:
    """One workspace: its channels (`members`: those the bot is in), its people (users.info's fields
    each; an admin's carry is_admin), and its bot user."""

    team_id: str
    name: str
    channels: set
    members: set
    users: dict
    bot_user_id: str = BOT_USER_ID
    bot_id: str = BOT_ID


@dataclass
class _Token:
    """A token the stand-in issued: a bot token, or the refresh token that renews one."""

    team: str
    kind: str  # "bot" or "refresh"
    expires_at: float | None = None
    revoked: bool = False
    used: bool = False  # a refresh token renews once


@dataclass(frozen=True)
class _Fault:
    status: int | None = None
    retry_after: int | None = None
    error: str | None = None
    accept_then: str | None = None
    seconds: float = 30
    meanwhile: Callable[[], None] | None = None


@dataclass(frozen=True)
class PostLimits:
    """chat.postMessage's limits, as Slack sets them: about one message a second per channel with
    short bursts, and a workspace-wide rate. Each is a token bucket; `None` turns one off."""

    channel_rate: float | None = 1.0  # messages a second, per channel
    channel_burst: int = 3
    workspace_rate: float | None = None  # messages a second, all channels together
    workspace_burst: int | None = None  # default: one second's worth

    def floor_seconds(self, messages: int, channels: int) -> float:
        """The least time `messages` posts spread evenly over `channels` can take, from full buckets."""
        floor = 0.0
        if self.workspace_rate:
            floor = max(floor, max(messages - self._workspace_burst(), 0) / self.workspace_rate)
        if self.channel_rate:
            per_channel = math.ceil(messages / max(channels, 1))
            floor = max(floor, max(per_channel - self.channel_burst, 0) / self.channel_rate)
        return floor

    def _workspace_burst(self) -> int:
        if self.workspace_burst is not None:
            return self.workspace_burst
        return max(1, math.ceil(self.workspace_rate or 1))


@dataclass(frozen=True)
class HistoryLimits:
    """conversations.history's and conversations.replies' limits for apps outside Slack's Marketplace:
    each method once every `interval` seconds (by `clock`, which a test may move), and `most`
    messages a page (a larger `limit` is cut to it, as is the default)."""

    interval: float = 60.0
    most: int = 15
    clock: Callable[[], float] = time.monotonic


_HISTORY_METHODS = ("conversations.history", "conversations.replies")


class _Bucket:
    """A token bucket: `rate` tokens a second, holding at most `burst`; starts full."""

    def __init__(self, rate: float, burst: int, now: float):
        self.rate, self.burst = rate, burst
        self.tokens, self.at = float(burst), now

    def wait(self, now: float) -> float:
        """Seconds until a token is there (0: one is there now)."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate

    def take(self) -> None:
        self.tokens -= 1


class Rejected(Exception):
    """What Slack would answer with {"ok": false, "error": error}."""

    def __init__(self, error: str, detail: str = ""):
        super().__init__(f"{error}: {detail}" if detail else error)
        self.error, self.detail = error, detail


class RejectedAck(AssertionError):
    """A Socket Mode ack payload that Slack would reject."""


# --------------------------------------------------------------------------
# Validation (pure functions, usable on their own)
# --------------------------------------------------------------------------


def _walk(node: Any, path: str):
    """Yield (path, dict) for every dict inside node, depth first."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{path}[{i}]")


def _lost_in_parsing(raw: Any, parsed: Any, path: str) -> str | None:
    """slack_sdk silently drops what it does not understand (unknown element
    types become None or vanish) and turns bare strings into mrkdwn objects.
    Compare the raw JSON with the parsed model's to_dict() to catch that."""
    if isinstance(raw, dict):
        if not isinstance(parsed, dict):
            return f"{path}: not understood"
        for key, value in raw.items():
            if key not in parsed:
                if value in (None, [], {}, ""):
                    continue
                return f"{path}.{key}: unknown or malformed ({json.dumps(value)[:80]})"
            problem = _lost_in_parsing(value, parsed[key], f"{path}.{key}")
            if problem:
                return problem
        if raw.get("type") != parsed.get("type"):
            return f"{path}.type: {raw.get('type')!r} is not valid here"
    elif isinstance(raw, list):
        if not isinstance(parsed, list) or len(raw) != len(parsed) or None in parsed:
            return f"{path}: contains an unknown or malformed element"
        for i, (r, p) in enumerate(zip(raw, parsed, strict=True)):
            problem = _lost_in_parsing(r, p, f"{path}[{i}]")
            if problem:
                return problem
    elif isinstance(parsed, dict):
        return f"{path}: must be an object, got {type(raw).__name__}"
    return None


def _plain_text_problem(node: Any, path: str) -> str | None:
    for where, obj in _walk(node, path):
        fields = _PLAIN_TEXT_FIELDS.get(obj.get("type"), ()) + ("placeholder",)
        for field in fields:
            value = obj.get(field)
            if value is None:
                continue
            if not isinstance(value, dict) or value.get("type") != "plain_text":
                return f"{where}.{field}: must be a plain_text object"
    return None


def check_blocks(blocks: Any, limit: int = MAX_MESSAGE_BLOCKS) -> None:
    """Raise Rejected("invalid_blocks", detail) unless Slack would take blocks."""
    if not isinstance(blocks, list):
        raise Rejected("invalid_blocks", "blocks must be a JSON array")
    if len(blocks) > limit:
        raise Rejected("invalid_blocks", f"{len(blocks)} blocks, at most {limit} allowed")
    block_ids, action_ids = set(), set()
    for i, raw in enumerate(blocks):
        path = f"blocks[{i}]"
        if not isinstance(raw, dict):
            raise Rejected("invalid_blocks", f"{path}: must be an object")
        try:
            block = Block.parse(copy.deepcopy(raw))
            if block is None:
                raise Rejected("invalid_blocks", f"{path}: unknown type {raw.get('type')!r}")
            # to_dict() validates recursively; validate_json() checks only the
            # block itself, not the buttons/text objects inside it.
            parsed = block.to_dict()
        except Rejected:
            raise
        except Exception as e:  # SlackObjectFormationError, TypeError for missing args...
            raise Rejected("invalid_blocks", f"{path}: {type(e).__name__}: {e}") from None
        problem = _lost_in_parsing(raw, parsed, path) or _plain_text_problem(raw, path)
        if problem:
            raise Rejected("invalid_blocks", problem)
        if "block_id" in raw:
            if raw["block_id"] in block_ids:
                raise Rejected("invalid_blocks", f"{path}: duplicate block_id {raw['block_id']!r}")
            block_ids.add(raw["block_id"])
        for where, obj in _walk(raw, path):
            if "action_id" in obj:
                if obj["action_id"] in action_ids:
                    raise Rejected("invalid_blocks", f"{where}: duplicate action_id")
                action_ids.add(obj["action_id"])


def check_metadata(metadata: Any) -> None:
    ok = (
        isinstance(metadata, dict)
        and isinstance(metadata.get("event_type"), str)
        and metadata["event_type"]
        and isinstance(metadata.get("event_payload"), dict)
        and all(
            isinstance(k, str) and isinstance(v, (str, int, float, bool)) for k, v in metadata["event_payload"].items()
        )
    )
    if not ok:
        raise Rejected("invalid_metadata", "need {event_type: str, event_payload: {str: str|number|bool}}")


def check_message(params: dict) -> None:
    """Validate a message body (chat.* params, response_url body, ack payload).
    Project rule: text is required, also when blocks are given."""
    if params.get("blocks") is not None:
        check_blocks(params["blocks"])
    if not params.get("text") and not params.get("attachments"):
        raise Rejected("no_text", "text is required, also with blocks (notification fallback)")
    if params.get("metadata") is not None:
        check_metadata(params["metadata"])


def check_view(view: Any, *, kind: str) -> None:
    """Raise Rejected("invalid_arguments", detail) unless view is a valid `kind` view."""
    if not isinstance(view, dict):
        raise Rejected("invalid_arguments", "view must be a JSON object")
    if view.get("type") != kind:
        raise Rejected("invalid_arguments", f"view type must be {kind!r}, not {view.get('type')!r}")
    if kind == "modal" and not view.get("title"):
        raise Rejected("invalid_arguments", "a modal needs a title")
    try:
        View(**copy.deepcopy(view)).validate_json()  # title/submit/close lengths, 1..100 blocks
    except Exception as e:
        raise Rejected("invalid_arguments", f"{type(e).__name__}: {e}") from None
    problem = _plain_text_problem({k: v for k, v in view.items() if k != "blocks"}, "view")
    if problem:
        raise Rejected("invalid_arguments", problem)
    try:
        check_blocks(view.get("blocks"), limit=MAX_VIEW_BLOCKS)
    except Rejected as e:
        raise Rejected("invalid_arguments", e.detail) from None


def _truthy(value: Any) -> bool:
    return value in (True, 1, "1", "true", "True")


def _ts_key(ts: Any, error: str = "invalid_arguments") -> Decimal:
    try:
        return Decimal(str(ts))
    except InvalidOperation:
        raise Rejected(error, f"bad ts {ts!r}") from None


# --------------------------------------------------------------------------
# The stand-in
# --------------------------------------------------------------------------


class SlackStandin:
    """Slack Web API + Socket Mode on 127.0.0.1.  All public methods are thread-safe."""

    def __init__(
        self,
        channels=(),
        members=None,
        users=None,
        limits: PostLimits | None = None,
        history: HistoryLimits | None = None,
    ):
        self.channels = set(channels)
        self.limits = limits
        self.history = history
        #: The workspace auth.test names (None: it names none, as a bare proxy might).
        self.auth_team: str | None = TEAM_ID
        self.members = set(self.channels if members is None else members)
        users = users if isinstance(users, dict) else dict.fromkeys(users or (), {})
        self.users = {uid: dict(info) for uid, info in users.items()}
        #: The workspaces added besides the first (add_workspace), by team id.
        self.workspaces: dict[str, Workspace] = {}
        self._hammered: dict[str, float] = {}  # hammer(): a workspace's posts answered 429 until then
        #: oauth.v2.access gives refresh tokens and tokens that expire after `expires_in` seconds.
        self.rotating = False
        self.expires_in = TOKEN_SECONDS
        self.client_id, self.client_secret = CLIENT_ID, CLIENT_SECRET
        self._tokens: dict[str, _Token] = {}  # every token issued, by its text
        self._codes: dict[str, tuple[str, str | None]] = {}  # an unused code -> (team, installer)
        self._issued = itertools.count(1)
        self._space = self._first()  # the workspace of the call being answered (under _lock)
        self.on_accept: Callable[[Call], None] | None = None
        self.socket_connected = threading.Event()
        self._lock = threading.RLock()
        self._closing = threading.Event()
        self._last_ts = 0
        self._id_counter = itertools.count(1)
        self._ws_connections: list = []  # open Socket Mode connections, oldest first
        self._pending_acks: dict = {}  # envelope_id -> {"event": Event, "ack": dict}
        self.socket_connection_count = 0  # connections accepted so far
        self.reset()

        self._httpd = _HttpServer(("127.0.0.1", 0), _HttpHandler)
        self._httpd.standin = self
        self.api_url = f"http://127.0.0.1:{self._httpd.server_port}/api/"
        # Frequent pings make slack_sdk's builtin client responsive: it holds a lock
        # while blocked in recv() (3 s timeout), which delays its close() and reconnects.
        self._ws = serve(self._ws_handler, "127.0.0.1", 0, ping_interval=0.1, close_timeout=1)
        self.socket_url = f"ws://127.0.0.1:{self._ws.socket.getsockname()[1]}/link"
        self._threads = [
            threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, name="slack-standin-http", daemon=True
            ),
            threading.Thread(target=self._ws.serve_forever, name="slack-standin-ws", daemon=True),
        ]
        for t in self._threads:
            t.start()

    # ----- lifecycle -------------------------------------------------------

    def __enter__(self) -> "SlackStandin":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop both servers; delayed ("hang") responses are released at once."""
        self._closing.set()
        self._ws.shutdown()  # closes open Socket Mode connections (code 1001)
        self._httpd.shutdown()
        self._httpd.server_close()
        for t in self._threads:
            t.join(timeout=5)

    def reset(self) -> None:
        """Forget recorded calls, messages, views, responses, faults and on_accept."""
        with self._lock:
            self._calls: list = []
            self._messages: dict = defaultdict(list)  # channel -> [message], oldest first
            self._faults: dict = defaultdict(deque)  # method -> deque[_Fault]
            self._response_urls: dict = {}  # id -> times used
            self._views: dict = {}  # view id -> view
            self._responses: list = []
            self._responses_by_url: dict = {}  # url id -> [bodies]
            self._ephemerals: list = []
            self._home_views: dict = {}
            self._buckets: dict = {}  # channel, or None for the workspace -> _Bucket
            self.rate_limited = 0
            self._history_read: dict[str, float] = {}  # method -> when it was last answered (history.clock)
            self.on_accept = None

    # ----- inspection ------------------------------------------------------

    @property
    def calls(self) -> list:
        with self._lock:
            return list(self._calls)

    def calls_to(self, method: str) -> list:
        with self._lock:
            return [c for c in self._calls if c.method == method]

    def messages(self, channel: str) -> list:
        """Stored messages of a channel ("D"+user for DMs), oldest first, edits applied."""
        with self._lock:
            return copy.deepcopy(self._messages.get(channel, []))

    @property
    def responses(self) -> list:
        """Accepted bodies POSTed to response_url()s, in order."""
        with self._lock:
            return copy.deepcopy(self._responses)

    def responses_to(self, url: str) -> list:
        """Accepted bodies POSTed to one response_url, in order."""
        with self._lock:
            return copy.deepcopy(self._responses_by_url.get(url.rsplit("/", 1)[-1], []))

    @property
    def ephemerals(self) -> list:
        with self._lock:
            return copy.deepcopy(self._ephemerals)

    @property
    def home_views(self) -> dict:
        """user_id -> latest published home view."""
        with self._lock:
            return copy.deepcopy(self._home_views)

    @property
    def views(self) -> dict:
        """view id -> latest modal view (opened/updated)."""
        with self._lock:
            return copy.deepcopy(self._views)

    def wait_for(
        self, predicate: Callable[["SlackStandin"], bool], timeout: float = 10, interval: float = 0.01
    ) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            if predicate(self):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(interval)

    # ----- workspaces ------------------------------------------------------

    def add_workspace(
        self, team_id: str, name: str, *, channels=(), admins=(), users=(), members=None, bot_user_id: str | None = None
    ) -> Workspace:
        """Another workspace: `admins` and `users` (ids, or id -> users.info fields) its people, the bot in
        each of `channels` (or in `members` of them). Channel and user ids are Slack's, unique across them."""
        people = {uid: {} for uid in users} if not isinstance(users, dict) else {u: dict(i) for u, i in users.items()}
        people.update({uid: {**people.get(uid, {}), "is_admin": True} for uid in admins})
        with self._lock:
            taken = {s.team_id for s in self._spaces()}
            assert team_id not in taken, f"{team_id} is a workspace already"
            for other in self._spaces():
                assert not set(channels) & other.channels, f"a channel of {team_id} is {other.team_id}'s too"
                assert not set(people) & set(other.users), f"a user of {team_id} is {other.team_id}'s too"
            space = Workspace(
                team_id,
                name,
                set(channels),
                set(channels if members is None else members),
                people,
                bot_user_id or f"UB{team_id}",
                f"BB{team_id}",
            )
            self.workspaces[team_id] = space
        return space

    def authorize(self, team_id: str, user: str | None = None) -> str:
        """What Slack's consent page hands back to the app's redirect URL when `user` (default: the
        workspace's first admin) allows the app in `team_id`: a code that oauth.v2.access takes once."""
        with self._lock:
            space = self._space_of(team_id)
            installer = user or next((u for u, i in space.users.items() if i.get("is_admin")), None)
            code = f"{team_id}.{uuid.uuid4().hex}"
            self._codes[code] = (team_id, installer)
        return code

    def uninstall(self, team_id: str) -> dict:
        """An admin removed the app from `team_id`: its tokens are revoked. The signed event Slack sends the app."""
        self._revoke(team_id)
        return self._event(team_id, {"type": "app_uninstalled"})

    def revoke(self, team_id: str) -> dict:
        """`team_id`'s bot token was revoked (an admin, or the API): the event Slack sends the app."""
        bots = self._revoke(team_id)
        return self._event(team_id, {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": bots}})

    def hammer(self, team_id: str, until: float) -> None:
        """Every chat.postMessage with `team_id`'s tokens answered 429 (Retry-After 1) until unix time `until`."""
        with self._lock:
            self._hammered[team_id] = until

    def expire_tokens(self, team_id: str) -> None:
        """`team_id`'s bot tokens expire now: calls with them get token_expired."""
        with self._lock:
            for held in self._tokens.values():
                if held.team == team_id and held.kind == "bot":
                    held.expires_at = time.time() - 1

    def team_of(self, token: str | None) -> str | None:
        """The workspace whose token `token` is (the first workspace's for any it did not issue)."""
        with self._lock:
            held = self._tokens.get(token or "")
            return held.team if held is not None else self.auth_team or TEAM_ID

    def tokens(self, team_id: str) -> list[str]:
        """The bot tokens issued in `team_id`, oldest first."""
        with self._lock:
            return [t for t, held in self._tokens.items() if held.team == team_id and held.kind == "bot"]

    def _revoke(self, team_id: str) -> list[str]:
        with self._lock:
            space = self._space_of(team_id)
            for held in self._tokens.values():
                if held.team == team_id:
                    held.revoked = True
            return [space.bot_user_id]

    def _event(self, team_id: str, event: dict) -> dict:
        return {
            "token": "unused-verification-token",
            "team_id": team_id,
            "api_app_id": APP_ID,
            "event": {**event, "event_ts": f"{time.time():.6f}"},
            "type": "event_callback",
            "event_id": f"Ev{uuid.uuid4().hex[:10].upper()}",
            "event_time": int(time.time()),
        }

    def _first(self) -> Workspace:
        """The first workspace (the constructor's channels and people), as it is now."""
        return Workspace(self.auth_team or TEAM_ID, "Test", self.channels, self.members, self.users)

    def _spaces(self) -> list[Workspace]:
        return [self._first(), *self.workspaces.values()]

    def _space_of(self, team_id: str) -> Workspace:
        if team_id in self.workspaces:
            return self.workspaces[team_id]
        if team_id == (self.auth_team or TEAM_ID):
            return self._first()
        raise KeyError(f"no workspace {team_id}")

    # ----- fault injection -------------------------------------------------

    def fail_next(
        self,
        method: str,
        *,
        status: int | None = None,
        retry_after: int | None = None,
        error: str | None = None,
        accept_then: str | None = None,
        seconds: float = 30,
        meanwhile: Callable[[], None] | None = None,
    ) -> None:
        """Queue one fault for the next call to method ("response_url" for response URLs).
        Exactly one of: status (429 -> Retry-After, default 1 s; 5xx), error (HTTP 200
        {"ok": false}), accept_then ("hang": process normally then delay the response
        by `seconds`; "drop": process normally then close the socket without a response).
        `meanwhile` runs before the fault's answer goes: what happens while the caller waits,
        however long it takes on a busy machine."""
        if sum(x is not None for x in (status, error, accept_then)) != 1:
            raise ValueError("give exactly one of status, error, accept_then")
        if status is not None and not 400 <= status <= 599:
            raise ValueError(f"status must be an HTTP error status, not {status}")
        if accept_then not in (None, "hang", "drop"):
            raise ValueError(f"accept_then must be 'hang' or 'drop', not {accept_then!r}")
        if status == 429 and retry_after is None:
            retry_after = 1
        with self._lock:
            self._faults[method].append(_Fault(status, retry_after, error, accept_then, seconds, meanwhile))

    def response_url(self) -> str:
        """A fresh response_url for payloads sent through socket_send()."""
        url_id = uuid.uuid4().hex
        with self._lock:
            self._response_urls[url_id] = 0
        return self.api_url.replace("/api/", f"/response/{url_id}")

    # ----- request handling (called from server threads) -----------------

    def _handle(self, method: str, params: dict, token: str | None, url_id: str | None = None):
        """Returns (status, body, headers, fault or None); records the call.
        url_id is set (and method is "response_url") for POSTs to a response_url."""
        fault, headers = None, {}
        try:
            with self._lock:
                if url_id is not None:

                    def handler(p):
                        return self._response_url_post(p, url_id)
                else:
                    handler = getattr(self, "_api_" + method.replace(".", "_"), None)
                    if handler is None:
                        raise Rejected("unknown_method")
                    # oauth.v2.access is the app's, by its client id and secret: no token (Slack's too).
                    self._space = self._first() if method == "oauth.v2.access" else self._check_token(method, token)
                fault = self._faults[method].popleft() if self._faults.get(method) else None
                if fault and fault.status:
                    status = fault.status
                    if status == 429:
                        headers["Retry-After"] = str(fault.retry_after)
                        body = {"ok": False, "error": "ratelimited"}
                    else:
                        body = {"ok": False, "error": HTTPStatus(status).phrase}
                elif fault and fault.error:
                    raise Rejected(fault.error, "injected by fail_next")
                elif (retry_after := self._limit_wait(method, params)) is not None:
                    status, body = 429, {"ok": False, "error": "ratelimited"}
                    headers["Retry-After"] = str(retry_after)
                    self.rate_limited += 1
                else:
                    status, body = 200, {"ok": True, **handler(params)}
                    self._limit_take(method, params)
        except Rejected as e:
            body = {"ok": False, "error": e.error, **({"detail": e.detail} if e.detail else {})}
            status = 200  # the Web API reports errors in the body; response_urls use HTTP codes
            if url_id is not None:
                status = 404 if e.error == "expired_url" else 400
        dropped = fault is not None and fault.accept_then == "drop"
        call = Call(method, params, token, 0 if dropped else status, body)
        with self._lock:
            self._calls.append(call)
        if body.get("ok") and method in WRITE_METHODS and self.on_accept is not None:
            self.on_accept(call)
        return status, body, headers, fault

    def _limited_buckets(self, method: str, params: dict) -> list:
        """The buckets a post takes a token from (none unless `limits` are set)."""
        if self.limits is None or method != "chat.postMessage":
            return []
        now, found = time.monotonic(), []  # a new bucket starts full
        channel = params.get("channel") if isinstance(params.get("channel"), str) else ""
        for key, rate, burst in (
            # Each workspace its own limit, as Slack's are: the workspace of the call's token.
            (("workspace", self._space.team_id), self.limits.workspace_rate, self.limits._workspace_burst()),
            (channel, self.limits.channel_rate, self.limits.channel_burst),
        ):
            if rate:
                if key not in self._buckets:
                    self._buckets[key] = _Bucket(rate, burst, now)
                found.append(self._buckets[key])
        return found

    def _limit_wait(self, method: str, params: dict) -> int | None:
        """Retry-After in whole seconds (as Slack sends it) when a post is over a limit, else None."""
        until = self._hammered.get(self._space.team_id)
        if method == "chat.postMessage" and until is not None and time.time() < until:
            return 1  # hammer(): every post of that workspace answered 429 for a while
        now = time.monotonic()
        wait = max((bucket.wait(now) for bucket in self._limited_buckets(method, params)), default=0.0)
        if self.history is not None and method in _HISTORY_METHODS and method in self._history_read:
            wait = max(wait, self._history_read[method] + self.history.interval - self.history.clock())
        return max(1, math.ceil(wait)) if wait > 0 else None

    def _limit_take(self, method: str, params: dict) -> None:
        """An accepted post spends a token of each limit (a refused one spends none)."""
        for bucket in self._limited_buckets(method, params):
            bucket.take()
        if self.history is not None and method in _HISTORY_METHODS:
            self._history_read[method] = self.history.clock()

    def _page_size(self, params: dict) -> int:
        """A page's `limit`: as asked (default 100, at most 999), or at most `history.most`."""
        try:
            limit = min(max(int(params.get("limit") or 100), 1), 999)
        except ValueError:
            raise Rejected("invalid_limit") from None
        return min(limit, self.history.most) if self.history is not None else limit

    def _check_token(self, method: str, token: str | None) -> Workspace:
        """The workspace the call is answered as: its token's (the first's for a token not issued here)."""
        if not token:
            raise Rejected("not_authed")
        wanted = "xapp-" if method == "apps.connections.open" else "xoxb-"
        if not token.startswith(("xoxb-", "xapp-", "xoxp-", "xoxe-")):
            raise Rejected("invalid_auth")
        if not token.startswith(wanted):
            raise Rejected("not_allowed_token_type", f"{method} needs a {wanted} token")
        held = self._tokens.get(token)
        if held is None:
            return self._first()
        if held.revoked:
            raise Rejected("token_revoked")
        if held.expires_at is not None and held.expires_at <= time.time():
            raise Rejected("token_expired")
        return self._space_of(held.team)

    def _next_ts(self) -> str:
        # Like Slack's: the wall clock when the message was stored, unique and increasing.
        micros = max(int(time.time() * 1_000_000), self._last_ts + 1)
        self._last_ts = micros
        return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"

    def _resolve_channel(self, channel: Any) -> str:
        """Channel ID to store under; users and D-channels map to "D"+user."""
        channel = channel if isinstance(channel, str) else ""
        space = self._space
        if channel in space.channels:
            if channel not in space.members:
                raise Rejected("not_in_channel", f"the bot is not a member of {channel}")
            return channel
        user = channel[1:] if channel.startswith("D") else channel
        if user[:1] in ("U", "W") and user in space.users:
            return "D" + user
        raise Rejected("channel_not_found", f"unknown channel {channel!r}")

    def _find_message(self, channel: str, ts: Any) -> dict:
        for message in self._messages.get(channel, []):
            if message["ts"] == ts:
                return message
        raise Rejected("message_not_found", f"no message {ts!r} in {channel}")

    # ----- Web API methods: return the success body or raise Rejected ------

    def _api_auth_test(self, params):
        space = self._space
        named = space.team_id if space.team_id in self.workspaces else self.auth_team
        return {
            "url": f"https://{space.name.lower().replace(' ', '-')}.slack.com/",
            "team": space.name,
            "user": "paperbot",
            **({"team_id": named} if named else {}),
            "user_id": space.bot_user_id,
            "bot_id": space.bot_id,
            "app_id": APP_ID,
            "is_enterprise_install": False,
        }

    def _api_oauth_v2_access(self, params):
        """A code for a workspace's bot token, or (grant_type=refresh_token) a refresh token for a new one."""
        secret = params.pop("client_secret", None)  # never recorded
        if params.get("client_id") != self.client_id:
            raise Rejected("invalid_client_id")
        if secret != self.client_secret:
            raise Rejected("bad_client_secret")
        grant = params.get("grant_type") or "authorization_code"
        if grant == "refresh_token":
            held = self._tokens.get(params.get("refresh_token") or "")
            if held is None or held.kind != "refresh" or held.used or held.revoked:
                raise Rejected("invalid_refresh_token")
            held.used = True
            return self._issue(self._space_of(held.team), None, rotating=True)
        if grant != "authorization_code":
            raise Rejected("invalid_grant_type")
        given = self._codes.pop(params.get("code") or "", None)  # a code is good once
        if given is None:
            raise Rejected("invalid_code")
        team, installer = given
        return self._issue(self._space_of(team), installer, rotating=self.rotating)

    def _issue(self, space: Workspace, installer: str | None, *, rotating: bool) -> dict:
        """A fresh bot token of `space` (with its refresh token when `rotating`), as oauth.v2.access gives it."""
        token = f"xoxb-{space.team_id}-{next(self._issued)}"
        body = {
            "access_token": token,
            "token_type": "bot",
            "scope": "commands,chat:write,channels:history,groups:history,im:history,im:write,users:read",
            "bot_user_id": space.bot_user_id,
            "app_id": APP_ID,
            "team": {"id": space.team_id, "name": space.name},
            "enterprise": None,
            "is_enterprise_install": False,
            "authed_user": {"id": installer} if installer else {},
        }
        expires_at = None
        if rotating:
            refresh = f"xoxe-1-{space.team_id}-{next(self._issued)}"
            self._tokens[refresh] = _Token(space.team_id, "refresh")
            expires_at = time.time() + self.expires_in
            body.update(refresh_token=refresh, expires_in=self.expires_in)
        self._tokens[token] = _Token(space.team_id, "bot", expires_at)
        return body

    def _api_apps_connections_open(self, params):
        return {"url": self.socket_url}

    def _api_chat_postMessage(self, params):
        channel = self._resolve_channel(params.get("channel"))
        check_message(params)
        message = {
            "type": "message",
            "ts": self._next_ts(),
            "text": str(params.get("text") or "")[:MAX_TEXT],
            "user": self._space.bot_user_id,
            "bot_id": self._space.bot_id,
            "app_id": APP_ID,
            "team": self._space.team_id,
        }
        for key in ("blocks", "attachments", "metadata", "thread_ts"):
            if params.get(key) is not None:
                message[key] = copy.deepcopy(params[key])
        if message.get("thread_ts") and _truthy(params.get("reply_broadcast")):
            message["subtype"] = "thread_broadcast"
        self._messages[channel].append(message)
        return {"channel": channel, "ts": message["ts"], "message": copy.deepcopy(message)}

    def _api_chat_update(self, params):
        channel = self._resolve_channel(params.get("channel"))
        message = self._find_message(channel, params.get("ts"))
        check_message(params)
        message["text"] = str(params.get("text") or "")[:MAX_TEXT]
        for key in ("blocks", "attachments", "metadata"):
            if params.get(key) is not None:
                message[key] = copy.deepcopy(params[key])
        message["edited"] = {"user": self._space.bot_user_id, "ts": self._next_ts()}
        return {"channel": channel, "ts": message["ts"], "text": message["text"], "message": copy.deepcopy(message)}

    def _api_chat_postEphemeral(self, params):
        channel = self._resolve_channel(params.get("channel"))
        if params.get("user") not in self._space.users:
            raise Rejected("user_not_found", f"unknown user {params.get('user')!r}")
        check_message(params)
        ts = self._next_ts()
        self._ephemerals.append(
            {
                "channel": channel,
                "user": params["user"],
                "ts": ts,
                "text": params.get("text"),
                "blocks": copy.deepcopy(params.get("blocks")),
            }
        )
        return {"message_ts": ts}

    def _api_conversations_history(self, params):
        channel = self._resolve_channel(params.get("channel"))
        limit = self._page_size(params)
        inclusive = _truthy(params.get("inclusive"))
        oldest = _ts_key(params.get("oldest") or "0", "invalid_ts_oldest")
        latest = _ts_key(params["latest"], "invalid_ts_latest") if params.get("latest") else None
        cursor_ts = None
        if params.get("cursor"):
            try:
                cursor = base64.b64decode(params["cursor"]).decode()
                cursor_ts = _ts_key(cursor.removeprefix("next_ts:"))
            except (ValueError, Rejected):
                raise Rejected("invalid_cursor") from None

        def wanted(m):
            # Like Slack, thread replies stay out of history (broadcasts excepted).
            if m.get("thread_ts") not in (None, m["ts"]) and m.get("subtype") != "thread_broadcast":
                return False
            ts = _ts_key(m["ts"])
            return (
                (ts >= oldest if inclusive else ts > oldest)
                and (latest is None or (ts <= latest if inclusive else ts < latest))
                and (cursor_ts is None or ts <= cursor_ts)
            )

        found = [m for m in reversed(self._messages.get(channel, [])) if wanted(m)]
        page, rest = found[:limit], found[limit:]
        with_metadata = _truthy(params.get("include_all_metadata"))
        messages = [{k: copy.deepcopy(v) for k, v in m.items() if k != "metadata" or with_metadata} for m in page]
        body = {"messages": messages, "has_more": bool(rest), "pin_count": 0}
        if rest:
            cursor = base64.b64encode(f"next_ts:{rest[0]['ts']}".encode()).decode()
            body["response_metadata"] = {"next_cursor": cursor}
        return body

    def _api_conversations_replies(self, params):
        """A thread: its parent, then its replies, oldest first (Slack's order), after `oldest` (from it,
        `inclusive`)."""
        channel = self._resolve_channel(params.get("channel"))
        parent = self._find_message(channel, params.get("ts"))
        oldest = _ts_key(params.get("oldest") or "0", "invalid_ts_oldest")
        inclusive = _truthy(params.get("inclusive"))
        limit = self._page_size(params)
        with_metadata = _truthy(params.get("include_all_metadata"))

        def since(m: dict) -> bool:
            return _ts_key(m["ts"]) >= oldest if inclusive else _ts_key(m["ts"]) > oldest

        thread = [parent] + [
            m
            for m in self._messages.get(channel, [])
            if m.get("thread_ts") == parent["ts"] and m["ts"] != parent["ts"] and since(m)
        ]
        start = int(params.get("cursor") or 0)
        page = thread[start : start + limit]
        messages = [{k: copy.deepcopy(v) for k, v in m.items() if k != "metadata" or with_metadata} for m in page]
        body = {"messages": messages, "has_more": start + limit < len(thread)}
        if start + limit < len(thread):
            body["response_metadata"] = {"next_cursor": str(start + limit)}
        return body

    def replies(self, channel: str, ts: str) -> list:
        """The replies in the thread of message `ts` in `channel`, oldest first."""
        with self._lock:
            return [
                copy.deepcopy(m) for m in self._messages.get(channel, []) if m.get("thread_ts") == ts and m["ts"] != ts
            ]

    def _api_conversations_open(self, params):
        users = [u for u in str(params.get("users") or "").split(",") if u]
        if params.get("channel"):
            return {"channel": {"id": self._resolve_channel(params["channel"])}}
        if len(users) != 1:
            raise Rejected("invalid_arguments", "the stand-in only opens 1:1 DMs")
        if users[0] not in self._space.users:
            raise Rejected("user_not_found", f"unknown user {users[0]!r}")
        return {"channel": {"id": "D" + users[0]}}

    def _api_users_info(self, params):
        uid = params.get("user")
        if uid not in self._space.users:
            raise Rejected("user_not_found", f"unknown user {uid!r}")
        info = self._space.users[uid]
        user = {
            "id": uid,
            "team_id": self._space.team_id,
            "name": uid.lower(),
            "real_name": uid,
            "deleted": False,
            "is_bot": False,
            "is_admin": False,
            "is_owner": False,
            "tz": "Europe/Berlin",
            "tz_label": "Central European Time",
            "tz_offset": 3600,
            **copy.deepcopy(info),
        }
        return {"user": user}

    def _store_view(self, view: dict, old: dict | None = None) -> dict:
        view_id = old["id"] if old else f"V{next(self._id_counter):08d}"
        stored = {
            "private_metadata": "",
            "callback_id": "",
            "external_id": "",
            "state": {"values": {}},
            **copy.deepcopy(view),
            "id": view_id,
            "team_id": self._space.team_id,
            "app_id": APP_ID,
            "bot_id": self._space.bot_id,
            "hash": uuid.uuid4().hex[:16],
        }
        if stored["type"] == "modal":
            self._views[stored["id"]] = stored
        return copy.deepcopy(stored)

    def _api_views_open(self, params):
        if not params.get("trigger_id"):
            raise Rejected("invalid_arguments", "trigger_id is required")
        check_view(params.get("view"), kind="modal")
        return {"view": self._store_view(params["view"])}

    def _api_views_update(self, params):
        view_id, external_id = params.get("view_id"), params.get("external_id")
        old = next(
            (
                v
                for v in self._views.values()
                if (view_id and v["id"] == view_id) or (external_id and v["external_id"] == external_id)
            ),
            None,
        )
        if old is None:
            raise Rejected("not_found", f"no view {view_id or external_id!r}")
        if params.get("hash") and params["hash"] != old["hash"]:
            raise Rejected("hash_conflict")
        check_view(params.get("view"), kind="modal")
        return {"view": self._store_view(params["view"], old)}

    def _api_views_publish(self, params):
        user_id = params.get("user_id")
        if user_id not in self._space.users:
            raise Rejected("user_not_found", f"unknown user {user_id!r}")
        old = self._home_views.get(user_id)
        if params.get("hash") and old and params["hash"] != old["hash"]:
            raise Rejected("hash_conflict")
        check_view(params.get("view"), kind="home")
        self._home_views[user_id] = self._store_view(params["view"], old)
        return {"view": copy.deepcopy(self._home_views[user_id])}

    def _response_url_post(self, params, url_id):
        uses = self._response_urls.get(url_id)
        if uses is None or uses >= RESPONSE_URL_MAX_USES:
            raise Rejected("expired_url", "unknown response_url or used too often")
        if not _truthy(params.get("delete_original")):
            check_message(params)
        self._response_urls[url_id] = uses + 1
        self._responses.append(copy.deepcopy(params))
        self._responses_by_url.setdefault(url_id, []).append(copy.deepcopy(params))
        return {}

    # ----- Socket Mode -----------------------------------------------------

    def _ws_handler(self, ws) -> None:
        with self._lock:
            self._ws_connections.append(ws)
            self.socket_connection_count += 1
            hello = {
                "type": "hello",
                "num_connections": len(self._ws_connections),
                "debug_info": {"host": "applink-standin", "build_number": 1, "approximate_connection_time": 18060},
                "connection_info": {"app_id": APP_ID},
            }
        self.socket_connected.set()
        try:
            ws.send(json.dumps(hello))
            for frame in ws:  # acks: {"envelope_id": ..., "payload": {...}?}
                try:
                    ack = json.loads(frame)
                except ValueError:
                    continue
                if not isinstance(ack, dict):
                    continue
                with self._lock:
                    waiter = self._pending_acks.pop(ack.get("envelope_id"), None)
                if waiter is not None:
                    waiter["ack"] = ack
                    waiter["event"].set()
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                self._ws_connections.remove(ws)
                if not self._ws_connections:
                    self.socket_connected.clear()

    def socket_send(
        self, type: str, payload: dict, timeout: float = 5, *, retry_attempt: int = 0, retry_reason: str = ""
    ) -> dict:
        """Send an envelope to the newest Socket Mode connection and wait for its ack.
        Returns the ack's payload ({} if none); raises TimeoutError, or RejectedAck
        when the ack payload carries blocks/a view Slack would reject."""
        deadline = time.monotonic() + timeout
        if not self.socket_connected.wait(timeout):
            raise TimeoutError("no Socket Mode client is connected")
        envelope = {
            "envelope_id": str(uuid.uuid4()),
            "type": type,
            "payload": payload,
            "accepts_response_payload": type != "events_api",
        }
        if type == "events_api":
            envelope.update(retry_attempt=retry_attempt, retry_reason=retry_reason)
        waiter = {"event": threading.Event(), "ack": None}
        with self._lock:
            if not self._ws_connections:
                raise TimeoutError("no Socket Mode client is connected")
            ws = self._ws_connections[-1]
            self._pending_acks[envelope["envelope_id"]] = waiter
        ws.send(json.dumps(envelope))
        if not waiter["event"].wait(max(0.0, deadline - time.monotonic())):
            with self._lock:
                self._pending_acks.pop(envelope["envelope_id"], None)
            raise TimeoutError(f"no ack for {type} envelope within {timeout}s")
        ack_payload = waiter["ack"].get("payload") or {}
        try:
            if "blocks" in ack_payload:
                check_message(ack_payload)
            if "view" in ack_payload:
                check_view(ack_payload["view"], kind="modal")
        except Rejected as e:
            raise RejectedAck(f"Slack would reject this ack: {e}") from None
        return ack_payload

    def socket_disconnect(self, reason: str = "refresh_requested") -> None:
        """Ask connected clients to reconnect, as Slack does every few hours."""
        with self._lock:
            connections = list(self._ws_connections)
        for ws in connections:
            with contextlib.suppress(ConnectionClosed):  # it closed since the snapshot: it is reconnecting already
                ws.send(json.dumps({"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-standin"}}))


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True  # a "hang" must not block shutdown
    request_queue_size = 128  # the default 5 drops connections under concurrent clients


class _HttpHandler(BaseHTTPRequestHandler):
    server_version = "slack-standin"

    def log_message(self, *args) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        standin: SlackStandin = self.server.standin
        url = urlsplit(self.path)
        params = dict(parse_qsl(url.query, keep_blank_values=True))
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if raw:
            if self.headers.get_content_type() == "application/json":
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                if not isinstance(body, dict):
                    return self._reply(200, {"ok": False, "error": "invalid_json"})
                params.update(body)
            else:
                params.update(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
        for key in ("blocks", "attachments", "metadata", "view"):
            if isinstance(params.get(key), str):  # form bodies carry these as JSON strings
                with contextlib.suppress(ValueError):  # left as a string; the validators reject it
                    params[key] = json.loads(params[key])
        if url.path.startswith("/api/"):
            method = url.path[len("/api/") :]
            auth = self.headers.get("Authorization", "")
            token = params.pop("token", None)
            if auth.startswith("Bearer "):
                token = auth[len("Bearer ") :]
            elif auth.startswith("Basic "):  # oauth.v2.access: the app's client id and secret
                with contextlib.suppress(ValueError):
                    client_id, _, secret = base64.b64decode(auth[len("Basic ") :]).decode().partition(":")
                    params.update(client_id=client_id, client_secret=secret)
            url_id = None
        elif url.path.startswith("/response/"):
            method, token, url_id = "response_url", None, url.path[len("/response/") :]
        else:
            return self._reply(404, {"ok": False, "error": "not_found"})
        try:
            status, body, headers, fault = standin._handle(method, params, token, url_id)
        except Exception as e:  # a bug in the stand-in or in on_accept: make it loud
            return self._reply(500, {"ok": False, "error": "standin_error", "detail": repr(e)})
        if fault and fault.meanwhile is not None:
            fault.meanwhile()
        if fault and fault.accept_then == "drop":
            self.close_connection = True
            return  # no response at all; the server then closes the socket
        if fault and fault.accept_then == "hang":
            standin._closing.wait(fault.seconds)
        self._reply(status, body, headers)

    def _reply(self, status: int, body: dict, headers: dict | None = None) -> None:
        if status >= 500:  # like Slack's edge: not JSON
            data = f"{body['error']} {body.get('detail', '')}".strip().encode()
            ctype = "text/plain"
        else:
            data, ctype = json.dumps(body).encode(), "application/json; charset=utf-8"
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # client went away (e.g. timed out during a "hang")
