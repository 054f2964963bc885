"""One member cannot flood the channel: a member's announcements wait until they stop clicking a
moment, and go as one message of what stands (bot.announcing.sender.plan, bot.announcing.changes.net)."""

from __future__ import annotations

import html
import time

import pytest

from bot.announcing import changes as announce
from bot.announcing import sender as outbox_sender
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL
from tests.support.slack_standin import check_message

W1, W2, W3 = "2026-12-14", "2026-12-21", "2026-12-28"


@pytest.fixture
def h(make_harness, monkeypatch):
    harness = make_harness(Clock(at("2026-12-02 10:00")))
    # The bot's 5 s and 60 s, shortened: a member is quiet after half a second here.
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_QUIET", 0.5)
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_LONGEST_HOLD", 60.0)
    return harness


def messages(h) -> list[str]:
    return [html.unescape(m["text"]) for m in h.slack.messages(CHANNEL)]


def outbox_rows(h) -> int:
    return h.bot.store.db.execute("SELECT count(*) FROM outbox").fetchone()[0]


def sent_all(h, timeout: float = 20) -> None:
    """Wait until the outbox is empty: everything held has gone (or said nothing)."""
    deadline = time.monotonic() + timeout
    while outbox_rows(h) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert outbox_rows(h) == 0, "the outbox was not sent in time"
    h.bot.drain()


def said(h, line: str, user: str) -> str:
    return h.command(line, user=user, drain=False)["text"]


def never_quiet(monkeypatch) -> None:
    """The member clicks on without a pause as long as the sender's: however slowly a busy machine
    runs the test's commands, none of them is a pause that lets a held line go."""
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_QUIET", 600.0)


def quiet_now(h, monkeypatch) -> None:
    """The member has stopped: the held lines are due; the sender goes round at once."""
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_QUIET", 0.0)
    h.bot.send_outbox()


def test_a_flood_of_sign_ups_withdrawn_at_once_announces_nothing_and_the_schedule_is_right(h, monkeypatch):
    pairs = 200
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_LONGEST_HOLD", 600.0)
    never_quiet(monkeypatch)
    for _ in range(pairs):
        assert "You're signed up" in said(h, f"signup 7 {W1}", "U1")
        assert "You gave up" in said(h, f"withdraw {W1}", "U1")
    assert "You're signed up" in said(h, f"signup 8 {W2}", "U1")  # what stands at the end
    assert messages(h) == [], "a line went while the member was still clicking"
    quiet_now(h, monkeypatch)
    sent_all(h)
    assert messages(h) == [m for m in messages(h) if "#8" in m] and len(messages(h)) == 1, messages(h)
    assert "<@U1> will present #8" in messages(h)[0] and "\n" not in messages(h)[0]
    slots = h.bot.store.db.execute("SELECT week, presenter FROM slots WHERE kind = 'presenter'").fetchall()
    assert slots == [("2026-W52", "U1")]


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_member_who_never_stops_gets_one_message_per_longest_hold(h, monkeypatch):
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_LONGEST_HOLD", 1.0)
    never_quiet(monkeypatch)  # only the longest hold lets a line go while the member clicks on
    began, weeks = time.monotonic(), 0
    while time.monotonic() - began < 3.5:
        for paper, week in ((7, W1), (8, W2)):
            said(h, f"signup {paper} {week}", "U1")
            said(h, f"withdraw {week}", "U1")
            weeks += 2
        h.bot.send_outbox()  # the sender's rounds, as the member's replies wake it
    elapsed = time.monotonic() - began
    quiet_now(h, monkeypatch)
    sent_all(h)
    assert len(h.slack.calls_to("chat.postMessage")) <= elapsed / 1.0 + 2, (weeks, len(messages(h)))
    assert h.bot.store.db.execute("SELECT count(*) FROM slots").fetchone() == (0,)


def test_a_sign_up_withdrawn_at_once_announces_nothing(h):
    assert "You're signed up" in said(h, f"signup 7 {W1}", "U1")
    assert "You gave up" in said(h, f"withdraw {W1}", "U1")
    sent_all(h)
    assert messages(h) == []


def test_a_withdrawal_announces_the_week_that_stands_only(h):
    said(h, f"signup 7 {W1}", "U1")
    said(h, f"signup 8 {W2}", "U1")
    said(h, f"withdraw {W1}", "U1")
    sent_all(h)
    [line] = messages(h)
    assert line.startswith("📅 <@U1> will present #8") and "\n" not in line


def test_a_members_changes_close_together_go_as_one_message_a_line_a_week(h):
    said(h, f"signup 7 {W1}", "U1")
    said(h, f"signup 8 {W2}", "U1")
    said(h, f"withdraw {W1}", "U1")
    said(h, f"signup 9 {W1}", "U1")  # the first week again, another paper: in its first place
    sent_all(h)
    [message] = h.slack.messages(CHANNEL)
    check_message(message)
    lines = html.unescape(message["text"]).split("\n")
    assert [line.split(" will present #")[1].split(" ")[0] for line in lines] == ["9", "8"]
    assert all(line.startswith("📅 <@U1> will present") for line in lines)
    [section] = message["blocks"]
    assert section["text"]["text"].count("\n") == 1


