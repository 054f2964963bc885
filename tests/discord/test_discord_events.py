"""DISCORD_EVENTS=1: the coming meetings as scheduled events in the server, through the stand-in."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from discord_standin import GUILD, TOKEN, DiscordStandin

from bot import member_names, signups
from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.discord.events import WEEKS, MeetingEvents
from bot.discord.rest import Rest
from bot.discord.settings import DiscordSettings
from bot.settings import SettingError
from bot.signups import Member
from bot.site import Group

CHANNEL = "1000000000000000003"
TZ = ZoneInfo("Europe/Berlin")
ADMIN = Member("1000000000000000009", lambda: True)


@pytest.fixture
def discord():
    with DiscordStandin(channels={CHANNEL}) as standin:
        yield standin


@pytest.fixture
def group():
    calendar = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))
    return Group(1, calendar, channel=CHANNEL, minutes=90)


def make(store, discord, group, **kw) -> MeetingEvents:
    return MeetingEvents(store, Rest(discord.api_url, TOKEN), GUILD, group, ask=member_names.as_typed, **kw)


def now() -> datetime:
    return datetime.now(TZ)


def week(n: int) -> str:
    """The date of the meeting n weeks after this one."""
    return (now() + timedelta(weeks=n)).date().isoformat()


def assign(store, group, who: str, paper: str, n: int) -> None:
    signups.assign(store, group.calendar, now(), ADMIN, who, paper, week(n))


def events(discord) -> list[dict]:
    return sorted(discord.events.get(GUILD, {}).values(), key=lambda e: e["scheduled_start_time"])


def test_each_coming_meeting_with_a_presenter_is_one_event_and_a_second_check_makes_none(store, discord, group):
    assign(store, group, "ada", "3", 1)
    assign(store, group, "bob", "5", 2)
    assign(store, group, "cy", "6", WEEKS + 2)  # past the 8 weeks: no event yet
    sync = make(store, discord, group)
    sync.check(now())
    made = events(discord)
    assert [e["name"].rsplit(" — ", 1)[1] for e in made] == ["ada", "bob"]
    first = made[0]
    assert first["entity_type"] == 3 and first["privacy_level"] == 2
    assert first["entity_metadata"]["location"] == f"https://discord.com/channels/{GUILD}/{CHANNEL}"
    start = datetime.fromisoformat(first["scheduled_start_time"]).astimezone(TZ)
    assert start.strftime("%a %H:%M") == "Thu 16:00"
    assert datetime.fromisoformat(first["scheduled_end_time"]) - start == timedelta(minutes=90)
    sync.check(now())
    sync.check(now())
    assert len(discord.calls_to("create_event")) == 2 and len(events(discord)) == 2, "never duplicated"
    assert discord.calls_to("edit_event") == []


def test_events_move_and_are_cancelled_with_the_schedule(store, discord, group):
    assign(store, group, "ada", "3", 1)
    sync = make(store, discord, group)
    sync.check(now())
    [event] = events(discord)
    signups.unassign(store, group.calendar, now(), ADMIN, week(1))
    assign(store, group, "bob", "5", 1)  # the same week, another talk: the same event, changed
    sync.check(now())
    [moved] = events(discord)
    assert moved["id"] == event["id"] and moved["name"].endswith("— bob")
    signups.unassign(store, group.calendar, now(), ADMIN, week(1))
    sync.check(now())
    assert events(discord) == [] and len(discord.calls_to("delete_event")) == 1
    assert store.db.execute("SELECT count(*) FROM discord_events").fetchone()[0] == 0


def test_an_event_made_before_a_crash_is_found_again_not_made_twice(store, discord, group):
    assign(store, group, "ada", "3", 1)
    # Discord makes the event, and the answer never comes: paperbot does not know its id.
    discord.fail_next("create_event", accept_then="hang", seconds=2)
    make(store, discord, group, timeout=0.5).check(now())
    assert len(events(discord)) == 1
    assert store.db.execute("SELECT event_id FROM discord_events").fetchall() == [(None,)]
    make(store, discord, group).check(now())  # the next start's check
    [event] = events(discord)
    assert store.db.execute("SELECT event_id FROM discord_events").fetchall() == [(event["id"],)]
    assert len(discord.calls_to("create_event")) == 1


def test_discord_events_needs_the_server(tmp_path):
    base = {"DISCORD_TOKEN": TOKEN, "PAPERBOT_DB": str(tmp_path / "p.db")}
    with pytest.raises(SettingError, match="DISCORD_EVENTS: needs DISCORD_GUILD"):
        DiscordSettings.load({**base, "DISCORD_EVENTS": "1"}, dotenv=None)
    with pytest.raises(SettingError, match="DISCORD_EVENTS: must be 1"):
        DiscordSettings.load({**base, "DISCORD_EVENTS": "yes", "DISCORD_GUILD": GUILD}, dotenv=None)
    assert DiscordSettings.load({**base, "DISCORD_EVENTS": "1", "DISCORD_GUILD": GUILD}, dotenv=None).events


def test_an_event_deleted_by_hand_is_made_again(store, discord, group):
    assign(store, group, "ada", "3", 1)
    sync = make(store, discord, group)
    sync.check(now())
    [event] = events(discord)
    discord.events[GUILD].clear()  # someone deletes it in Discord
    signups.unassign(store, group.calendar, now(), ADMIN, week(1))
    assign(store, group, "bob", "5", 1)
    sync.check(now())  # the change meets Discord's 10070: the row is let go
    assert [c.status for c in discord.calls_to("edit_event")] == [404] and events(discord) == []
    sync.check(now())
    [again] = events(discord)
    assert again["id"] != event["id"] and again["name"].endswith("— bob")
