"""Several reading groups in one install: each its own channel, calendar, sign-ups, posts and reminders."""

from __future__ import annotations

import html
import shutil
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.calendar import Week
from bot.catalog import queries as catalog
from bot.rich_text import ChannelRef
from bot.runtime.scheduler import ScheduledChecks
from bot.schedule import groups, weekly
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL
from tests.support.slack_standin import SlackStandin

OTHER = "C0OTHER"
SHANGHAI = ZoneInfo("Asia/Shanghai")
OLD_DB = Path(__file__).parents[1] / "data" / "paperbot-16cc2ce.db"


@pytest.fixture
def slack():
    """The stand-in, with the bot in both groups' channels (and the old database's)."""
    users = {u: {} for u in ("UADMIN", "U1", "U2", "U3", "UADA", "UBOB", "UCAROL")}
    with SlackStandin(channels={CHANNEL, OTHER, "C0OLD"}, users=users) as standin:
        yield standin


def said(reply: dict) -> str:
    """A reply's text as a member reads it."""
    return html.unescape(reply.get("text") or "")


def posts(slack, channel):
    return [m for m in slack.messages(channel) if (m.get("metadata") or {}).get("event_type") == "paper_of_the_week"]


def row(store, channel):
    return store.db.execute("SELECT * FROM groups WHERE channel = ?", [channel]).fetchone()


@pytest.fixture
def two(make_harness):
    """Group 1 (the environment's: C0PAPERS, Berlin, Monday 09:00, meets Thursday 16:00) and a group in
    C0OTHER in Shanghai that posts on Tuesdays at 10:00 and meets on Wednesdays at 18:00."""
    clock = Clock(at("2026-12-03 12:00"))
    h = make_harness(clock)
    assert "Started a reading group" in said(h.command("group start", user="UADMIN", channel_id=OTHER))
    for setting in ("timezone Asia/Shanghai", 'schedule "0 10 * * tue"', 'meeting "wed 18:00"'):
        reply = h.command(f"group set {setting}", user="UADMIN", channel_id=OTHER)
        assert said(reply).startswith("Set "), said(reply)
    h.clock = clock
    return h


def test_two_groups_each_get_their_own_post_at_their_own_time_once(two, slack):
    clock = two.clock
    ticker = ScheduledChecks(two.bot.store, two.bot.settings, two.bot.transport, clock=clock)
    clock.set(at("2026-12-07 08:59"))
    ticker.check_post()
    assert posts(slack, CHANNEL) == [] and posts(slack, OTHER) == []
    clock.set(at("2026-12-07 09:00"))  # Berlin's slot: group 1 only
    ticker.check_post()
    assert len(posts(slack, CHANNEL)) == 1 and posts(slack, OTHER) == []
    clock.set(at("2026-12-08 09:59", SHANGHAI))
    ticker.check_post()
    assert posts(slack, OTHER) == []
    clock.set(at("2026-12-08 10:00", SHANGHAI))  # Shanghai's Tuesday slot
    ticker.check_post()
    for minutes in (1, 30):  # later checks, and a restarted process, post nothing again
        clock.set(at(f"2026-12-08 10:{minutes:02d}", SHANGHAI))
        ticker.check_post()
        ScheduledChecks(two.bot.store, two.bot.settings, two.bot.transport, clock=clock).check_post()
    [berlin], [shanghai] = posts(slack, CHANNEL), posts(slack, OTHER)
    assert berlin["metadata"]["event_payload"]["week"] == shanghai["metadata"]["event_payload"]["week"] == "2026-W50"
    # Each post names its own group's meeting: Thursday 16:00 in Berlin, Wednesday 18:00 in Shanghai.
    berlin_meeting = int(at("2026-12-10 16:00").timestamp())
    shanghai_meeting = int(at("2026-12-09 18:00", SHANGHAI).timestamp())
    assert f"<!date^{berlin_meeting}^" in str(berlin["blocks"]) and f"<!date^{shanghai_meeting}^" in str(
        shanghai["blocks"]
    )
    # Each group's rotation is its own: both feature the catalog's first paper.
    assert berlin["metadata"]["event_payload"]["paper_id"] == shanghai["metadata"]["event_payload"]["paper_id"]


