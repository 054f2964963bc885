"""Discord's REST API through hikari's REST client, called synchronously from the bot's threads.

    rest = Rest(settings.api_url, settings.token)
    message = rest.post("1000000000000000003", {"content": "hi", "allowed_mentions": {"parse": []}})
    rest.call("POST", f"/channels/{channel}/messages", {"content": "hi"})   # the same, by route

hikari's client is asyncio, and the scheduler, the outbox and waitress each run in threads: every
Rest of the process submits its requests to ONE event loop in a thread of its own (`loop()`), and
waits for the answer with a deadline (`timeout`). Bodies stay Discord's JSON, as bot.discord.render
builds them; they are handed to hikari's typed calls (embeds as hikari Embeds, components as they
are), and what callers read of hikari's entities is given back as Discord's JSON.

Every failure is one of delivery's: Rejected (Discord refused; `code` is Discord's error code as
text, "50007"), RateLimited (429, with Discord's `retry_after`), Unreachable (nothing listens), or
Uncertain (a timeout, a dropped connection, a 5xx: Discord may have done it). hikari retries nothing
here (`max_retries=0`) but a rate limit of at most `max_rate_limit` seconds, which it waits out
itself inside the deadline; a longer one is the caller's: the weekly post's delivery, the outbox
and the answers each decide for themselves.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import math
import re
import threading
from collections.abc import Awaitable, Callable, Coroutine
from datetime import datetime
from typing import Any

import aiohttp
import hikari
from hikari.impl import buckets, entity_factory, special_endpoints

from bot.delivery.sending import RateLimited, Rejected, Uncertain, Unreachable

TIMEOUT = 20.0
#: The key of a message body's files, each (name, bytes): not Discord's JSON, sent beside it; the first is
#: shown as the first embed's image, where there is an embed.
FILES = "files"
#: Rate limits hikari waits out by itself; longer ones go back to the caller as RateLimited.
MAX_RATE_LIMIT = 1.0

#: What an operator should do about Discord's refusals, in words.
ADVICE = {
    "0": "Discord refused the token: check DISCORD_TOKEN",
    "10003": "no such channel: check PAPERBOT_CHANNEL",
    "50001": "the bot cannot see the channel: give it View Channel there",
    "50013": "the bot lacks a permission in the channel (Send Messages, Embed Links, Read Message History)",
    "50007": "the member takes no direct messages from the bot",
}


class _Rates(buckets.RESTBucketManager):
    """hikari's rate-limit buckets, reading `X-RateLimit-Remaining: 0` as Discord means it: nothing
    more until `X-RateLimit-Reset-After` has passed. hikari's own reading is a window that slides,
    one request back every reset-after / limit seconds: after a 429 of `retry_after` 1.5 s on a
    bucket of 5 it tries again after 0.3 s."""

    def update_rate_limits(
        self, compiled_route, authentication, bucket_header, remaining_header, limit_header, reset_at, reset_after
    ) -> None:
        if remaining_header <= 0:
            limit_header = 1  # one request a reset-after: the whole wait before the next
        super().update_rate_limits(
            compiled_route, authentication, bucket_header, remaining_header, limit_header, reset_at, reset_after
        )


class _Provider:
    """What hikari's entity factory asks of the application it makes entities for: its REST client."""

    executor = None
    #: Set once the client exists: it needs the entity factory made here first.
    rest: hikari.api.RESTClient

    def __init__(self) -> None:
        self.entity_factory = entity_factory.EntityFactoryImpl(self)

    @property
    def http_settings(self):
        return self.rest.http_settings

    @property
    def proxy_settings(self):
        return self.rest.proxy_settings


