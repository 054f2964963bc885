"""The paper of the week: which paper, when, and exactly once whatever fails."""

from __future__ import annotations

import fcntl
import html
import json
import os
import socket
import threading
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from slack_sdk import WebClient

from bot.calendar import Meeting, MeetingCalendar, PostSchedule, Week
from bot.catalog import queries as catalog
from bot.catalog.papers import PaperInput
from bot.catalog.queries import open_store
from bot.console.render import render as console_text
from bot.delivery import sending as delivery
from bot.runtime.scheduler import ScheduledChecks
from bot.schedule import signups, weekly
from bot.schedule.rows import WeeklyPost
from bot.schedule.signups import Member
from bot.slack import blocks
from bot.slack.client import SlackTransport
from bot.store import liveness
from bot.store.connection import Store
from tests.support.clock import TZ, Clock, at
from tests.support.slack_group import CHANNEL
from tests.support.slack_standin import check_message


@pytest.fixture
def group():
    return MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))


@pytest.fixture
def transport(slack):
    return SlackTransport(WebClient(base_url=slack.api_url, token="xoxb-test", retry_handlers=[]))


class Naps:
    """Stands in for time.sleep: records how long the code asked to wait."""

    def __init__(self):
        self.asked: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)


def post(store, group, transport, when, **kw):
    kw.setdefault("sleep", Naps())
    return weekly.post_week(store, group, transport, CHANNEL, when, **kw)


def posts(slack):
    return [m for m in slack.messages(CHANNEL) if (m.get("metadata") or {}).get("event_type") == "paper_of_the_week"]


def test_nothing_before_the_slot_then_one_post_then_nothing(store, group, transport, slack):
    assert post(store, group, transport, at("2026-12-07 08:59")).status == "over"  # last slot's meeting, W49's
    first = post(store, group, transport, at("2026-12-07 09:00"))
    assert first.status == "sent"
    again = post(store, group, transport, at("2026-12-07 09:00:30"))
    assert again.status == "done" and again.result.sent == first.result.sent
    [message] = posts(slack)
    check_message(message)
    assert message["metadata"] == {
        "event_type": "paper_of_the_week",
        "event_payload": {"week": "2026-W50", "paper_id": "chopper", "paper_number": 1},
    }
    paper = catalog.find(store, "chopper")
    assert paper.title in message["text"] and paper.summary in message["text"]
    shown = str(message["blocks"])
    assert paper.summary in shown and "<!date^" in shown and "Sign up to present" in shown


def test_a_post_whose_meeting_has_begun_offers_a_coming_meeting(store, transport, slack):
    """With no PAPERBOT_MEETING the meeting is the post's own time: its button books the first open week."""
    schedule = PostSchedule("0 9 * * mon", TZ)
    group = MeetingCalendar(TZ, schedule.default_meeting(), schedule)
    outcome = post(store, group, transport, at("2026-12-07 09:00"))
    [message] = posts(slack)
    check_message(message)
    shown = json.dumps(message["blocks"], ensure_ascii=False)
    assert "present it at a coming meeting" in shown and "Nobody presents yet" not in shown
    [button] = [e for b in message["blocks"] if "accessory" in b for e in [b["accessory"]] if e["type"] == "button"]
    assert button["value"] == f"signup {outcome.post.paper.number}"  # no date: the first open week ahead


def test_rotation_no_repeats_until_all_featured_then_a_new_round(store, group, transport, slack):
    week = Week(2026, 50)
    featured = []
    for i in range(34):
        slot = group.slot_of(week.plus(i))
        outcome = post(store, group, transport, slot)
        featured.append(outcome.post.paper.number)
    assert featured[:32] == list(range(1, 33))
    assert featured[32:] == [1, 2]