def test_a_group_started_stopped_or_changed_counts_from_the_next_check(two, slack):
    clock = two.clock
    ticker = ScheduledChecks(two.bot.store, two.bot.settings, two.bot.transport, clock=clock)
    assert "Stopped" in said(two.command("group stop", user="UADMIN", channel_id=OTHER))
    clock.set(at("2026-12-08 10:00", SHANGHAI))
    ticker.check_post()
    assert posts(slack, OTHER) == []
    two.command('group set schedule "0 12 * * tue"', user="UADMIN", channel_id=OTHER)  # stopped: kept for later
    assert "Resumed" in said(two.command("group start", user="UADMIN", channel_id=OTHER))
    ticker.check_post()  # the same process, no restart: its slot (12:00) has not come
    assert posts(slack, OTHER) == []
    clock.set(at("2026-12-08 12:00", SHANGHAI))
    ticker.check_post()
    assert len(posts(slack, OTHER)) == 1


def schedule_text(h, channel):
    return said(h.command("schedule", user="U3", channel_id=channel))


def test_a_signup_in_one_group_never_shows_in_the_others_schedule(two, slack):
    reply = two.command("signup 7 2026-12-16", user="U1", channel_id=OTHER)
    assert "You're signed up" in said(reply), said(reply)
    paper = catalog.find(two.bot.store, "7")
    assert paper.title[:30] in schedule_text(two, OTHER)
    assert paper.title[:30] not in schedule_text(two, CHANNEL) and "U1" not in schedule_text(two, CHANNEL)
    # The same paper, the same week, in the other group: its own sign-up, not refused.
    assert "You're signed up" in said(two.command("signup 7 2026-12-16", user="U2", channel_id=CHANNEL))
    # The announcement went to the sign-up's group's channel.
    assert slack.wait_for(lambda s: any("U1" in m.get("text", "") for m in s.messages(OTHER)), timeout=5)
    assert not any("<@U1>" in m.get("text", "") for m in slack.messages(CHANNEL))


def test_a_skip_in_one_group_leaves_the_other_alone(two):
    assert "No meeting" in said(two.command("skip 2026-12-16", user="UADMIN", channel_id=OTHER))
    assert "no meeting" in schedule_text(two, OTHER).lower()
    assert "no meeting" not in schedule_text(two, CHANNEL).lower()
    assert "You're signed up" in said(two.command("signup 3 2026-12-16", user="U2", channel_id=CHANNEL))
    berlin = two.bot.env.calendar
    assert weekly.plan(two.bot.store, berlin, Week(2026, 51), None, CHANNEL, at("2026-12-14 09:00")).skipped is False


def test_group_set_timezone_mars_base_is_refused_and_changes_nothing(two):
    before = row(two.bot.store, OTHER)
    reply = said(two.command("group set timezone Mars/Base", user="UADMIN", channel_id=OTHER))
    assert reply.count("\n") == 0 and "Mars/Base" in reply and "Nothing was changed" in reply, reply
    assert row(two.bot.store, OTHER) == before
    assert "Asia/Shanghai" in said(two.command("group", user="U1", channel_id=OTHER))


def test_a_non_admin_cannot_set_the_meeting_but_a_groups_admin_can(two):
    before = row(two.bot.store, OTHER)
    reply = said(two.command('group set meeting "thu 16:00"', user="U1", channel_id=OTHER))
    assert reply.startswith("Only admins can") and "\n" not in reply, reply
    assert row(two.bot.store, OTHER) == before
    assert "Set admins" in said(two.command("group set admins <@U1>", user="UADMIN", channel_id=OTHER))
    assert "Set meeting" in said(two.command('group set meeting "thu 16:00"', user="U1", channel_id=OTHER))
    # A group's admin is no admin of another group.
    reply = said(two.command("skip next", user="U1", channel_id=CHANNEL))
    assert reply.startswith("Only admins can"), reply


