"""Questions before the meeting on Slack: asked, posted once in the weekly post's thread, listed in
the presenter's reminder and the digest, and in `past` after the meeting."""

from __future__ import annotations

import html
import json

import pytest

from bot.schedule import questions, reminders, weekly
from tests.support.block_kit import blocks_text, buttons, valid
from tests.support.clock import Clock, at
from tests.support.slack_door import Door
from tests.support.slack_group import CHANNEL
from tests.support.slack_harness import sign, slash_form
from tests.support.slack_standin import check_message, check_view


@pytest.fixture
def clock():
    return Clock(at("2026-12-02 10:00"))  # Wednesday; the meeting is Thursday 3 Dec at 16:00


@pytest.fixture
def h(make_harness, clock):
    return make_harness(clock)


@pytest.fixture
def door(h):
    d = Door(h)
    yield d
    d.close()


def post(h, clock) -> str:
    """The week's post, out: its ts, which opens the meeting's thread."""
    outcome = weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, clock())
    assert outcome.status == "sent"
    return outcome.result.sent.ref


def thread(h, ts: str) -> list[str]:
    return [html.unescape(m["text"]) for m in h.slack.replies(CHANNEL, ts)]


def test_two_questions_each_once_in_the_posts_thread_even_when_a_request_is_replayed(h, door, clock):
    ts = post(h, clock)
    status, reply = door.command("ask Why does DiLoCo need an outer optimizer?", user="U2")
    assert status == 200 and "Saved: question 1" in blocks_text(valid(reply))
    body = slash_form("ask And what about stragglers?", "U2", h.slack.response_url())
    headers = sign(body)
    status, raw = door.post(body, headers)
    assert status == 200 and "question 2" in blocks_text(valid(json.loads(raw)))
    assert door.post(body, headers)[0] == 401  # the replay: refused, nothing saved twice
    h.bot.drain()
    said = thread(h, ts)
    assert len(said) == 2, said
    assert said[0].startswith("Question 1 from <@U2>: Why does DiLoCo") and "stragglers" in said[1]
    for m in h.slack.replies(CHANNEL, ts):
        check_message(m)
    # The post counts them (its update held a moment, as for going).
    assert h.slack.wait_for(lambda s: "2 questions" in blocks_text(s.messages(CHANNEL)[0]), timeout=10)
    # The scheduler's check, another process's, a restart: nothing more.
    questions.discuss(h.bot.store, [h.bot.env], lambda g: h.bot.transport, clock())
    assert len(thread(h, ts)) == 2
    listed = blocks_text(valid(h.command("questions", user="U3")))
    assert "1. Why does DiLoCo need an outer optimizer? (<@U2>)" in html.unescape(listed)


def test_a_question_whose_answer_was_lost_is_found_in_the_thread_not_posted_again(h, clock):
    ts = post(h, clock)
    h.slack.fail_next("chat.postMessage", accept_then="drop")  # Slack took it; the answer never came
    h.command("ask Is the warmup needed?", user="U1")
    assert len(thread(h, ts)) == 1
    questions.discuss(h.bot.store, [h.bot.env], lambda g: h.bot.transport, clock(), sleep=lambda s: False)
    assert len(thread(h, ts)) == 1
    assert h.slack.calls_to("conversations.replies")  # it looked before sending again


def test_a_question_asked_before_the_post_waits_for_it(h, clock):
    clock.set(at("2026-12-06 12:00"))  # Sunday: next week's post is due Monday 09:00
    reply = valid(h.command("ask What batch size did they use?", user="U1"))
    assert "Thu 10 Dec" in reply["text"] and "once that is out" in reply["text"]
    assert h.slack.messages(CHANNEL) == []
    clock.set(at("2026-12-07 09:00"))
    ts = post(h, clock)
    questions.discuss(h.bot.store, [h.bot.env], lambda g: h.bot.transport, clock())
    assert thread(h, ts) == ["Question 1 from <@U1>: What batch size did they use?"]