def test_different_members_changes_are_each_announced_and_a_weeks_keep_their_order(h):
    said(h, f"signup 7 {W1}", "U1")
    said(h, f"signup 8 {W2}", "U2")
    said(h, f"signup 9 {W3}", "U1")
    said(h, f"unassign {W1}", "UADMIN")  # U1's sign-up, cleared by an admin: both are announced
    sent_all(h)
    lines = messages(h)
    assert len(lines) == 3, lines
    u1 = next(i for i, m in enumerate(lines) if m.startswith("📅 <@U1>"))
    u2 = next(i for i, m in enumerate(lines) if m.startswith("📅 <@U2>"))
    admin = next(i for i, m in enumerate(lines) if "open again" in m)
    assert lines[u1].count("\n") == 1 and "#7" in lines[u1] and "#9" in lines[u1] and "#8" in lines[u2]
    assert "<@U1> was to present #7" in lines[admin] and "(by <@UADMIN>)" in lines[admin]
    assert u1 < admin  # the week's sign-up before its clearing


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_merged_message_slack_took_without_answering_is_not_posted_twice(h):
    h.slack.fail_next("chat.postMessage", accept_then="drop")
    said(h, f"signup 7 {W1}", "U1")
    said(h, f"signup 8 {W2}", "U1")
    deadline = time.monotonic() + 20
    while outbox_rows(h) and time.monotonic() < deadline:
        time.sleep(0.2)
        h.bot.send_outbox()  # the retry looks in the channel first, for the message of both rows
    h.bot.drain()
    [message] = messages(h)
    assert "#7" in message and "#8" in message and outbox_rows(h) == 0


def test_net_keeps_a_lone_change_and_names_what_stands():
    signup = {
        "action": "signup",
        "week": "2026-W51",
        "meeting": "2026-12-17T17:00:00+00:00",
        "by": "U1",
        "line": {"state": "presenter", "presenter": "U1", "paper": 7},
        "before": None,
    }
    withdraw = {
        **signup,
        "action": "withdraw",
        "line": {"state": "open", "presenter": None, "paper": None},
        "before": signup["line"],
    }
    resign = {**signup, "line": {"state": "presenter", "presenter": "U1", "paper": 8}}
    assert announce.net([signup]) == [signup]
    assert announce.net([signup, withdraw]) == []
    assert announce.net([withdraw, resign]) == [
        {**resign, "action": "signup", "before": None}
    ]  # U1 presents #8 instead of #7: what stands
    admin_clears = {**withdraw, "by": "UADMIN"}
    assert announce.net([admin_clears, {**resign, "by": "UADMIN", "action": "assign"}, admin_clears]) == [
        {**admin_clears, "action": "unassign"}
    ]


def test_plan_merges_a_members_minute_keeps_a_weeks_order_and_holds_nobody_else():
    from bot.delivery.outbox import Waiting

    def row(id_: int, by: str, week: str, at: float, tried: bool = False, unit: tuple = ()) -> Waiting:
        return Waiting(id_, at, tried, unit, CHANNEL, by, week)

    def plan(items, now):
        return outbox_sender.plan(items, now, quiet=5, longest=60)

    # U1 quiet since 10 s, U2 still clicking: U1's rows go as one message; U2 is held until 5 s after
    # their last click, and U1's later row of U2's week waits for it.
    items = [row(1, "U1", "W1", 0), row(2, "U2", "W2", 1), row(3, "U1", "W3", 2), row(4, "U2", "W2", 20)]
    items.append(row(5, "U1", "W2", 3))
    assert plan(items, now=21) == outbox_sender.outbox.Plan([(1, 3)], ready_at=25)
    # Changes more than a minute apart (the bot was down) are not merged: the first minute goes first.
    apart = [row(1, "U1", "W1", 0), row(2, "U1", "W1", 100)]
    assert plan(apart, now=200).units == [(1,)]
    # A message planned (and tried) before goes again as it was, whatever came since.
    again = [row(1, "U1", "W1", 0, tried=True, unit=(1,)), row(2, "U1", "W1", 1)]
    assert plan(again, now=200).units == [(1,), (2,)]


def test_a_member_who_books_thirty_weeks_in_a_minute_gets_one_message_with_every_line(h):
    from datetime import date, timedelta

    for k in range(30):
        week = (date(2026, 12, 14) + timedelta(weeks=k)).isoformat()
        assert "You're signed up" in said(h, f"signup {k + 1} {week}", "U1")
    sent_all(h)
    [message] = h.slack.messages(CHANNEL)
    check_message(message)  # within Slack's limits: 50 blocks, 3000 characters a section
    assert len(message["blocks"]) >= 2, "the lines fill more than one section"
    lines = html.unescape(message["text"]).split("\n")
    assert [line.split(" will present #")[1].split(" ")[0] for line in lines] == [str(k + 1) for k in range(30)]
    shown = "\n".join(b["text"]["text"] for b in message["blocks"])
    assert all(f"#{k + 1}*" in shown or f"#{k + 1} " in shown for k in range(30))


def test_the_weekly_post_is_updated_at_once_while_the_announcement_waits(make_harness, monkeypatch):
    from bot.schedule import weekly
    from tests.support.block_kit import blocks_text, buttons

    clock = Clock(at("2026-12-07 09:00"))
    h = make_harness(clock)
    weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, clock())
    [post] = h.slack.messages(CHANNEL)
    [button] = [b for b in buttons(post) if b["action_id"].startswith("weekly:")]
    never_quiet(monkeypatch)  # U3 is still clicking: the line is held however long the update takes
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_LONGEST_HOLD", 600.0)
    clock.set(at("2026-12-07 09:05"))
    h.click(button, user="U3", message=post, drain=False)
    assert h.slack.wait_for(lambda s: "Presenter: <@U3>" in blocks_text(s.messages(CHANNEL)[0]))
    assert len(h.slack.messages(CHANNEL)) == 1  # the line waits for U3 to be quiet
    quiet_now(h, monkeypatch)
    sent_all(h)
    post, line = h.slack.messages(CHANNEL)
    assert "<@U3> will present" in line["text"]