def test_the_environments_group_is_changed_in_the_environment(two):
    reply = said(two.command("group set timezone Asia/Tokyo", user="UADMIN", channel_id=CHANNEL))
    assert "PAPERBOT_TIMEZONE" in reply and "Nothing was changed" in reply


def test_a_command_typed_outside_any_group_names_the_groups_and_changes_nothing(two):
    reply = said(two.command("signup 7", user="U1", channel_id="D0DIRECT"))
    assert f"<#{CHANNEL}>" in reply and f"<#{OTHER}>" in reply and "nothing was done" in reply, reply
    assert two.bot.store.db.execute("SELECT count(*) FROM slots").fetchone()[0] == 0


def test_mine_lists_a_members_slots_in_every_group_naming_each(two):
    two.command("signup 7 2026-12-16", user="U1", channel_id=OTHER)
    two.command("signup 3 2026-12-16", user="U1", channel_id=CHANNEL)
    reply = said(two.command("mine", user="U1", channel_id="D0DIRECT"))
    assert f"<#{CHANNEL}>" in reply and f"<#{OTHER}>" in reply, reply
    shown = str(two.command("show 7", user="U2", channel_id=CHANNEL)["blocks"])  # who presents it, in which group
    assert f"<#{OTHER}>" in shown and "<@U1>" in shown, shown


def test_groups_lists_every_group(two):
    reply = said(two.command("groups", user="U1"))
    assert reply.startswith("2 reading groups") and "Asia/Shanghai" in reply and "Europe/Berlin" in reply


def test_a_member_presenting_in_two_groups_in_one_week_is_reminded_of_each(two, slack):
    two.command("signup 7 2026-12-10", user="U1", channel_id=CHANNEL)  # Berlin: Thursday 10 December 16:00
    two.command("signup 3 2026-12-09", user="U1", channel_id=OTHER)  # Shanghai: Wednesday 9 December 18:00
    ticker = ScheduledChecks(two.bot.store, two.bot.settings, two.bot.transport, clock=two.clock)
    two.clock.set(at("2026-12-08 16:00"))  # both are due (two days before each meeting)
    ticker.check_reminders()
    ticker.check_reminders()
    assert len(slack.messages("DU1")) == 2


@pytest.mark.sqlite_only
def test_a_database_of_16cc2ce_keeps_every_row_as_group_one_and_posts_nothing_twice(tmp_path, make_harness, slack):
    """tests/data/paperbot-16cc2ce.db was made by paperbot at 16cc2ce (tests/data/make_old_db.py): four
    slots (sign-ups, an assignment, a skip), W49's post and UADA's reminder sent, four announcements."""
    shutil.copyfile(OLD_DB, tmp_path / "paperbot.db")
    clock = Clock(at("2026-12-01 16:30"))  # W49, after its post and UADA's reminder
    h = make_harness(clock, PAPERBOT_CHANNEL="C0OLD")
    store = h.bot.store
    assert store.db.execute("SELECT group_id, week, kind, presenter FROM slots ORDER BY week").fetchall() == [
        (1, "2026-W49", "presenter", "UADA"),
        (1, "2026-W50", "presenter", "UBOB"),
        (1, "2026-W51", "skipped", None),
        (1, "2026-W52", "presenter", "UCAROL"),
    ]
    assert store.db.execute("SELECT kind, dest, key, state FROM deliveries ORDER BY kind").fetchall() == [
        ("post", "C0OLD", "2026-W49", "sent"),
        ("reminder", "UADA", "2026-W49", "sent"),
    ]
    assert store.db.execute("SELECT id, channel FROM groups").fetchall() == [(1, None)]
    ticker = ScheduledChecks(store, h.bot.settings, h.bot.transport, clock=clock)
    ticker.check_post()
    ticker.check_reminders()
    assert posts(slack, "C0OLD") == [] and slack.messages("DUADA") == []
    assert "UADA" in schedule_text_of(h)
    # The next week goes as it always did: one post, one reminder.
    clock.set(at("2026-12-08 16:00"))
    for _ in range(2):
        ticker.check_post()
        ticker.check_reminders()
    assert len(posts(slack, "C0OLD")) == 1 and len(slack.messages("DUBOB")) == 1
    assert [g.id for g in groups.every(store, h.bot.env)] == [groups.ENV]  # no group but the first


