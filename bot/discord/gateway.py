"""Discord's Gateway, for interactions without a public URL (like Slack's Socket Mode).

    gateway = Gateway(rest, token, on_interaction, stop)
    threading.Thread(target=gateway.run).start()
    gateway.ready.wait(30)

One connection, asked of `GET /gateway/bot` on DISCORD_API_URL: HELLO, IDENTIFY (no intents:
interactions need none), heartbeats at the interval Discord gives (a heartbeat not acknowledged
before the next is a dead connection: it is closed and opened again), and each
INTERACTION_CREATE handed to `on_interaction` in a worker. A dropped connection, RECONNECT or
INVALID_SESSION opens a new session after a short wait, doubling while it keeps failing. A token
Discord refuses (close code 4004) ends it: `fatal` says why.

JSON encoding, no compression; sessions are not resumed (an interaction sent while the connection
was down is lost either way: Discord tells the member that the app did not respond).
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.sync.client import connect

from bot.delivery import Rejected, Uncertain

log = logging.getLogger(__name__)

DISPATCH, HEARTBEAT, IDENTIFY, RECONNECT, INVALID_SESSION, HELLO, HEARTBEAT_ACK = 0, 1, 2, 7, 9, 10, 11
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


class Gateway:
    def __init__(self, rest, token: str, on_interaction: Callable[[dict, float], None], stop: threading.Event):
        self.rest, self.token, self.on_interaction, self.stop = rest, token, on_interaction, stop
        self.ready = threading.Event()
        self.fatal: str | None = None
        self.bot_user: dict | None = None
        self._ws = None
        self._send_lock = threading.Lock()

    def run(self) -> None:
        """Keep a session open until `stop` is set or Discord refuses the bot for good."""
        wait = 1.0
        while not self.stop.is_set():
            try:
                url = self.rest.gateway_url(timeout=10)
                self._session(url)
                wait = 1.0
            except (Rejected, Uncertain) as e:
                if isinstance(e, Rejected) and e.code in ("0", "401"):
                    self.fatal = f"DISCORD_TOKEN: Discord refused it ({e})"
                    break
                log.warning("cannot reach the Gateway: %s; trying again in %g s", e, wait)
            except _Fatal as e:
                self.fatal = str(e)
                break
            except (OSError, ConnectionClosed, InvalidHandshake, InvalidURI, TimeoutError, ValueError) as e:
                log.warning(
                    "the Gateway connection ended (%s: %s); connecting again in %g s", type(e).__name__, e, wait
                )
            if self.stop.wait(wait * random.uniform(0.8, 1.2)):
                break
            wait = min(wait * 2, LONGEST_WAIT)
        self.ready.set()  # whoever waits for it learns the outcome from `fatal` or `stop`

    def close(self) -> None:
        ws = self._ws
        if ws is not None:
            try:
                ws.close(1000)
            except Exception:
                pass

    def _send(self, ws, payload: dict) -> None:
        with self._send_lock:
            ws.send(json.dumps(payload))

    def _session(self, url: str) -> None:
        with connect(f"{url.rstrip('/')}/?v=10&encoding=json", open_timeout=10, close_timeout=2, max_size=2**24) as ws:
            self._ws = ws
            try:
                self._serve(ws)
            except ConnectionClosed as e:
                code = e.rcvd.code if e.rcvd is not None else None
                if code in FATAL:
                    raise _Fatal(FATAL[code]) from None
                raise
            finally:
                self._ws = None

    def _serve(self, ws) -> None:
        hello = json.loads(ws.recv(timeout=10))
        if hello.get("op") != HELLO:
            raise ValueError(f"the Gateway's first message was op {hello.get('op')}, not HELLO")
        interval = float(hello["d"]["heartbeat_interval"]) / 1000
        state = {"seq": None, "acked": True}
        beating = threading.Event()

        def heartbeat() -> None:
            # The first beat at a random point of the interval, as Discord asks, then every interval.
            delay = interval * random.random()
            while not beating.wait(delay):
                if not state["acked"]:  # no ACK since the last beat: a dead connection
                    log.warning("the Gateway did not acknowledge a heartbeat; connecting again")
                    ws.close(4000)
                    return
                state["acked"] = False
                try:
                    self._send(ws, {"op": HEARTBEAT, "d": state["seq"]})
                except ConnectionClosed:
                    return
                delay = interval

        beater = threading.Thread(target=heartbeat, name="paperbot-heartbeat", daemon=True)
        beater.start()
        try:
            identify = {
                "op": IDENTIFY,
                "d": {
                    "token": self.token,
                    "intents": 0,
                    "properties": {"os": "linux", "browser": "paperbot", "device": "paperbot"},
                },
            }
            self._send(ws, identify)
            while not self.stop.is_set():
                try:
                    raw = ws.recv(timeout=0.5)
                except TimeoutError:
                    continue
                arrived = time.monotonic()
                message = json.loads(raw)
                op = message.get("op")
                if message.get("s") is not None:
                    state["seq"] = message["s"]
                if op == HEARTBEAT_ACK:
                    state["acked"] = True
                elif op == HEARTBEAT:
                    self._send(ws, {"op": HEARTBEAT, "d": state["seq"]})
                elif op == RECONNECT:
                    log.info("the Gateway asked for a new connection")
                    return
                elif op == INVALID_SESSION:
                    log.info("the Gateway invalidated the session; identifying again")
                    self.stop.wait(random.uniform(1, 5))
                    return
                elif op == DISPATCH and message.get("t") == "READY":
                    self.bot_user = (message.get("d") or {}).get("user")
                    log.info("connected to the Discord Gateway as %s", (self.bot_user or {}).get("username", "?"))
                    self.ready.set()
                elif op == DISPATCH and message.get("t") == "INTERACTION_CREATE":
                    self.on_interaction(message.get("d"), arrived)
        finally:
            beating.set()


class _Fatal(Exception):
    pass
