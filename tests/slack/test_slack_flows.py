"""Sign-ups, buttons, admin rights, the add form and App Home, as Slack sends them."""

from __future__ import annotations

import html
import json
import re
import socket
import threading
import time
from urllib.parse import urlencode

import pytest

from bot.announcing import sender as outbox_sender
from bot.schedule import weekly
from tests.support.block_kit import blocks_text, buttons, valid
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL
from tests.support.slack_standin import check_message, check_view


@pytest.fixture
def clock():
    return Clock(at("2026-12-02 10:00"))


@pytest.fixture
def h(make_harness, clock):
    return make_harness(clock)


def signup_buttons(post: dict) -> list[dict]:
    """The weekly post's sign-up button, if it shows one (Going and Can't go it always has)."""
    return [b for b in buttons(post) if b["action_id"].startswith("weekly:")]


def channel_lines(slack) -> list[str]:
    return [html.unescape(m["text"]) for m in slack.messages(CHANNEL)]


def test_signup_command_confirms_privately_and_announces_in_one_line(h):
    reply = valid(h.command("signup streaming-diloco next", user="U1"))
    assert "You're signed up" in blocks_text(reply) and "<!date^" in str(reply["blocks"])
    [line] = channel_lines(h.slack)
    assert line.startswith("📅 <@U1> will present #29 Streaming DiLoCo") and "\n" not in line
    check_message(h.slack.messages(CHANNEL)[0])


def test_refused_signup_changes_nothing_and_announces_nothing(h):
    h.command("signup 7 next", user="U1")
    reply = valid(h.command("signup 8 next", user="U2"))
    assert "is taken: <@U1> presents" in blocks_text(reply)
    assert len(h.slack.messages(CHANNEL)) == 1  # only U1's announcement


def test_signup_button_on_a_paper_found_by_search(h):
    found = valid(h.command("search diloco", user="U2"))
    number = blocks_text(found).split("*#", 1)[1].split("*", 1)[0]
    reply = valid(h.command(f"show {number}", user="U2"))
    signup = next(b for b in buttons(reply) if b["value"].startswith("signup"))
    url = h.click(signup, user="U2")
    [answer] = h.slack.responses_to(url)
    check_message(answer)
    assert answer["response_type"] == "ephemeral" and answer["replace_original"] is False
    assert "You're signed up" in blocks_text(answer)
    assert "<@U2> will present" in channel_lines(h.slack)[0]


def test_a_slack_hiccup_on_a_buttons_answer_is_retried(h):
    reply = valid(h.command("show 7", user="U2"))
    signup = next(b for b in buttons(reply) if b["value"].startswith("signup"))
    h.slack.fail_next("response_url", status=500)
    url = h.click(signup, user="U2")
    [answer] = h.slack.responses_to(url)
    assert "You're signed up" in blocks_text(answer)
    assert [c.status for c in h.slack.calls_to("response_url")] == [500, 200]


@pytest.mark.slow
def test_a_buttons_answer_does_not_wait_behind_announcements_held_by_rate_limits(h):
    [button] = buttons(valid(h.command("show 7")))
    for _ in range(2):
        h.slack.fail_next("chat.postMessage", status=429, retry_after=10)
    for k in range(4):  # their announcements now sleep through Retry-After, in the background
        assert "You're signed up" in h.command(f"signup {8 + k}", user=f"U{3 + k}", drain=False)["text"]
    url = h.click(button, user="U2", drain=False)
    first = []  # what came first: the clicker's answer, or a line in the channel
    assert h.slack.wait_for(lambda s: first.append(bool(s.responses_to(url))) or first[-1] or s.messages(CHANNEL))
    assert first[-1], "the clicker waited behind the channel"
    assert "You're signed up" in blocks_text(h.slack.responses_to(url)[0])
    h.bot.drain(60)


def test_a_button_whose_response_url_expired_answers_in_a_new_private_message(h):
    reply = valid(h.command("show 7", user="U2"))
    signup = next(b for b in buttons(reply) if b["value"].startswith("signup"))
    h.slack.fail_next("response_url", status=404)  # as Slack answers after 30 minutes or 5 uses
    url = h.click(signup, user="U2")
    assert h.slack.responses_to(url) == []
    [note] = h.slack.ephemerals
    assert note["user"] == "U2" and note["channel"] == CHANNEL
    assert "You're signed up" in blocks_text(note)


def test_a_buttons_answer_where_the_bot_cannot_post_comes_as_a_direct_message(h):
    # A list shown in a private channel the bot is not in, clicked after its response_url expired:
    # the sign-up is saved and announced, so the clicker must hear of it too.
    reply = valid(h.command("show 7", user="U2"))
    signup = next(b for b in buttons(reply) if b["value"].startswith("signup"))
    h.slack.fail_next("response_url", status=404)
    h.slack.fail_next("chat.postEphemeral", error="channel_not_found")
    h.click(signup, user="U2")
    [dm] = h.slack.messages("DU2")
    assert "You're signed up" in blocks_text(dm)
    assert "<@U2> will present" in channel_lines(h.slack)[0]


