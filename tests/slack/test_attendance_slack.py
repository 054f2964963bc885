"""Going and can't go on Slack: the weekly post's buttons, typed, the post's count kept up to date, `past`."""

from __future__ import annotations

import pytest

from bot.announcing import sender as outbox_sender
from bot.schedule import weekly
from tests.support.block_kit import blocks_text, buttons, valid
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL
from tests.support.slack_standin import check_message


@pytest.fixture
def clock():
    return Clock(at("2026-12-07 09:00"))


@pytest.fixture
def h(make_harness, clock):
    return make_harness(clock)


def post_it(h, clock) -> dict:
    weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))
    clock.set(at("2026-12-07 09:05"))
    [post] = h.slack.messages(CHANNEL)
    return post


def button(post: dict, label: str) -> dict:
    [found] = [b for b in buttons(post) if b["text"]["text"] == label]
    return found


def test_three_members_press_going_and_the_post_says_3_going(h, clock):
    post = post_it(h, clock)
    check_message(post)
    assert "*0* going · 0 questions" in blocks_text(post)
    going = button(post, "Going")
    assert going["value"] == "going 2026-12-10" and button(post, "Can't go")["value"] == "cantgo 2026-12-10"
    for user in ("U1", "U2", "U3"):
        url = h.click(going, user=user, message=post)
        [answer] = h.slack.responses_to(url)
        assert answer["response_type"] == "ephemeral" and not answer["replace_original"]  # the post stays
        assert "You're going to the meeting on" in blocks_text(answer)
    assert h.slack.wait_for(lambda s: "*3* going" in blocks_text(s.messages(CHANNEL)[0]))
    post = h.slack.messages(CHANNEL)[0]
    check_message(post)
    assert len(h.slack.messages(CHANNEL)) == 1  # edited in place: no line in the channel
    assert "3 going" in post["text"]


def test_going_again_takes_it_back_and_cantgo_is_not_counted(h, clock):
    post = post_it(h, clock)
    h.click(button(post, "Going"), user="U1", message=post)
    h.click(button(post, "Going"), user="U2", message=post)
    url = h.click(button(post, "Going"), user="U1", message=post)
    assert "You took back that you're going" in blocks_text(h.slack.responses_to(url)[0])
    assert "(1 going)" in blocks_text(h.slack.responses_to(url)[0])
    said = valid(h.command("cantgo", user="U3"))
    assert "you can't go to the meeting on" in blocks_text(said)
    said = valid(h.command("cantgo 2026-12-10", user="U2"))  # going before: now not
    assert "(0 going)" in blocks_text(said)
    assert h.slack.wait_for(lambda s: "*0* going" in blocks_text(s.messages(CHANNEL)[0]))
    assert h.bot.store.db.execute("SELECT member, going FROM attendance ORDER BY member").fetchall() == [
        ("U2", 0),
        ("U3", 0),
    ]
    said = valid(h.command("cantgo", user="U3"))
    assert "You took back that you can't go" in blocks_text(said)


def test_clicks_in_a_row_make_one_edit_of_the_post_once_the_channel_is_quiet(h, clock, monkeypatch):
    post = post_it(h, clock)
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_QUIET", 0.5)
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_LONGEST_HOLD", 60.0)
    for user in ("U1", "U2", "U3", "U4"):
        h.click(button(post, "Going"), user=user, message=post, drain=False)
    assert h.slack.wait_for(lambda s: s.calls_to("chat.update"))
    h.bot.drain()
    [update] = h.slack.calls_to("chat.update")
    assert update.status == 200 and "*4* going" in blocks_text(h.slack.messages(CHANNEL)[0])


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("going 2026-12-03", "is over"),
        ("going 2026-12-17", "it is skipped"),
        ("going someday", "is not a date"),
        ("cantgo 2026-13-40", "is not a real date"),
    ],
)
def test_a_meeting_over_skipped_or_no_date_gets_one_line_and_changes_nothing(h, clock, typed, said):
    post_it(h, clock)
    h.command("skip 2026-12-17", user="UADMIN")
    answer = h.command(typed, user="U1")
    assert said in answer["text"] and len(answer["text"].splitlines()) == 1
    assert h.bot.store.db.execute("SELECT count(*) FROM attendance").fetchone()[0] == 0


def test_past_shows_how_many_went(h, clock):
    post = post_it(h, clock)
    h.command("signup 5 2026-12-10", user="U9")
    for user in ("U1", "U2", "U3"):
        h.click(button(post, "Going"), user=user, message=post)
    assert "3 going" not in blocks_text(h.command("past"))  # not given yet
    clock.set(at("2026-12-11 10:00"))
    shown = valid(h.command("past"))
    assert "<@U9>" in blocks_text(shown) and "3 going" in blocks_text(shown)
    assert "is over" in h.command("going 2026-12-10", user="U4")["text"]  # over: refused
    assert "3 going" in blocks_text(h.command("past"))
