"""Going and can't go on Discord: the post's buttons, and the scheduled event's Interested counted as going."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bot.announcing import sender as outbox_sender
from bot.discord.events import MeetingEvents
from bot.discord.rest import Rest
from bot.schedule import attendance, signups, weekly
from bot.schedule.signups import Member
from bot.web import member_names
from bot.web.site import Group
from tests.support.discord_group import ADMIN, CHANNEL, MEMBER, SHY, respond
from tests.support.discord_standin import EPHEMERAL, GUILD, TOKEN, click

TZ = ZoneInfo("Europe/Berlin")
OTHER = "1300000000000000042"  # Interested in the event, never pressed a button


@pytest.fixture(autouse=True)
def quiet(monkeypatch):
    """A post's update waits for a short quiet moment (5 s in a real channel)."""
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_QUIET", 0.2)


def post_it(bot, discord) -> dict:
    at = bot.group.slot_of(bot.group.coming(datetime.now(TZ)))  # the slot of a meeting still ahead
    outcome = weekly.post_week(bot.store, bot.group, bot.transport, CHANNEL, at, force=True)
    assert outcome.status == "sent"
    [post] = discord.messages(CHANNEL)
    return post


def pressed(bot, discord, post: dict, label: str, who: str) -> dict:
    [found] = [b for row in post["components"] for b in row["components"] if b["label"] == label]
    return respond(bot, discord, click(found["custom_id"], who, post))


def shows(discord, going: int):
    return lambda d: f"**{going}** going" in d.messages(CHANNEL)[0]["embeds"][0]["description"]


def test_the_posts_going_button_answers_privately_and_the_post_counts(make_bot, discord):
    bot = make_bot()
    post = post_it(bot, discord)
    assert "**0** going · 0 questions" in post["embeds"][0]["description"]
    for who in (ADMIN, MEMBER):
        answer = pressed(bot, discord, post, "Going", who)
        assert answer["data"]["flags"] & EPHEMERAL and "You're going to the meeting on" in answer["data"]["content"]
    assert discord.wait_for(shows(discord, 2))
    answer = pressed(bot, discord, post, "Going", MEMBER)  # again: taken back
    assert "You took back that you're going" in answer["data"]["content"]
    assert discord.wait_for(shows(discord, 1))
    assert len(discord.messages(CHANNEL)) == 1  # edited in place


def test_interested_members_count_as_going_each_once_unless_they_said_they_cant(make_bot, discord):
    bot = make_bot()
    week = bot.group.coming(datetime.now(TZ))
    signups.signup(bot.store, bot.group, datetime.now(TZ), Member(ADMIN), "5", bot.group.day_of(week).isoformat())
    post = post_it(bot, discord)
    group = Group(1, bot.group, channel=CHANNEL, minutes=60)
    events = MeetingEvents(
        bot.store, Rest(discord.api_url, TOKEN), GUILD, lambda: [group], ask=member_names.as_typed, wake=bot.wake_outbox
    )
    events.check(datetime.now(TZ))
    [event_id] = discord.events[GUILD]
    pressed(bot, discord, post, "Going", MEMBER)  # Interested too: counted once
    pressed(bot, discord, post, "Can't go", SHY)  # Interested, but said they can't: not counted
    discord.interested(event_id, MEMBER, SHY, OTHER)
    events.check(datetime.now(TZ))
    assert discord.wait_for(shows(discord, 2))  # MEMBER and OTHER
    assert attendance.count(bot.store, 1, [week]) == {week.key: 2}
    read = len(discord.calls_to("event_users"))
    events.check(datetime.now(TZ))  # nothing changed: who is interested is not read again
    assert len(discord.calls_to("event_users")) == read
    discord.interested(event_id, OTHER, marked=False)
    events.check(datetime.now(TZ))
    assert discord.wait_for(shows(discord, 1))