def test_the_posts_button_goes_while_its_paper_has_a_presenter_in_another_week(h, clock):
    outcome = weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    number = outcome.post.paper.number
    clock.set(at("2026-12-07 09:05"))
    h.command(f"signup {number} 2027-01-14", user="U2")  # from the list, not the post: a later week
    post = h.slack.messages(CHANNEL)[0]
    check_message(post)
    assert not signup_buttons(post)  # pressed, it could only say "taken"
    assert "<@U2> presents it on" in blocks_text(post) and "Nobody presents yet" not in blocks_text(post)
    assert "<@U2> presents it on" in blocks_text(valid(h.command("week", user="U3")))
    h.command("withdraw 2027-01-14", user="U2")
    post = h.slack.messages(CHANNEL)[0]
    [button] = signup_buttons(post)  # free again: the post offers it again
    assert button["value"] == f"signup {number} 2026-12-07" and "Nobody presents yet" in blocks_text(post)


def test_weekly_post_button_signs_up_for_that_week_and_updates_the_post(h, clock):
    outcome = weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    [post] = h.slack.messages(CHANNEL)
    assert "Nobody presents yet" in blocks_text(post)
    [button] = [b for b in buttons(post) if b["action_id"].startswith("weekly:")]
    assert button["value"] == f"signup {outcome.post.paper.number} 2026-12-07"
    clock.set(at("2026-12-07 09:05"))
    url = h.click(button, user="U3", message=post)
    assert "You're signed up" in blocks_text(h.slack.responses_to(url)[0])
    post, announcement = h.slack.messages(CHANNEL)
    check_message(post)
    assert "Presenter: <@U3>" in blocks_text(post) and not signup_buttons(post)
    assert post["metadata"]["event_payload"]["week"] == "2026-W50"
    assert "<@U3> will present" in announcement["text"]
    # A second click, by someone else, is refused and the post keeps U3.
    url = h.click(button, user="U1", message=post)
    assert "is taken: <@U3>" in blocks_text(h.slack.responses_to(url)[0])
    assert "Presenter: <@U3>" in blocks_text(h.slack.messages(CHANNEL)[0])


def test_the_post_of_a_meeting_under_way_signs_up_for_the_next_open_meeting(make_harness, clock):
    h = make_harness(clock, PAPERBOT_MEETING=None)  # the group meets when the post goes out
    clock.set(at("2026-12-07 09:00"))
    outcome = weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    [post] = h.slack.messages(CHANNEL)
    [button] = [b for b in buttons(post) if b["action_id"].startswith("weekly:")]
    url = h.click(button, user="U3", message=post)
    answer = blocks_text(h.slack.responses_to(url)[0])
    assert "You're signed up" in answer and "Mon 14 Dec 2026" in answer
    assert h.bot.store.db.execute("SELECT week, paper FROM slots").fetchall() == [
        ("2026-W51", outcome.post.paper.number)
    ]
    url = h.click(button, user="U1", message=post)  # the paper is taken now
    assert "is taken: <@U3> presents it on" in blocks_text(h.slack.responses_to(url)[0])


def test_the_posts_button_pressed_after_its_meeting_books_the_next_open_meeting(h, clock):
    weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    [post] = h.slack.messages(CHANNEL)
    [button] = [b for b in buttons(post) if b["action_id"].startswith("weekly:")]
    clock.set(at("2026-12-11 10:00"))  # Friday: Thursday's meeting is over, and the post still says "want to?"
    url = h.click(button, user="U3", message=post)
    answer = blocks_text(h.slack.responses_to(url)[0])
    assert "You're signed up" in answer and "Thu 17 Dec 2026" in answer
    assert h.bot.store.db.execute("SELECT week, presenter FROM slots").fetchall() == [("2026-W51", "U3")]


def test_a_post_that_a_presenters_choice_replaced_leaves_its_first_paper_in_the_rotation(h, clock):
    from bot.calendar import Week

    first = weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00")).post.paper
    clock.set(at("2026-12-07 09:05"))
    assert "You're signed up" in h.command("signup 12 2026-12-07", user="U5")["text"]
    assert "#12" in blocks_text(h.slack.messages(CHANNEL)[0]) and "Presenter: <@U5>" in blocks_text(
        h.slack.messages(CHANNEL)[0]
    )
    following = weekly.plan(h.bot.store, h.bot.group, Week(2026, 51), None, CHANNEL, at("2026-12-14 09:00"))
    assert following.paper.number == first.number  # it never had its week


def test_the_weekly_post_is_brought_up_to_date_through_a_slack_hiccup(h, clock):
    weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    [post] = h.slack.messages(CHANNEL)
    [button] = [b for b in buttons(post) if b["action_id"].startswith("weekly:")]
    h.slack.fail_next("chat.update", status=503)
    h.click(button, user="U3", message=post)
    assert [c.status for c in h.slack.calls_to("chat.update")] == [503, 200]
    assert "Presenter: <@U3>" in blocks_text(h.slack.messages(CHANNEL)[0])


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_rate_limited_post_update_never_puts_back_what_a_later_change_undid(h, clock):
    weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    clock.set(at("2026-12-07 09:05"))
    h.slack.fail_next("chat.update", status=429, retry_after=3)
    assert "You're signed up" in h.command("signup 4 2026-12-07", user="U3", drain=False)["text"]
    assert h.slack.wait_for(lambda s: s.calls_to("chat.update"))  # its update is waiting out the rate limit
    assert "open again" in h.command("withdraw 2026-12-07", user="U3", drain=False)["text"]
    h.bot.drain(30)
    post = h.slack.messages(CHANNEL)[0]
    assert "Presenter" not in blocks_text(post) and "Nobody presents yet" in blocks_text(post)
    assert [b for b in buttons(post) if b["action_id"].startswith("weekly:")]