def test_two_weeks_posted_at_once_do_not_show_one_paper(store, group, transport, slack):
    """`run` posts this week while an operator's `post-week` posts the next: Slack is slow to answer."""
    nexts: list = []

    def meanwhile(call):  # week 50's post is in Slack's hands, not yet recorded as sent
        slack.on_accept = None
        # `post-week --at` next week, run during this one: its now is this week's, as the CLI's is
        nexts.append(post(store, group, transport, group.slot_of(Week(2026, 51)), force=True, now=this_monday))

    this_monday = group.slot_of(Week(2026, 50))
    slack.on_accept = meanwhile
    first = post(store, group, transport, this_monday)
    assert (first.status, nexts[0].status) == ("sent", "sent")
    assert first.post.paper.number == 1 and nexts[0].post.paper.number == 2
    shown = {m["metadata"]["event_payload"]["week"]: m["metadata"]["event_payload"]["paper_id"] for m in posts(slack)}
    assert shown == {"2026-W50": first.post.paper.id, "2026-W51": nexts[0].post.paper.id}
    # The rotation goes on from there, and week 52 gets the next paper.
    assert post(store, group, transport, group.slot_of(Week(2026, 52))).post.paper.number == 3


def test_a_post_waiting_to_be_tried_again_keeps_its_paper_from_other_weeks(store, group, transport, slack):
    """`run`'s post was refused (the bot not invited yet) and waits; an operator posts the next week meanwhile."""
    slack.fail_next("chat.postMessage", error="not_in_channel")
    waiting = post(store, group, transport, group.slot_of(Week(2026, 50)))
    assert waiting.status == "failed" and posts(slack) == []
    monday = group.slot_of(Week(2026, 50))
    following = post(store, group, transport, group.slot_of(Week(2026, 51)), force=True, now=monday)
    again = post(store, group, transport, monday, force=True)
    assert (following.status, again.status) == ("sent", "sent")
    assert (again.post.paper.number, following.post.paper.number) == (1, 2)


def test_presenters_choice_wins_and_others_are_not_featured_before_their_week(store, group, transport):
    now = at("2026-12-02 10:00")
    signups.signup(store, group, now, Member("U1"), "streaming-diloco", "2026-12-07")  # W50
    signups.signup(store, group, now, Member("U2"), "2", "2026-12-14")  # W51: paper 2 is booked later
    w50 = post(store, group, transport, at("2026-12-07 09:00"))
    assert (w50.post.paper.id, w50.post.presenter) == ("streaming-diloco", "U1")
    assert post(store, group, transport, at("2027-01-04 09:00")).post.paper.number == 1
    assert post(store, group, transport, at("2027-01-11 09:00")).post.paper.number == 3  # not 2: U2 presents it


def test_a_post_refused_for_a_week_that_is_over_holds_no_paper_back(store, group, transport, slack):
    """`post-week --at` a past week, refused (the bot not invited yet): that post will not be tried
    again, so its paper is not kept from the weeks after it."""
    slack.fail_next("chat.postMessage", error="not_in_channel")
    monday = group.slot_of(Week(2026, 50))
    assert post(store, group, transport, group.slot_of(Week(2026, 48)), force=True, now=monday).status == "failed"
    assert post(store, group, transport, monday).post.paper.number == 1


def test_a_past_weeks_post_that_may_be_out_still_holds_its_paper(store, group, transport, slack):
    """`post-week --at` a past week: Slack takes it, the answer is lost and the channel cannot be read
    back: that post may be out, so its paper is not shown again."""
    monday = group.slot_of(Week(2026, 50))
    slack.fail_next("chat.postMessage", accept_then="drop")
    for _ in range(6):
        slack.fail_next("conversations.history", status=500)
    assert post(store, group, transport, group.slot_of(Week(2026, 48)), force=True, now=monday).status == "failed"
    assert post(store, group, transport, monday).post.paper.number == 2
    assert [m["metadata"]["event_payload"]["paper_number"] for m in posts(slack)] == [1, 2]


def test_a_past_weeks_refused_post_asked_for_again_gets_a_paper_not_shown_since(store, group, transport, slack):
    slack.fail_next("chat.postMessage", error="not_in_channel")
    monday = group.slot_of(Week(2026, 50))
    assert post(store, group, transport, group.slot_of(Week(2026, 48)), force=True, now=monday).status == "failed"
    assert post(store, group, transport, monday).post.paper.number == 1
    assert post(store, group, transport, group.slot_of(Week(2026, 48)), force=True, now=monday).status == "sent"
    assert [m["metadata"]["event_payload"]["paper_number"] for m in posts(slack)] == [1, 2]


