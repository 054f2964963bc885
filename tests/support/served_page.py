"""The feeds and the group's page of a test group, served by the door's real waitress server on a free port.

yield from served_feeds(tmp_path, store, lambda calendars: feeds.around(None, calendars))
"""

from __future__ import annotations

import http.client
from datetime import UTC, datetime, timedelta

from bot.chat import commands, context
from bot.schedule.signups import Member
from bot.web import feeds, http_door, member_names
from tests.support.slack_group import settings_for

PUBLIC = "https://example.org/reading"


def served_feeds(tmp_path, store, application):
    settings = settings_for(tmp_path, PAPERBOT_PUBLIC_URL=PUBLIC)
    # The real time plus what a test moved it by: the store stamps each change with the real time, so a
    # clock fixed at the start would see a change saved a second later as one from its future.
    ahead = [timedelta(0)]
    group = feeds.environment_group(settings)
    calendars = feeds.Feeds(
        store, lambda: [group], PUBLIC, ask=member_names.as_typed, clock=lambda: datetime.now(UTC) + ahead[0]
    )
    app = application(calendars)
    server = http_door.http_server(app, 0, "127.0.0.1")  # a port of its own: none another test can take first
    port = int(server.effective_port)
    stop = http_door.serve_beside(server)

    class Served:
        store = None
        app = calendars

        def later(self, minutes: int) -> None:
            ahead[0] += timedelta(minutes=minutes)

        def get(self, path: str, method: str = "GET", **headers) -> tuple[int, dict, bytes]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                conn.request(method, path, headers={k.replace("_", "-"): v for k, v in headers.items()})
                response = conn.getresponse()
                return response.status, response.headers, response.read()
            finally:
                conn.close()

        def do(self, line: str, user: str = "UADMIN"):
            ctx = context.Context(store, settings.group, Member(user, lambda: user == "UADMIN"), settings.now())
            ctx.public_url = settings.public_url
            answer = commands.run(ctx, line)
            assert answer.reply.ok, answer.reply
            return answer

        def urls(self, member: str = "U1") -> dict[str, str]:
            return {k: v.removeprefix("https://example.org") for k, v in feeds.urls(store, PUBLIC, 1, member).items()}

    Served.store = store
    yield Served()
    stop()