def test_a_slack_that_cannot_be_reached_for_a_moment_loses_no_post_update_and_no_announcement(h, clock, monkeypatch):
    from slack_sdk import WebClient

    monkeypatch.setattr(outbox_sender, "UNREACHABLE_WAIT", 0.2)
    weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    clock.set(at("2026-12-07 09:05"))
    reachable = h.bot.transport.client
    with socket.socket() as closed:  # a port nobody listens on: connection refused
        closed.bind(("127.0.0.1", 0))
        gone = f"http://127.0.0.1:{closed.getsockname()[1]}/api/"
    h.bot.transport.client = WebClient(base_url=gone, token="xoxb-test", retry_handlers=[])
    assert "You're signed up" in h.command("signup 4 2026-12-07", user="U3", drain=False)["text"]
    time.sleep(0.5)  # tries meanwhile (a longer pause, on a busy machine, only means more of them)
    post = h.slack.messages(CHANNEL)[0]
    assert "Nobody presents yet" in blocks_text(post) and len(h.slack.messages(CHANNEL)) == 1
    h.bot.transport.client = reachable  # Slack is back
    time.sleep(0.3)  # the bot's 0.2 s hold-off runs out (a longer pause changes nothing)
    h.bot.send_outbox()
    h.bot.drain(10)
    post, line = h.slack.messages(CHANNEL)
    assert "Presenter: <@U3>" in blocks_text(post) and "<@U3> will present" in html.unescape(line["text"])


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_signup_while_the_weekly_post_is_on_its_way_reaches_the_post(h, clock):
    # Slack has the post but has not answered yet: the post was planned before the sign-up.
    h.slack.fail_next("chat.postMessage", accept_then="hang", seconds=1.0)
    args = (h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    poster = threading.Thread(target=weekly.post_week, args=args)
    poster.start()
    assert h.slack.wait_for(lambda s: s.messages(CHANNEL))
    clock.set(at("2026-12-07 09:05"))
    assert "You're signed up" in h.command("signup 4 2026-12-07", user="U3", drain=False)["text"]
    poster.join()
    h.bot.drain(30)
    post = h.slack.messages(CHANNEL)[0]
    assert "Presenter: <@U3>" in blocks_text(post) and "Nobody presents yet" not in blocks_text(post)


def test_a_change_whose_announcement_cannot_be_queued_is_not_made(h, caplog):
    with h.bot.store.write() as db:  # the outbox cannot take a row (a full disk, say)
        db.execute("CREATE TRIGGER full BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'disk is full'); END")
    reply = h.command("signup 7 next", user="U1")
    assert "Something went wrong on my side" in reply["text"]
    assert h.bot.store.db.execute("SELECT count(*) FROM slots").fetchone() == (0,)
    assert "disk is full" in caplog.text
    with h.bot.store.write() as db:
        db.execute("DROP TRIGGER full")
    assert "You're signed up" in h.command("signup 7 next", user="U1")["text"]
    [line] = channel_lines(h.slack)  # the sign-up that was made, announced once
    assert "<@U1> will present" in line


def test_concurrent_clicks_on_the_weekly_post_one_presenter(h, clock):
    weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    post = h.slack.messages(CHANNEL)[0]
    [button] = [b for b in buttons(post) if b["action_id"].startswith("weekly:")]
    urls = {}
    barrier = threading.Barrier(12)

    def click(i):
        barrier.wait()
        urls[i] = h.click(button, user=f"U{i}", message=post)

    threads = [threading.Thread(target=click, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    h.bot.drain()
    answers = [blocks_text(h.slack.responses_to(u)[0]) for u in urls.values()]
    assert sum("You're signed up" in a for a in answers) == 1
    assert sum("is taken" in a for a in answers) == 11
    rows = h.bot.store.db.execute("SELECT presenter FROM slots WHERE week = '2026-W50'").fetchall()
    assert len(rows) == 1 and f"Presenter: <@{rows[0][0]}>" in blocks_text(h.slack.messages(CHANNEL)[0])


@pytest.mark.parametrize("user, allowed", [("UADMIN", True), ("UWSADMIN", True), ("UOWNER", True), ("U1", False)])
def test_admins_are_paperbot_admins_and_workspace_admins_and_owners(h, user, allowed):
    reply = valid(h.command("skip 2026-12-24", user=user))
    assert ("No meeting in the week" in blocks_text(reply)) is allowed
    assert ("Only admins can" in blocks_text(reply)) is not allowed
    asked = [c.params.get("user") for c in h.slack.calls_to("users.info")]
    assert asked == ([] if user == "UADMIN" else [user])  # PAPERBOT_ADMINS need no lookup


def test_admin_lookup_is_cached_and_a_failed_lookup_is_explained(h):
    h.command("skip 2026-12-24", user="UWSADMIN")
    h.command("unassign 2026-12-24", user="UWSADMIN")
    assert len(h.slack.calls_to("users.info")) == 1
    h.slack.fail_next("users.info", status=500)
    h.slack.fail_next("users.info", status=500)
    h.slack.fail_next("users.info", status=500)
    reply = valid(h.command("skip 2026-12-24", user="U2"))
    assert "couldn't check with Slack whether you are an admin" in blocks_text(reply)
    assert h.bot.store.db.execute("SELECT count(*) FROM slots").fetchone()[0] == 0


def test_a_member_made_admin_is_one_within_a_minute_and_an_admin_stays_one(h, monkeypatch):
    from bot.slack import app

    monkeypatch.setattr(app, "MEMBER_CACHE_SECONDS", 0)  # "a minute" has passed
    assert "Only admins can" in blocks_text(valid(h.command("skip 2026-12-24", user="U2")))
    h.slack.users["U2"] = {"is_admin": True}  # made a workspace admin
    assert "No meeting in the week" in blocks_text(valid(h.command("skip 2026-12-24", user="U2")))
    asked = len(h.slack.calls_to("users.info"))
    h.command("unassign 2026-12-24", user="U2")
    assert len(h.slack.calls_to("users.info")) == asked  # an admin is remembered


@pytest.mark.parametrize("text, what", [("assign", "assign"), ("skip", "skip"), ("unassign a b", "clear")])
def test_a_member_is_told_an_admin_verb_is_for_admins_before_its_syntax(h, text, what):
    reply = blocks_text(valid(h.command(text, user="U1")))
    assert f"Only admins can {what} weeks" in reply and "Usage" not in reply


@pytest.mark.parametrize("presenter", ["<@UBOT|paperbot>", "<@USLACKBOT|slackbot>"])
def test_a_bot_cannot_be_assigned_to_present(h, presenter):
    reply = blocks_text(valid(h.command(f"assign {presenter} 5 next", user="UADMIN")))
    assert "is a bot and cannot present" in reply
    assert h.bot.store.db.execute("SELECT count(*) FROM slots").fetchone()[0] == 0
    h.bot.drain()
    assert not channel_lines(h.slack)


@pytest.mark.parametrize(
    "presenter, said",
    [
        ("U0TYPO", "Slack knows no member `U0TYPO` in this workspace"),
        ("<@UGONE>", "has left the workspace and cannot present"),
        ("<@UHELPER|helper>", "is a bot and cannot present"),
    ],
)
def test_only_a_member_of_the_workspace_can_be_assigned_to_present(h, presenter, said):
    h.slack.users["UGONE"] = {"deleted": True}
    h.slack.users["UHELPER"] = {"is_bot": True}
    reply = blocks_text(valid(h.command(f"assign {presenter} 5 next", user="UADMIN")))
    assert said in reply
    assert h.bot.store.db.execute("SELECT count(*) FROM slots").fetchone()[0] == 0
    h.bot.drain()
    assert not channel_lines(h.slack)


def test_an_assignment_stands_when_slack_cannot_say_who_the_presenter_is(h):
    h.slack.fail_next("users.info", status=500)
    h.slack.fail_next("users.info", status=500)
    reply = blocks_text(valid(h.command("assign <@U2> 5 next", user="UADMIN")))
    assert "<@U2> presents *#5*" in reply
    assert h.bot.store.db.execute("SELECT presenter FROM slots").fetchall() == [("U2",)]


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_add_by_a_workspace_admin_gives_up_on_a_slow_slack_at_the_replys_one_deadline(h):
    """users.info, then views.open, each slow: together they must still leave the reply its time."""
    h.slack.fail_next("users.info", accept_then="hang", seconds=1.6)
    h.slack.fail_next("views.open", accept_then="hang", seconds=1.6)
    reply = h.command("add", user="UWSADMIN")
    # Each call answers within its own 2 s: only the reply's shared deadline gives up on views.open.
    # That it comes within Slack's 3 s on a loaded machine is measured by bench/bench.py.
    assert "Slack was slow to open the form: if it did not open, try `/paper add` again." in reply["text"]


def test_add_opens_a_modal_and_validates_the_submission(h):
    reply = h.command("add", user="UADMIN")
    assert reply == {}  # the modal is the answer
    [opened] = h.slack.calls_to("views.open")
    check_view(opened.params["view"], kind="modal")
    assert opened.params["trigger_id"] == "1337.42.abcd"

    errors = h.submit("add_paper", {"title": "", "url": "nope", "summary": None, "tags": None})
    assert errors["response_action"] == "errors" and "title" in errors["errors"]
    errors = h.submit(
        "add_paper", {"title": "A fine paper", "url": "javascript:alert(1)", "summary": None, "tags": None}
    )
    assert errors == {
        "response_action": "errors",
        "errors": {"url": "url must start with http:// or https:// and have no spaces or < > | in it"},
    }
    errors = h.submit("add_paper", {"title": "A fine paper", "url": None, "summary": None, "tags": None}, user="U1")
    assert "Only admins" in errors["errors"]["title"]

    ok = h.submit(
        "add_paper",
        {
            "title": "Ring Attention <!here>",
            "url": "https://arxiv.org/abs/2310.01889",
            "summary": "环形注意力",
            "tags": "long-context, Attention",
        },
    )
    assert ok == {}
    [confirm] = h.slack.ephemerals
    assert "#33" in confirm["text"] and "<!here>" not in str(confirm)
    reply = valid(h.command("tag long-context"))
    assert "Ring Attention &lt;!here&gt;" in str(reply["blocks"])
    assert "#33" in blocks_text(valid(h.command("search 环形")))


def test_a_paper_added_from_a_channel_the_bot_is_not_in_is_confirmed_directly(h):
    h.slack.fail_next("chat.postEphemeral", error="channel_not_found")
    values = {"title": "Ring Attention", "url": None, "summary": None, "tags": None}
    assert h.submit("add_paper", values, private_metadata="C0ELSEWHERE") == {}
    [dm] = h.slack.messages("DUADMIN")
    assert "Added" in dm["text"] and "#33" in dm["text"]


def test_add_by_a_non_admin_is_refused_without_a_modal(h):
    reply = valid(h.command("add", user="U1"))
    assert "Only admins can add papers" in blocks_text(reply) and not h.slack.calls_to("views.open")


def test_app_home_shows_weeks_slots_and_buttons(h):
    h.command("signup 7 next", user="U1")
    assert h.event({"type": "app_home_opened", "user": "U1", "tab": "home"}) == 200
    assert h.event({"type": "app_home_opened", "user": "U1", "tab": "home"}, event_id="Ev1") == 200  # a retry
    assert len(h.slack.calls_to("views.publish")) == 1
    view = h.slack.home_views["U1"]
    check_view(view, kind="home")
    shown = blocks_text(view)
    assert "Coming weeks" in shown and "#7" in shown and "Your slots" in shown
    withdraw = next(b for b in buttons(view) if b["value"].startswith("withdraw"))
    h.click(withdraw, user="U1", container="view")
    view = h.slack.home_views["U1"]
    assert "You gave up" in blocks_text(view)
    assert h.bot.store.db.execute("SELECT count(*) FROM slots").fetchone()[0] == 0
    signup = next(b for b in buttons(view) if b["value"].startswith("signup"))
    h.click(signup, user="U1", container="view")
    assert "You're signed up" in blocks_text(h.slack.home_views["U1"])


def test_a_click_is_acked_only_once_its_change_is_saved(h):
    """Slack hears back only after the sign-up is written: a restart just after the ack loses nothing."""
    [signup] = [b for b in buttons(valid(h.command("show 5"))) if b["value"].startswith("signup")]
    import sqlite3

    holder = sqlite3.connect(h.bot.store.path)
    holder.execute("BEGIN IMMEDIATE")  # an import's batch holds the write lock for a moment
    clicking = threading.Thread(target=h.click, args=(signup,), kwargs={"user": "U9", "drain": False})
    clicking.start()
    clicking.join(0.5)
    assert clicking.is_alive()  # not acked while the sign-up cannot be written yet
    holder.rollback()
    clicking.join(10)
    assert h.bot.store.db.execute("SELECT presenter FROM slots").fetchall() == [("U9",)]
    h.bot.drain()


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_write_held_up_past_slacks_3_seconds_is_refused_in_time_and_changes_nothing(h):
    [signup] = [b for b in buttons(valid(h.command("show 5"))) if b["value"].startswith("signup")]
    import sqlite3

    holder = sqlite3.connect(h.bot.store.path)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock, and keeps it
    try:
        # Refused at the answer's deadline, not after the store's 15 s busy timeout; that the refusal
        # comes within Slack's 3 s on a loaded machine is measured by bench/bench.py.
        started = time.monotonic()
        reply = h.command("signup 7 next", user="U1")
        assert time.monotonic() - started < 10 and "busy just now, so nothing was changed" in reply["text"]
        started = time.monotonic()
        [answer] = h.slack.responses_to(h.click(signup, user="U9"))
        assert time.monotonic() - started < 10 and "busy just now" in answer["text"]
    finally:
        holder.rollback()
    assert h.bot.store.db.execute("SELECT count(*) FROM slots").fetchone() == (0,)
    h.bot.drain()
    assert not channel_lines(h.slack)


def test_a_click_on_app_home_is_answered_directly_when_home_cannot_be_redrawn(h):
    h.command("signup 7 next", user="U1")
    h.event({"type": "app_home_opened", "user": "U1", "tab": "home"})
    withdraw = next(b for b in buttons(h.slack.home_views["U1"]) if b["value"].startswith("withdraw"))
    h.slack.fail_next("views.publish", error="not_enabled")  # certainly not shown
    h.click(withdraw, user="U1", container="view")
    [dm] = h.slack.messages("DU1")
    assert "You gave up" in dm["text"]


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_an_answer_slack_took_late_is_not_given_twice(h, monkeypatch):
    from bot.slack import client

    monkeypatch.setattr(client, "ANSWER_TIMEOUT", 0.5)
    reply = valid(h.command("show 5"))
    [signup] = [b for b in buttons(reply) if b["value"].startswith("signup")]
    url = h.slack.response_url()
    h.slack.fail_next("response_url", accept_then="hang", seconds=1.5)  # taken, answered after the timeout
    h.click(signup, user="U1", response_url=url)
    time.sleep(1.2)
    assert len(h.slack.responses_to(url)) == 1 and not h.slack.ephemerals


def test_a_pager_never_replaces_the_channel_post(h):
    weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    post = h.slack.messages(CHANNEL)[0]
    forged = {"action_id": "page:0", "value": "tag parallelism-dp --page 1"}  # no real post has one
    [answer] = h.slack.responses_to(h.click(forged, user="U1", message=post))
    assert answer["replace_original"] is False and answer["response_type"] == "ephemeral"


def test_app_home_says_when_it_shows_only_some_of_your_slots(h):
    for i in range(17):
        h.command(f"signup {i + 1} 2027-0{1 + i // 4}-{1 + 7 * (i % 4):02d}", user="U1", drain=False)
    h.bot.drain()
    assert len(h.bot.store.db.execute("SELECT * FROM slots WHERE presenter = 'U1'").fetchall()) == 17
    h.event({"type": "app_home_opened", "user": "U1", "tab": "home"})
    view = h.slack.home_views["U1"]
    assert sum(b["value"].startswith("withdraw") for b in buttons(view)) == 15
    assert "…and 2 more: `/paper mine` lists them all" in blocks_text(view)


def test_a_week_skipped_after_its_post_shows_no_meeting_anywhere(h, clock):
    weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    clock.set(at("2026-12-07 09:05"))
    assert "No meeting in the week" in blocks_text(valid(h.command("skip 2026-12-07", user="UADMIN")))
    post = h.slack.messages(CHANNEL)[0]
    week = valid(h.command("week", user="U1"))
    for shown in (post["text"], blocks_text(post), week["text"], blocks_text(week)):
        assert "No meeting this week" in shown and "meeting" not in shown.replace("No meeting this week", "").lower()


def test_week_command(h, clock):
    reply = valid(h.command("week"))
    assert "This week" in blocks_text(
        reply
    ) and "Paper of the week: *#1* <https://arxiv.org/abs/2512.08242|Chopper" in blocks_text(reply)
    assert [b["value"] for b in buttons(reply)] == ["signup 1 2026-11-30"]
    h.command("signup 1", user="U2")
    reply = valid(h.command("week"))
    assert "Presenter: <@U2>" in blocks_text(reply) and not buttons(reply)


def test_schedule_and_mine(h):
    h.command("signup 7 2026-12-10", user="U1")
    reply = valid(h.command("schedule"))
    shown = blocks_text(reply)
    assert "Coming weeks" in shown and "<@U1>" in shown and "_open_" in shown
    reply = valid(h.command("mine", user="U1"))
    assert "Your coming slots" in blocks_text(reply) and "#7" in blocks_text(reply)


def test_schedule_says_how_many_booked_weeks_it_does_not_list(h):
    for i in range(30):  # the 26 that are listed, and four more right after them
        assert "You're signed up" in h.command(f"signup {i + 1}", user=f"U{i + 1}", drain=False)["text"]
    h.bot.drain(30)
    lines = blocks_text(valid(h.command("schedule"))).split("\n")
    lines = [line for line in lines if not re.fullmatch(r"_[A-Z][a-z]+ \d{4}_", line)]  # the weeks, not the months
    booked = [n for n, line in enumerate(lines) if "_4 more weeks booked_" in line]
    assert len(booked) == 1 and "<@U26>" in lines[booked[0] - 1] and "_open_" in lines[booked[0] + 1]


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_slack_hiccup_when_announcing_is_retried_and_announces_once(h):
    h.slack.fail_next("chat.postMessage", status=503)
    h.slack.fail_next("chat.postMessage", status=429, retry_after=1)
    reply = valid(h.command("signup 7 next", user="U1"))
    assert "You're signed up" in blocks_text(reply)
    assert [c.status for c in h.slack.calls_to("chat.postMessage")] == [503, 429, 200]
    [line] = channel_lines(h.slack)
    assert line.startswith("📅 <@U1> will present #7")


@pytest.mark.slow
def test_every_change_is_announced_once_however_long_slack_rate_limits(h):
    for _ in range(8):  # more than any client's retries: each announcement meets a few
        h.slack.fail_next("chat.postMessage", status=429, retry_after=1)
    for k in range(4):
        assert "You're signed up" in h.command(f"signup {8 + k}", user=f"U{k + 1}", drain=False)["text"]
    assert h.slack.wait_for(lambda s: len(s.messages(CHANNEL)) >= 4, timeout=30)
    h.bot.drain(30)
    lines = [m["text"] for m in h.slack.messages(CHANNEL)]
    assert sorted(line.split(" will present")[0] for line in lines) == [f"📅 <@U{k + 1}>" for k in range(4)]


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_announcements_held_by_a_rate_limit_keep_their_order_and_wait_their_turn(h):
    h.slack.fail_next("chat.postMessage", status=429, retry_after=3)
    assert "You're signed up" in h.command("signup 8", user="U1", drain=False)["text"]
    assert h.slack.wait_for(lambda s: s.calls_to("chat.postMessage"))
    assert "You're signed up" in h.command("signup 9", user="U2", drain=False)["text"]
    h.bot.send_outbox()  # a round of the sender while Slack holds the channel off
    assert [c.status for c in h.slack.calls_to("chat.postMessage")] == [429]  # U2's line waits too
    h.bot.drain(30)
    assert [c.status for c in h.slack.calls_to("chat.postMessage")] == [429, 200, 200]
    assert [line.split(" will present")[0] for line in channel_lines(h.slack)] == ["📅 <@U1>", "📅 <@U2>"]


@pytest.mark.slow
def test_an_announcement_waits_out_any_number_of_rate_limits(h):
    for _ in range(12):  # as many as the tries a failing line gets: a rate limit is not a failure
        h.slack.fail_next("chat.postMessage", status=429, retry_after=1)
    assert "You're signed up" in h.command("signup 8", user="U1", drain=False)["text"]
    assert h.slack.wait_for(lambda s: len(s.messages(CHANNEL)) == 1, timeout=40)
    assert "<@U1> will present" in channel_lines(h.slack)[0]


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_channel_that_refuses_an_announcement_is_told_to_the_admins_and_the_lines_follow_in_order(
    h, caplog, monkeypatch
):
    monkeypatch.setattr(outbox_sender, "REFUSED_ANNOUNCEMENT_WAIT", 1.0)  # a minute, in the bot
    h.slack.members.discard(CHANNEL)  # the bot is not invited yet
    for k, paper in enumerate((7, 8, 9)):
        said = h.command(f"signup {paper}", user=f"U{k + 1}", drain=False)
        assert "You're signed up" in blocks_text(valid(said))
    assert h.slack.wait_for(lambda s: s.messages("DUADMIN"))
    refused = [c for c in h.slack.calls_to("chat.postMessage") if c.params.get("channel") == CHANNEL]
    # A try more while still refused.
    assert h.slack.wait_for(
        lambda s: len([c for c in s.calls_to("chat.postMessage") if c.params.get("channel") == CHANNEL]) > len(refused)
    )
    assert "could not announce" in caplog.text and "not_in_channel" in caplog.text
    [to_admin] = h.slack.messages("DUADMIN")  # one message for all three lines
    assert "not_in_channel" in to_admin["text"] and "/invite @paperbot" in to_admin["text"]
    assert h.slack.messages(CHANNEL) == []
    # Invited: the lines follow within the wait, in the order of the changes.
    h.slack.members.add(CHANNEL)
    assert h.slack.wait_for(lambda s: len(s.messages(CHANNEL)) == 3, timeout=15)
    lines = channel_lines(h.slack)
    assert [f"<@U{k}> will present" in line for k, line in enumerate(lines, 1)] == [True] * 3
    assert len(h.slack.messages("DUADMIN")) == 1


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "block_actions", "actions": [{"type": "button", "action_id": "from-an-older-version", "value": "x"}]},
        {"type": "view_closed", "view": {"id": "V9", "type": "modal", "callback_id": "add_paper"}},
        {"type": "view_submission", "view": {"id": "V9", "type": "modal", "callback_id": "unknown_form"}},
        {"type": "shortcut", "callback_id": "not_declared", "trigger_id": "1.2.3"},
        {"type": "message_action", "callback_id": "not_declared", "trigger_id": "1.2.3"},
        {"type": "block_suggestion", "action_id": "a-menu", "block_id": "b", "value": "x"},
    ],
    ids=["old button", "closed modal", "unknown form", "shortcut", "message shortcut", "menu options"],
)
def test_what_paperbot_does_not_handle_is_acknowledged_quietly(h, payload, caplog):
    """Slack shows the user an error, and retries, for anything not answered with a 200."""
    payload = {"team": {"id": "T0TEST"}, "user": {"id": "U1"}, "api_app_id": "A0TEST", **payload}
    response = h.dispatch(urlencode({"payload": json.dumps(payload)}))
    assert response.status == 200, response.body
    assert "Suggestion" not in caplog.text and h.slack.messages(CHANNEL) == []


