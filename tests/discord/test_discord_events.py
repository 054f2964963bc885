"""DISCORD_EVENTS=1: the coming meetings of every Discord group as scheduled events in the server,
through the stand-in."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.discord import events as discord_events
from bot.discord.events import WEEKS, MeetingEvents, discord_groups
from bot.discord.rest import Rest
from bot.discord.settings import DiscordSettings
from bot.schedule import groups, signups
from bot.schedule.signups import Member
from bot.settings import SettingError
from bot.web import member_names
from bot.web.site import Group
from tests.support.discord_standin import GUILD, TOKEN, DiscordStandin

CHANNEL = "1000000000000000003"
SECOND = "1000000000000000004"
SLACK_CHANNEL = "C0SLACKGROUP"
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
    """The events of `group` alone."""
    return MeetingEvents(store, Rest(discord.api_url, TOKEN), GUILD, lambda: [group], ask=member_names.as_typed, **kw)


def settings_of(tmp_path, **env) -> DiscordSettings:
    """Group 1 meets on Thursdays at 16:00 in Berlin, 90 minutes, in the channel CHANNEL."""
    values = {
        "DISCORD_TOKEN": TOKEN,
        "DISCORD_GUILD": GUILD,
        "DISCORD_EVENTS": "1",
        "PAPERBOT_DB": str(tmp_path / "paperbot.db"),
        "PAPERBOT_CHANNEL": CHANNEL,
        "PAPERBOT_TIMEZONE": "Europe/Berlin",
        "PAPERBOT_MEETING": "thu 16:00",
        "PAPERBOT_MEETING_MINUTES": "90",
        **env,
    }
    return DiscordSettings.load(values, dotenv=None)


def every_group(store, discord, settings, **kw) -> MeetingEvents:
    """The events of every Discord group, read at each check, as `run` keeps them."""
    rest = Rest(discord.api_url, TOKEN)
    return MeetingEvents(store, rest, GUILD, lambda: discord_groups(store, settings), ask=member_names.as_typed, **kw)


def second_group(store, settings, channel: str = SECOND, platform: str = "discord") -> groups.Group:
    """A group started in chat that meets on Tuesdays at 18:30 in New York, for 45 minutes."""
    group, _ = groups.start(store, groups.from_settings(settings), channel, platform, ADMIN.id)
    for setting, value in (("timezone", "America/New_York"), ("meeting", "tue 18:30"), ("meeting-minutes", "45")):
        group = groups.change(store, group, setting, value, lambda word: None)
    return group


def group_of(event: dict) -> int:
    """The group an event's description names (its mark line)."""
    return int(event["description"].rsplit("· group ", 1)[1])


def now() -> datetime:
    return datetime.now(TZ)


def week(n: int) -> str:
    """The date of the meeting n weeks after this one."""
    return (now() + timedelta(weeks=n)).date().isoformat()


def assign(store, group, who: str, paper: str, n: int) -> None:
    signups.assign(store, group.calendar, now(), ADMIN, who, paper, week(n))


def events(discord) -> list[dict]:
    return sorted(discord.events.get(GUILD, {}).values(), key=lambda e: e["scheduled_start_time"])


def sync_wanted(sync: MeetingEvents, settings, store) -> dict:
    """Every event the groups' schedules ask for, cap or no cap."""
    wanted = {}
    for g in discord_groups(store, settings):
        wanted.update(sync.wanted(g, now()))
    return wanted


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
    sync.check(now())  # the server's listing no longer has it: made again, never patched
    [again] = events(discord)
    assert again["id"] != event["id"] and again["name"].endswith("— bob")
    assert discord.calls_to("edit_event") == []


