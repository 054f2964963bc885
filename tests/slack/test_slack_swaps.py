"""Swaps, late drop-outs and `due`, as Slack sends them: the offer's buttons in a direct message, both
weeks changed at once, the open slot's one line and the due members' one message each."""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta

import pytest

from tests.support.block_kit import blocks_text, buttons, valid
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL
from tests.support.slack_harness import slash_form
from tests.support.slack_standin import check_message


@pytest.fixture
def clock():
    return Clock(at("2026-12-02 10:00"))


@pytest.fixture
def h(make_harness, clock):
    return make_harness(clock)


def channel_lines(slack) -> list[str]:
    return [html.unescape(m["text"]) for m in slack.messages(CHANNEL)]


def schedule(h) -> str:
    return html.unescape(blocks_text(h.command("schedule", user="U9")))


def booked(h):
    """U1 presents #7 on Thu 10 Dec, U2 #8 on Thu 17 Dec; U1 offers U2 a swap."""
    h.command("signup 7 2026-12-10", user="U1")
    h.command("signup 8 2026-12-17", user="U2")
    reply = valid(h.command("swap 2026-12-17 <@U2>", user="U1"))
    assert "You offered <@U2>" in html.unescape(blocks_text(reply))
    [offer] = h.slack.messages("DU2")
    check_message(offer)
    assert "<@U1> asks to swap weeks with you" in html.unescape(blocks_text(offer))
    accept, decline = buttons(offer)
    assert (accept["value"], decline["value"]) == ("swap accept 2026-12-17 U1", "swap decline 2026-12-17 U1")
    return accept, decline


def answer_of(h, url: str) -> str:
    [answer] = h.slack.responses_to(url)
    return html.unescape(blocks_text(answer))


def test_an_accepted_swap_changes_both_weeks_at_once_and_tells_the_channel_once(h):
    accept, _ = booked(h)
    assert "Swapped: you present *#8*" in answer_of(h, h.click(accept, user="U2"))
    lines = channel_lines(h.slack)
    [swapped] = [line for line in lines if "swapped weeks" in line]
    assert swapped.startswith("🔁 <@U1> and <@U2> swapped weeks") and "\n" not in swapped
    shown = schedule(h)
    [tenth] = [line for line in shown.splitlines() if "10 Dec" in line]
    [seventeenth] = [line for line in shown.splitlines() if "17 Dec" in line]
    assert "#8" in tenth and "<@U2>" in tenth, shown  # each keeps their paper, in the other's week
    assert "#7" in seventeenth and "<@U1>" in seventeenth, shown
    mine = html.unescape(blocks_text(h.command("mine", user="U1")))
    assert "#7" in mine and "17 Dec" in mine and "10 Dec" not in mine
    # A second click of Accept changes nothing more and says so; the channel heard it once.
    assert "accepted this offer already" in answer_of(h, h.click(accept, user="U2"))
    assert schedule(h) == shown
    assert sum("swapped weeks" in line for line in channel_lines(h.slack)) == 1
    assert any("accepted your swap" in html.unescape(m["text"]) for m in h.slack.messages("DU1"))


def test_a_declined_swap_changes_nothing_and_tells_the_offerer(h):
    _, decline = booked(h)
    before = schedule(h)
    assert "You declined <@U1>'s swap" in answer_of(h, h.click(decline, user="U2"))
    assert schedule(h) == before
    assert not any("swapped" in line for line in channel_lines(h.slack))
    assert any("declined to swap weeks" in html.unescape(m["text"]) for m in h.slack.messages("DU1"))
    accept = {**decline, "value": "swap accept 2026-12-17 U1"}  # answered: Accept no longer does anything
    assert "declined this offer already" in answer_of(h, h.click(accept, user="U2"))
    assert schedule(h) == before


def test_only_the_member_asked_can_accept(h):
    accept, _ = booked(h)
    before = schedule(h)
    assert "This offer is for <@U2> to answer, not you" in answer_of(h, h.click(accept, user="U3"))
    assert schedule(h) == before
    assert "Swapped" in answer_of(h, h.click(accept, user="U2"))  # still open for U2


def test_an_offer_whose_weeks_changed_since_never_applies(h):
    accept, _ = booked(h)
    h.command("withdraw 2026-12-10", user="U1")
    h.command("signup 9 2026-12-10", user="U3")
    before = schedule(h)
    assert "The weeks changed since <@U1> offered this swap" in answer_of(h, h.click(accept, user="U2"))
    assert schedule(h) == before and "<@U3>" in before
    assert not any("swapped" in line for line in channel_lines(h.slack))


@pytest.mark.parametrize(
    ("who", "typed", "said"),
    [
        ("U3", "swap 2026-12-17 <@U2>", "Only a presenter can swap weeks"),
        ("U1", "swap 2026-12-24 <@U2>", "<@U2> does not present in the week of"),
        ("U1", "swap 2026-12-10 <@U2>", "You present in the week of"),
        ("U1", "swap 2026-12-17 <@U1>", "That is you"),
    ],
)
def test_swaps_that_cannot_be_are_refused_in_one_line(h, who, typed, said):
    h.command("signup 7 2026-12-10", user="U1")
    h.command("signup 8 2026-12-17", user="U2")
    reply = valid(h.command(typed, user=who))
    assert said in html.unescape(blocks_text(reply)) and "\n" not in reply["text"]
    assert h.slack.messages("DU2") == []