def test_the_reminder_lists_the_questions_and_the_digest_goes_at_the_start(h, clock):
    h.command("signup streaming-diloco 2026-12-10", user="U1")
    h.command("ask 2026-12-10 How does it compare to FSDP?", user="U2")
    h.command("ask 2026-12-10 Any code?", user="U3")
    [sent] = reminders.send_due(h.bot.store, h.bot.group, h.bot.transport, at("2026-12-08 16:00"))
    assert sent.result.status == "sent"
    [dm] = h.slack.messages("DU1")
    check_message(dm)
    text = html.unescape(str(dm["blocks"]))
    assert "2 questions so far" in text and "How does it compare to FSDP? (<@U2>)" in text and "Any code?" in text
    clock.set(at("2026-12-07 09:00"))
    ts = post(h, clock)
    started = at("2026-12-10 16:00")
    questions.discuss(h.bot.store, [h.bot.env], lambda g: h.bot.transport, started)
    questions.discuss(h.bot.store, [h.bot.env], lambda g: h.bot.transport, at("2026-12-10 16:01"))
    said = thread(h, ts)
    assert len(said) == 3 and said[2].startswith("The meeting starts: 2 questions"), said


def test_past_shows_the_questions_after_the_meeting(h, clock):
    h.command("signup streaming-diloco 2026-12-03", user="U1")
    h.command("ask Why 4 bits?", user="U2")
    clock.set(at("2026-12-03 18:00"))
    shown = html.unescape(blocks_text(valid(h.command("past", user="U3"))))
    assert "1 question: Why 4 bits? (<@U2>)" in shown


def test_the_asker_or_an_admin_removes_a_question_no_one_else(h, clock):
    h.command("ask First?", user="U1")
    h.command("ask Second?", user="U2")
    refused = blocks_text(valid(h.command("questions remove 1", user="U2")))
    assert "Only its asker or an admin" in refused
    assert "Removed question 1" in blocks_text(valid(h.command("questions remove 1", user="U1")))
    assert "Removed question 1: Second?" in blocks_text(valid(h.command("questions remove 1", user="UADMIN")))
    assert "No questions" in blocks_text(valid(h.command("questions", user="U3")))


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("ask", "What is your question?"),
        ("ask " + "x" * 501, "keep it under 500"),
        ("ask 2026-11-26 Too late?", "is over"),
        ("ask 2026-13-40 When?", "not a real date"),
    ],
)
def test_bad_questions_get_one_line_and_change_nothing(h, typed, said):
    reply = blocks_text(valid(h.command(typed, user="U1")))
    assert said in reply and "\n" not in reply.strip()
    assert questions.of_meeting(h.bot.store, 1, h.bot.group.coming(at("2026-12-02 10:00"))) == []


def test_a_skipped_week_takes_no_questions(h):
    h.command("skip 2026-12-10", user="UADMIN")
    assert "it is skipped" in blocks_text(valid(h.command("ask 2026-12-10 Anyone?", user="U1")))


def test_the_post_has_an_ask_a_question_button(h, clock):
    post(h, clock)
    [message] = h.slack.messages(CHANNEL)
    assert any(b["text"]["text"] == "Ask a question" for b in buttons(message))


def test_the_posts_button_opens_a_form_whose_question_goes_in_the_thread(h, clock):
    ts = post(h, clock)
    [message] = h.slack.messages(CHANNEL)
    ask = next(b for b in buttons(message) if b["text"]["text"] == "Ask a question")
    h.click(ask, user="U3", message=message)
    [opened] = h.slack.calls_to("views.open")
    check_view(opened.params["view"], kind="modal")
    view = opened.params["view"]
    assert view["private_metadata"] == f"{CHANNEL}|2026-12-03"
    refused = h.submit(view["callback_id"], {"question": "  "}, user="U3", private_metadata=view["private_metadata"])
    assert refused["response_action"] == "errors" and "What is your question?" in refused["errors"]["question"]
    done = h.submit(
        view["callback_id"], {"question": "Is it open source?"}, user="U3", private_metadata=view["private_metadata"]
    )
    assert done["response_action"] == "update" and "Saved: question 1" in str(done["view"])
    assert thread(h, ts) == ["Question 1 from <@U3>: Is it open source?"]