def test_a_button_from_an_older_paperbot_tells_the_clicker_it_no_longer_works(h):
    url = h.click({"action_id": "signup_button_v1", "value": "5"}, user="U1")
    [answer] = h.slack.responses_to(url)
    assert "no longer works" in answer["text"] and answer["response_type"] == "ephemeral"
    assert not answer["replace_original"]
    h.click({"action_id": "signup_button_v1", "value": "5"}, user="U1", container="view")
    assert "no longer works" in blocks_text(h.slack.home_views["U1"])


def test_a_slash_command_paperbot_does_not_declare_gets_a_short_answer(h):
    reply = h.command("list", command="/papers")
    assert reply["text"] == "paperbot answers `/paper` only, not `/papers`." and h.slack.messages(CHANNEL) == []


def test_an_event_paperbot_does_not_subscribe_to_is_acknowledged(h):
    assert h.event({"type": "message", "channel": CHANNEL, "user": "U1", "text": "hi", "ts": "1.1"}) == 200


@pytest.mark.parametrize("answer", ["response_url", "chat.postEphemeral"])
def test_an_answer_whose_connection_dropped_after_slack_took_it_is_not_given_twice(h, answer):
    if answer == "chat.postEphemeral":  # the add form's confirmation
        h.slack.fail_next("chat.postEphemeral", accept_then="drop")
        assert h.submit("add_paper", {"title": "Ring Attention", "url": None, "summary": None, "tags": None}) == {}
        h.bot.drain()
        assert len(h.slack.ephemerals) == 1
        return
    [signup] = [b for b in buttons(valid(h.command("show 5"))) if b["value"].startswith("signup")]
    url = h.slack.response_url()
    h.slack.fail_next("response_url", accept_then="drop")
    h.click(signup, user="U1", response_url=url)
    assert len(h.slack.responses_to(url)) == 1 and not h.slack.ephemerals


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
@pytest.mark.parametrize("fault", ["drop", "hang", "drop, then a rate-limited look", "drop, then a failing look"])
def test_an_announcement_slack_took_without_answering_is_not_posted_twice(h, fault, monkeypatch):
    """The line was in the channel; the bot never heard back (a dropped connection, a timeout)."""
    from slack_sdk import WebClient

    if fault == "hang":  # the posting client gives up before Slack answers
        short = WebClient(base_url=h.slack.api_url, token="xoxb-test", timeout=0.5, retry_handlers=[])
        monkeypatch.setattr(h.bot.transport, "client", short)
    if fault.endswith("rate-limited look"):  # looking in the channel is held off too: the line waits
        h.slack.fail_next("conversations.history", status=429, retry_after=1)
    if fault.endswith("failing look"):  # Slack fails for now: looked for again later, not re-posted
        h.slack.fail_next("conversations.history", status=500)
    h.slack.fail_next("chat.postMessage", accept_then=fault.split(",")[0], seconds=1.5)
    assert "You're signed up" in h.command("signup 7 next", user="U1")["text"]
    deadline = time.monotonic() + 30  # a backstop: the loop ends when the outbox is empty
    while h.bot.store.db.execute("SELECT count(*) FROM outbox").fetchone()[0] and time.monotonic() < deadline:
        time.sleep(0.2)
        h.bot.send_outbox()
        h.bot.drain()
    time.sleep(1.5)  # a hung answer has arrived meanwhile
    assert len(channel_lines(h.slack)) == 1 and "<@U1> will present" in channel_lines(h.slack)[0]
    assert h.bot.store.db.execute("SELECT count(*) FROM outbox").fetchone() == (0,)


