"""A real `paperbot run` on Discord's Gateway with PAPERBOT_PUBLIC_URL and DISCORD_EVENTS=1: the feeds
on PORT beside the Gateway, `/paper calendar`, names asked of Discord, and the scheduler's events."""

from __future__ import annotations

import http.client
import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.catalog.queries import open_store
from bot.schedule import signups
from bot.schedule.signups import Member
from tests.support.databases import connect, database_for
from tests.support.discord_group import ADMIN, CHANNEL, MEMBER
from tests.support.discord_standin import GUILD, DiscordStandin, slash

pytestmark = pytest.mark.slow
TZ = ZoneInfo("Europe/Berlin")


@pytest.fixture
def discord():
    users = {ADMIN: {}, MEMBER: {"name": "Ada Lovelace", "nick": "Ada (reading group)"}}
    with DiscordStandin(channels={CHANNEL}, users=users) as d:
        yield d


def get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


@pytest.mark.parametrize("mode", ["gateway", "http"])
def test_run_serves_the_feeds_and_keeps_the_servers_events(run_bot, discord, tmp_path, mode):  # noqa: F811
    store = open_store(database_for(tmp_path))
    calendar = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))
    next_week = (datetime.now(TZ) + timedelta(weeks=1)).date().isoformat()
    signups.assign(store, calendar, datetime.now(TZ), Member(ADMIN, lambda: True), MEMBER, "3", next_week)
    store.close()

    bot = run_bot(mode, PAPERBOT_PUBLIC_URL="https://example.org/reading", DISCORD_EVENTS="1")
    assert discord.wait_for(lambda d: d.events.get(GUILD), 20), bot.log.read_text()
    [event] = discord.events[GUILD].values()
    assert event["name"].endswith("— Ada (reading group)"), "the member's name in the server, never an id"

    status, answer = bot.interact(slash("calendar", MEMBER))
    text = answer["data"]["content"] + str(answer["data"].get("embeds", ""))
    assert answer["data"]["flags"] & 64, "privately"
    words = [w.strip("`") for w in text.split()]
    [feed] = [w for w in words if w.startswith("https://example.org/reading/g/") and w.endswith(".ics")]
    status, body = get(bot.port, feed.removeprefix("https://example.org"))
    assert status == 200 and b"SUMMARY:" in body and b"Ada (reading group)" in body
    if mode == "http":  # beside Discord's own route, which still answers
        assert bot.interact(slash("week", MEMBER))[0] == 200
        return

    # The week loses its presenter: its event goes at the next check.
    with connect(tmp_path) as db:
        db.execute("DELETE FROM slots")
    deadline = time.monotonic() + 45
    while discord.events[GUILD] and time.monotonic() < deadline:
        time.sleep(0.2)  # the scheduler's 30-second check
    assert discord.events[GUILD] == {}, bot.log.read_text()