class _Loop:
    """The one asyncio event loop of the process's Discord REST clients, in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.clients: list = []
        self.thread = threading.Thread(target=self.loop.run_forever, name="paperbot-discord-rest", daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, Any], timeout: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout + 5)  # the coroutine keeps the deadline; this is a backstop
        except TimeoutError:
            future.cancel()
            raise Uncertain("no answer from Discord in time") from None

    def stop(self) -> None:
        async def close() -> None:
            for client in self.clients:
                await client.close()
            # What is left (hikari leaves a shard's heartbeat behind when its first IDENTIFY is refused)
            # is cancelled, so that the loop ends with nothing pending.
            left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)

        if self.loop.is_running():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(close(), self.loop).result(5)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)


_lock = threading.Lock()
_running: _Loop | None = None


def loop() -> _Loop:
    """The process's REST loop thread, started at first use."""
    global _running
    with _lock:
        if _running is None:
            _running = _Loop()
        return _running


@atexit.register
def shutdown() -> None:
    """Close every client and end the loop thread (`run` calls it when it stops; so does exit)."""
    global _running
    with _lock:
        running, _running = _running, None
    if running is not None:
        running.stop()


class Raw(hikari.api.ComponentBuilder):
    """A component (an action row with its buttons, or a modal's row with its text input) that is
    already Discord's JSON, as bot.discord.render builds it: hikari sends it as it is."""

    __slots__ = ("payload",)

    def __init__(self, payload: dict):
        self.payload = payload

    @property
    def type(self) -> int:
        return self.payload["type"]

    @property
    def id(self):
        return self.payload.get("id", hikari.UNDEFINED)

    def build(self):
        return self.payload, ()


def _mentions(body: dict) -> dict:
    """hikari's mention arguments for a body's `allowed_mentions` (none given: nobody is pinged)."""
    allowed = body.get("allowed_mentions") or {}
    parse = set(allowed.get("parse") or [])
    return {
        "mentions_everyone": "everyone" in parse,
        "user_mentions": True if "users" in parse else list(allowed.get("users") or []) or False,
        "role_mentions": True if "roles" in parse else list(allowed.get("roles") or []) or False,
    }


def message_json(message: hikari.Message, factory) -> dict:
    """What callers read of a message, as Discord's JSON."""
    return {
        "id": str(message.id),
        "channel_id": str(message.channel_id),
        "author": {"id": str(message.author.id), "bot": message.author.is_bot},
        "content": message.content or "",
        "embeds": [factory.serialize_embed(e)[0] for e in message.embeds],
        "timestamp": message.timestamp.isoformat(),
    }


def user_json(user: hikari.User) -> dict:
    """What callers read of a user, as Discord's JSON."""
    return {"id": str(user.id), "username": user.username, "global_name": user.global_name, "bot": user.is_bot}


def member_json(member: hikari.Member) -> dict:
    """What callers read of a server member, as Discord's JSON."""
    return {"user": user_json(member.user), "nick": member.nickname}


def event_json(event: hikari.ScheduledEvent) -> dict:
    """What callers read of a scheduled event, as Discord's JSON."""
    location = getattr(event, "location", None)  # external events only; stage and voice ones have a channel
    channel = getattr(event, "channel_id", None)
    return {
        "id": str(event.id),
        "guild_id": str(event.guild_id),
        "channel_id": str(channel) if channel else None,
        "name": event.name,
        "description": event.description,
        "scheduled_start_time": event.start_time.isoformat(),
        "scheduled_end_time": event.end_time.isoformat() if event.end_time else None,
        "privacy_level": int(event.privacy_level),
        "status": int(event.status),
        "entity_type": int(event.entity_type),
        "entity_metadata": {"location": location} if location is not None else None,
        "user_count": event.user_count,  # those Interested: hikari always asks for it
    }


def _event_args(body: dict) -> dict:
    """hikari's arguments for the fields a scheduled event's body gives (Discord's JSON, as
    bot.discord.events builds it)."""
    args: dict[str, Any] = {}
    for field, arg in (("name", "name"), ("description", "description"), ("privacy_level", "privacy_level")):
        if field in body:
            args[arg] = body[field]
    for field, arg in (("scheduled_start_time", "start_time"), ("scheduled_end_time", "end_time")):
        if field in body:
            args[arg] = datetime.fromisoformat(body[field]) if body[field] is not None else None
    if "entity_type" in body:
        args["entity_type"] = body["entity_type"]
    if "location" in (body.get("entity_metadata") or {}):
        args["location"] = body["entity_metadata"]["location"]
    if "status" in body:
        args["status"] = body["status"]
    return args