def test_a_group_that_moves_to_a_new_channel_keeps_its_rotation(store, group, transport, slack):
    def shown(when, channel):
        return weekly.post_week(store, group, transport, channel, at(when), sleep=Naps()).post.paper.number

    assert [shown("2026-12-07 09:00", CHANNEL), shown("2026-12-14 09:00", CHANNEL)] == [1, 2]
    # PAPERBOT_CHANNEL changed on Wednesday: this week's paper stays the week's, and #1 and #2 do not repeat.
    slack.members.add("C0OTHER")  # the bot was invited there
    assert shown("2026-12-16 10:00", "C0OTHER") == 2
    assert shown("2026-12-21 09:00", "C0OTHER") == 3
    # The next week's post is refused where it was planned (the bot was removed from the channel),
    # and the group moves back: the week's planned paper is not skipped for it.
    slack.fail_next("chat.postMessage", error="not_in_channel")
    assert shown("2026-12-28 09:00", "C0OTHER") == 4
    assert shown("2026-12-28 10:00", CHANNEL) == 4
    assert shown("2027-01-04 09:00", CHANNEL) == 5
    assert [m["metadata"]["event_payload"]["paper_number"] for m in slack.messages("C0OTHER")] == [2, 3]
    assert [m["metadata"]["event_payload"]["paper_number"] for m in posts(slack)] == [1, 2, 4, 5]


def test_a_new_round_does_not_feature_a_paper_someone_will_present_later(store, group, transport):
    catalog.upsert(store, [PaperInput(id=f"moe-{i}", title=f"MoE {i}", tags=("moe",)) for i in range(3)])
    signups.signup(store, group, at("2026-12-02 10:00"), Member("U1"), "moe-0", "2027-03-01")
    shown = [
        post(store, group, transport, group.slot_of(Week(2026, 50).plus(i)), focus_tag="moe").post.paper.id
        for i in range(5)
    ]
    assert shown == ["moe-1", "moe-2", "moe-1", "moe-2", "moe-1"]  # moe-0 waits for U1's week


def test_a_paper_featured_again_after_its_presentation_offers_no_sign_up_that_would_be_refused(
    store, group, transport, slack
):
    catalog.upsert(store, [PaperInput(id="moe-0", title="MoE 0", tags=("moe",))])  # the focus tag's only paper
    signups.signup(store, group, at("2026-12-02 10:00"), Member("U1"), "moe-0", "2026-12-07")
    assert post(store, group, transport, at("2026-12-07 09:00"), focus_tag="moe").post.presenter == "U1"
    again = post(store, group, transport, at("2026-12-14 09:00"), focus_tag="moe")  # a new round: moe-0 again
    assert again.post.paper.id == "moe-0" and again.post.presenter is None
    w51 = posts(slack)[1]
    check_message(w51)
    shown = json.dumps(w51["blocks"])
    assert "Presented on" in shown and "/paper show" in shown and "weekly:signup" not in shown
    assert "<@U1>" not in shown and "<@U1>" not in w51["text"]  # no ping about a talk long given
    with pytest.raises(signups.Refusal):  # what its button would have done
        signups.signup(store, group, at("2026-12-14 09:05"), Member("U2"), "moe-0", None)


def test_a_skipped_week_has_no_post_and_the_rotation_moves_on(store, group, transport, slack):
    signups.skip(store, group, at("2026-12-02 10:00"), Member("UADMIN", lambda: True), "2026-12-07")
    assert post(store, group, transport, at("2026-12-07 09:00")).status == "skipped"
    assert post(store, group, transport, at("2026-12-14 09:00")).post.paper.number == 1
    assert len(posts(slack)) == 1


