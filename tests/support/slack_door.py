"""The HTTP door serving a Slack harness's Bolt app: a real waitress server in a thread of the test's
process, and raw requests to it."""

from __future__ import annotations

import json
import socket
import threading

from bot.slack.serve import http_server
from bot.web import http_door
from tests.support.slack_group import SECRET
from tests.support.slack_harness import sign, slash_form


class Door:
    """http_server for a harness's app, run in a thread; raw requests to it."""

    def __init__(self, harness, application=None, **limits):
        self.h = harness
        # Port 0: the server binds a port of its own, which no other test can take between a look and a bind.
        if application is None:
            self.server = http_server(harness.app, 0, SECRET, host="127.0.0.1", **limits)
        else:
            self.server = http_door.http_server(application, 0, "127.0.0.1", **limits)
        self.port = int(self.server.effective_port)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()

    def raw(self, head: bytes, body: bytes = b"", timeout: float = 5) -> tuple[int, bytes]:
        """Send a request of `head` (request line and headers, without the blank line) and `body`."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            sock.sendall(head + b"\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
        return status, data.split(b"\r\n\r\n", 1)[-1]

    def post(self, body: str | bytes, headers: dict[str, str | bytes], timeout: float = 5) -> tuple[int, bytes]:
        raw = body.encode() if isinstance(body, str) else body
        head = b"POST /slack/events HTTP/1.1\r\nHost: paperbot"
        for name, value in headers.items():
            head += b"\r\n" + name.encode() + b": " + (value if isinstance(value, bytes) else value.encode("latin-1"))
        return self.raw(head, raw, timeout)

    def command(self, text: str, user: str = "U1") -> tuple[int, dict]:
        body = slash_form(text, user, self.h.slack.response_url())
        status, data = self.post(body, sign(body))
        return status, (json.loads(data) if status == 200 and data else {})

    def close(self) -> None:
        from waitress import wasyncore

        self.server.close()
        self.server.task_dispatcher.shutdown()
        wasyncore.close_all(self.server._map)  # the loop ends with nothing left to watch
        self.thread.join(5)