def _option(o: dict) -> hikari.CommandOption:
    return hikari.CommandOption(
        type=o["type"],
        name=o["name"],
        description=o["description"],
        is_required=bool(o.get("required")),
        autocomplete=bool(o.get("autocomplete")),
        choices=[hikari.CommandChoice(name=c["name"], value=c["value"]) for c in o["choices"]]
        if o.get("choices")
        else None,
        options=[_option(s) for s in o["options"]] if "options" in o else None,
        min_length=o.get("min_length"),
        max_length=o.get("max_length"),
    )


def command_builder(c: dict) -> special_endpoints.SlashCommandBuilder:
    """A slash command as bot.discord.definition writes it, for hikari's bulk overwrite."""
    builder = special_endpoints.SlashCommandBuilder(
        name=c["name"], description=c["description"], options=[_option(o) for o in c.get("options") or []]
    )
    if "integration_types" in c:
        builder.set_integration_types([hikari.ApplicationIntegrationType(t) for t in c["integration_types"]])
    if "contexts" in c:
        builder.set_context_types([hikari.ApplicationContextType(t) for t in c["contexts"]])
    if "default_member_permissions" in c:
        builder.set_default_member_permissions(int(c["default_member_permissions"]))
    return builder


def _refusal(e: hikari.ClientHTTPResponseError) -> Rejected:
    code = str(e.code) if e.code is not None else ""
    advice = ADVICE.get(code)
    said = e.message or "no message"
    text = f"HTTP {e.status}, code {code or '?'}: {said}" + (f" ({advice})" if advice else "")
    return Rejected(" ".join(text.split())[:300], code=code or str(e.status))


