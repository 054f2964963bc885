"""Several groups through real `paperbot` processes: console --channel, post-week and remind."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.support.processes import one_line
from tests.support.slack_group import CHANNEL, env_for_process
from tests.support.slack_standin import SlackStandin

pytestmark = pytest.mark.slow

OTHER = "C0OTHER"


@pytest.fixture
def slack():
    with SlackStandin(channels={CHANNEL, OTHER}, users={"U1": {}, "U2": {}}) as standin:
        yield standin


def posts(slack, channel):
    return [m for m in slack.messages(channel) if (m.get("metadata") or {}).get("event_type") == "paper_of_the_week"]


def test_groups_from_the_console_then_each_posted_and_reminded_once(procs, tmp_path, slack):  # noqa: F811
    # A Tuesday one to two weeks ahead, in Shanghai: the group is started before its week's slot.
    today = datetime.now(ZoneInfo("Asia/Shanghai")).date()
    tuesday = today + timedelta(days=7 + (1 - today.weekday()) % 7)
    sunday = tuesday - timedelta(days=2)
    env = env_for_process(tmp_path, slack.api_url)
    typed = 'group start\ngroup set timezone Asia/Shanghai\ngroup set schedule "0 10 * * tue"\n'
    done = procs.run("console", "--channel", OTHER, env=env, input=typed)
    assert done.returncode == 0 and "Started a reading group" in done.stdout, done.stdout + done.stderr
    assert "Set timezone to `Asia/Shanghai`" in done.stdout and "Set schedule" in done.stdout, done.stdout
    done = procs.run("console", "--channel", OTHER, "--user", "U1", env=env, input=f"signup 7 {tuesday}\n")
    assert "You're signed up" in done.stdout, done.stdout + done.stderr
    done = procs.run("console", "--channel", CHANNEL, env=env, input="schedule\n")
    assert "@U1" not in done.stdout, done.stdout  # the other group's sign-up
    done = procs.run("console", "--channel", "C0NOWHERE", "--user", "U2", env=env, input="signup 3\n")
    assert f"#{CHANNEL}" in done.stdout and f"#{OTHER}" in done.stdout and "nothing was done" in done.stdout

    # That Tuesday 10:30 in Shanghai: both groups' slots have passed; each posted once.
    at = f"{tuesday}T10:30:00+08:00"
    done = procs.run("post-week", "--at", at, env=env)
    assert done.returncode == 0, done.stderr
    assert f"to {CHANNEL}." in done.stdout and f"to {OTHER}." in done.stdout, done.stdout
    done = procs.run("post-week", "--at", at, env=env)
    assert done.returncode == 0 and one_line(done.stdout).startswith("No group's post is due"), done.stdout
    assert len(posts(slack, CHANNEL)) == 1 and len(posts(slack, OTHER)) == 1

    done = procs.run("post-week", "--channel", "C0NOWHERE", env=env)
    assert done.returncode == 1 and one_line(done.stderr).startswith("paperbot: --channel C0NOWHERE: no group"), (
        done.stderr
    )

    # U1 meets on Tuesday 10:00 Shanghai (the post's time): reminded from Sunday 10:00, once.
    done = procs.run("remind", "--channel", OTHER, "--at", f"{sunday}T12:00:00+08:00", env=env)
    assert done.returncode == 0 and one_line(done.stdout).startswith("Reminded U1 about #7"), done.stdout
    done = procs.run("remind", "--at", f"{sunday}T12:05:00+08:00", env=env)
    assert one_line(done.stdout) == "No reminders are due.", done.stdout
    assert len(slack.messages("DU1")) == 1