def test_focus_tag(store, group, transport):
    catalog.upsert(store, [PaperInput(id=f"moe-{i}", title=f"MoE {i}", tags=("moe",)) for i in range(3)])
    numbers = [
        post(store, group, transport, group.slot_of(Week(2026, 50).plus(i)), focus_tag="moe").post.paper.id
        for i in range(4)
    ]
    assert numbers == ["moe-0", "moe-1", "moe-2", "moe-0"]


def test_catch_up_after_downtime_but_not_for_a_meeting_that_is_over(store, group, transport, slack):
    # Down over Monday 09:00, back on Wednesday: the slot is posted at once.
    assert post(store, group, transport, at("2026-12-09 11:00")).status == "sent"
    # Down until the next Thursday 15:00: its meeting at 16:00 is still ahead, so it gets its post...
    assert post(store, group, transport, at("2026-12-17 15:00")).status == "sent"
    # ...but a meeting that is over (16:00 and its hour) is never posted later, not even with force.
    assert post(store, group, transport, at("2026-12-24 17:00")).status == "over"
    assert post(store, group, transport, at("2026-12-24 17:00"), force=True).status == "over"
    assert [m["metadata"]["event_payload"]["week"] for m in posts(slack)] == ["2026-W50", "2026-W51"]


def test_shanghai_post_carries_the_week_of_the_meeting_in_the_groups_zone(store, transport, slack):
    shanghai = ZoneInfo("Asia/Shanghai")
    group = MeetingCalendar(shanghai, Meeting.parse("mon 09:00"), PostSchedule("0 9 * * mon", shanghai))
    sunday_utc = datetime(2026, 12, 7, 1, 0, tzinfo=ZoneInfo("UTC"))  # Monday 09:00 in Shanghai
    assert post(store, group, transport, sunday_utc).status == "sent"
    assert posts(slack)[0]["metadata"]["event_payload"]["week"] == "2026-W50"
    year_end = datetime(2026, 12, 28, 9, 30, tzinfo=shanghai)  # W53's meeting is under way
    assert post(store, group, transport, year_end, force=True).status == "sent"
    assert posts(slack)[1]["metadata"]["event_payload"]["week"] == "2026-W53"


# -- exactly once, case by case ---------------------------------------------------

MONDAY = "2026-12-07 09:00"
DEAD = f"{socket.gethostname()}:999999:deadbeef"  # a process of this host that no longer runs


def row(store):
    return store.db.execute("SELECT state, owner, message_ref, attempts FROM deliveries WHERE kind = 'post'").fetchone()


def test_crash_before_the_claim(store, group, transport, slack):
    assert row(store) is None  # nothing was written: the next check simply posts
    assert post(store, group, transport, at(MONDAY)).status == "sent" and len(posts(slack)) == 1


def test_crash_after_the_claim_before_sending(store, group, transport, slack):
    store.db.execute(
        "INSERT INTO deliveries (kind, dest, key, state, owner, lease_until, claimed_at, updated_at) "
        "VALUES ('post', ?, '2026-W50', 'claimed', ?, 9e18, 0, 'x')",
        [CHANNEL, DEAD],
    )
    assert post(store, group, transport, at(MONDAY)).status == "sent"
    assert len(posts(slack)) == 1 and not slack.calls_to("conversations.history")  # nothing was sent: no look needed


def test_crash_after_slack_accepted_before_recording(store, group, transport, slack):
    # The dead process marked 'sending', Slack stored its message, and it died before hearing back.
    paper = catalog.find(store, "chopper")
    earlier = WeeklyPost(Week(2026, 50), paper, group.meeting_of(Week(2026, 50)), None)
    WebClient(base_url=slack.api_url, token="xoxb-test").chat_postMessage(
        channel=CHANNEL, **blocks.weekly_post(earlier)
    )
    store.db.execute(
        "INSERT INTO deliveries (kind, dest, key, state, owner, lease_until, claimed_at, paper, attempts, updated_at) "
        "VALUES ('post', ?, '2026-W50', 'sending', ?, 9e18, 0, 1, 1, 'x')",
        [CHANNEL, DEAD],
    )
    outcome = post(store, group, transport, at(MONDAY))
    assert outcome.status == "found"
    assert len(posts(slack)) == 1
    assert row(store)[0] == "sent" and row(store)[2] == posts(slack)[0]["ts"]


