"""A local stand-in for Discord's REST API, and interactions signed as Discord signs them, for tests.

    with DiscordStandin(channels={CHANNEL}, users={MEMBER: {}}) as discord:
        ... a bot with DISCORD_API_URL=discord.api_url, DISCORD_TOKEN=TOKEN ...
        assert discord.messages(CHANNEL)[0]["embeds"][0]["footer"]["text"].endswith("2026-W49")

    body = json.dumps(slash("tag", user=MEMBER, tag="parallelism-dp"))
    headers = sign(body)                     # X-Signature-Ed25519 / X-Signature-Timestamp, with KEY

Public API of DiscordStandin (thread-safe):
  api_url                       the REST base URL (…/api/v10)
  calls, calls_to(route)        recorded Call(route, method, path, body, status, response)
  messages(channel)             stored messages, oldest first, edits applied; ids are snowflakes of
                                when they were sent, as Discord's
  history_asked                 each read of a channel's history: {"channel", "limit", "before"/"after"}
  dm_channel(user)              the DM channel id the stand-in gave `user` (or None)
  registered                    {scope: [command definitions]} from bulk overwrites ("global" or a guild id)
  callbacks(), original(token)  interaction responses, and the @original message after edits
  attachment(a)                 the bytes of a file sent as multipart/form-data (files[n]), by the
                                attachment object a message carries for it
  pings(message)                who a stored message or response would ping, as Discord decides
  fail_next(route, ...)         a fault: status (429 with retry_after, 5xx, a Discord error code),
                                or accept_then="hang" (done, then no answer for `seconds`), or
                                "late" (done, answered after `seconds`: a slow Discord)
  wait_for(predicate, timeout)  poll predicate(standin)
  gateway_url, dispatch(i)      the Gateway (HELLO, IDENTIFY checked, READY, heartbeats ACKed), and
                                an INTERACTION_CREATE sent to the bot; answer_to(i) its callback
  gateway_sessions, gateway_connected, gateway_disconnect(code)
  threads                       {id: thread} made on messages (POST …/messages/{id}/threads): a
                                thread's id is its message's, and its messages are messages(id)
  events                        {server: {id: scheduled event}} (GET/POST/PATCH/DELETE scheduled-events)
  interest                      {event id: users Interested} (GET …/users, user_count; `interested`)
  users={id: {...}}             who Discord knows (GET users/{id}, guilds/{g}/members/{id}): "name" their
                                global name, "nick" theirs in the server, "member": False not in it,
                                "guilds": the servers they are in (unset: every one)
  guilds={id: {...}}            the servers the bot is in besides GUILD (`channels` are GUILD's): "name",
                                "channels" (GET users/@me/guilds lists them; a channel's guild_id is its
                                server's; with the GUILDS intent the Gateway sends each GUILD_CREATE)
  add_guild, remove_guild       the bot added to a server (GUILD_CREATE) or removed from it (GUILD_DELETE;
                                its channels then refuse the bot: 50001 Missing Access)
  close()                       (or use it as a context manager)

It refuses what Discord refuses (message limits, a second answer to an interaction, DMs to a member
who takes none: 50007), in Discord's own error shape. Standard library, PyNaCl and websockets.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import default
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from nacl.encoding import HexEncoder
from nacl.signing import SigningKey
from websockets.exceptions import ConnectionClosed
from websockets.sync.server import serve

APP_ID = "1000000000000000001"  # the application's id is also its bot user's id
BOT_ID = APP_ID
TOKEN = "MTAwMDAwMDAwMDAwMDAwMDAx.GabcDe.standin-token-abcdefghijklmnopqrstuv"
GUILD = "1000000000000000002"
KEY = SigningKey(bytes(range(32)))  # a fixed test key pair: the bot gets PUBLIC_KEY
PUBLIC_KEY = KEY.verify_key.encode(HexEncoder).decode()

MAX_CONTENT, MAX_EMBEDS, MAX_EMBED_TOTAL, MAX_DESCRIPTION, MAX_FIELDS = 2000, 10, 6000, 4096, 25
MAX_ROWS, MAX_BUTTONS, MAX_CUSTOM_ID, MAX_LABEL = 5, 5, 100, 80
EPHEMERAL = 1 << 6
#: How long Discord dedupes an enforced nonce ("the past few minutes").
NONCE_SECONDS = 300
#: The most one file may hold, uploaded by a bot to a server without boosts.
MAX_UPLOAD = 10 * 1024 * 1024


def sign(body: str | bytes, timestamp: str | None = None, key: SigningKey = KEY) -> dict[str, str]:
    """The headers Discord sends with an interaction: Ed25519 over timestamp + body."""
    raw = body.encode() if isinstance(body, str) else body
    stamp = timestamp or str(int(time.time()))
    signature = key.sign(stamp.encode() + raw).signature.hex()
    return {"X-Signature-Ed25519": signature, "X-Signature-Timestamp": stamp, "Content-Type": "application/json"}


_ids = itertools.count(1)


def user_object(id: str, username: str | None = None, *, bot: bool = False, global_name: str | None = None) -> dict:
    """A user object as Discord's REST API gives it (resources/user.md: the fields always there)."""
    return {
        "id": id,
        "username": username or f"user{id[-3:]}",
        "discriminator": "0",
        "global_name": global_name,
        "avatar": None,
        "bot": bot,
        "public_flags": 0,
    }


BOT_USER = user_object(APP_ID, "paperbot", bot=True)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())


def numbered(components: list[dict]) -> list[dict]:
    """Components as Discord stores them: each one that came without an `id` gets the next number,
    depth first (reference/components: "Discord auto populates it sequentially")."""
    out = copy.deepcopy(components)
    taken = set()

    def walk(items):
        for c in items:
            if "id" in c:
                taken.add(c["id"])
            walk(c.get("components") or [])

    walk(out)
    n = itertools.count(1)

    def give(items):
        for c in items:
            if "id" not in c:
                c["id"] = next(i for i in n if i not in taken)
            give(c.get("components") or [])

    give(out)
    return out


def message_object(id: str, channel: str, body: dict, author: dict | None = None) -> dict:
    """A message object as Discord's REST API gives it (resources/message.md: the fields always there)."""
    return {
        "id": id,
        "channel_id": channel,
        "type": 0,
        "author": copy.deepcopy(author or BOT_USER),
        "content": body.get("content") or "",
        "embeds": copy.deepcopy(body.get("embeds") or []),
        "components": numbered(body.get("components") or []),
        "attachments": [],
        "mentions": [],
        "mention_roles": [],
        "mention_everyone": False,
        "pinned": False,
        "tts": False,
        "flags": body.get("flags") or 0,
        "timestamp": _now(),
        "edited_timestamp": None,
    }


