"""A real `python -m bot run` serves the calendar of a group started after it started: no restart."""

from __future__ import annotations

import http.client
import time

import icalendar
import pytest

from bot.catalog.queries import open_store
from bot.chat import commands, context
from bot.schedule import groups
from bot.schedule.signups import Member
from bot.web import feeds
from tests.support.databases import database_for
from tests.support.processes import free_port
from tests.support.slack_group import env_for_process, settings_for

pytestmark = pytest.mark.slow


def get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def wait_for(port: int, path: str, proc, timeout: float = 30) -> tuple[int, bytes]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.log()
        try:
            return get(port, path)
        except OSError:
            time.sleep(0.1)  # polling a port that opens once the process is up
    raise AssertionError(f"nothing on port {port} within {timeout} s:\n{proc.log()}")


def test_run_serves_a_group_started_in_chat_after_it_started(procs, tmp_path, slack):  # noqa: F811
    port = free_port()
    public = f"http://127.0.0.1:{port}/reading"
    extra = {"PORT": str(port), "PAPERBOT_PUBLIC_URL": public, "SLACK_APP_TOKEN": "xapp-test"}
    settings = settings_for(tmp_path, slack.api_url, **extra)
    proc = procs.start("run", env=env_for_process(tmp_path, slack.api_url, **extra))
    store = open_store(database_for(tmp_path))
    assert wait_for(port, "/healthz", proc)[0] == 200

    # An admin starts a second group and books a talk in it while `run` is running.
    ctx = context.Context(store, settings.group, Member("UADMIN", lambda: True), settings.now(), where="C0SECOND")
    ctx.env = groups.from_settings(settings)
    assert commands.run(ctx, "group start").reply.ok
    assert commands.run(ctx, "assign U3 6 2027-03-04").reply.ok
    second = groups.of_channel(store, ctx.env, "C0SECOND").id
    urls = feeds.urls(store, public, second, "U3")
    store.close()

    status, body = wait_for(port, urls["group"].removeprefix(f"http://127.0.0.1:{port}"), proc)
    assert status == 200, body[:300]
    uids = [str(e["uid"]) for e in icalendar.Calendar.from_ical(body).walk("VEVENT")]
    assert uids and all(f"-group{second}@" in uid for uid in uids)
    status, mine = get(port, urls["member"].removeprefix(f"http://127.0.0.1:{port}"))
    assert status == 200 and f"-group{second}@".encode() in mine
    code, _ = proc.terminate_and_wait()
    assert code == 0
