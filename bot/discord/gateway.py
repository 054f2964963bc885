"""Discord's Gateway, for interactions without a public URL (like Slack's Socket Mode), through
hikari's GatewayBot.

    gateway = Gateway(rest, token, on_interaction, stop)
    threading.Thread(target=gateway.run).start()
    gateway.ready.wait(30)

hikari's GatewayBot runs in the REST clients' event loop (bot.discord.rest.loop): it asks
`GET /gateway/bot` on DISCORD_API_URL, identifies with no intents (interactions need none), keeps
the heartbeats, resumes a dropped session or identifies again, and backs off while Discord is out
of reach. paperbot takes no entities from it: each INTERACTION_CREATE's raw payload (hikari's
ShardPayloadEvent) goes to `on_interaction`, as the HTTP door's bodies do. A token Discord refuses
(401, or close code 4004) ends it: `fatal` says why.

A hosted install (`on_guild` given) also asks for the GUILDS intent, and hands each GUILD_CREATE
(the bot is in a server: at each start, and when it is added) and GUILD_DELETE (removed, or out of
reach in an outage: `unavailable`) to `on_guild`. hikari starts as many shards as `GET /gateway/bot`
recommends (one below 2,500 servers), all in this process, and caches nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable

import hikari

from bot.discord import rest as discord_rest

log = logging.getLogger(__name__)

#: Close codes after which connecting again cannot help.
FATAL = {
    4004: "DISCORD_TOKEN: Discord refused it for the Gateway (4004 authentication failed)",
    4010: "the Gateway refused the shard (4010)",
    4011: "the bot is in too many servers for one connection (4011: sharding required)",
    4012: "the Gateway refused the API version (4012)",
    4013: "the Gateway refused the intents (4013)",
    4014: "the Gateway refused a privileged intent (4014)",
}
LONGEST_WAIT = 60.0


#: The Gateway events a hosted install reads besides interactions: the bot added to or removed from a server.
GUILD_EVENTS = ("GUILD_CREATE", "GUILD_DELETE")


class Gateway:
    def __init__(
        self,
        rest,
        token: str,
        on_interaction: Callable[[dict, float], None],
        stop: threading.Event,
        on_guild: Callable[[str, dict], None] | None = None,
    ):
        self.rest, self.token, self.on_interaction, self.stop = rest, token, on_interaction, stop
        self.on_guild = on_guild
        self.ready = threading.Event()
        self.fatal: str | None = None
        self.bot_user: dict | None = None
        self._bot: hikari.GatewayBot | None = None

    def run(self) -> None:
        """Keep a session open until `stop` is set or Discord refuses the bot for good."""
        loop = discord_rest.loop()
        wait = 1.0
        while not self.stop.is_set():
            try:
                asyncio.run_coroutine_threadsafe(self._session(), loop.loop).result()
                wait = 1.0
            except hikari.UnauthorizedError as e:
                self.fatal = f"DISCORD_TOKEN: Discord refused it (HTTP 401: {e.message})"
                break
            except hikari.GatewayServerClosedConnectionError as e:
                fatal = FATAL.get(e.code) if e.code is not None else None
                if fatal is not None or not e.can_reconnect:
                    self.fatal = fatal or f"the Gateway closed the connection for good ({e.code}: {e})"
                    break
                log.warning("the Gateway closed the connection (%s); connecting again in %g s", e, wait)
            except (hikari.HTTPError, hikari.GatewayError, OSError, TimeoutError) as e:
                if self.stop.is_set():
                    break
                log.warning("cannot reach the Gateway (%s: %s); trying again in %g s", type(e).__name__, e, wait)
            if self.stop.wait(wait * random.uniform(0.8, 1.2)):
                break
            wait = min(wait * 2, LONGEST_WAIT)
        self.ready.set()  # whoever waits for it learns the outcome from `fatal` or `stop`

    async def _session(self) -> None:
        bot = hikari.GatewayBot(
            self.token,
            rest_url=self.rest.api_url,
            # Interactions need no intent; a hosted install's servers come and go with GUILDS (not privileged).
            intents=hikari.Intents.GUILDS if self.on_guild is not None else hikari.Intents.NONE,
            cache_settings=hikari.impl.CacheSettings(components=hikari.api.CacheComponents.NONE),
            banner=None,
            suppress_optimization_warning=True,
        )
        bot.subscribe(hikari.ShardPayloadEvent, self._payload)
        bot.subscribe(hikari.ShardReadyEvent, self._ready)
        self._bot = bot
        try:
            if self.stop.is_set():
                return
            await bot.start(check_for_updates=False)
            await bot.join()
        finally:
            self._bot = None
            if bot.is_alive:
                with contextlib.suppress(hikari.ComponentStateConflictError):  # `close` from another thread first
                    await bot.close()

    async def _payload(self, event: hikari.ShardPayloadEvent) -> None:
        if event.name == "INTERACTION_CREATE":
            self.on_interaction(dict(event.payload), time.monotonic())
        elif event.name in GUILD_EVENTS and self.on_guild is not None:
            self.on_guild(event.name, dict(event.payload))

    async def _ready(self, event: hikari.ShardReadyEvent) -> None:
        self.bot_user = {"id": str(event.my_user.id), "username": event.my_user.username}
        log.info("connected to the Discord Gateway as %s", event.my_user.username)
        self.ready.set()

    def close(self) -> None:
        bot = self._bot
        if bot is not None and bot.is_alive:
            # Closed already, or stuck: run ends it.
            with contextlib.suppress(hikari.ComponentStateConflictError, TimeoutError):
                asyncio.run_coroutine_threadsafe(bot.close(), discord_rest.loop().loop).result(5)