def test_a_history_too_long_to_read_is_never_taken_for_a_missing_post(store, group, transport, slack, monkeypatch):
    monkeypatch.setattr(transport, "HISTORY_PAGES", 1)  # 15 messages: as 150 are at the real size
    paper = catalog.find(store, "chopper")
    earlier = WeeklyPost(Week(2026, 50), paper, group.meeting_of(Week(2026, 50)), None)
    client = WebClient(base_url=slack.api_url, token="xoxb-test")
    client.chat_postMessage(channel=CHANNEL, **blocks.weekly_post(earlier))
    for i in range(201):  # the channel goes on before the crashed attempt is looked for
        client.chat_postMessage(channel=CHANNEL, text=f"chat {i}")
    store.db.execute(
        "INSERT INTO deliveries (kind, dest, key, state, owner, lease_until, claimed_at, paper, attempts, updated_at) "
        "VALUES ('post', ?, '2026-W50', 'sending', ?, 9e18, 0, 1, 1, 'x')",
        [CHANNEL, DEAD],
    )
    outcome = post(store, group, transport, at(MONDAY))
    assert outcome.status == "failed" and "not all read" in outcome.detail
    assert len(posts(slack)) == 1  # not a second one


def test_crash_after_recording(store, group, transport, slack):
    assert post(store, group, transport, at(MONDAY)).status == "sent"
    assert post(store, group, transport, at(MONDAY)).status == "done"
    assert len(slack.calls_to("chat.postMessage")) == 1


@pytest.mark.sqlite_only
@pytest.mark.parametrize("alive", [False, True])
def test_an_owner_with_this_host_and_process_id_is_told_by_its_owner_file(store, group, transport, slack, alive):
    # Containers run the bot as PID 1: a restarted one has its dead predecessor's host and process ID,
    # and two that share the database's folder (and a host name) have each other's. Their owner files,
    # locked for as long as each runs, tell them apart.
    other = f"{socket.gethostname()}:{os.getpid()}:0ther000"
    folder = store.path.with_name(store.path.name + "-owners")
    folder.mkdir(exist_ok=True)
    fd = os.open(folder / "0ther000", os.O_RDWR | os.O_CREAT)
    an_hour_ago = time.time() - 3600  # it ran a while: its file is old
    os.utime(folder / "0ther000", (an_hour_ago, an_hour_ago))
    if alive:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as the other process holds it while it runs
    try:
        store.db.execute(
            "INSERT INTO deliveries (kind, dest, key, state, owner, lease_until, claimed_at, paper, attempts, "
            "updated_at) VALUES ('post', ?, '2026-W50', 'sending', ?, 9e18, 0, 1, 1, 'x')",
            [CHANNEL, other],
        )
        outcome = post(store, group, transport, at(MONDAY))
    finally:
        os.close(fd)
    if alive:
        assert outcome.status == "busy" and posts(slack) == []  # it may be posting this moment
    else:
        assert outcome.status == "sent", outcome.detail  # at once: not after the dead one's 15-minute lease
        assert len(posts(slack)) == 1 and slack.calls_to("conversations.history")  # looked first, then posted
        assert liveness.owner_is_dead(store, other)  # still so for its other rows (a reminder, a line)