def _interaction(kind: int, data: dict | None, user: str, permissions: int, **extra) -> dict:
    n = next(_ids)
    channel = extra.pop("channel", "1000000000000000003")
    body = {
        "id": str(1_200_000_000_000_000_000 + n),
        "application_id": APP_ID,
        "type": kind,
        "token": f"itoken-{n}-{'x' * 20}",
        "version": 1,
        "guild_id": GUILD,
        "channel_id": channel,
        # Discord's partial channel: a test that moves `channel_id` moves no name with it.
        "channel": {"id": channel, "type": 0, "name": extra.pop("channel_name", "reading-club")},
        "member": {"user": {"id": user, "username": f"user{user[-3:]}"}, "permissions": str(permissions), "roles": []},
        "locale": "en-US",
        **extra,
    }
    if data is not None:
        body["data"] = data
    return body


def ping() -> dict:
    return {"id": "1", "application_id": APP_ID, "type": 1, "token": "ping-token", "version": 1}


def slash(sub: str, who: str, *, permissions: int = 0, focused: str | None = None, **options) -> dict:
    """`/paper <sub> option:value ...` as Discord sends it (type 2; with `focused`, an autocomplete, type 4)."""
    opts = []
    for name, value in options.items():
        option = {"name": name, "type": 6 if name == "user" else 3, "value": value}
        if name == focused:
            option["focused"] = True
        opts.append(option)
    data = {
        "id": "1300000000000000001",
        "name": "paper",
        "type": 1,
        "options": [{"name": sub, "type": 1, "options": opts}],
    }
    if "user" in options:  # Discord sends the user an option names, resolved
        data["resolved"] = {"users": {options["user"]: {"id": options["user"], "username": "someone", "bot": False}}}
    return _interaction(4 if focused else 2, data, who, permissions)


def in_server(interaction: dict, guild: str, channel: str) -> dict:
    """`interaction` as sent from server `guild`, in its channel `channel`."""
    partial = {**interaction.get("channel", {}), "id": channel}
    return {**interaction, "guild_id": guild, "channel_id": channel, "channel": partial}


def click(custom_id: str, who: str, message: dict | None = None, *, permissions: int = 0) -> dict:
    """A button pressed (type 3) on `message`."""
    data = {"custom_id": custom_id, "component_type": 2}
    return _interaction(3, data, who, permissions, message=message or {"id": "1", "content": "", "flags": EPHEMERAL})


@dataclass(frozen=True)
class Call:
    route: str
    method: str
    path: str
    body: Any
    status: int
    response: Any


@dataclass(frozen=True)
class _Fault:
    status: int | None = None
    retry_after: float = 1.0
    code: int | None = None
    accept_then: str | None = None
    seconds: float = 30.0
    is_global: bool = False


