"""Discord's REST API, called synchronously from the bot's threads.

    rest = Rest(settings.api_url, settings.token)
    message = rest.call("POST", f"/channels/{channel}/messages", {"content": "hi"})

Every failure is one of delivery's: Rejected (Discord refused; `code` is Discord's error code as
text, "50007"), RateLimited (429, with Discord's `retry_after`), Unreachable (nothing listens), or
Uncertain (a timeout, a dropped connection, a 5xx: Discord may have done it). Nothing here
retries: the weekly post's delivery, the outbox and the answers each decide for themselves.

hikari's REST client is asyncio: the scheduler, the outbox and waitress's threads would each need
a loop to run it in. One request at a time over http.client is all paperbot asks of the API.
"""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any
from urllib.parse import urlencode, urlsplit

from bot.delivery import RateLimited, Rejected, Uncertain, Unreachable

TIMEOUT = 20.0
USER_AGENT = "DiscordBot (https://github.com/paperbot/paperbot, 0.1)"

#: What an operator should do about Discord's refusals, in words.
ADVICE = {
    "0": "Discord refused the token: check DISCORD_TOKEN",
    "10003": "no such channel: check PAPERBOT_CHANNEL",
    "50001": "the bot cannot see the channel: give it View Channel there",
    "50013": "the bot lacks a permission in the channel (Send Messages, Embed Links, Read Message History)",
    "50007": "the member takes no direct messages from the bot",
}


class Rest:
    def __init__(self, api_url: str, token: str | None, timeout: float = TIMEOUT):
        parts = urlsplit(api_url.rstrip("/"))
        self.https = parts.scheme == "https"
        self.host = parts.hostname or ""
        self.port = parts.port
        self.base = parts.path
        self.token = token
        self.timeout = timeout

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
        """The JSON Discord answers (None for 204); raises delivery's errors."""
        url = self.base + path + (f"?{urlencode(query)}" if query else "")
        headers = {"User-Agent": USER_AGENT}
        if auth and self.token:
            headers["Authorization"] = f"Bot {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        kind = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        conn = kind(self.host, self.port, timeout=timeout or self.timeout)
        try:
            try:
                conn.connect()
            except (ConnectionRefusedError, socket.gaierror) as e:  # certainly not sent
                raise Unreachable(f"cannot reach Discord ({e})") from None
            except OSError as e:  # a connect that timed out: nothing was sent either
                raise Unreachable(f"cannot reach Discord ({e.__class__.__name__}: {e})") from None
            try:
                conn.request(method, url, body=data, headers=headers)
                response = conn.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException) as e:  # sent, perhaps: Discord may have done it
                raise Uncertain(f"no answer from Discord ({e.__class__.__name__}: {e})") from None
        finally:
            conn.close()
        try:
            answer = json.loads(raw) if raw else None
        except ValueError:
            answer = None
        status = response.status
        if status < 300:
            return answer
        if status == 429:
            retry = answer.get("retry_after") if isinstance(answer, dict) else None
            if not isinstance(retry, int | float):
                try:
                    retry = float(response.getheader("Retry-After") or 5)
                except ValueError:
                    retry = 5.0
            raise RateLimited(float(retry))
        if status >= 500:
            raise Uncertain(f"Discord answered HTTP {status}")
        code = str(answer.get("code", "")) if isinstance(answer, dict) else ""
        said = answer.get("message", "") if isinstance(answer, dict) else ""
        advice = ADVICE.get(code)
        text = f"HTTP {status}, code {code or '?'}: {said or 'no message'}" + (f" ({advice})" if advice else "")
        raise Rejected(" ".join(text.split())[:300], code=code or str(status))