def test_owner_files_of_processes_that_died_are_swept_and_ours_goes_with_us(tmp_path):
    folder = tmp_path / "p.db-owners"
    folder.mkdir()
    an_hour_ago = time.time() - 3600
    for name in ("deadbeef", "11ve1111", "d3adr0w0"):
        (folder / name).touch()
        os.utime(folder / name, (an_hour_ago, an_hour_ago))
    (folder / "n3w00000").touch()  # a process starting this moment: created, not locked yet
    live = os.open(folder / "11ve1111", os.O_RDWR)
    fcntl.flock(live, fcntl.LOCK_EX)  # a process that runs
    try:
        store = open_store(tmp_path / "p.db")
        store.db.execute(  # a dead owner still named by a row: its file tells the next look it is dead
            "INSERT INTO deliveries (kind, dest, key, state, owner, lease_until, claimed_at, updated_at) "
            "VALUES ('post', 'C1', '2026-W50', 'sending', 'elsewhere:7:d3adr0w0', 9e18, 0, 'x')"
        )
        liveness.hold(store)
        mine = liveness.OWNER.rsplit(":", 1)[1]
        assert sorted(p.name for p in folder.iterdir()) == sorted(["11ve1111", "d3adr0w0", "n3w00000", mine])
        assert liveness.owner_is_dead(store, "elsewhere:7:d3adr0w0")
        store.close()
        assert sorted(p.name for p in folder.iterdir()) == ["11ve1111", "d3adr0w0", "n3w00000"]
    finally:
        os.close(live)


@pytest.mark.sqlite_only  # an owner from before owner files: host and process ID (tests/store/test_liveness.py: both)
def test_a_live_owner_keeps_its_claim(store, group, transport, slack):
    store.db.execute(
        "INSERT INTO deliveries (kind, dest, key, state, owner, lease_until, claimed_at, updated_at) "
        "VALUES ('post', ?, '2026-W50', 'sending', ?, 9e18, 0, 'x')",
        [CHANNEL, f"{socket.gethostname()}:1:init"],
    )
    assert post(store, group, transport, at(MONDAY)).status == "busy"  # pid 1 is alive: it is still posting
    assert posts(slack) == []


def test_connection_dropped_after_slack_accepted(store, group, transport, slack):
    slack.fail_next("chat.postMessage", accept_then="drop")
    outcome = post(store, group, transport, at(MONDAY))
    assert outcome.status == "found" and len(posts(slack)) == 1
    assert len(slack.calls_to("chat.postMessage")) == 1  # never sent twice


def test_server_error_then_one_post(store, group, transport, slack):
    slack.fail_next("chat.postMessage", status=500)
    naps = Naps()
    outcome = post(store, group, transport, at(MONDAY), sleep=naps)
    assert outcome.status == "sent" and len(posts(slack)) == 1
    assert len(slack.calls_to("conversations.history")) == 1 and naps.asked == [1]


def test_rate_limited_waits_retry_after_then_one_post(store, group, transport, slack):
    slack.fail_next("chat.postMessage", status=429, retry_after=3)
    naps = Naps()
    assert post(store, group, transport, at(MONDAY), sleep=naps).status == "sent"
    assert naps.asked == [3] and len(posts(slack)) == 1
    assert [c.status for c in slack.calls_to("chat.postMessage")] == [429, 200]


def test_a_week_skipped_while_its_post_waits_out_a_rate_limit_is_not_posted(store, group, transport, slack):
    slack.fail_next("chat.postMessage", status=429, retry_after=5)

    def meanwhile(seconds):  # an admin skips the week during Slack's Retry-After
        signups.skip(store, group, at("2026-12-07 09:00"), Member("UADMIN", lambda: True), "2026-12-07")

    outcome = post(store, group, transport, at(MONDAY), sleep=meanwhile)
    assert outcome.status == "skipped" and outcome.ok and posts(slack) == []
    assert post(store, group, transport, at("2026-12-14 09:00")).post.paper.number == 1  # not featured


def test_not_in_channel_is_reported_in_words_and_retried_later(store, group, transport, slack):
    slack.fail_next("chat.postMessage", error="not_in_channel")
    outcome = post(store, group, transport, at(MONDAY))
    assert outcome.status == "failed" and "not_in_channel" in outcome.detail and "/invite" in outcome.detail
    assert outcome.result.new_error and posts(slack) == []
    assert post(store, group, transport, at("2026-12-07 09:00:30")).status == "waiting"  # no hammering
    assert post(store, group, transport, at("2026-12-07 09:01"), force=True).status == "sent"
    assert len(posts(slack)) == 1