class Refused(Exception):
    """What Discord answers with an error: HTTP status, Discord's code, its message."""

    def __init__(self, status: int, code: int, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def check_message(body: Any, *, where: str = "message") -> None:  # noqa: C901 (a check per field Discord checks)
    """Raise Refused(400, 50035) for what Discord would refuse of a message body."""
    if not isinstance(body, dict):
        raise Refused(400, 50109, "The request body contains invalid JSON.")
    content = body.get("content")
    if content is not None and (not isinstance(content, str) or len(content) > MAX_CONTENT):
        raise Refused(400, 50035, f"Invalid Form Body: content: Must be {MAX_CONTENT} or fewer in length.")
    embeds = body.get("embeds") or []
    if not isinstance(embeds, list) or len(embeds) > MAX_EMBEDS:
        raise Refused(400, 50035, f"Invalid Form Body: embeds: Must be {MAX_EMBEDS} or fewer in length.")
    total = 0
    for i, embed in enumerate(embeds):
        if not isinstance(embed, dict):
            raise Refused(400, 50035, f"Invalid Form Body: embeds.{i}: not an object")
        for name, limit in (("title", 256), ("description", MAX_DESCRIPTION)):
            value = embed.get(name) or ""
            if len(value) > limit:
                raise Refused(400, 50035, f"Invalid Form Body: embeds.{i}.{name}: Must be {limit} or fewer in length.")
            total += len(value)
        footer = (embed.get("footer") or {}).get("text") or ""
        if len(footer) > 2048:
            raise Refused(400, 50035, f"Invalid Form Body: embeds.{i}.footer.text: too long")
        total += len(footer)
        fields = embed.get("fields") or []
        if len(fields) > MAX_FIELDS:
            raise Refused(400, 50035, f"Invalid Form Body: embeds.{i}.fields: Must be 25 or fewer in length.")
        for field in fields:
            if len(field.get("name") or "") > 256 or len(field.get("value") or "") > 1024 or not field.get("value"):
                raise Refused(400, 50035, f"Invalid Form Body: embeds.{i}.fields: a field out of bounds")
            total += len(field["name"]) + len(field["value"])
    if total > MAX_EMBED_TOTAL:
        raise Refused(400, 50035, f"Invalid Form Body: embeds: Embed size exceeds maximum size of {MAX_EMBED_TOTAL}")
    rows = body.get("components") or []
    if not isinstance(rows, list) or len(rows) > MAX_ROWS:
        raise Refused(400, 50035, f"Invalid Form Body: components: Must be {MAX_ROWS} or fewer in length.")
    ids = set()
    for r, row in enumerate(rows):
        if not isinstance(row, dict) or row.get("type") != 1 or not isinstance(row.get("components"), list):
            raise Refused(400, 50035, f"Invalid Form Body: components.{r}: not an action row")
        if not 1 <= len(row["components"]) <= MAX_BUTTONS:
            raise Refused(400, 50035, f"Invalid Form Body: components.{r}.components: 1 to {MAX_BUTTONS} buttons")
        for b, button in enumerate(row["components"]):
            at = f"components.{r}.components.{b}"
            if button.get("type") != 2 or button.get("style") not in (1, 2, 3, 4, 5):
                raise Refused(400, 50035, f"Invalid Form Body: {at}: not a button")
            label = button.get("label") or ""
            if len(label) > MAX_LABEL:
                raise Refused(400, 50035, f"Invalid Form Body: {at}.label: Must be {MAX_LABEL} or fewer in length.")
            if button["style"] == 5:
                if not button.get("url") or "custom_id" in button:
                    raise Refused(400, 50035, f"Invalid Form Body: {at}: a link button has a url and no custom_id")
                continue
            custom_id = button.get("custom_id")
            if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= MAX_CUSTOM_ID:
                raise Refused(400, 50035, f"Invalid Form Body: {at}.custom_id: 1 to {MAX_CUSTOM_ID} characters")
            if custom_id in ids:
                raise Refused(
                    400, 50035, f"Invalid Form Body: {at}.custom_id: Component custom id cannot be duplicated"
                )
            ids.add(custom_id)
    if where == "message" and not (content or embeds or rows):
        raise Refused(400, 50006, "Cannot send an empty message")


def check_modal(data: Any) -> None:
    """What Discord checks of a modal: custom_id, a title of at most 45, 1 to 5 rows of one text input."""
    if not isinstance(data, dict) or not 1 <= len(data.get("custom_id") or "") <= MAX_CUSTOM_ID:
        raise Refused(400, 50035, "Invalid Form Body: data.custom_id")
    if not 1 <= len(data.get("title") or "") <= 45:
        raise Refused(400, 50035, "Invalid Form Body: data.title: Must be between 1 and 45 in length.")
    rows = data.get("components") or []
    if not 1 <= len(rows) <= 5:
        raise Refused(400, 50035, "Invalid Form Body: data.components: 1 to 5 rows")
    for r, row in enumerate(rows):
        inputs = row.get("components") or []
        if row.get("type") != 1 or len(inputs) != 1 or inputs[0].get("type") != 4:
            raise Refused(400, 50035, f"Invalid Form Body: data.components.{r}: one text input a row")
        i = inputs[0]
        if (
            not 1 <= len(i.get("label") or "") <= 45
            or i.get("style") not in (1, 2)
            or len(i.get("placeholder") or "") > 100
        ):
            raise Refused(400, 50035, f"Invalid Form Body: data.components.{r}.components.0: label or style")
        if not 1 <= len(i.get("custom_id") or "") <= MAX_CUSTOM_ID or not 1 <= i.get("max_length", 4000) <= 4000:
            raise Refused(400, 50035, f"Invalid Form Body: data.components.{r}.components.0: custom_id or max_length")


def submit(form: dict, who: str, values: dict[str, str], *, permissions: int = 0) -> dict:
    """A modal submitted (type 5) with `values` by input."""
    rows = [
        {
            "type": 1,
            "components": [
                {
                    "type": 4,
                    "custom_id": row["components"][0]["custom_id"],
                    "value": values.get(row["components"][0]["custom_id"], ""),
                }
            ],
        }
        for row in form["components"]
    ]
    return _interaction(5, {"custom_id": form["custom_id"], "components": rows}, who, permissions)


_MENTION = re.compile(r"<@!?(\d+)>|<@&(\d+)>|@(everyone|here)")


def pings(message: dict) -> set[str]:
    """Who Discord would notify for `message`: user ids, `&role` ids, and `@everyone`/`@here`.
    Only the content mentions anyone; `allowed_mentions` (default: everything parsed) filters it."""
    allowed = message.get("allowed_mentions")
    parse = {"users", "roles", "everyone"} if allowed is None else set(allowed.get("parse") or [])
    listed_users = set((allowed or {}).get("users") or [])
    listed_roles = set((allowed or {}).get("roles") or [])
    out = set()
    for user, role, everyone in _MENTION.findall(message.get("content") or ""):
        if user and ("users" in parse or user in listed_users):
            out.add(user)
        elif role and ("roles" in parse or role in listed_roles):
            out.add("&" + role)
        elif everyone and "everyone" in parse:
            out.add("@" + everyone)
    return out


_COMMAND_NAME = re.compile(r"^[-_\w]{1,32}$")


def check_commands(commands: Any) -> None:
    """What Discord checks of a bulk overwrite: names, descriptions, counts, required options first."""
    if not isinstance(commands, list):
        raise Refused(400, 50035, "Invalid Form Body: not a list")

    def check_options(options: list, at: str) -> None:
        if len(options) > 25:
            raise Refused(400, 50035, f"Invalid Form Body: {at}.options: Must be 25 or fewer in length.")
        optional_seen = False
        for i, o in enumerate(options):
            name = o.get("name") or ""
            if not _COMMAND_NAME.match(name) or name != name.lower():
                raise Refused(400, 50035, f"Invalid Form Body: {at}.options.{i}.name: invalid")
            if not 1 <= len(o.get("description") or "") <= 100:
                raise Refused(400, 50035, f"Invalid Form Body: {at}.options.{i}.description: 1 to 100 characters")
            if o.get("type") in (1, 2):
                check_options(o.get("options") or [], f"{at}.options.{i}")
            elif o.get("required"):
                if optional_seen:
                    raise Refused(400, 50035, f"Invalid Form Body: {at}.options.{i}: required options must be first")
            else:
                optional_seen = True

    for i, c in enumerate(commands):
        if not _COMMAND_NAME.match(c.get("name") or "") or not 1 <= len(c.get("description") or "") <= 100:
            raise Refused(400, 50035, f"Invalid Form Body: {i}: name or description")
        check_options(c.get("options") or [], str(i))


class DiscordStandin:
    def __init__(
        self,
        channels=(),
        users: dict[str, dict] | None = None,
        token: str = TOKEN,
        guilds: dict[str, dict] | None = None,
    ):
        self.token = token
        self._lock = threading.RLock()
        self._channels: dict[str, list[dict]] = {c: [] for c in channels}
        #: The servers the bot is in, by id: {"name"}; and the server of each channel.
        self.guilds: dict[str, dict] = {GUILD: {"name": "Reading club"}}
        self._guild_of: dict[str, str] = dict.fromkeys(channels, GUILD)
        self._removed: set[str] = set()
        for guild, about in (guilds or {}).items():
            self.guilds[guild] = {"name": about.get("name") or f"Server {guild[-3:]}"}
            for channel in about.get("channels") or ():
                self._channels[channel] = []
                self._guild_of[channel] = guild
        # id -> {"dms": False to refuse DMs (50007), "name": global name, "nick": in the server,
        #        "member": False when not in the server (10007)}
        self._users = dict(users or {})
        self._dms: dict[str, str] = {}
        self._nonces: dict[tuple[str, str], tuple[float, dict]] = {}
        self._calls: list[Call] = []
        self._faults: dict[str, list[_Fault]] = {}
        self._answered: dict[str, dict] = {}  # interaction token -> the response
        self._originals: dict[str, dict] = {}
        self._followups: list[dict] = []
        self._files: dict[str, bytes] = {}  # attachment id -> what was uploaded
        self.registered: dict[str, list[dict]] = {}
        #: Threads made on messages, by id (the message's).
        self.threads: dict[str, dict] = {}
        #: Scheduled events by server, then by id (the events routes).
        self.events: dict[str, dict[str, dict]] = {}
        #: Who marked each event (by id) "Interested" in Discord's client (`interested`).
        self.interest: dict[str, set[str]] = {}
        self._opened = _now()  # when the users joined the server
        self._ids = itertools.count(1)
        self._last_message = 0
        #: What each read of a channel's history asked: its channel, limit, before or after.
        self.history_asked: list[dict] = []
        self.on_accept: Callable[[Call], None] | None = None
        # The Gateway: a websocket server whose URL `GET /gateway/bot` hands out.
        self.heartbeat_ms = 41_250
        self.gateway_token: str | None = None  # set: the Gateway alone refuses the bot's token (4004)
        self.gateway_sessions: list[dict] = []  # {"identify": ..., "heartbeats": n}
        self._sockets: list[_Link] = []
        self._session_ids: set[str] = set()
        self._guild_sessions: set[str] = set()  # sessions that asked for the GUILDS intent
        self._guild_links: set[_Link] = set()
        self._seq = itertools.count(2)
        self._ws_server = serve(self._gateway, "127.0.0.1", 0)
        self.gateway_url = f"ws://127.0.0.1:{self._ws_server.socket.getsockname()[1]}"
        threading.Thread(target=self._ws_server.serve_forever, daemon=True, name="discord-standin-gw").start()
        self._server = _HttpServer(("127.0.0.1", 0), _HttpHandler)
        self._server.standin = self
        self.api_url = f"http://127.0.0.1:{self._server.server_address[1]}/api/v10"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True, name="discord-standin")
        self._thread.start()

    def __enter__(self) -> DiscordStandin:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._ws_server.shutdown()
        self._server.shutdown()
        self._server.server_close()

    # -- what tests read ---------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        with self._lock:
            return list(self._calls)

    def calls_to(self, route: str) -> list[Call]:
        return [c for c in self.calls if c.route == route]

    def messages(self, channel: str) -> list[dict]:
        with self._lock:
            return copy.deepcopy(self._channels.get(channel, []))

    def dm_channel(self, user: str) -> str | None:
        with self._lock:
            return self._dms.get(user)

    def callbacks(self) -> list[dict]:
        with self._lock:
            return copy.deepcopy(list(self._answered.values()))

    def original(self, token: str) -> dict | None:
        with self._lock:
            return copy.deepcopy(self._originals.get(token))

    def followups(self) -> list[dict]:
        with self._lock:
            return copy.deepcopy(self._followups)

    def uploaded(self, content_type: str, raw: bytes) -> dict:
        """A multipart/form-data body as Discord reads it: `payload_json` the message, each `files[n]` the
        file of its `attachments` entry `{"id": n}`, which becomes an attachment object; the bytes are
        kept for `attachment()`. An entry without its file is refused, as Discord does."""
        parts = BytesParser(policy=default).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        files: dict[str, tuple[str, str, bytes]] = {}
        body: Any = None
        for part in parts.iter_parts():
            name = part.get_param("name", header="content-disposition")
            data = part.get_payload(decode=True) or b""
            if name == "payload_json":
                body = json.loads(data)
            elif isinstance(name, str) and (found := re.fullmatch(r"files\[(\d+)\]", name)):
                files[found[1]] = (part.get_filename() or "", part.get_content_type(), data)
        if not isinstance(body, dict):
            raise Refused(400, 50109, "The request body contains invalid JSON.")
        attachments = []
        for entry in body.get("attachments") or []:
            if str(entry.get("id")) not in files:
                raise Refused(400, 50035, f"Invalid Form Body: attachments: no files[{entry.get('id')}]")
            filename, kind, data = files[str(entry["id"])]
            if len(data) > MAX_UPLOAD:
                raise Refused(413, 40005, "Request entity too large")
            with self._lock:
                number = self._id()
                self._files[number] = data
            attachments.append(
                {"id": number, "filename": entry.get("filename") or filename, "size": len(data), "content_type": kind,
                 "url": f"{self.api_url}/attachments/{number}/{filename}"}
            )  # fmt: skip
        body["attachments"] = attachments
        return body

    def attachment(self, attachment: dict) -> bytes:
        """The bytes uploaded as `attachment` (an attachment object of a stored message)."""
        with self._lock:
            return self._files[attachment["id"]]

    def forget_nonces(self) -> None:
        """The nonce window has passed: a nonce seen before no longer dedupes."""
        with self._lock:
            self._nonces.clear()

    def took(self, interaction: dict, response: dict) -> None:
        """What Discord does with the response to an interaction it POSTed to the bot (HTTP mode):
        checked as a callback is, and kept, so that `@original` can be edited after it."""
        with self._lock:
            status, _ = self._callback({"token": interaction["token"]}, {}, response)
        self._record(Call("callback", "POST", "(http response)", response, status, None))

    def wait_for(self, predicate: Callable[[DiscordStandin], Any], timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self):
                return True
            time.sleep(0.02)
        return bool(predicate(self))

    def fail_next(
        self,
        route: str,
        status: int | None = None,
        *,
        retry_after: float = 1.0,
        code: int | None = None,
        accept_then: str | None = None,
        seconds: float = 30.0,
        times: int = 1,
        is_global: bool = False,
    ) -> None:
        """The next `times` calls to `route` fail: with `status` (429: `retry_after`), or done and
        then left unanswered for `seconds` (accept_then="hang"), or answered only after them ("late")."""
        with self._lock:
            self._faults.setdefault(route, []).extend(
                [_Fault(status, retry_after, code, accept_then, seconds, is_global)] * times
            )

    # -- the routes ----------------------------------------------------------------------

    # -- the Gateway -----------------------------------------------------------------------

    def _gateway(self, ws) -> None:
        link = _Link(ws)
        session = {"identify": None, "resume": None, "heartbeats": 0, "query": ws.request.path}
        link.send({"op": 10, "d": {"heartbeat_interval": self.heartbeat_ms}, "s": None, "t": None})
        try:
            first = json.loads(ws.recv(timeout=10))
            if first.get("op") not in (2, 6):
                ws.close(4003, "Not authenticated.")
                return
            if (first.get("d") or {}).get("token") != (self.gateway_token or self.token):
                ws.close(4004, "Authentication failed.")
                return
            if first["op"] == 6:  # RESUME: a session this stand-in began goes on; any other cannot
                session["resume"] = first["d"]
                with self._lock:
                    known = first["d"].get("session_id") in self._session_ids
                    if known:
                        self.gateway_sessions.append(session)
                        self._sockets.append(link)
                        if first["d"].get("session_id") in self._guild_sessions:
                            self._guild_links.add(link)
                if not known:
                    link.send({"op": 9, "d": False, "s": None, "t": None})
                    ws.close(4000, "Invalid session.")
                    return
                link.send({"op": 0, "t": "RESUMED", "s": next(self._seq), "d": {}})
            else:
                session["identify"] = first["d"]
                with self._lock:
                    self.gateway_sessions.append(session)
                    self._sockets.append(link)
                    session_id = f"session-{len(self.gateway_sessions)}"
                    self._session_ids.add(session_id)
                    if _guilds_intent(first["d"]):
                        self._guild_sessions.add(session_id)
                        self._guild_links.add(link)
                ready = {
                    "v": 10,
                    "user": {**BOT_USER, "mfa_enabled": False, "verified": True, "flags": 0},
                    "guilds": [{"id": g, "unavailable": True} for g in sorted(self.guilds)],
                    "session_id": session_id,
                    "resume_gateway_url": self.gateway_url,
                    "shard": [0, 1],
                    "application": {"id": APP_ID, "flags": 0},
                }
                link.send({"op": 0, "t": "READY", "s": 1, "d": ready})
                if _guilds_intent(first["d"]):
                    with self._lock:
                        there = sorted(self.guilds)
                    for guild in there:
                        link.send({"op": 0, "t": "GUILD_CREATE", "s": next(self._seq), "d": self._guild_object(guild)})
            for raw in ws:
                message = json.loads(raw)
                if message.get("op") == 1:
                    session["heartbeats"] += 1
                    link.send({"op": 11, "d": None, "s": None, "t": None})
        except (ConnectionClosed, TimeoutError):
            pass
        finally:
            with self._lock:
                if link in self._sockets:
                    self._sockets.remove(link)
                self._guild_links.discard(link)

    @property
    def gateway_connected(self) -> int:
        with self._lock:
            return len(self._sockets)

    def _guild_object(self, guild: str) -> dict:
        """A guild as GUILD_CREATE carries it (events/gateway-events.md: a guild object and its extra fields)."""
        with self._lock:
            name = self.guilds[guild]["name"]
            channels = [c for c, g in self._guild_of.items() if g == guild]
        return {
            "id": guild,
            "name": name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": "1000000000000000009",
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "roles": [],
            "emojis": [],
            "features": [],
            "mfa_level": 0,
            "application_id": None,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "preferred_locale": "en-US",
            "public_updates_channel_id": None,
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "safety_alerts_channel_id": None,
            "stickers": [],
            "joined_at": self._opened,
            "large": False,
            "unavailable": False,
            "member_count": 2,
            "voice_states": [],
            "members": [],
            "channels": [{"id": c, "type": 0, "name": "reading-group", "position": 0} for c in channels],
            "threads": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }

    def add_guild(self, guild: str, name: str, channels=()) -> None:
        """The bot is added to a server: Discord lists it, and the Gateway sends its GUILD_CREATE."""
        with self._lock:
            self.guilds[guild] = {"name": name}
            self._removed.discard(guild)
            for channel in channels:
                self._channels.setdefault(channel, [])
                self._guild_of[channel] = guild
        self._to_guild_sessions("GUILD_CREATE", self._guild_object(guild))

    def remove_guild(self, guild: str) -> None:
        """The bot is removed from a server (kicked, or the server deleted): Discord lists it no more, its
        channels refuse the bot, and the Gateway sends GUILD_DELETE without `unavailable`."""
        with self._lock:
            self.guilds.pop(guild, None)
            self._removed.add(guild)
        self._to_guild_sessions("GUILD_DELETE", {"id": guild})

    def _to_guild_sessions(self, event: str, data: dict) -> None:
        """Send a guild event to the Gateway sessions that asked for the GUILDS intent."""
        with self._lock:
            links = [link for link in self._sockets if link in self._guild_links]
        for link in links:
            link.send({"op": 0, "t": event, "s": next(self._seq), "d": data})

    def dispatch(self, interaction: dict) -> None:
        """Send INTERACTION_CREATE to the bot over its Gateway connection(s)."""
        with self._lock:
            links = list(self._sockets)
        assert links, "no Gateway connection"
        payload = {"op": 0, "t": "INTERACTION_CREATE", "s": next(self._seq), "d": interaction}
        for link in links:
            link.send(payload)

    def answer_to(self, interaction: dict, timeout: float = 10.0) -> dict | None:
        """The response the bot gave `interaction` through the callback route."""
        token = interaction["token"]
        if not self.wait_for(lambda d: token in d._answered, timeout):
            return None
        with self._lock:
            answered = copy.deepcopy(self._answered[token])
        answered.pop("token")
        return answered

    def gateway_disconnect(self, code: int = 4000, reason: str = "standin closed it") -> None:
        with self._lock:
            sockets = list(self._sockets)
        for link in sockets:
            link.ws.close(code, reason)

    ROUTES = [
        ("GET", r"/gateway/bot", "gateway"),
        ("GET", r"/users/@me", "me"),
        ("GET", r"/users/@me/guilds", "my_guilds"),
        ("GET", r"/applications/@me", "application"),
        ("GET", r"/oauth2/applications/@me", "application"),  # the same application, as hikari asks
        ("PUT", r"/applications/(?P<app>\d+)/commands", "register"),
        ("PUT", r"/applications/(?P<app>\d+)/guilds/(?P<guild>\d+)/commands", "register"),
        ("POST", r"/channels/(?P<channel>\d+)/messages", "create_message"),
        ("POST", r"/channels/(?P<channel>\d+)/messages/(?P<message>\d+)/threads", "create_thread"),
        ("GET", r"/channels/(?P<channel>\d+)/messages", "history"),
        ("GET", r"/channels/(?P<channel>\d+)", "channel_object"),
        ("PATCH", r"/channels/(?P<channel>\d+)/messages/(?P<message>\d+)", "edit_message"),
        ("POST", r"/users/@me/channels", "dm"),
        ("POST", r"/interactions/(?P<interaction>\d+)/(?P<token>[^/]+)/callback", "callback"),
        ("PATCH", r"/webhooks/(?P<app>\d+)/(?P<token>[^/]+)/messages/@original", "edit_original"),
        ("POST", r"/webhooks/(?P<app>\d+)/(?P<token>[^/]+)", "followup"),
        ("GET", r"/users/(?P<user>\d+)", "user"),
        ("GET", r"/guilds/(?P<guild>\d+)/members/(?P<user>\d+)", "member"),
        ("GET", r"/guilds/(?P<guild>\d+)/scheduled-events", "list_events"),
        ("POST", r"/guilds/(?P<guild>\d+)/scheduled-events", "create_event"),
        ("PATCH", r"/guilds/(?P<guild>\d+)/scheduled-events/(?P<event>\d+)", "edit_event"),
        ("DELETE", r"/guilds/(?P<guild>\d+)/scheduled-events/(?P<event>\d+)", "delete_event"),
        ("GET", r"/guilds/(?P<guild>\d+)/scheduled-events/(?P<event>\d+)/users", "event_users"),
    ]
    #: Routes that take the interaction's token instead of the bot's.
    WEBHOOKS = {"callback", "edit_original", "followup"}

    def _id(self) -> str:
        return str(1_100_000_000_000_000_000 + next(self._ids))

    def _message_id(self) -> str:
        """A message's id as Discord makes it: a snowflake of when it was sent (`after` a time's
        snowflake gives the messages since), one more than the last when two share a millisecond."""
        made = max((int(time.time() * 1000) - 1_420_070_400_000) << 22, self._last_message + 1)
        self._last_message = made
        return str(made)

    def handle(self, method: str, path: str, query: dict, body: Any, auth: str | None):
        """(status, response, headers, hang seconds)."""
        route, m = "unknown", None
        for verb, pattern, name in self.ROUTES:
            m = re.fullmatch("/api/v10" + pattern, path)
            if verb == method and m:
                route = name
                break
        else:
            return 404, {"message": "404: Not Found", "code": 0}, {}, 0.0, "unknown"
        if route not in self.WEBHOOKS and auth != f"Bot {self.token}":
            return 401, {"message": "401: Unauthorized", "code": 0}, {}, 0.0, route
        with self._lock:
            faults = self._faults.get(route)
            fault = faults.pop(0) if faults else None
        if fault is not None and fault.status is not None:
            if fault.status == 429:
                headers = {
                    "Retry-After": str(max(1, round(fault.retry_after))),
                    "X-RateLimit-Limit": "5",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset": f"{time.time() + fault.retry_after:.3f}",
                    "X-RateLimit-Reset-After": f"{fault.retry_after:.3f}",
                    "X-RateLimit-Bucket": "standin",
                    "X-RateLimit-Scope": "global" if fault.is_global else "user",
                }
                if fault.is_global:
                    headers["X-RateLimit-Global"] = "true"
                body429 = {
                    "message": "You are being rate limited.",
                    "retry_after": fault.retry_after,
                    "global": fault.is_global,
                }
                return 429, body429, headers, 0.0, route
            code = fault.code if fault.code is not None else 0
            return fault.status, {"message": f"{fault.status}: standin fault", "code": code}, {}, 0.0, route
        try:
            with self._lock:
                handler = self._gateway_route if route == "gateway" else getattr(self, f"_{route}")
                status, response = handler(m.groupdict(), query, body)
        except Refused as e:
            return e.status, {"message": e.message, "code": e.code}, {}, 0.0, route
        hang = fault.seconds if fault is not None and fault.accept_then == "hang" else 0.0
        if fault is not None and fault.accept_then == "late":
            return status, response, {"late": fault.seconds}, 0.0, route
        return status, response, {}, hang, route

    def _record(self, call: Call) -> None:
        with self._lock:
            self._calls.append(call)
        if self.on_accept is not None and call.status < 300 and call.method != "GET":
            self.on_accept(call)

    def _gateway_route(self, params, query, body):
        limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
        return 200, {"url": self.gateway_url, "shards": 1, "session_start_limit": limit}

    def _my_guilds(self, params, query, body):
        """The servers the bot is in (resources/user.md: partial guilds), by id, `limit` (200) after `after`."""
        limit = min(int(query.get("limit") or 200), 200)
        after = int(query.get("after") or 0)
        there = sorted((g for g in self.guilds if int(g) > after), key=int)[:limit]
        return 200, [
            {
                "id": g,
                "name": self.guilds[g]["name"],
                "icon": None,
                "banner": None,
                "owner": False,
                "permissions": "0",
                "features": [],
                "approximate_member_count": 2,
                "approximate_presence_count": 1,
            }
            for g in there
        ]

    def _me(self, params, query, body):
        return 200, {**BOT_USER, "mfa_enabled": False, "verified": True, "flags": 0, "banner": None, "locale": "en-US"}

    def _application(self, params, query, body):
        owner = user_object("1000000000000000009", "owner")
        return 200, {
            "id": APP_ID,
            "name": "paperbot",
            "icon": None,
            "description": "",
            "bot_public": False,
            "bot_require_code_grant": False,
            "verify_key": PUBLIC_KEY,
            "team": None,
            "flags": 0,
            "owner": owner,
            "bot": copy.deepcopy(BOT_USER),
            "approximate_guild_count": 1,
            "approximate_user_install_count": 0,
        }

    def _register(self, params, query, body):
        if params["app"] != APP_ID:
            raise Refused(404, 10002, "Unknown Application")
        check_commands(body)
        scope = params.get("guild") or "global"
        self.registered[scope] = copy.deepcopy(body)
        guild = params.get("guild")
        made = []
        for c in body:
            made.append(
                {
                    "type": 1,
                    "default_member_permissions": None,
                    "nsfw": False,
                    **c,
                    "id": self._id(),
                    "application_id": APP_ID,
                    "version": self._id(),
                    **({"guild_id": guild} if guild else {}),
                }
            )
        return 200, made

    def _channel(self, channel: str) -> list[dict]:
        if channel not in self._channels:
            raise Refused(404, 10003, "Unknown Channel")
        if self._guild_of.get(channel) in self._removed:  # the bot is no longer in its server
            raise Refused(403, 50001, "Missing Access")
        return self._channels[channel]

    def _create_message(self, params, query, body):
        channel = params["channel"]
        stored = self._channel(channel)
        check_message(body)
        recipient = next((u for u, c in self._dms.items() if c == channel), None)
        if recipient is not None and self._users.get(recipient, {}).get("dms") is False:
            raise Refused(403, 50007, "Cannot send messages to this user")
        nonce = body.get("nonce")
        if nonce is not None and (not isinstance(nonce, str | int) or len(str(nonce)) > 25):
            raise Refused(400, 50035, "Invalid Form Body: nonce: Must be 25 or fewer in length.")
        if nonce is not None and body.get("enforce_nonce"):
            seen = self._nonces.get((channel, str(nonce)))
            if seen is not None and time.time() - seen[0] < NONCE_SECONDS:
                return 200, self._public(seen[1])
        mentions = body.get("allowed_mentions")
        message = {**message_object(self._message_id(), channel, body), "allowed_mentions": mentions}
        stored.append(message)
        if nonce is not None and body.get("enforce_nonce"):
            self._nonces[(channel, str(nonce))] = (time.time(), message)
        return 200, self._public(message)

    def _create_thread(self, params, query, body):
        """A public thread on a message: a channel whose id is the message's, one a message (160004)."""
        stored = self._channel(params["channel"])
        if not any(m["id"] == params["message"] for m in stored):
            raise Refused(404, 10008, "Unknown Message")
        name = body.get("name") if isinstance(body, dict) else None
        if not isinstance(name, str) or not 1 <= len(name) <= 100:
            raise Refused(400, 50035, "Invalid Form Body: name: Must be between 1 and 100 in length.")
        if params["message"] in self._channels:
            raise Refused(400, 160004, "A thread has already been created for this message")
        self._channels[params["message"]] = []
        metadata = {"archived": False, "auto_archive_duration": 1440, "archive_timestamp": _now(), "locked": False}
        self.threads[params["message"]] = thread = {
            "id": params["message"],
            "guild_id": self._guild_of.get(params["channel"], GUILD),
            "parent_id": params["channel"],
            "owner_id": APP_ID,
            "type": 11,
            "name": name,
            "last_message_id": None,
            "message_count": 0,
            "member_count": 1,
            "rate_limit_per_user": 0,
            "flags": 0,
            "thread_metadata": metadata,
        }
        return 201, copy.deepcopy(thread)

    @staticmethod
    def _public(message: dict) -> dict:
        """A stored message as Discord answers with it: the `allowed_mentions` asked for is no part of it."""
        return {k: v for k, v in copy.deepcopy(message).items() if k != "allowed_mentions"}

    def _history(self, params, query, body):
        stored = self._channel(params["channel"])
        self.history_asked.append({"channel": params["channel"], **query})
        try:
            limit = int(query.get("limit", 50))
        except ValueError:
            raise Refused(400, 50035, "Invalid Form Body: limit") from None
        if not 1 <= limit <= 100:
            raise Refused(400, 50035, "Invalid Form Body: limit: int value should be between 1 and 100.")
        newest_first = sorted(stored, key=lambda m: int(m["id"]), reverse=True)
        if "before" in query:
            newest_first = [m for m in newest_first if int(m["id"]) < int(query["before"])]
        if "after" in query:
            # Discord gives the messages just after `after`, still newest first.
            after = [m for m in newest_first if int(m["id"]) > int(query["after"])]
            return 200, [self._public(m) for m in after[-limit:]]
        return 200, [self._public(m) for m in newest_first[:limit]]

    def _edit_message(self, params, query, body):
        stored = self._channel(params["channel"])
        check_message(body, where="edit")
        for message in stored:
            if message["id"] == params["message"]:
                for key in ("content", "embeds", "components", "allowed_mentions"):
                    if key in body:
                        message[key] = body[key]
                message["edited_timestamp"] = _now()
                return 200, self._public(message)
        raise Refused(404, 10008, "Unknown Message")

    def _dm(self, params, query, body):
        user = (body or {}).get("recipient_id")
        if user not in self._users:
            raise Refused(400, 50035, "Invalid Form Body: recipient_id: Value is not snowflake.")
        if user not in self._dms:
            self._dms[user] = self._id()
            self._channels[self._dms[user]] = []
        channel = self._dms[user]
        last = self._channels[channel][-1]["id"] if self._channels[channel] else None
        return 200, {"id": channel, "type": 1, "last_message_id": last, "flags": 0, "recipients": [user_object(user)]}

    def _user(self, params, query, body):
        user = self._users.get(params["user"])
        if user is None:
            raise Refused(404, 10013, "Unknown User")
        return 200, user_object(params["user"], global_name=user.get("name"))

    def _channel_object(self, params, query, body):
        """A text channel of the server GUILD (resources/channel.md), for a channel the stand-in has."""
        self._channel(params["channel"])
        return 200, {
            "id": params["channel"],
            "type": 0,
            "guild_id": self._guild_of.get(params["channel"], GUILD),
            "name": "reading-group",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
        }

    def _member(self, params, query, body):
        """A guild member object (resources/guild.md: the fields always there)."""
        if params["guild"] in self._removed or params["guild"] not in self.guilds:
            raise Refused(403, 50001, "Missing Access")
        user = self._users.get(params["user"])
        if user is None or user.get("member") is False or params["guild"] not in user.get("guilds", self.guilds):
            raise Refused(404, 10007, "Unknown Member")
        return 200, {
            "user": self._user(params, query, body)[1],
            "nick": user.get("nick"),
            "avatar": None,
            "banner": None,
            "roles": [],
            "joined_at": self._opened,
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "communication_disabled_until": None,
        }

    def interested(self, event_id: str, *users: str, marked: bool = True) -> None:
        """Members press (or, `marked=False`, take back) "Interested" on an event in Discord's client."""
        with self._lock:
            marks = self.interest.setdefault(event_id, set())
            if marked:
                marks.update(users)
            else:
                marks.difference_update(users)

    def _list_events(self, params, query, body):
        counted = query.get("with_user_count") == "true"
        return 200, [
            {**copy.deepcopy(e), **({"user_count": len(self.interest.get(e["id"], ()))} if counted else {})}
            for e in self.events.get(params["guild"], {}).values()
        ]

    def _event_users(self, params, query, body):
        """Who is Interested in an event (resources/guild-scheduled-event.md), by user id ascending,
        `limit` (at most 100) after `after` (or before `before`, newest first)."""
        if params["event"] not in self.events.get(params["guild"], {}):
            raise Refused(404, 10070, "Unknown Guild Scheduled Event")
        limit = min(int(query.get("limit") or 100), 100)
        users = sorted(self.interest.get(params["event"], ()), key=int)
        if query.get("before"):
            users = [u for u in users if int(u) < int(query["before"])][-limit:]
        else:
            users = [u for u in users if int(u) > int(query.get("after") or 0)][:limit]
        return 200, [{"guild_scheduled_event_id": params["event"], "user": user_object(u)} for u in users]

    def _create_event(self, params, query, body):
        """A guild scheduled event object (resources/guild-scheduled-event.md), made by the bot."""
        check_event(body)
        server = self.events.setdefault(params["guild"], {})
        if len(server) >= MAX_EVENTS:
            raise Refused(400, 30038, "Maximum number of guild events reached (100)")
        event = {
            "id": self._id(),
            "guild_id": params["guild"],
            "channel_id": None,
            "creator_id": APP_ID,
            "creator": copy.deepcopy(BOT_USER),
            "name": body["name"],
            "description": body.get("description"),
            "scheduled_start_time": body["scheduled_start_time"],
            "scheduled_end_time": body["scheduled_end_time"],
            "privacy_level": body["privacy_level"],
            "status": 1,
            "entity_type": body["entity_type"],
            "entity_id": None,
            "entity_metadata": copy.deepcopy(body["entity_metadata"]),
            "image": None,
            "recurrence_rule": None,
        }
        server[event["id"]] = event
        return 200, copy.deepcopy(event)

    def _edit_event(self, params, query, body):
        event = self.events.get(params["guild"], {}).get(params["event"])
        if event is None:
            raise Refused(404, 10070, "Unknown Guild Scheduled Event")
        check_event(body, partial=True)
        fixed = {"id", "guild_id", "creator_id", "creator", "entity_id"}
        event.update({k: copy.deepcopy(v) for k, v in body.items() if k in event and k not in fixed})
        return 200, copy.deepcopy(event)

    def _delete_event(self, params, query, body):
        if self.events.get(params["guild"], {}).pop(params["event"], None) is None:
            raise Refused(404, 10070, "Unknown Guild Scheduled Event")
        return 204, None

    def _callback(self, params, query, body):
        token = params["token"]
        if token in self._answered:
            raise Refused(400, 40060, "Interaction has already been acknowledged.")
        if not isinstance(body, dict) or body.get("type") not in (1, 4, 5, 6, 7, 8, 9):
            raise Refused(400, 50035, "Invalid Form Body: type")
        data = body.get("data") or {}
        if body["type"] in (4, 7):
            check_message(data, where="message" if body["type"] == 4 else "edit")
        if body["type"] == 9:
            check_modal(data)
        if body["type"] == 8 and len(data.get("choices") or []) > 25:
            raise Refused(400, 50035, "Invalid Form Body: data.choices: Must be 25 or fewer in length.")
        self._answered[token] = {"token": token, **copy.deepcopy(body)}
        if body["type"] in (4, 5):
            self._originals[token] = copy.deepcopy(data)
        if query.get("with_response") != "true":
            return 204, None
        # The interaction callback response: the interaction's type, as the answer tells it (the
        # stand-in keeps no interactions), and the message an answer of type 4 or 7 made.
        kind = {8: 4, 6: 3, 7: 3}.get(body["type"], 2)
        callback = {"id": params["interaction"], "type": kind, "response_message_loading": body["type"] == 5}
        callback["response_message_ephemeral"] = bool((data.get("flags") or 0) & EPHEMERAL)
        answer: dict = {"interaction": callback}
        if body["type"] in (4, 7):
            message = message_object(self._id(), "1000000000000000003", data)
            callback["response_message_id"] = message["id"]
            answer["resource"] = {"type": body["type"], "message": message}
        else:
            answer["resource"] = {"type": body["type"]}
        return 200, answer

    def _edit_original(self, params, query, body):
        token = params["token"]
        if token not in self._originals:
            raise Refused(404, 10015, "Unknown Webhook")
        check_message(body, where="edit")
        self._originals[token].update(copy.deepcopy(body))
        return 200, message_object(self._id(), "1000000000000000003", self._originals[token])

    def _followup(self, params, query, body):
        if params["token"] not in self._answered:
            raise Refused(404, 10015, "Unknown Webhook")
        check_message(body)
        self._followups.append({"token": params["token"], **copy.deepcopy(body)})
        return 200, message_object(self._id(), "1000000000000000003", body)


