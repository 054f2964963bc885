"""Replicas: three `paperbot run` processes (HTTP mode, Slack) on one PostgreSQL database behind a
small balancer (tests/support/balancer.py), as issue 30 runs them past one machine.

Any replica answers any signed request, and a request replayed to another replica is refused; the
weekly post goes out once across them (their catch-up at start, `post-week` run on all three at
once); a replica killed with SIGKILL after Slack accepted its post leaves the others to record it,
one post; PostgreSQL stopped under load gets one-line answers within 3 s and a 503 at /healthz,
then all is as before once it is back, nothing lost.

They run on PostgreSQL whatever PAPERBOT_TEST_ENGINE says (this test process's own server,
tests/support/databases.py), and are skipped where PostgreSQL is not installed.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest

from tests.support.balancer import Balancer
from tests.support.databases import server as postgres
from tests.support.postgres import binaries
from tests.support.processes import MEETING_ALWAYS_AHEAD, Server, free_port, weekly_posts
from tests.support.slack_group import CHANNEL, env_for_process
from tests.support.slack_harness import sign

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(binaries() is None, reason="PostgreSQL is not installed"),
]

#: What a command answers while the database is away (bot/chat/commands.py's AWAY).
AWAY = "cannot be reached just now"


@pytest.fixture
def pg_url() -> str:
    return postgres().new_database()


def rows(url: str, sql: str, params=()) -> list[tuple]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(sql, params).fetchall()


def start_replicas(procs, tmp_path, slack, url: str, n: int = 3, **env: str) -> list[Server]:
    """`n` run processes on `url`, started together (they migrate the new database once between them)."""
    started = []
    for _ in range(n):
        port = free_port()
        proc = procs.start("run", env=env_for_process(tmp_path, slack.api_url, PORT=str(port), PAPERBOT_DB=url, **env))
        started.append(Server(proc, port, slack))
    return started


def ready(replicas: list[Server]) -> list[Server]:
    for replica in replicas:
        replica.wait_ready(timeout=60)
    return replicas


def said(reply: dict) -> str:
    return json.dumps(reply, ensure_ascii=False)


def test_three_replicas_answer_from_any_post_once_and_refuse_a_replay_to_another(procs, tmp_path, slack, pg_url):
    replicas = ready(start_replicas(procs, tmp_path, slack, pg_url, **MEETING_ALWAYS_AHEAD))
    with Balancer([r.port for r in replicas]) as lb:
        front = Server(replicas[0].proc, lb.port, slack)
        [(paper, title)] = rows(pg_url, "SELECT id, title FROM papers ORDER BY number LIMIT 1")
        status, reply, _ = front.command(f"signup {paper}", user="U1")
        assert status == 200 and "signed up" in said(reply), reply
        for _ in range(6):  # the sign-up is seen by whichever replica answers
            status, reply, _ = front.command("mine", user="U1")
            assert status == 200 and title in said(reply), reply
        assert sorted(lb.served.values()) == [2, 2, 3], lb.served

    # A request replayed to another replica: refused there, as on the one that took it.
    body = replicas[0].form("tags")
    headers = sign(body)
    assert replicas[0].request("POST", "/slack/events", body, headers)[0] == 200
    for other in replicas[1:] + replicas[:1]:
        assert other.request("POST", "/slack/events", body, headers)[0] == 401

    # Their catch-up at start: one post between the three of them.
    assert slack.wait_for(lambda s: len(weekly_posts(s)) >= 1, timeout=30), [r.proc.log() for r in replicas]
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        assert len(weekly_posts(slack)) == 1
        time.sleep(0.1)
    assert rows(pg_url, "SELECT state, attempts FROM deliveries WHERE kind = 'post'") == [("sent", 1)]
    for replica in replicas:
        code, _ = replica.proc.terminate_and_wait()
        assert code == 0 and "Traceback" not in replica.proc.log(), replica.proc.log()


def test_post_week_run_on_three_at_once_posts_once(procs, tmp_path, slack, pg_url):
    env = env_for_process(tmp_path, slack.api_url, PAPERBOT_DB=pg_url)
    started = [procs.start("post-week", "--at", "2027-03-03T12:00", env=env) for _ in range(3)]
    codes = [p.wait(90) for p in started]
    logs = [p.log() for p in started]
    assert codes == [0, 0, 0], logs
    assert len(slack.messages(CHANNEL)) == 1 and len(slack.calls_to("chat.postMessage")) == 1, logs
    assert sum("Posted the paper of the week 2027-W09" in log for log in logs) == 1, logs
    assert sum("2027-W09 already has its post" in log for log in logs) == 2, logs


def test_kill_9_of_the_replica_holding_the_post_after_slack_accepted_it_leaves_one_post(procs, tmp_path, slack, pg_url):
    killed: list[int] = []

    def kill_the_holder(call):
        # Slack has the post; the replica that sent it has not recorded it: killed now.
        if call.method == "chat.postMessage" and not killed:
            [(owner,)] = rows(pg_url, "SELECT owner FROM deliveries WHERE kind = 'post' AND state = 'sending'")
            pid = int(owner.split(":")[1])
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)

    slack.on_accept = kill_the_holder
    replicas = start_replicas(procs, tmp_path, slack, pg_url, **MEETING_ALWAYS_AHEAD)
    assert slack.wait_for(lambda s: killed, timeout=30), [r.proc.log() for r in replicas]
    [victim] = [r for r in replicas if r.proc.pid == killed[0]]
    assert victim.proc.wait(10) == -signal.SIGKILL
    ready([r for r in replicas if r is not victim])
    # The others take its claim over at their next check (half a minute): they find the post, and record it.
    others = [r for r in replicas if r is not victim]
    deadline = time.monotonic() + 75
    while "was already there" not in "".join(r.proc.log() for r in others):  # said once it is recorded
        assert time.monotonic() < deadline, [r.proc.log() for r in replicas]
        time.sleep(0.2)
    assert rows(pg_url, "SELECT state FROM deliveries WHERE kind = 'post'") == [("sent",)]
    assert len(weekly_posts(slack)) == 1 and len(slack.calls_to("chat.postMessage")) == 1
    for replica in others:
        code, _ = replica.proc.terminate_and_wait()
        assert code == 0 and "Traceback" not in replica.proc.log(), replica.proc.log()


def test_postgres_stopped_under_load_answers_in_one_line_then_as_before_and_loses_nothing(
    procs, tmp_path, slack, pg_url
):
    replicas = ready(start_replicas(procs, tmp_path, slack, pg_url))
    papers = [p for (p,) in rows(pg_url, "SELECT id FROM papers ORDER BY number LIMIT 40")]
    answers: list[tuple[str, int, str, float]] = []  # (phase, status, text, seconds)
    phase = ["up"]
    stop = threading.Event()

    with Balancer([r.port for r in replicas]) as lb:
        front = Server(replicas[0].proc, lb.port, slack)

        def load(n: int) -> None:
            i = 0
            while not stop.is_set():
                i += 1
                text = "tags" if i % 2 else "mine"
                try:
                    status, reply, seconds = front.command(text, user=f"UL{n}", timeout=10)
                except OSError as e:
                    answers.append((phase[0], -1, repr(e), 0.0))
                    continue
                answers.append((phase[0], status, said(reply), seconds))

        threads = [threading.Thread(target=load, args=(n,)) for n in range(3)]
        for t in threads:
            t.start()
        try:
            status, reply, _ = front.command(f"signup {papers[0]}", user="U1")
            assert status == 200 and "signed up" in said(reply), reply
            time.sleep(1)
            phase[0] = "stopping"
            postgres().pg_ctl("stop")
            phase[0] = "down"
            time.sleep(3)
            down = [r for r in replicas if r.request("GET", "/healthz", timeout=5)[0] == 503]
            assert down == replicas
            status, reply, seconds = front.command(f"signup {papers[1]}", user="U2")
            assert status == 200 and AWAY in said(reply) and seconds < 3, (reply, seconds)
            phase[0] = "starting"
        finally:
            postgres().pg_ctl("start")
        phase[0] = "back"
        time.sleep(2)
        status, reply, _ = front.command(f"signup {papers[2]}", user="U3")
        assert status == 200 and "signed up" in said(reply), reply
        phase[0] = "after"
        time.sleep(2)
        stop.set()
        for t in threads:
            t.join(15)

    during = [a for a in answers if a[0] == "down"]
    assert during and all(a[1] == 200 and AWAY in a[2] and a[3] < 3 for a in during), during[:5]
    after = [a for a in answers if a[0] == "after"]
    assert after and all(a[1] == 200 and AWAY not in a[2] for a in after), after[:5]
    assert all(a[1] in (200,) for a in answers), [a for a in answers if a[1] != 200][:5]
    signed_up = rows(pg_url, "SELECT presenter FROM slots WHERE kind = 'presenter' ORDER BY presenter")
    assert signed_up == [("U1",), ("U3",)]  # the first kept, the refused one not made, the last made
    for replica in replicas:
        assert replica.request("GET", "/healthz")[0] == 200
        code, _ = replica.proc.terminate_and_wait()
        assert code == 0 and "Traceback" not in replica.proc.log(), replica.proc.log()


@pytest.mark.parametrize("slack_took_it", [True, False])
def test_a_post_whose_send_met_the_database_going_away_goes_out_once_when_it_is_back(
    procs, tmp_path, slack, pg_url, slack_took_it
):
    # PostgreSQL stops while Slack answers the weekly post: accepted (the record of it cannot be
    # written), or a server error (the post is still due). Either way, once the database is back,
    # the channel has the week's post once.
    replicas: list[Server] = []
    started, gone = threading.Event(), threading.Event()

    def database_away():  # once all three serve: a replica still starting would stop, and rightly
        started.wait(60)
        ready(replicas)
        postgres().pg_ctl("stop")
        gone.set()

    if slack_took_it:
        slack.fail_next("chat.postMessage", accept_then="hang", seconds=0, meanwhile=database_away)
    else:
        slack.fail_next("chat.postMessage", status=500, meanwhile=database_away)
    try:
        replicas += start_replicas(procs, tmp_path, slack, pg_url, **MEETING_ALWAYS_AHEAD)
        started.set()
        assert gone.wait(90), [r.proc.log() for r in replicas]
        time.sleep(3)  # the database stays away a moment: the replicas' tries meet it gone
    finally:
        postgres().pg_ctl("start")
    ready(replicas)
    deadline = time.monotonic() + 90
    while rows(pg_url, "SELECT state FROM deliveries WHERE kind = 'post'") != [("sent",)]:
        assert time.monotonic() < deadline, [r.proc.log() for r in replicas]
        time.sleep(0.2)
    assert len(weekly_posts(slack)) == 1
    for replica in replicas:
        code, _ = replica.proc.terminate_and_wait()
        assert code == 0 and "Traceback" not in replica.proc.log(), replica.proc.log()