def test_two_discord_groups_get_their_own_events_at_their_own_times(tmp_path, store, discord):
    settings = settings_of(tmp_path, PAPERBOT_MEETING_PLACE="Room 4.12")
    env = groups.from_settings(settings)
    second = second_group(store, settings)
    on_slack = second_group(store, settings, SLACK_CHANNEL, "slack")
    assign(store, env, "ada", "3", 1)
    assign(store, second, "bob", "5", 1)
    assign(store, second, "cy", "6", 2)
    assign(store, on_slack, "dee", "7", 1)  # a Slack group's meetings are not Discord's events
    sync = every_group(store, discord, settings)
    sync.check(now())

    made = events(discord)
    assert sorted(group_of(e) for e in made) == [1, second.id, second.id]
    [first] = [e for e in made if group_of(e) == 1]
    assert first["name"].endswith("— ada") and first["entity_metadata"]["location"] == "Room 4.12"
    start = datetime.fromisoformat(first["scheduled_start_time"]).astimezone(TZ)
    assert start.strftime("%a %H:%M") == "Thu 16:00"
    assert datetime.fromisoformat(first["scheduled_end_time"]) - start == timedelta(minutes=90)
    theirs = [e for e in made if group_of(e) == second.id]
    assert [e["name"].rsplit(" — ", 1)[1] for e in theirs] == ["bob", "cy"]
    for e in theirs:
        assert e["entity_metadata"]["location"] == f"https://discord.com/channels/{GUILD}/{SECOND}"
        start = datetime.fromisoformat(e["scheduled_start_time"]).astimezone(ZoneInfo("America/New_York"))
        assert start.strftime("%a %H:%M") == "Tue 18:30"
        assert datetime.fromisoformat(e["scheduled_end_time"]) - start == timedelta(minutes=45)

    sync.check(now())
    sync.check(now())
    assert len(discord.calls_to("create_event")) == 3 and len(events(discord)) == 3, "never duplicated"
    assert discord.calls_to("edit_event") == [] and discord.calls_to("delete_event") == []
    assert len(discord.calls_to("list_events")) == 3, "one listing of the server's events a check"


def test_a_group_started_later_gets_events_and_a_stopped_groups_are_cancelled(tmp_path, store, discord):
    settings = settings_of(tmp_path)
    env = groups.from_settings(settings)
    assign(store, env, "ada", "3", 1)
    sync = every_group(store, discord, settings)  # as `run` began: one group
    sync.check(now())
    assert [group_of(e) for e in events(discord)] == [1]

    second = second_group(store, settings)  # started in chat while running
    assign(store, second, "bob", "5", 1)
    assign(store, second, "cy", "6", 2)
    sync.check(now())
    assert sorted(group_of(e) for e in events(discord)) == [1, second.id, second.id]

    groups.stop(store, second)
    sync.check(now())
    assert [group_of(e) for e in events(discord)] == [1], "the stopped group's coming events cancelled"
    assert len(discord.calls_to("delete_event")) == 2
    assert store.db.execute("SELECT group_id FROM discord_events").fetchall() == [(1,)]

    groups.start(store, env, SECOND, "discord", ADMIN.id)  # resumed: its talks are events again
    sync.check(now())
    assert sorted(group_of(e) for e in events(discord)) == [1, second.id, second.id]


def test_events_made_before_a_crash_are_matched_to_their_own_group(tmp_path, store, discord):
    settings = settings_of(tmp_path)
    env = groups.from_settings(settings)
    second = second_group(store, settings)
    assign(store, second, "bob", "5", 1)
    every_group(store, discord, settings).check(now())
    [theirs] = events(discord)
    # Group 1 gets a talk the same week; Discord makes its event and the answer never comes.
    assign(store, env, "ada", "3", 1)
    discord.fail_next("create_event", accept_then="hang", seconds=2)
    every_group(store, discord, settings, timeout=0.5).check(now())
    assert len(events(discord)) == 2
    assert store.db.execute("SELECT event_id FROM discord_events WHERE group_id = 1").fetchall() == [(None,)]

    discord.events[GUILD] = dict(reversed(discord.events[GUILD].items()))  # Discord promises no order
    every_group(store, discord, settings).check(now())  # the next start's check
    [ours] = [e for e in events(discord) if e["id"] != theirs["id"]]
    rows = dict(store.db.execute("SELECT group_id, event_id FROM discord_events").fetchall())
    assert rows == {1: ours["id"], second.id: theirs["id"]}
    assert ours["name"].endswith("— ada") and theirs["name"].endswith("— bob")
    assert len(discord.calls_to("create_event")) == 2 and len(events(discord)) == 2