def _guilds_intent(identify: dict) -> bool:
    """Did an IDENTIFY ask for the GUILDS intent (1 << 0): servers' GUILD_CREATE and GUILD_DELETE?"""
    return bool(int(identify.get("intents") or 0) & 1)


class _Link:
    """One Gateway connection: JSON text frames, or with `compress=zlib-stream` (or `zstd-stream`) in
    its URL, as hikari asks, binary frames of one compressed stream, each message flushed whole
    (Discord's transport compression, topics/gateway.md)."""

    def __init__(self, ws):
        self.ws = ws
        asked = ws.request.path or ""
        self._pack: Callable[[bytes], bytes] | None = None
        if "compress=zlib-stream" in asked:
            stream = zlib.compressobj()
            self._pack = lambda data: stream.compress(data) + stream.flush(zlib.Z_SYNC_FLUSH)
        elif "compress=zstd-stream" in asked:  # what hikari asks on Python 3.14, or with backports.zstd
            try:
                from compression import zstd
            except ImportError:
                from backports import zstd
            frames = zstd.ZstdCompressor()
            self._pack = lambda data: frames.compress(data) + frames.flush(zstd.ZstdCompressor.FLUSH_BLOCK)
        self._lock = threading.Lock()

    def send(self, payload: dict) -> None:
        data = json.dumps(payload)
        with self._lock:
            self.ws.send(data if self._pack is None else self._pack(data.encode()))