def test_an_offer_made_twice_is_sent_once(h):
    booked(h)
    again = html.unescape(blocks_text(h.command("swap 2026-12-17 <@U2>", user="U1")))
    assert "You offered that swap already" in again
    h.bot.send_notes()  # the scheduler's check, after a crash say
    assert len(h.slack.messages("DU2")) == 1


def took_part(h, clock):
    """Members of the group: U2 and U3 presented in November (U3 later), UADMIN voted, UOWNER said going after
    that (the tables keep real time); U1 presents on Thu 10 Dec."""
    clock.set(at("2026-11-01 10:00"))
    h.command("signup 11 2026-11-05", user="U2")
    h.command("signup 12 2026-11-12", user="U3")
    h.command("vote 13", user="UADMIN")
    with h.bot.store.write() as db:
        db.execute(
            "INSERT INTO attendance (group_id, week, member, going, said_at) VALUES (1, '2026-W46', 'UOWNER', 1, ?)",
            [(datetime.now(UTC) + timedelta(minutes=1)).isoformat(timespec="seconds")],
        )
    h.command("signup 7 2026-12-10", user="U1")


def test_due_lists_never_presented_first_then_longest_since_their_talk(h, clock):
    took_part(h, clock)
    clock.set(at("2026-12-02 10:00"))
    shown = html.unescape(blocks_text(valid(h.command("due", user="U9"))))
    order = [shown.index(f"<@{u}>") for u in ("UADMIN", "UOWNER", "U2", "U3", "U1")]
    assert order == sorted(order), shown
    assert "never presented" in shown.split("<@U2>")[0]
    assert "last presented" in shown.split("<@U2>")[1].split("\n")[0]
    assert "presents" in shown.split("<@U1>")[1]  # a coming talk: last, with its date


def test_a_late_withdrawal_opens_the_slot_loudly_once(h, clock):
    took_part(h, clock)
    clock.set(at("2026-12-08 17:00"))  # two days before the meeting: inside PAPERBOT_REMIND_DAYS
    before = len(channel_lines(h.slack))
    body = slash_form("withdraw 2026-12-10", "U1", h.slack.response_url())
    first, again = (h.dispatch(body) for _ in range(2))  # the request, and the same again: refused, nothing more
    assert "members due to present are asked to step in" in html.unescape(first.body)
    assert "Nobody presents in the week" in html.unescape(again.body)
    h.bot.send_notes()  # and the scheduler's check after it
    h.bot.drain()
    new = h.slack.messages(CHANNEL)[before:]
    assert len(new) == 1, channel_lines(h.slack)
    [line] = new
    check_message(line)
    assert html.unescape(line["text"]).startswith("🆘 ")
    [signup] = buttons(line)
    assert signup["value"] == "signup 7 2026-12-10"
    for member in ("UADMIN", "UOWNER", "U2"):  # the three due first
        [dm] = h.slack.messages("D" + member)
        check_message(dm)
        assert "could you step in" in html.unescape(blocks_text(dm))
        assert buttons(dm)[0]["value"] == "signup 7 2026-12-10"
    assert h.slack.messages("DU3") == [] and h.slack.messages("DU1") == []
    url = h.click(signup, user="UADMIN", message=line)
    assert "You're signed up" in answer_of(h, url)
    h.bot.send_notes()
    assert len(h.slack.messages("DUADMIN")) == 1


def test_an_early_withdrawal_is_announced_as_before(h, clock):
    took_part(h, clock)
    clock.set(at("2026-12-02 10:00"))
    h.command("withdraw 2026-12-10", user="U1")
    h.bot.send_notes()
    line = h.slack.messages(CHANNEL)[-1]
    assert html.unescape(line["text"]).startswith("🔓 ") and not buttons(line)
    assert all(h.slack.messages("D" + m) == [] for m in ("U2", "UADMIN", "UOWNER"))


def test_an_offer_in_a_second_groups_channel_is_answered_from_the_direct_message(h):
    from bot.chat import commands

    h.command("group start", user="UADMIN", channel_id="C0OTHER")
    h.command("signup 7 2026-12-10", user="U1", channel_id="C0OTHER")
    h.command("signup 8 2026-12-17", user="U2", channel_id="C0OTHER")
    assert "You offered" in blocks_text(h.command("swap 2026-12-17 <@U2>", user="U1", channel_id="C0OTHER"))
    [offer] = h.slack.messages("DU2")
    accept, _ = buttons(offer)
    # Clicked in the direct message: no group's channel, two groups; the offer knows its own.
    answer = commands.run(h.bot.context("U2", where="DU2"), accept["value"])
    assert "Swapped" in html.unescape("".join(s if isinstance(s, str) else "" for s in answer.reply.text))
    shown = html.unescape(blocks_text(h.command("schedule", user="U9", channel_id="C0OTHER")))
    assert shown.index("<@U2>") < shown.index("<@U1>"), shown


def test_an_offer_whose_process_stopped_before_its_dm_is_sent_by_the_next_check(h, clock):
    from bot.runtime.scheduler import ScheduledChecks
    from bot.schedule import swaps
    from bot.schedule.signups import Member

    h.command("signup 7 2026-12-10", user="U1")
    h.command("signup 8 2026-12-17", user="U2")
    swaps.offer(h.bot.store, h.bot.group, clock.now, Member("U1"), "2026-12-17", "U2")  # saved; the DM never went
    ticker = ScheduledChecks(h.bot.store, h.bot.settings, h.bot.transport, clock=h.bot.clock)
    ticker.check_reminders()
    ticker.check_reminders()
    [offer] = h.slack.messages("DU2")
    assert [b["value"] for b in buttons(offer)][0] == "swap accept 2026-12-17 U1"
