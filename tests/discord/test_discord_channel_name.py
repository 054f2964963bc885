"""A group with no name goes by its channel's, as Discord names it in an interaction's partial channel:
on its page, in its calendar and atop its post; a direct message names nothing."""

from __future__ import annotations

import re
from datetime import datetime
from wsgiref.util import setup_testing_defaults
from zoneinfo import ZoneInfo

import icalendar

from bot.schedule import groups, weekly
from bot.web import feeds
from tests.support.discord_door import post
from tests.support.discord_group import MEMBER
from tests.support.discord_standin import slash

CHANNEL = "1000000000000000003"  # the stand-in's interactions' channel, PAPERBOT_CHANNEL
TZ = ZoneInfo("Europe/Berlin")


def _get(bot, url: str) -> bytes:
    environ = {"PATH_INFO": url.removeprefix("https://example.org"), "REQUEST_METHOD": "GET"}
    setup_testing_defaults(environ)
    said: list[str] = []
    body = b"".join(feeds.serve(bot.settings, bot.store)(environ, lambda status, headers: said.append(status)))
    assert said[0].startswith("200"), said
    return body


def test_the_channels_name_titles_the_page_calendar_and_post_of_an_unnamed_group(make_bot, discord):
    bot = make_bot(PAPERBOT_PUBLIC_URL="https://example.org/reading/")
    asked = slash("calendar", MEMBER)
    asked["channel"]["name"] = "papers_*club*"
    urls = re.findall(r"https://example\.org/reading/[^\s`>)]+", post(bot, discord, asked)["data"]["content"])
    bot.background.drain(5)  # the channel's name is kept after the answer
    page = next(u for u in urls if u.endswith("/"))
    feed = next(u for u in urls if u.endswith(".ics") and "/m/" not in u)
    assert "<title>#papers_*club* — talks and papers</title>" in _get(bot, page).decode()
    assert str(icalendar.Calendar.from_ical(_get(bot, feed))["X-WR-CALNAME"]) == "#papers_*club*"
    group = groups.by_id(bot.store, bot.env, groups.ENV)
    assert group is not None
    week = group.calendar.coming(datetime.now(TZ))
    weekly.post_week(bot.store, group.calendar, bot.transport, CHANNEL, group.calendar.slot_of(week), force=True)
    said = discord.messages(CHANNEL)[-1]["content"]
    assert said.startswith("📚 \\#papers\\_\\*club\\* · **Paper of the week**"), said


def test_a_direct_message_names_nothing(make_bot, discord):
    bot = make_bot()
    dm = slash("week", MEMBER)
    del dm["guild_id"], dm["member"]
    dm["user"] = {"id": MEMBER, "username": "member"}
    dm["channel"] = {"id": dm["channel_id"], "type": 1, "name": "member"}  # a DM's: no name of the group's
    post(bot, discord, dm)
    bot.background.drain(5)
    group = groups.by_id(bot.store, bot.env, groups.ENV)
    assert group is not None and group.name is None