#: A server holds at most this many scheduled events (Discord's code 30038 past it).
MAX_EVENTS = 100


def check_event(body: Any, *, partial: bool = False) -> None:
    """A scheduled event as Discord takes it: external (entity_type 3) needs a location and an end."""
    if not isinstance(body, dict):
        raise Refused(400, 50035, "Invalid Form Body")
    if (not partial or "name" in body) and (not isinstance(body.get("name"), str) or not 1 <= len(body["name"]) <= 100):
        raise Refused(400, 50035, "Invalid Form Body: name: Must be between 1 and 100 in length.")
    if len(body.get("description") or "") > 1000:
        raise Refused(400, 50035, "Invalid Form Body: description: Must be 1000 or fewer in length.")
    if not partial and body.get("privacy_level") != 2:
        raise Refused(400, 50035, "Invalid Form Body: privacy_level")
    if not partial or "entity_type" in body:
        if body.get("entity_type") != 3:
            raise Refused(400, 50035, "Invalid Form Body: entity_type (the stand-in takes external events)")
        location = (body.get("entity_metadata") or {}).get("location")
        if not isinstance(location, str) or not 1 <= len(location) <= 100:
            raise Refused(400, 50035, "Invalid Form Body: entity_metadata.location")
    times = {}
    for key in ("scheduled_start_time", "scheduled_end_time"):
        if key in body or not partial:
            try:
                times[key] = datetime.fromisoformat(str(body.get(key)))
            except ValueError:
                raise Refused(400, 50035, f"Invalid Form Body: {key}") from None
            if times[key].tzinfo is None:
                raise Refused(400, 50035, f"Invalid Form Body: {key}: no time zone")
    if len(times) == 2 and times["scheduled_end_time"] <= times["scheduled_start_time"]:
        raise Refused(400, 50035, "Invalid Form Body: scheduled_end_time: before the start")
    if "scheduled_start_time" in times and times["scheduled_start_time"] < datetime.now(UTC):
        raise Refused(400, 50035, "Invalid Form Body: scheduled_start_time: Cannot schedule event in the past.")


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    standin: DiscordStandin