def test_history_unreadable_after_an_uncertain_attempt_means_no_second_post(store, group, transport, slack):
    slack.fail_next("chat.postMessage", accept_then="drop")
    slack.fail_next("conversations.history", error="missing_scope")
    outcome = post(store, group, transport, at(MONDAY))
    assert outcome.status == "failed" and "missing_scope" in outcome.detail
    assert len(posts(slack)) == 1  # the dropped attempt arrived; we did not guess and post again
    assert post(store, group, transport, at(MONDAY), force=True).status == "found"
    assert len(posts(slack)) == 1


@pytest.mark.parametrize("fault", [{"status": 429, "retry_after": 2}, {"status": 500}])
def test_a_hiccup_while_looking_for_an_earlier_attempt_is_waited_out(store, group, transport, slack, fault):
    slack.fail_next("chat.postMessage", accept_then="drop")
    slack.fail_next("conversations.history", **fault)
    naps = Naps()
    outcome = post(store, group, transport, at(MONDAY), sleep=naps)
    assert outcome.status == "found", outcome.detail
    assert naps.asked == [1, fault.get("retry_after", 2)]  # after the dropped attempt, then the history's fault
    assert len(posts(slack)) == 1 and len(slack.calls_to("chat.postMessage")) == 1


class Stopping:
    """A stopping process's Event.wait: records the wait it was asked for, and says "stop"."""

    def __init__(self):
        self.asked: list[float] = []

    def __call__(self, seconds: float) -> bool:
        self.asked.append(seconds)
        return True


@pytest.mark.parametrize("fault", [{"status": 429, "retry_after": 60}, {"status": 503}])
def test_a_post_waiting_when_the_bot_stops_is_taken_up_by_the_next_start(store, group, transport, slack, fault):
    slack.fail_next("chat.postMessage", **fault)
    stopping = Stopping()
    outcome = post(store, group, transport, at(MONDAY), sleep=stopping)
    assert outcome.status == "stopped" and len(stopping.asked) == 1
    assert posts(slack) == []
    # The next start, a minute later, goes on at once: no ten-minute wait as after a refusal.
    again = post(store, group, transport, at("2026-12-07 09:01"))
    assert again.status == "sent" and len(posts(slack)) == 1


def test_empty_catalog_says_why(tmp_path, group, transport, slack):

    empty = Store(tmp_path / "empty.db")
    outcome = post(empty, group, transport, at(MONDAY))
    assert outcome.status == "failed" and "no papers" in outcome.detail and posts(slack) == []
    empty.close()


def test_delivery_rows_survive_for_the_rotation(store, group, transport):
    post(store, group, transport, at(MONDAY))
    assert delivery.sent_message(store, "post", CHANNEL, "2026-W50") is not None


def test_the_scheduler_tells_admins_once_and_keeps_trying(make_harness, slack):
    """not_in_channel at 09:00: one DM to each admin, a retry later that week, then the post."""

    clock = Clock(at("2026-12-07 09:00"))
    h = make_harness(clock, PAPERBOT_ADMINS="UADMIN,U2")
    ticker = ScheduledChecks(h.bot.store, h.bot.settings, h.bot.transport, clock=clock, tell_admins=h.bot.tell_admins)
    slack.fail_next("chat.postMessage", error="not_in_channel")
    ticker.check_post()
    assert posts(slack) == []
    [to_admin] = slack.messages("DUADMIN")
    assert "not_in_channel" in to_admin["text"] and "/invite" in to_admin["text"] and len(slack.messages("DU2")) == 1
    for minutes in (1, 5):  # checks within the next minutes: no hammering, no second alarm
        clock.set(at(f"2026-12-07 09:{minutes:02d}"))
        ticker.check_post()
    assert posts(slack) == [] and len(slack.messages("DUADMIN")) == 1
    clock.set(at("2026-12-07 09:20"))  # after the wait, the next check posts
    h.bot.store.db.execute("UPDATE deliveries SET retry_at = 0")  # the 10-minute wait is wall-clock time
    ticker.check_post()
    assert len(posts(slack)) == 1 and len(slack.messages("DUADMIN")) == 1
    assert delivery.sent_message(h.bot.store, "post", CHANNEL, "2026-W50") is not None


