"""The look in a channel before a re-send reads only the messages since the unfinished attempt began,
a few pages of at most 15 (Slack lets apps outside its Marketplace read history once a minute), and
a look answered 429 waits as the platform says: no failure of the post."""

from __future__ import annotations

import pytest
from slack_sdk import WebClient

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.catalog.queries import open_store
from bot.delivery import sending as delivery
from bot.discord.rest import Rest
from bot.discord.transport import DiscordTransport, snowflake
from bot.schedule import weekly
from bot.slack.client import SlackTransport
from tests.support.clock import TZ, at
from tests.support.databases import database_for
from tests.support.discord_standin import TOKEN, DiscordStandin
from tests.support.slack_group import CHANNEL
from tests.support.slack_standin import HistoryLimits, SlackStandin

MONDAY = at("2026-12-07 09:00")  # the slot of 2026-W50's post
DISCORD_CHANNEL = "1000000000000000003"
A_DAY = 86400


@pytest.fixture
def group():
    return MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))


class Naps:
    """Stands in for a stopping process's wait: records what was asked, and moves `moved` on by it."""

    def __init__(self, moved: list[float] | None = None):
        self.asked: list[float] = []
        self.moved = moved

    def __call__(self, seconds: float) -> bool:
        self.asked.append(seconds)
        if self.moved is not None:
            self.moved[0] += seconds
        return False


def stopping(seconds: float) -> bool:
    """The process stops while it waits to try again: what a crash leaves, without killing the test."""
    return True


def slack_transport(slack: SlackStandin) -> SlackTransport:
    return SlackTransport(WebClient(base_url=slack.api_url, token="xoxb-test", retry_handlers=[]))


def row(store) -> tuple:
    return store.db.execute(
        "SELECT state, claimed_at, attempt_at, message_ref FROM deliveries WHERE kind = 'post'"
    ).fetchone()


def posts(slack: SlackStandin) -> list:
    return [m for m in slack.messages(CHANNEL) if (m.get("metadata") or {}).get("event_type") == "paper_of_the_week"]


def a_lost_answer(store, group, transport, slack: SlackStandin) -> float:
    """A post that Slack took while its answer was lost and the process stopped; it was first claimed a
    day earlier (refused then). Returns when the unfinished attempt began, as the row keeps it. The
    next start's first check goes at once (`force`, as the scheduler's first check after a start)."""
    slack.fail_next("chat.postMessage", error="not_in_channel")
    assert weekly.post_week(store, group, transport, CHANNEL, MONDAY, sleep=Naps()).status == "failed"
    store.db.execute("UPDATE deliveries SET claimed_at = claimed_at - ?", [A_DAY])  # that was yesterday
    slack.fail_next("chat.postMessage", accept_then="drop")
    stopped = weekly.post_week(store, group, transport, CHANNEL, MONDAY, force=True, sleep=stopping)
    assert stopped.status == "stopped" and len(posts(slack)) == 1
    state, claimed_at, attempt_at, _ = row(store)
    assert state == "sending" and attempt_at > claimed_at + A_DAY - 60
    return attempt_at


def test_a_post_slack_took_is_found_after_a_restart_reading_only_since_its_attempt(tmp_path, store, group, slack):
    began = a_lost_answer(store, group, slack_transport(slack), slack)
    store.close()
    again = open_store(database_for(tmp_path))  # a restart: the row is all that is left
    try:
        outcome = weekly.post_week(again, group, slack_transport(slack), CHANNEL, MONDAY, force=True, sleep=Naps())
        assert outcome.status == "found" and len(posts(slack)) == 1  # not posted a second time
        assert row(again)[0] == "sent" and row(again)[3] == posts(slack)[0]["ts"]
    finally:
        again.close()
    [look] = slack.calls_to("conversations.history")
    # Only what came since the attempt began (less a minute for the clocks), not since the first claim.
    assert look.params["oldest"] == f"{began - delivery.CLOCK_MARGIN:.6f}"
    assert look.params["inclusive"] in (True, "true", "1", 1) and int(look.params["limit"]) <= 15


def test_a_look_slack_lets_read_once_a_minute_waits_and_reads_on_from_its_page(store, group):
    clock = [1000.0]
    with SlackStandin(channels={CHANNEL}, history=HistoryLimits(clock=lambda: clock[0])) as slack:
        began = a_lost_answer(store, group, slack_transport(slack), slack)
        chat = WebClient(base_url=slack.api_url, token="xoxb-test")
        for i in range(20):  # the channel goes on after the crash: the post is on the second page
            chat.chat_postMessage(channel=CHANNEL, text=f"chat {i}")
        naps = Naps(moved=clock)
        outcome = weekly.post_week(store, group, slack_transport(slack), CHANNEL, MONDAY, force=True, sleep=naps)
        assert outcome.status == "found" and len(posts(slack)) == 1
        assert naps.asked == [60]  # as Slack said: one page a minute
        first, limited, second = slack.calls_to("conversations.history")
        assert [first.status, limited.status, second.status] == [200, 429, 200]
        assert second.params["cursor"] == first.response["response_metadata"]["next_cursor"]  # not page 1 again
        for look in (first, second):
            assert look.params["oldest"] == f"{began - delivery.CLOCK_MARGIN:.6f}" and int(look.params["limit"]) <= 15


def test_a_look_rate_limited_for_longer_lets_go_without_a_failure(store, group, slack):
    a_lost_answer(store, group, slack_transport(slack), slack)
    slack.fail_next("conversations.history", status=429, retry_after=600)
    transport = slack_transport(slack)
    waiting = weekly.post_week(store, group, transport, CHANNEL, MONDAY, force=True, sleep=Naps())
    assert waiting.status == "waiting" and not waiting.result.new_error  # the admins hear nothing of it
    assert row(store)[0] == "sending" and len(posts(slack)) == 1
    later = weekly.post_week(store, group, transport, CHANNEL, MONDAY, force=True, sleep=Naps())
    assert later.status == "found" and len(posts(slack)) == 1


def test_a_post_discord_took_is_found_reading_after_the_attempts_snowflake(store, group):
    with DiscordStandin(channels={DISCORD_CHANNEL}) as discord:
        first = DiscordTransport(Rest(discord.api_url, TOKEN, timeout=0.3))
        discord.fail_next("create_message", accept_then="hang", seconds=2)  # taken; the answer comes too late
        stopped = weekly.post_week(store, group, first, DISCORD_CHANNEL, MONDAY, force=True, sleep=stopping)
        assert stopped.status == "stopped" and len(discord.messages(DISCORD_CHANNEL)) == 1
        began = row(store)[2]
        restarted = DiscordTransport(Rest(discord.api_url, TOKEN))
        outcome = weekly.post_week(store, group, restarted, DISCORD_CHANNEL, MONDAY, sleep=Naps())
        assert outcome.status == "found" and len(discord.messages(DISCORD_CHANNEL)) == 1
        asked = discord.history_asked
        assert asked[0]["after"] == snowflake(began - delivery.CLOCK_MARGIN)  # hikari asks on while pages come
        assert all("before" not in a and int(a["after"]) >= int(asked[0]["after"]) for a in asked)
        assert all(int(a["limit"]) <= 100 for a in asked)