def test_an_announcement_waits_while_replies_are_under_way_and_goes_once_they_are_done(h):
    """Posting a line takes the bot's CPU, under the GIL, from the replies made meanwhile: it goes
    in the first quiet moment after them."""
    under_way, done = threading.Event(), threading.Event()

    def a_reply_under_way():
        with h.bot.replies.one():
            under_way.set()
            done.wait(60)  # a backstop: the test ends it

    other = threading.Thread(target=a_reply_under_way)
    other.start()
    under_way.wait(5)
    assert "You're signed up" in h.command("signup 7 next", user="U1", drain=False)["text"]
    time.sleep(0.3)  # well past the quiet gap: the other reply still holds the line back
    assert channel_lines(h.slack) == []
    done.set()
    other.join()
    assert h.slack.wait_for(lambda s: s.messages(CHANNEL))
    assert channel_lines(h.slack)[0].startswith("📅 <@U1> will present #7")


def test_a_bot_that_is_never_quiet_still_announces(h, monkeypatch):
    from bot.delivery import answer_time

    stop = threading.Event()

    def replies_without_end():
        while not stop.is_set():
            with h.bot.replies.one():
                time.sleep(0.005)

    busy = threading.Thread(target=replies_without_end)
    busy.start()
    try:
        asked = time.monotonic()
        assert "You're signed up" in h.command("signup 7 next", user="U1", drain=False)["text"]
        # The replies never stop: without QUIET_LONGEST the line would never go. That it goes within
        # about that second on a loaded machine is the benchmark's to measure, not this test's.
        assert h.slack.wait_for(lambda s: s.messages(CHANNEL), timeout=20)
        assert time.monotonic() - asked < answer_time.QUIET_LONGEST + 10
    finally:
        stop.set()
        busy.join()


