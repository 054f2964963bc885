"""A question asked before the meeting reaches the post's thread once, though the process that
posts it is killed between Slack's accepting it and the bot's record of it."""

from __future__ import annotations

import os
import signal

import pytest

from tests.support.databases import connect
from tests.support.slack_group import CHANNEL, env_for_process
from tests.support.slack_standin import SlackStandin

pytestmark = pytest.mark.slow


@pytest.fixture
def slack():
    with SlackStandin(channels={CHANNEL}, members={CHANNEL}, users={"U1": {}}) as standin:
        yield standin


def test_a_question_posted_by_a_process_killed_after_slacks_accept_is_not_posted_again(procs, tmp_path, slack):
    env = env_for_process(tmp_path, slack.api_url)
    asked = procs.run("console", "--user", "U1", env=env, input="ask 2027-03-11 Why an outer optimizer?\n")
    assert "Saved: question 1" in asked.stdout, asked.stdout + asked.stderr
    at = "2027-03-10T09:30"
    victim: dict = {}

    def kill_on_reply(call):
        if call.method == "chat.postMessage" and call.params.get("thread_ts") and "proc" in victim:
            os.kill(victim["proc"].pid, signal.SIGKILL)  # before the response leaves the stand-in

    slack.on_accept = kill_on_reply
    victim["proc"] = procs.start("post-week", "--at", at, env=env)
    assert victim["proc"].wait(30) == -signal.SIGKILL, victim["proc"].log()
    slack.on_accept = None
    [post] = slack.messages(CHANNEL)[:1]
    assert len(slack.replies(CHANNEL, post["ts"])) == 1
    db = connect(tmp_path)
    assert db.execute("SELECT state FROM deliveries WHERE kind = 'question'").fetchall() == [("sending",)]

    again = procs.run("post-week", "--at", at, env=env)
    assert again.returncode == 0, again.stderr
    [reply] = slack.replies(CHANNEL, post["ts"])
    assert "Why an outer optimizer?" in reply["text"]
    assert len([c for c in slack.calls_to("chat.postMessage") if c.params.get("thread_ts")]) == 1
    assert db.execute("SELECT state FROM deliveries WHERE kind = 'question'").fetchall() == [("sent",)]