class _HttpHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        standin = self.server.standin
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():  # aiohttp's multipart bodies
            raw = self._chunks()
        try:
            kind = self.headers.get("Content-Type") or ""
            body = standin.uploaded(kind, raw) if kind.startswith("multipart/") else json.loads(raw) if raw else None
        except Refused as e:
            self._reply(e.status, {"message": e.message, "code": e.code}, {})
            return
        except ValueError:
            self._reply(400, {"message": "The request body contains invalid JSON.", "code": 50109}, {})
            return
        status, response, headers, hang, route = standin.handle(
            method, url.path, dict(parse_qsl(url.query)), body, self.headers.get("Authorization")
        )
        standin._record(Call(route, method, url.path, body, status, response))
        if hang:
            time.sleep(hang)  # done, and no answer in time: the client gives up
            self.close_connection = True
            return
        time.sleep(headers.pop("late", 0.0))  # done, and answered late: what it says may be stale by then
        self._reply(status, response, headers)

    def _chunks(self) -> bytes:
        """A body sent in chunks (Transfer-Encoding: chunked): each a hex size line, its bytes, CRLF."""
        out = b""
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            out += self.rfile.read(size)
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers, up to the empty line
            pass
        return out

    def _reply(self, status: int, body: Any, headers: dict) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