def test_a_stop_does_not_wait_for_a_quiet_moment():
    from bot.delivery.answer_time import Replies

    replies, stop = Replies(gap=0.02, longest=60), threading.Event()
    with replies.one():  # a reply that never ends
        threading.Timer(0.2, stop.set).start()
        began = time.monotonic()
        replies.wait_for_quiet(began, stop)
        assert time.monotonic() - began < 10  # not the 60 s a busy bot would wait


def test_an_announcement_is_sent_soon_after_a_round_of_the_sender_failed(h, monkeypatch):
    """A sender round that fails (the database held past its busy timeout) leaves the line in the
    outbox; it goes out a moment later, not at the scheduler's next 30-second check."""
    import sqlite3

    from bot.delivery import outbox

    real_take, failed = outbox.take, []

    def take_failing_once(store, *args, **kwargs):
        if not failed:
            failed.append(True)
            raise sqlite3.OperationalError("database is locked")
        return real_take(store, *args, **kwargs)

    monkeypatch.setattr(outbox, "take", take_failing_once)
    assert "You're signed up" in h.command("signup 7 next", user="U1", drain=False)["text"]
    assert h.slack.wait_for(lambda s: s.messages(CHANNEL), timeout=15), "the line waited for the 30-second check"
    assert failed and channel_lines(h.slack)[0].startswith("📅 <@U1> will present #7")