def schedule_text_of(h):
    return said(h.command("week", user="U3", channel_id="C0OLD"))


def test_a_signup_updates_its_own_groups_post(two, slack):
    clock = two.clock
    ticker = ScheduledChecks(two.bot.store, two.bot.settings, two.bot.transport, clock=clock)
    clock.set(at("2026-12-08 10:00", SHANGHAI))  # both groups' W50 posts go out
    ticker.check_post()
    [_], [shanghai] = posts(slack, CHANNEL), posts(slack, OTHER)
    paper = shanghai["metadata"]["event_payload"]["paper_id"]
    assert "Sign up to present" in str(shanghai["blocks"])
    two.command(f"signup {paper} 2026-12-09", user="U1", channel_id=OTHER)

    def updates(s, channel):
        return [c.params for c in s.calls_to("chat.update") if c.params.get("channel") == channel]

    assert slack.wait_for(lambda s: updates(s, OTHER), timeout=5)
    assert "<@U1>" in str(updates(slack, OTHER)[-1]) and updates(slack, CHANNEL) == []


def test_a_groups_settings_changed_in_chat_are_announced_in_its_channel(two, slack):
    def lines(s):
        return [html.unescape(m.get("text") or "") for m in s.messages(OTHER)]

    assert slack.wait_for(lambda s: any("timezone is now Asia/Shanghai" in t for t in lines(s)), timeout=5)
    assert any("Started a reading group" in t for t in lines(slack))
    assert not any("timezone" in html.unescape(m.get("text") or "") for m in slack.messages(CHANNEL))


def test_app_home_shows_the_members_slots_in_each_group(two):
    two.command("signup 7 2026-12-16", user="U1", channel_id=OTHER)
    two.command("signup 3 2026-12-16", user="U1", channel_id=CHANNEL)
    home = two.bot.home("U1")
    assert {line.channel for line in home.mine} == {CHANNEL, OTHER}
    assert home.coming == [] and home.notice is not None  # whose weeks? each group's, in its channel
    assert ChannelRef(OTHER) in home.notice.text


def test_a_group_started_on_discord_is_not_posted_by_the_slack_process(two, slack):
    two.bot.store.db.execute("UPDATE groups SET platform = 'discord' WHERE channel = ?", [OTHER])
    ticker = ScheduledChecks(two.bot.store, two.bot.settings, two.bot.transport, clock=two.clock)
    two.clock.set(at("2026-12-08 10:00", SHANGHAI))
    ticker.check_post()
    assert len(posts(slack, CHANNEL)) == 1 and posts(slack, OTHER) == []


def test_each_group_catches_up_a_slot_missed_while_down_unless_its_meeting_is_over(two, slack):
    # Down from before Monday's slots until Thursday noon in Berlin (7 p.m. in Shanghai).
    two.clock.set(at("2026-12-10 12:00"))
    ScheduledChecks(two.bot.store, two.bot.settings, two.bot.transport, clock=two.clock).check_post()
    [berlin] = posts(slack, CHANNEL)
    assert berlin["metadata"]["event_payload"]["week"] == "2026-W50"  # Berlin meets at 16:00: caught up
    assert posts(slack, OTHER) == []  # Shanghai's Wednesday 18:00 meeting is over, its next slot still to come
