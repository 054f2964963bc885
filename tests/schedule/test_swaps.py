"""Swaps and openings in the core: one transaction, links with their talks, notes sent once."""

from __future__ import annotations

import html

import pytest
from slack_sdk import WebClient

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.schedule import notes, openings, signups, slots, swaps, talks
from bot.schedule.signups import Member, Refusal
from bot.slack.client import SlackTransport
from tests.support.clock import TZ, at

NOW = at("2026-12-02 10:00")


@pytest.fixture
def group():
    return MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ), remind_days=2)


@pytest.fixture
def transport(slack):
    return SlackTransport(WebClient(base_url=slack.api_url, token="xoxb-test", retry_handlers=[]))


def presenters(store, group) -> dict[str, tuple[str, int]]:
    return {line.week.key: (line.presenter, line.paper.number) for line in slots.schedule(store, group, NOW)
            if hasattr(line, "presenter")}  # fmt: skip


def test_an_accepted_swap_moves_each_talk_with_its_links(store, group):
    signups.signup(store, group, NOW, Member("U1"), "7", "2026-12-10")
    signups.signup(store, group, NOW, Member("U2"), "8", "2026-12-17")
    talks.attach(store, group, NOW, Member("U1"), "2026-12-10", "https://example.org/u1-slides.pdf")
    swaps.offer(store, group, NOW, Member("U1"), "2026-12-17", "U2")
    changes = []
    offer, change = swaps.answer(store, group, NOW, Member("U2"), "accept", "2026-12-17", "U1", then=changes.append)
    assert changes == [change] and change is not None and set(change.weeks) == {offer.by_week, offer.to_week}
    assert presenters(store, group) == {"2026-W50": ("U2", 8), "2026-W51": ("U1", 7)}
    [moved] = [t for t in talks.past(store, group, at("2027-01-01 10:00"), 1)[0] if t.links]
    assert moved.line.presenter == "U1" and moved.line.week.key == "2026-W51"


def test_an_offer_to_someone_who_withdrew_and_came_back_in_another_week_is_stale(store, group):
    signups.signup(store, group, NOW, Member("U1"), "7", "2026-12-10")
    signups.signup(store, group, NOW, Member("U2"), "8", "2026-12-17")
    swaps.offer(store, group, NOW, Member("U1"), "2026-12-17", "U2")
    signups.withdraw(store, group, NOW, Member("U1"), "7")
    signups.signup(store, group, NOW, Member("U1"), "9", "2026-12-10")  # another paper: not what was offered
    with pytest.raises(Refusal, match="changed since"):
        swaps.answer(store, group, NOW, Member("U2"), "accept", "2026-12-17", "U1")
    assert presenters(store, group) == {"2026-W50": ("U1", 9), "2026-W51": ("U2", 8)}


def test_an_offer_whose_dm_slack_took_without_answering_is_found_not_sent_again(store, group, transport, slack):
    signups.signup(store, group, NOW, Member("U1"), "7", "2026-12-10")
    signups.signup(store, group, NOW, Member("U2"), "8", "2026-12-17")
    swaps.offer(store, group, NOW, Member("U1"), "2026-12-17", "U2")
    slack.fail_next("chat.postMessage", accept_then="drop")
    notes.send_due_in(store, [group], transport, NOW, sleep=lambda s: None)
    notes.send_due_in(store, [group], transport, NOW, sleep=lambda s: None)  # the next check: the row is told
    [dm] = slack.messages("DU2")
    assert "asks to swap weeks" in html.unescape(dm["text"])


def test_an_answered_offer_is_not_sent(store, group, transport, slack):
    signups.signup(store, group, NOW, Member("U1"), "7", "2026-12-10")
    signups.signup(store, group, NOW, Member("U2"), "8", "2026-12-17")
    swaps.offer(store, group, NOW, Member("U1"), "2026-12-17", "U2")
    swaps.answer(store, group, NOW, Member("U2"), "decline", "2026-12-17", "U1")  # typed before the DM went
    assert notes.send_due_in(store, [group], transport, NOW) == 0 and slack.messages("DU2") == []


def test_an_opening_taken_before_its_call_goes_tells_nobody(store, group, transport, slack):
    signups.signup(store, group, at("2026-11-01 10:00"), Member("U2"), "11", "2026-11-05")
    signups.signup(store, group, NOW, Member("U1"), "7", "2026-12-10")
    late = at("2026-12-08 17:00")
    change = signups.withdraw(store, group, late, Member("U1"), "7")
    assert change.opening
    signups.signup(store, group, late, Member("U3"), "7", "2026-12-10")  # someone stepped in at once
    assert notes.send_due_in(store, [group], transport, late) == 0 and slack.messages("DU2") == []


def test_an_early_withdrawal_is_no_opening(store, group):
    signups.signup(store, group, NOW, Member("U1"), "7", "2026-12-10")
    assert not signups.withdraw(store, group, at("2026-12-08 15:59"), Member("U1"), "7").opening
    signups.signup(store, group, NOW, Member("U1"), "7", "2026-12-10")
    assert signups.withdraw(store, group, at("2026-12-08 16:00"), Member("U1"), "7").opening


def test_due_puts_members_with_a_coming_talk_last(store, group):
    signups.signup(store, group, at("2026-11-01 10:00"), Member("U2"), "11", "2026-11-05")
    signups.signup(store, group, at("2026-11-01 10:00"), Member("U3"), "12", "2026-11-12")
    signups.signup(store, group, NOW, Member("U2"), "13", "2026-12-17")
    order = [d.member for d in openings.due(store, group, NOW)]
    assert order == ["U3", "U2"]  # U2 presented longer ago, but is booked already