def test_week_names_the_focus_tag_when_no_paper_has_it_any_more(store, group):
    from bot.chat import commands, context

    ctx = context.Context(store, group, Member("U1"), at("2026-12-07 10:00"), focus_tag="profiling")
    reply = console_text(commands.run(ctx, "week").reply)
    assert "No paper is tagged `profiling`" in reply and "catalog is empty" not in reply


def test_a_slack_out_of_reach_is_tried_again_soon_and_then_within_a_minute(store, group):
    with socket.socket() as closed:  # a port nobody listens on: connection refused
        closed.bind(("127.0.0.1", 0))
        gone = f"http://127.0.0.1:{closed.getsockname()[1]}/api/"
    unreachable = SlackTransport(WebClient(base_url=gone, token="xoxb-test", retry_handlers=[]))
    naps = Naps()
    before = time.time()
    outcome = post(store, group, unreachable, at("2026-12-07 09:00"), sleep=naps)
    assert outcome.status == "failed" and "cannot reach Slack" in outcome.detail
    assert naps.asked == [1, 2, 4, 8]  # certainly not posted: no history to read before each try
    [(retry_at,)] = store.db.execute("SELECT retry_at FROM deliveries WHERE kind = 'post'").fetchall()
    assert 50 < retry_at - before < 70  # not the ten minutes a refusal waits


def test_a_slack_that_keeps_timing_out_is_also_tried_again_within_a_minute(store, group):
    class TimingOut:  # every call times out: the post may or may not be there
        def send(self, d, message):
            raise delivery.Uncertain("no answer from Slack (TimeoutError: timed out)")

        def find(self, d, since):
            raise delivery.Uncertain("no answer from Slack (TimeoutError: timed out)")

    before = time.time()
    outcome = post(store, group, TimingOut(), at("2026-12-07 09:00"))
    assert outcome.status == "failed"
    [(retry_at,)] = store.db.execute("SELECT retry_at FROM deliveries WHERE kind = 'post'").fetchall()
    assert 50 < retry_at - before < 70


def test_a_restart_tries_at_once_what_slack_refused_before(make_harness, slack):
    clock = Clock(at("2026-12-07 09:00"))
    h = make_harness(clock)
    slack.fail_next("chat.postMessage", error="not_in_channel")
    ScheduledChecks(h.bot.store, h.bot.settings, h.bot.transport, clock=clock).check_post()
    assert posts(slack) == []
    clock.set(at("2026-12-07 09:02"))  # the operator invites the bot and restarts `run`
    restarted = ScheduledChecks(h.bot.store, h.bot.settings, h.bot.transport, clock=clock)
    restarted.check_post()
    assert len(posts(slack)) == 1  # now, not ten minutes after the refusal


def test_a_post_waiting_out_a_rate_limit_holds_no_reminder_back(make_harness, slack):
    clock = Clock(at("2026-12-08 16:00"))  # back on Tuesday: W50's post to catch up, and U1's reminder due
    h = make_harness(clock)
    signups.signup(h.bot.store, h.bot.group, at("2026-12-01 12:00"), Member("U1"), "7", "2026-12-10")
    stopping = threading.Event()
    ticker = ScheduledChecks(h.bot.store, h.bot.settings, h.bot.transport, clock=clock, stop=stopping)
    slack.fail_next("chat.postMessage", status=429, retry_after=60)
    posting = threading.Thread(target=ticker.check_post)
    posting.start()
    try:
        assert slack.wait_for(lambda s: s.calls_to("chat.postMessage"), timeout=5)  # 429: the post waits a minute
        ticker.check_post()  # the next look returns at once (a wait here would see the post out)
        ticker.check_reminders()
        [reminder] = slack.messages("DU1")
        assert "Thu 10 Dec 2026 16:00" in html.unescape(reminder["text"]) and posts(slack) == []
    finally:
        stopping.set()  # the process stops: the post is left for the next start
        posting.join(5)
    assert not posting.is_alive() and posts(slack) == []