class Rest:
    def __init__(
        self, api_url: str, token: str | None, timeout: float = TIMEOUT, max_rate_limit: float = MAX_RATE_LIMIT
    ):
        self.api_url = api_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.max_rate_limit = max_rate_limit
        self._client: hikari.api.RESTClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    # -- the loop ------------------------------------------------------------------------

    async def _started(self) -> hikari.api.RESTClient:
        if self._client is not None and self._client_loop is not asyncio.get_running_loop():
            self._client = None  # made in a loop that `shutdown` has ended since: a new one here
        if self._client is None:
            provider = _Provider()
            client = hikari.impl.RESTClientImpl(
                cache=None,
                entity_factory=provider.entity_factory,
                executor=None,
                http_settings=hikari.impl.HTTPSettings(),
                proxy_settings=hikari.impl.ProxySettings(),
                bucket_manager=_Rates(self.max_rate_limit),
                max_retries=0,
                token=self.token,
                token_type=hikari.TokenType.BOT if self.token else None,
                rest_url=self.api_url,
            )
            provider.rest = client
            client.start()
            self._client_loop = asyncio.get_running_loop()
            loop().clients.append(client)
            self._client = client
        return self._client

    def _run(self, work: Callable[[hikari.api.RESTClient], Awaitable[Any]], timeout: float | None = None) -> Any:
        deadline = timeout or self.timeout

        async def timed() -> Any:
            try:
                async with asyncio.timeout(deadline):
                    return await work(await self._started())
            except TimeoutError:
                raise Uncertain(f"no answer from Discord within {deadline:g} s") from None
            except hikari.RateLimitTooLongError as e:  # hikari counts from Discord's reset time: whole 10 ms up
                raise RateLimited(math.ceil(e.retry_after * 100) / 100) from None
            except hikari.InternalServerError as e:
                raise Uncertain(f"Discord answered HTTP {e.status}") from None
            except hikari.ClientHTTPResponseError as e:
                raise _refusal(e) from None
            except hikari.HTTPResponseError as e:  # an answer of a shape Discord does not give
                if int(e.status) >= 500:
                    raise Uncertain(f"Discord answered HTTP {int(e.status)}") from None
                raise Rejected(f"HTTP {int(e.status)}: {e.message}"[:300], code=str(int(e.status))) from None
            except (KeyError, hikari.UnrecognisedEntityError) as e:  # done, perhaps, but unreadable
                raise Uncertain(f"Discord's answer could not be read ({type(e).__name__}: {e})") from None
            except hikari.HTTPError as e:  # no HTTP answer: refused before sending, or lost after
                cause = e.__cause__
                if isinstance(cause, aiohttp.ClientConnectorError):
                    raise Unreachable(f"cannot reach Discord ({cause})") from None
                raise Uncertain(f"no answer from Discord ({type(cause or e).__name__}: {cause or e})") from None

        return loop().run(timed(), deadline)

    # -- what the bot asks ---------------------------------------------------------------

    def me(self, timeout: float | None = None) -> dict:
        user = self._run(lambda c: c.fetch_my_user(), timeout)
        return {"id": str(user.id), "username": user.username, "bot": user.is_bot}

    def application(self, timeout: float | None = None) -> dict:
        app = self._run(lambda c: c.fetch_application(), timeout)
        return {"id": str(app.id), "name": app.name}

    def gateway_url(self, timeout: float | None = None) -> str:
        return self._run(lambda c: c.fetch_gateway_bot_info(), timeout).url

    def register(self, app_id: str, commands: list[dict], guild: str | None = None, timeout: float | None = None):
        builders = [command_builder(c) for c in commands]
        where = int(guild) if guild else hikari.UNDEFINED
        done = self._run(lambda c: c.set_application_commands(int(app_id), builders, where), timeout)
        return [{"id": str(c.id), "name": c.name} for c in done]

    def dm_channel(self, user: str, timeout: float | None = None) -> dict:
        channel = self._run(lambda c: c.create_dm_channel(int(user)), timeout)
        return {"id": str(channel.id), "type": 1}

    def _message_args(self, body: dict, factory) -> dict:
        args: dict[str, Any] = _mentions(body)
        if "content" in body:
            args["content"] = body["content"]
        if "embeds" in body:
            args["embeds"] = [factory.deserialize_embed(e) for e in body["embeds"] or []]
        if "components" in body:
            args["components"] = [Raw(r) for r in body["components"] or []]
        if body.get("flags"):
            args["flags"] = body["flags"]
        if body.get(FILES):  # sent as multipart/form-data, each file a part
            pictures = [hikari.Bytes(data, name) for name, data in body[FILES]]
            if args.get("embeds"):  # hikari attaches an embed's image itself, as attachment://name
                args["embeds"][0].set_image(pictures.pop(0))
            if pictures:
                args["attachments"] = pictures
        return args

    def post(self, channel: str, body: dict, timeout: float | None = None) -> dict:
        """Post a message; with `nonce` in `body`, hikari sends it with `enforce_nonce`."""

        async def work(c):
            args = self._message_args(body, c.entity_factory)
            if body.get("nonce"):
                args["nonce"] = str(body["nonce"])
            return message_json(await c.create_message(int(channel), **args), c.entity_factory)

        return self._run(work, timeout)

    def edit(self, channel: str, message: str, body: dict, timeout: float | None = None) -> dict:
        async def work(c):
            args = self._message_args(body, c.entity_factory)
            return message_json(await c.edit_message(int(channel), int(message), **args), c.entity_factory)

        return self._run(work, timeout)

    def create_thread(self, channel: str, message: str, name: str, timeout: float | None = None) -> dict:
        """A public thread on message `message` of `channel` (its id is the message's)."""

        async def work(c):
            thread = await c.create_message_thread(int(channel), int(message), name)
            return {"id": str(thread.id), "name": thread.name}

        return self._run(work, timeout)

    def history(
        self,
        channel: str,
        limit: int = 100,
        before: str | None = None,
        timeout: float | None = None,
        *,
        after: str | None = None,
    ):
        """Up to `limit` messages of `channel`: newest first (before the message `before`), or with
        `after` (a message's id, or a time's: transport.snowflake) the ones just after it, oldest first."""

        async def work(c):
            if after is not None:
                found = c.fetch_messages(int(channel), after=int(after))
            else:
                found = c.fetch_messages(int(channel), before=int(before) if before else hikari.UNDEFINED)
            return [message_json(m, c.entity_factory) for m in await found.limit(limit)]

        return self._run(work, timeout)

    def answer(self, interaction: str, token: str, response: dict, timeout: float | None = None) -> None:
        """An interaction's first answer (PONG aside), as bot.discord.app builds it."""
        kind, data = response["type"], response.get("data") or {}

        async def work(c):
            if kind == hikari.ResponseType.AUTOCOMPLETE:
                choices = [special_endpoints.AutocompleteChoiceBuilder(x["name"], x["value"]) for x in data["choices"]]
                await c.create_autocomplete_response(int(interaction), token, choices)
            elif kind == hikari.ResponseType.MODAL:
                rows = [Raw(r) for r in data["components"]]
                await c.create_modal_response(
                    int(interaction), token, title=data["title"], custom_id=data["custom_id"], components=rows
                )
            else:
                args = self._message_args(data, c.entity_factory)
                await c.create_interaction_response(int(interaction), token, kind, **args)

        self._run(work, timeout)

    def edit_original(self, app_id: str, token: str, body: dict, timeout: float | None = None) -> dict:
        async def work(c):
            args = self._message_args(body, c.entity_factory)
            args.pop("flags", None)
            return message_json(await c.edit_interaction_response(int(app_id), token, **args), c.entity_factory)

        return self._run(work, timeout)

    def user(self, user: str, timeout: float | None = None) -> dict:
        return user_json(self._run(lambda c: c.fetch_user(int(user)), timeout))

    def channel(self, channel: str, timeout: float | None = None) -> dict:
        """The channel's id, and its server's (none for a direct message's channel)."""
        found = self._run(lambda c: c.fetch_channel(int(channel)), timeout)
        guild = getattr(found, "guild_id", None)
        return {"id": str(found.id), **({"guild_id": str(guild)} if guild is not None else {})}

    def member(self, guild: str, user: str, timeout: float | None = None) -> dict:
        """`user` as a member of the server `guild` (Discord's 10007 when they are not one)."""
        return member_json(self._run(lambda c: c.fetch_member(int(guild), int(user)), timeout))

    def events(self, guild: str, timeout: float | None = None) -> list[dict]:
        """The server's scheduled events (those of a kind hikari does not know left out)."""
        return [event_json(e) for e in self._run(lambda c: c.fetch_scheduled_events(int(guild)), timeout)]

    def create_event(self, guild: str, body: dict, timeout: float | None = None) -> dict:
        """Make an external event (entity_type 3, the only kind paperbot makes) from Discord's JSON."""
        if body.get("entity_type") != hikari.ScheduledEventType.EXTERNAL:
            raise ValueError(f"only external events (entity_type 3) here, not {body.get('entity_type')!r}")
        args = _event_args(body)
        args.pop("entity_type")
        name, location, start, end = (args.pop(k) for k in ("name", "location", "start_time", "end_time"))
        made = self._run(lambda c: c.create_external_event(int(guild), name, location, start, end, **args), timeout)
        return event_json(made)

    def edit_event(self, guild: str, event: str, body: dict, timeout: float | None = None) -> dict:
        """Change the fields `body` gives of a scheduled event (Discord's 10070 when it is gone)."""
        args = _event_args(body)
        return event_json(self._run(lambda c: c.edit_scheduled_event(int(guild), int(event), **args), timeout))

    def event_users(self, guild: str, event: str, timeout: float | None = None) -> list[str]:
        """The ids of the members Interested in a scheduled event (Discord pages them a hundred at a time)."""

        async def users(c: hikari.api.RESTClient) -> list[str]:
            return [str(u.user.id) async for u in c.fetch_scheduled_event_users(int(guild), int(event))]

        return self._run(users, timeout)

    def delete_event(self, guild: str, event: str, timeout: float | None = None) -> None:
        self._run(lambda c: c.delete_scheduled_event(int(guild), int(event)), timeout)

    def guilds(self, timeout: float | None = None) -> list[dict]:
        """Every server the bot is in, `{id, name}` (Discord pages them 200 at a time)."""

        async def every(c: hikari.api.RESTClient) -> list[dict]:
            return [{"id": str(g.id), "name": g.name} async for g in c.fetch_my_guilds()]

        return self._run(every, timeout)

    # -- by route, for callers that name Discord's paths ------------------------------------

    _ROUTES = [
        ("GET", r"/users/@me", lambda r, m, b, q, t: r.me(t)),
        ("GET", r"/users/@me/guilds", lambda r, m, b, q, t: r.guilds(t)),
        ("GET", r"/applications/@me", lambda r, m, b, q, t: r.application(t)),
        ("GET", r"/gateway/bot", lambda r, m, b, q, t: {"url": r.gateway_url(t)}),
        ("POST", r"/users/@me/channels", lambda r, m, b, q, t: r.dm_channel(b["recipient_id"], t)),
        ("GET", r"/users/(?P<u>\d+)", lambda r, m, b, q, t: r.user(m["u"], t)),
        ("GET", r"/channels/(?P<c>\d+)", lambda r, m, b, q, t: r.channel(m["c"], t)),
        ("GET", r"/guilds/(?P<g>\d+)/members/(?P<u>\d+)", lambda r, m, b, q, t: r.member(m["g"], m["u"], t)),
        ("GET", r"/guilds/(?P<g>\d+)/scheduled-events", lambda r, m, b, q, t: r.events(m["g"], t)),
        ("POST", r"/guilds/(?P<g>\d+)/scheduled-events", lambda r, m, b, q, t: r.create_event(m["g"], b, t)),
        (
            "GET",
            r"/guilds/(?P<g>\d+)/scheduled-events/(?P<e>\d+)/users",
            lambda r, m, b, q, t: r.event_users(m["g"], m["e"], t),
        ),
        (
            "PATCH",
            r"/guilds/(?P<g>\d+)/scheduled-events/(?P<e>\d+)",
            lambda r, m, b, q, t: r.edit_event(m["g"], m["e"], b, t),
        ),
        (
            "DELETE",
            r"/guilds/(?P<g>\d+)/scheduled-events/(?P<e>\d+)",
            lambda r, m, b, q, t: r.delete_event(m["g"], m["e"], t),
        ),
        ("POST", r"/channels/(?P<c>\d+)/messages", lambda r, m, b, q, t: r.post(m["c"], b, t)),
        (
            "GET",
            r"/channels/(?P<c>\d+)/messages",
            lambda r, m, b, q, t: r.history(
                m["c"], int((q or {}).get("limit", 50)), (q or {}).get("before"), t, after=(q or {}).get("after")
            ),
        ),
        ("PATCH", r"/channels/(?P<c>\d+)/messages/(?P<m>\d+)", lambda r, m, b, q, t: r.edit(m["c"], m["m"], b, t)),
        (
            "PUT",
            r"/applications/(?P<a>\d+)(?:/guilds/(?P<g>\d+))?/commands",
            lambda r, m, b, q, t: r.register(m["a"], b, m["g"], t),
        ),
        (
            "POST",
            r"/interactions/(?P<i>\d+)/(?P<t>[^/]+)/callback",
            lambda r, m, b, q, t: r.answer(m["i"], m["t"], b, t),
        ),
        (
            "PATCH",
            r"/webhooks/(?P<a>\d+)/(?P<t>[^/]+)/messages/@original",
            lambda r, m, b, q, t: r.edit_original(m["a"], m["t"], b, t),
        ),
    ]

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: dict | None = None,
        timeout: float | None = None,
        auth: bool = True,
    ) -> Any:
        """The route's answer as Discord's JSON (None for none); raises delivery's errors. `auth` is
        hikari's to decide: interaction callbacks and webhooks go without the bot's token."""
        for verb, pattern, go in self._ROUTES:
            found = re.fullmatch(pattern, path)
            if verb == method and found:
                return go(self, found, body, query, timeout)
        raise ValueError(f"no such Discord route here: {method} {path}")
