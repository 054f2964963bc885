"""Questions for a meeting in the core: kept per meeting and numbered, shown with each talk in
`show` and on the group's page, and only the asker or an admin removes one."""

from __future__ import annotations

import pytest

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.chat import commands, context
from bot.console.render import render as console_text
from bot.schedule import questions
from bot.schedule.signups import Member, Refusal
from bot.web import site
from tests.support.clock import TZ, at


@pytest.fixture
def group():
    return MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))


def run(store, group, line: str, user: str = "U1", when: str = "2026-12-02 10:00", admin: bool = False) -> str:
    ctx = context.Context(store, group, Member(user, lambda: admin), at(when))
    return console_text(commands.run(ctx, line).reply)


def test_questions_are_kept_per_meeting_oldest_first(store, group):
    now = at("2026-12-02 10:00")
    first = questions.ask(store, group, now, "U1", "slack", "  Why?  ", None)
    questions.ask(store, group, now, "U2", "slack", "How?", "2026-12-10")
    second = questions.ask(store, group, now, "U3", "slack", "What?", None)
    assert (first.number, second.number, first.text) == (1, 2, "Why?")
    coming = questions.of_meeting(store, 1, group.coming(now))
    assert [(q.number, q.asked_by, q.text) for q in coming] == [(1, "U1", "Why?"), (2, "U3", "What?")]


def test_a_date_is_taken_only_when_it_is_shaped_as_one(store, group):
    assert "question 1" in run(store, group, "ask 2026 looks like a year, not a date")
    [q] = questions.of_meeting(store, 1, group.coming(at("2026-12-02 10:00")))
    assert q.text == "2026 looks like a year, not a date"


def test_removing_is_the_askers_or_an_admins(store, group):
    now = at("2026-12-02 10:00")
    questions.ask(store, group, now, "U1", "slack", "Mine?", None)
    with pytest.raises(Refusal):
        questions.remove(store, group, now, Member("U2"), None, 1)
    with pytest.raises(Refusal):
        questions.remove(store, group, now, Member("U1"), None, 2)
    assert questions.remove(store, group, now, Member("UADMIN", lambda: True), None, 1).text == "Mine?"
    assert questions.of_meeting(store, 1, group.coming(now)) == []


def test_show_and_the_page_show_each_talks_questions(store, group):
    run(store, group, "signup streaming-diloco 2026-12-03")
    run(store, group, "ask Does the overlap hide all communication?", user="U2")
    run(store, group, "signup 7 2026-12-10", user="U3")
    run(store, group, "ask 2026-12-10 Which batch size?", user="U1")
    shown = run(store, group, "show streaming-diloco", when="2026-12-03 18:00")
    assert "1 question: Does the overlap hide all communication? (@U2)" in shown
    page = site.page(store, site.Group(1, group), at("2026-12-03 18:00"), ask=lambda user: None)
    assert "Does the overlap hide all communication?" in page and "Which batch size?" in page
    past = run(store, group, "past", when="2026-12-03 18:00")
    assert "1 question: Does the overlap" in past
    listed = run(store, group, "questions 2026-12-03", when="2026-12-20 10:00")  # a meeting long over
    assert "1. Does the overlap hide all communication? (@U2)" in listed


def test_a_question_cannot_carry_markup_onto_the_page(store, group):
    run(store, group, "ask <script>alert(1)</script>", user="U2")
    run(store, group, "signup 7 2026-12-03")
    page = site.page(store, site.Group(1, group), at("2026-12-02 10:00"), ask=lambda user: None)
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
