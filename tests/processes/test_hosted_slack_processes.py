"""A hosted install on Slack as a real `paperbot run`: no bot token of its own; two workspaces install
it over HTTP through Slack's install flow (the stand-in's oauth.v2.access), and each one's signed
/paper commands are answered from its own place. On SQLite and on PostgreSQL (the places' schemas)."""

from __future__ import annotations

import os

import pytest

from tests.support.processes import Procs, free_port
from tests.support.slack_hosted import ADMINS, CHANNELS, MEMBERS, A, B, Visitor, hosted_env, two_workspaces
from tests.support.slack_standin import SlackStandin

#: Real processes, each started and stopped: the development loop leaves them out (-m 'not slow').
pytestmark = pytest.mark.slow


@pytest.fixture
def slack():
    with SlackStandin() as standin:
        two_workspaces(standin)
        yield standin


def test_a_hosted_run_installs_two_workspaces_and_answers_each_from_its_own_place(procs: Procs, tmp_path, slack):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERBOT_"))}
    env.update(hosted_env(tmp_path, slack.api_url, PORT=str(port), PYTHONUNBUFFERED="1"))
    proc = procs.start("run", env=env)
    visit = Visitor(port, slack)
    wait_ready(visit, proc)

    for team in (A, B):
        page = visit.install(team)
        assert page.status == 200 and "paperbot is installed" in page.body, (page.body, proc.log())
    titles = {A: ["Attention in Alpha", "Another Alpha result"], B: ["Bagging in Beta"]}
    for team in (A, B):
        channel, admin = CHANNELS[team], ADMINS[team]
        assert "started" in visit.command(team, channel, "group start", admin)["text"].lower()
        for title in titles[team]:
            added = visit.submit(team, admin, "add_paper", {"title": title, "tags": "lab"}, channel)
            assert added.status == 200 and not added.body, (added.body, proc.log())
    for team in (A, B):
        listed = visit.command(team, CHANNELS[team], "tag lab", MEMBERS[team])["text"]
        assert all(t in listed for t in titles[team]), listed
        assert not any(t in listed for other in (A, B) if other != team for t in titles[other]), listed
    assert titles[B][0] in visit.command(B, CHANNELS[B], "show 1", MEMBERS[B])["text"]  # numbered from 1
    assert "no paper" in visit.command(B, CHANNELS[B], "show 2", MEMBERS[B])["text"].lower()
    # Whatever Slack was asked on each workspace's behalf went with that workspace's own tokens.
    for call in slack.calls:
        if call.token is not None:
            assert call.token in slack.tokens(slack.team_of(call.token))

    assert visit.event(slack.uninstall(A)).status == 200
    assert "not installed" in visit.command(A, CHANNELS[A], "tags", MEMBERS[A])["text"]
    assert titles[B][0] in visit.command(B, CHANNELS[B], "show 1", MEMBERS[B])["text"]

    code, _ = proc.terminate_and_wait(15)
    assert code == 0, proc.log()
    assert "Traceback" not in proc.log()


def wait_ready(visit: Visitor, proc, timeout: float = 30) -> None:
    """Until `run` answers /healthz (it has opened the database and listens)."""
    import time  # noqa: PLC0415 - only this poll

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"run exited with {proc.poll()}:\n{proc.log()}")
        try:
            if visit.get("/healthz").status == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"run did not serve within {timeout} s:\n{proc.log()}")