def test_the_outbox_keeps_what_happened_and_slack_draws_it_when_sending(h):
    """The row holds the change (no Block Kit); the line drawn from it is the same as ever."""
    from bot.delivery import outbox
    from bot.schedule import signups
    from bot.schedule.signups import Member

    # A sign-up whose line is not sent yet.
    signups.signup(
        h.bot.store, h.bot.group, h.bot.clock(), Member("U1"), "streaming-diloco", "next", then=h.bot.queue_change
    )
    [item] = outbox.take(h.bot.store, limit=5)
    outbox.release(h.bot.store, item)
    assert item.payload["change"]["action"] == "signup" and item.payload["change"]["line"]["presenter"] == "U1"
    assert "blocks" not in json.dumps(item.payload) and "message" not in item.payload
    h.bot.send_outbox()
    h.bot.drain()
    [line] = channel_lines(h.slack)
    assert line.startswith("📅 <@U1> will present #29 Streaming DiLoCo")


def test_an_announcement_an_older_paperbot_queued_is_still_sent_after_an_upgrade(h):
    """Its row holds the Block Kit message it was queued with: sent as it is."""
    from bot.delivery import outbox

    old = {"text": "📅 <@U9> will present #7 an old line", "blocks": []}
    with h.bot.store.write() as db:
        outbox.queue(db, [(outbox.ItemKind.ANNOUNCE, {"channel": CHANNEL, "message": old, "about": "signup of W50"})])
    h.bot.send_outbox()
    h.bot.drain()
    assert channel_lines(h.slack) == ["📅 <@U9> will present #7 an old line"]
