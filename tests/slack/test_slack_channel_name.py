"""A group with no name goes by its channel's, as Slack names it in a slash command: on its page, in
its calendar and atop its post; a set name, and a direct message, leave it be."""

from __future__ import annotations

import json
import re
from wsgiref.util import setup_testing_defaults

import icalendar

from bot.schedule import groups, weekly
from bot.web import feeds
from tests.support.block_kit import blocks_text
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL

PUBLIC = "https://example.org/reading/"


def _get(h, url: str) -> bytes:
    environ = {"PATH_INFO": url.removeprefix("https://example.org"), "REQUEST_METHOD": "GET"}
    setup_testing_defaults(environ)
    said: list[str] = []
    body = b"".join(feeds.serve(h.bot.settings, h.bot.store)(environ, lambda status, headers: said.append(status)))
    assert said[0].startswith("200"), said
    return body


def _page_and_calendar(h, channel_name: str = "reading-club") -> tuple[str, str]:
    """The page's title and the calendar's name, their addresses asked with `calendar` in the channel."""
    said = h.command("calendar", user="U1", channel_name=channel_name)["text"]
    h.bot.drain()  # the channel's name is kept after the reply
    urls = re.findall(r"https://example\.org/reading/[^\s`]+", said)
    page = next(u for u in urls if u.endswith("/"))
    feed = next(u for u in urls if u.endswith(".ics") and "/m/" not in u)
    title = re.search(r"<title>(.*?) — talks and papers</title>", _get(h, page).decode())
    assert title is not None
    return title[1], str(icalendar.Calendar.from_ical(_get(h, feed))["X-WR-CALNAME"])


def test_the_channels_name_titles_the_page_calendar_and_post_of_an_unnamed_group(make_harness):
    h = make_harness(Clock(at("2026-12-02 10:00")), PAPERBOT_PUBLIC_URL=PUBLIC)
    assert _page_and_calendar(h) == ("#reading-club", "#reading-club")  # `calendar` typed in the channel
    title, calendar = _page_and_calendar(h, "papers & <b>tea</b>")  # renamed in Slack
    assert (title, calendar) == ("#papers &amp; &lt;b&gt;tea&lt;/b&gt;", "#papers & <b>tea</b>")
    group = groups.by_id(h.bot.store, h.bot.env, groups.ENV)
    assert group is not None
    monday = at("2026-12-07 09:00")
    post = weekly.plan(h.bot.store, group.calendar, group.calendar.week_of(monday), None, CHANNEL, monday)
    assert post is not None and post.group_name == "#papers & <b>tea</b>"
    shown = h.command("group", user="U1", channel_name="papers & <b>tea</b>")
    assert blocks_text(shown).startswith("#papers & <b>tea</b> — reading group"), blocks_text(shown)
    assert "name `none`" in blocks_text(shown) and "<b>" not in json.dumps(shown)  # the set name: none


def test_a_set_name_wins_and_a_direct_message_names_nothing(make_harness):
    h = make_harness(Clock(at("2026-12-02 10:00")), PAPERBOT_PUBLIC_URL=PUBLIC, PAPERBOT_GROUP_NAME="Systems Club")
    assert _page_and_calendar(h) == ("Systems Club", "Systems Club")
    h.command("group start", user="UADMIN", channel_id="C0OTHER", channel_name="other-papers")
    h.command("week", user="U1", channel_id="C0OTHER", channel_name="other-papers")
    h.command("week", user="U1", channel_id="D0DM", channel_name="directmessage")
    h.bot.drain()
    chat = groups.of_channel(h.bot.store, h.bot.env, "C0OTHER")
    assert chat is not None and chat.name == "#other-papers"
    kept = h.bot.store.db.execute("SELECT count(*) FROM groups WHERE channel_name = 'directmessage'").fetchone()[0]
    assert kept == 0


def test_a_known_name_is_not_written_again(make_harness):
    h = make_harness(Clock(at("2026-12-02 10:00")))
    h.command("week", user="U1")
    h.bot.drain()
    version = h.bot.store.db.execute("SELECT value FROM meta WHERE key = 'page_version'").fetchone()[0]
    h.command("week", user="U1")
    h.bot.drain()
    assert h.bot.store.db.execute("SELECT value FROM meta WHERE key = 'page_version'").fetchone()[0] == version


def test_a_button_pressed_in_the_channel_names_it_too(make_harness):
    h = make_harness(Clock(at("2026-12-02 10:00")))
    said = h.command("week", user="U1", channel_id="D0DM", channel_name="directmessage")
    button = next(e for b in said["blocks"] if b["type"] == "actions" for e in b["elements"])
    assert groups.by_id(h.bot.store, h.bot.env, groups.ENV).name is None  # type: ignore[union-attr]
    h.click(button, user="U1")  # in the channel, as block_actions carry its `channel.name`
    h.bot.drain()
    assert groups.by_id(h.bot.store, h.bot.env, groups.ENV).name == "#reading-club"  # type: ignore[union-attr]