def test_the_servers_own_events_come_first_and_the_nearest_meetings_fill_the_rest(tmp_path, store, discord):
    settings = settings_of(tmp_path)
    env = groups.from_settings(settings)
    second = second_group(store, settings)
    for n in (1, 2, 3):
        assign(store, env, "ada", "3", n)
        assign(store, second, "bob", "5", n)
    rest = Rest(discord.api_url, TOKEN)
    later = (now() + timedelta(days=60)).isoformat()
    for i in range(96):  # the server's own events, made by people
        body = {"name": f"Game night {i}", "privacy_level": 2, "entity_type": 3, "entity_metadata": {"location": "x"}}
        rest.call("POST", f"/guilds/{GUILD}/scheduled-events", {**body, "scheduled_start_time": later,
                  "scheduled_end_time": (now() + timedelta(days=61)).isoformat()})  # fmt: skip
    sync = every_group(store, discord, settings)
    sync.check(now())
    ours = [e for e in events(discord) if "paperbot" in (e["description"] or "")]
    assert len(ours) == 4 and len(events(discord)) == 100, "the server full, never past it"
    assert not [c for c in discord.calls_to("create_event") if c.status != 200]
    every_start = sorted(
        datetime.fromisoformat(e["scheduled_start_time"]) for e in sync_wanted(sync, settings, store).values()
    )
    assert sorted(datetime.fromisoformat(e["scheduled_start_time"]) for e in ours) == every_start[:4], "nearest first"

    discord.events[GUILD] = {k: e for k, e in discord.events[GUILD].items() if not e["name"].startswith("Game")}
    sync.check(now())  # room again: every meeting has its event
    assert len(events(discord)) == 6


def test_paperbot_keeps_at_most_its_share_of_a_server(tmp_path, store, discord, monkeypatch):
    monkeypatch.setattr(discord_events, "MOST", 3)
    settings = settings_of(tmp_path)
    env = groups.from_settings(settings)
    second = second_group(store, settings)
    for n in (1, 2, 3):
        assign(store, env, "ada", "3", n)
        assign(store, second, "bob", "5", n)
    sync = every_group(store, discord, settings)
    sync.check(now())
    made = events(discord)
    every_start = sorted(
        datetime.fromisoformat(e["scheduled_start_time"]) for e in sync_wanted(sync, settings, store).values()
    )
    assert [datetime.fromisoformat(e["scheduled_start_time"]) for e in made] == every_start[:3]
    sync.check(now())
    assert len(discord.calls_to("create_event")) == 3 and discord.calls_to("delete_event") == []


def test_two_replicas_checking_at_once_make_each_event_once(store, discord, group):
    import threading

    from bot.store.postgres import PgStore

    assign(store, group, "ada", "3", 1)
    assign(store, group, "bob", "5", 2)
    # Another replica on the same database: another Store (another session, another open of the lock file).
    other = PgStore(store.url) if isinstance(store, PgStore) else type(store)(store.path)
    discord.fail_next("list_events", accept_then="late", seconds=1.5)  # the first replica's listing is slow
    first = threading.Thread(target=make(store, discord, group, timeout=5).check, args=(now(),))
    first.start()
    try:
        assert discord.wait_for(lambda d: d.calls_to("list_events"))
        make(other, discord, group).check(now())  # meanwhile: the first's check is under way, not doubled
    finally:
        first.join(10)
        other.close()
    make(store, discord, group).check(now())
    assert len(discord.calls_to("create_event")) == 2 and len(events(discord)) == 2, "never duplicated"
