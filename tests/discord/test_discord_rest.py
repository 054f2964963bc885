"""bot/discord/rest.py: hikari's REST client, driven from plain threads, against the stand-in; what
each of Discord's answers becomes for delivery (sent, Rejected, RateLimited, Uncertain, Unreachable)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from bot.delivery.sending import RateLimited, Rejected, Uncertain, Unreachable
from bot.discord.rest import Rest
from tests.support.discord_standin import APP_ID, TOKEN, DiscordStandin

CHANNEL = "1000000000000000003"
MEMBER = "1300000000000000002"
SHY = "1300000000000000003"


@pytest.fixture
def discord():
    with DiscordStandin(channels={CHANNEL}, users={MEMBER: {}, SHY: {"dms": False}}) as d:
        yield d


def test_a_post_and_its_history_come_back_as_discords_json(discord):
    rest = Rest(discord.api_url, TOKEN)
    body = {"content": "@everyone <@1>", "allowed_mentions": {"parse": []}, "nonce": "n1"}
    sent = rest.post(CHANNEL, body)
    again = rest.post(CHANNEL, body)  # the same nonce: hikari sends enforce_nonce, Discord returns the first
    assert again["id"] == sent["id"] and len(discord.messages(CHANNEL)) == 1
    assert discord.calls_to("create_message")[0].body["enforce_nonce"] is True
    assert discord.messages(CHANNEL)[0]["allowed_mentions"] == {"parse": []}
    [found] = rest.history(CHANNEL)
    assert (found["id"], found["author"]["id"], found["content"]) == (sent["id"], APP_ID, "@everyone <@1>")


def test_threads_share_one_loop_and_each_gets_its_own_answer(discord):
    rest = Rest(discord.api_url, TOKEN)
    ids: list[str] = []
    threads = [
        threading.Thread(target=lambda i=i: ids.append(rest.post(CHANNEL, {"content": f"m{i}"})["id"]))
        for i in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(set(ids)) == 8 and len(discord.messages(CHANNEL)) == 8


def test_discords_refusals_become_deliverys(discord):
    rest = Rest(discord.api_url, TOKEN)
    channel = rest.dm_channel(SHY)["id"]
    with pytest.raises(Rejected) as refused:
        rest.post(channel, {"content": "hi"})
    assert refused.value.code == "50007" and "takes no direct messages" in str(refused.value)
    with pytest.raises(Rejected) as unknown:
        rest.post("1000000000000000099", {"content": "hi"})
    assert unknown.value.code == "10003"
    discord.fail_next("create_message", 502)
    with pytest.raises(Uncertain):
        rest.post(CHANNEL, {"content": "hi"})
    assert len(discord.calls_to("create_message")) == 3  # hikari tried the 502 once: delivery decides


def test_a_hang_after_accepting_is_uncertain_within_the_deadline(discord):
    rest = Rest(discord.api_url, TOKEN, timeout=0.5)
    discord.fail_next("create_message", accept_then="hang", seconds=10)
    started = time.monotonic()
    with pytest.raises(Uncertain):
        rest.post(CHANNEL, {"content": "hi"})
    # Given up at its own 0.5 s, not at Discord's late answer (however busy the machine).
    assert time.monotonic() - started < 10 and len(discord.messages(CHANNEL)) == 1


def test_nothing_listening_is_unreachable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(Unreachable):
        Rest(f"http://127.0.0.1:{port}/api/v10", TOKEN, timeout=5).me()


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_short_rate_limit_is_waited_out_and_a_long_one_is_the_callers(discord):
    answers = Rest(discord.api_url, TOKEN, timeout=5)
    token = "itoken-rest-" + "x" * 20
    discord.took({"token": token}, {"type": 5, "data": {"flags": 64}})
    path = f"/webhooks/{APP_ID}/{token}/messages/@original"
    discord.fail_next("edit_original", 429, retry_after=0.5)
    answers.call("PATCH", path, {"content": "one", "allowed_mentions": {"parse": []}})
    assert [c.status for c in discord.calls_to("edit_original")] == [429, 200]
    discord.fail_next("edit_original", 429, retry_after=30)
    started = time.monotonic()
    with pytest.raises(RateLimited) as limited:
        answers.call("PATCH", path, {"content": "two", "allowed_mentions": {"parse": []}})
    # Not slept on inside the answer's deadline: the caller hears how long Discord asks, long before it.
    assert time.monotonic() - started < 15 and 29 <= limited.value.retry_after <= 30
    assert discord.original(token)["content"] == "one"
