"""Real processes: `python -m bot VERB` as subprocesses on one SQLite file, the stand-in as Slack.

Every process runs with cwd=tmp_path (so no .env of the repo is read) and
PAPERBOT_DB inside tmp_path. Every child is killed in teardown if it still runs.
Nothing sleeps for long: tests poll the stand-in, the processes' output or the
database, with generous deadlines.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qsl
from zoneinfo import ZoneInfo

import pytest

from bot.catalog.queries import open_store
from bot.delivery.answer_time import ANSWER_SECONDS
from tests.support.databases import db_rows
from tests.support.processes import (
    Done,
    LineReader,
    Procs,
    Server,
    free_port,
    iso_week,
    monday,
    one_line,
    start_server,
    weekly_posts,
)
from tests.support.slack_group import CHANNEL, env_for_process
from tests.support.slack_harness import sign, slash_form

#: Real processes, each started and stopped: the development loop leaves them out (-m 'not slow').
pytestmark = pytest.mark.slow

BOT = [sys.executable, "-m", "bot"]
TZ = ZoneInfo("Europe/Berlin")  # env_for_process's PAPERBOT_TIMEZONE
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
NO_SLACK = "http://127.0.0.1:9/api/"  # nothing listens there: a process that needs no Slack


def catalog(procs: Procs, tmp_path: Path) -> dict[str, dict]:
    done = procs.run("export", env=env_for_process(tmp_path, NO_SLACK))
    assert done.returncode == 0, done.stderr
    return {p["id"]: p for p in json.loads(done.stdout)}


# -- 1. console --------------------------------------------------------------------


def _check_tag_listing(done: Done) -> None:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "32 papers tagged parallelism-dp" in done.stdout
    numbers = re.findall(r"^#(\d+)\s+\S+\s", done.stdout, re.M)
    assert len(set(numbers)) == 32, done.stdout


def test_console_lists_a_tag_without_tokens(procs, tmp_path):
    env = {k: v for k, v in env_for_process(tmp_path, NO_SLACK).items() if not k.startswith("SLACK_")}
    _check_tag_listing(procs.run("console", env=env, input="/paper tag parallelism-dp\n"))
    # Without the leading /paper, and EOF right away: both end cleanly.
    _check_tag_listing(procs.run("console", env=env, input="tag Parallelism_DP\n"))
    empty = procs.run("console", env=env, input="")
    assert empty.returncode == 0 and empty.stderr == ""

    script = shutil.which("paperbot") or str(Path(sys.executable).with_name("paperbot"))
    if not Path(script).is_file():
        pytest.skip("the paperbot console script is not installed next to this Python")
    _check_tag_listing(procs.run("console", exe=[script], env=env, input="/paper tag parallelism-dp\n"))


def test_console_user_must_be_a_user_id(procs, tmp_path):
    """It is who the channel hears of and who reminders go to: `<!channel>` or a name with spaces is no one."""
    for user in ("ada lovelace", "<!channel>"):
        done = procs.run("console", "--user", user, env=env_for_process(tmp_path, NO_SLACK), input="signup 5\n")
        assert done.returncode != 0 and one_line(done.stderr).startswith("paperbot: --user: "), done.stderr
    assert not (tmp_path / "paperbot.db").exists()  # refused before anything was opened


def test_console_reads_on_past_a_line_that_is_not_utf8(procs, tmp_path):
    """A paste from a Latin-1 terminal gets an answer, and the lines after it still run."""
    proc = procs.start("console", env=env_for_process(tmp_path, NO_SLACK), pipes=True, stdin=subprocess.PIPE)
    proc.popen.stdin.buffer.write(b"show caf\xe9\ntags\n")
    out, err = proc.popen.communicate(timeout=30)
    assert proc.popen.returncode == 0, err
    assert "There is no paper `caf\ufffd`" in out
    assert re.search(r"parallelism-dp\s+32", out), out


# -- 2. run in HTTP mode -----------------------------------------------------------


def test_run_serves_signed_requests_and_stops_on_sigterm(procs, tmp_path, slack):
    server = start_server(procs, tmp_path, slack)

    status, reply, seconds = server.command("tag parallelism-dp")
    assert status == 200 and seconds < 3, (status, seconds)
    assert reply["response_type"] == "ephemeral"
    assert "32 papers tagged parallelism-dp" in reply["text"]

    body = server.form("tags")
    forged = sign(body, secret="not-the-secret")
    assert server.request("POST", "/slack/events", body, forged)[0] == 401
    stale = sign(body, timestamp=int(time.time()) - 600)
    assert server.request("POST", "/slack/events", body, stale)[0] == 401
    unsigned = {"content-type": "application/x-www-form-urlencoded"}
    assert server.request("POST", "/slack/events", body, unsigned)[0] == 401

    code, seconds = server.proc.terminate_and_wait(timeout=10)
    assert code == 0, server.proc.log()
    assert seconds < 5, seconds
    assert "Traceback" not in server.proc.log()


@pytest.mark.parametrize("channel, said", [("C0NOPE", "no such channel"), ("C0OTHER", "/invite @paperbot")])
def test_run_says_at_start_when_slack_will_refuse_the_channel(procs, tmp_path, slack, channel, said):
    # A mistyped channel ID, or a channel the bot was never invited to: said now, not at Monday's post.
    server = start_server(procs, tmp_path, slack, PAPERBOT_CHANNEL=channel, PAPERBOT_SCHEDULE="0 9 1 1 *")
    assert slack.wait_for(lambda s: s.calls_to("conversations.history"), timeout=10), server.proc.log()
    deadline = time.monotonic() + 10
    while f"PAPERBOT_CHANNEL {channel}" not in server.proc.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    [line] = [x for x in server.proc.log().splitlines() if f"PAPERBOT_CHANNEL {channel}" in x]
    assert said in line and "Traceback" not in server.proc.log()
    assert server.command("tags")[0] == 200  # still serving: the catalog and sign-ups work meanwhile
    code, _ = server.proc.terminate_and_wait(timeout=10)
    assert code == 0


def test_run_with_a_channel_it_can_post_in_says_nothing_of_it(procs, tmp_path, slack):
    server = start_server(procs, tmp_path, slack)
    assert slack.wait_for(lambda s: s.calls_to("conversations.history"), timeout=10), server.proc.log()
    server.command("tags")
    server.proc.terminate_and_wait(timeout=10)
    assert "PAPERBOT_CHANNEL" not in server.proc.log()


def test_a_command_under_way_when_http_stops_is_still_answered(procs, tmp_path, slack):
    """A restart (deploy, SIGTERM) while a command is being answered: the member gets the reply, not
    Slack's "operation_timeout" for a change that was made."""
    server = start_server(procs, tmp_path, slack)
    slack.fail_next("users.info", accept_then="hang", seconds=1.5)  # is U1 an admin? Slack takes its time
    answers: list = []
    asking = threading.Thread(target=lambda: answers.append(server.command("assign <@U2> 5 next")))
    asking.start()
    assert slack.wait_for(lambda s: s.calls_to("users.info"))  # the listener is waiting for users.info
    code, _ = server.proc.terminate_and_wait(timeout=30)
    asking.join()
    assert code == 0, server.proc.log()
    status, reply, _ = answers[0]
    assert status == 200 and reply.get("text"), (answers, server.proc.log())
    assert "Traceback" not in server.proc.log()


@pytest.mark.sqlite_only  # holds SQLite's write lock from outside
def test_requests_that_wait_for_a_thread_keep_the_deadline_of_their_arrival(procs, tmp_path, slack):
    """12 sign-ups at once while another process holds the write lock: 8 threads take 8 of them; the
    4 that wait for a thread count their deadline from when they came in, too."""
    from concurrent.futures import ThreadPoolExecutor

    server = start_server(procs, tmp_path, slack)
    holder = sqlite3.connect(tmp_path / "paperbot.db", timeout=10)
    holder.execute("BEGIN IMMEDIATE")  # held until every request is answered

    def sign_up(i: int) -> tuple[int, dict, float]:
        return server.command(f"signup {i + 1} {monday(3 + i).isoformat()}", user=f"U{i + 1}")

    try:
        with ThreadPoolExecutor(12) as pool:
            answers = list(pool.map(sign_up, range(12)))
    finally:
        holder.rollback()
        holder.close()
    assert all(status == 200 for status, _, _ in answers), [a[::2] for a in answers]
    assert all("busy just now, so nothing was changed" in reply["text"] for _, reply, _ in answers)
    # The four that waited for a thread kept the deadline of their arrival, not one of their own a
    # deadline later: all are answered together. (Slack's 3 s on a loaded machine: bench/bench.py.)
    seconds = [s for _, _, s in answers]
    assert max(seconds) - min(seconds) < ANSWER_SECONDS / 2, [a[::2] for a in answers]
    assert db_rows(tmp_path, "SELECT count(*) FROM slots") == [(0,)]


def test_a_malformed_unsigned_request_is_a_400_not_a_traceback(procs, tmp_path, slack):
    """Bolt reads the body before it checks the signature: anyone who can reach the port can send one."""
    server = start_server(procs, tmp_path, slack)
    bodies = [
        ("{bad", "application/json"),
        ("[1,2]", "application/json"),
        ("payload=nope", "application/x-www-form-urlencoded"),
        ("payload=%5B1%5D", "application/x-www-form-urlencoded"),
    ]
    for body, kind in bodies:
        status = server.request("POST", "/slack/events", body, {"content-type": kind})[0]
        assert status in (400, 401), (body, status)
    assert server.command("tags")[0] == 200  # and it goes on serving
    code, _ = server.proc.terminate_and_wait()
    assert code == 0 and "Traceback" not in server.proc.log(), server.proc.log()


def test_odd_unsigned_requests_are_refused_in_one_line_and_kept_small(procs, tmp_path, slack):
    server = start_server(procs, tmp_path, slack)
    form = {"content-type": "application/x-www-form-urlencoded"}
    odd_stamp = {**form, "x-slack-request-timestamp": "abc", "x-slack-signature": "v0=x"}
    assert server.request("POST", "/slack/events", "command=/paper&text=help", odd_stamp)[0] == 401
    forged = "command=/paper&text=" + "x" * 1000 + "%0A2026-12-02 18:00:00,000 ERROR bot.slack.app: FORGED"
    assert server.request("POST", "/slack/events", forged, {**form, "x-slack-signature": "v0=x"})[0] == 401
    # A body announced as 3 MB is refused from its headers (the server does not read it: send only a start).
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(
            b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            b"Content-Length: %d\r\n\r\na=bbbb" % (3 * 1024 * 1024)
        )
        assert sock.recv(100).startswith(b"HTTP/1.1 413")
    assert server.command("tags")[0] == 200
    code, _ = server.proc.terminate_and_wait()
    log = server.proc.log()
    assert code == 0 and "Traceback" not in log and "FORGED" not in log and "x" * 100 not in log, log
    assert log.count("without a valid Slack signature") == 2, log


@pytest.mark.parametrize(
    "setting, env",
    [
        ("SLACK_SIGNING_SECRET", {"SLACK_SIGNING_SECRET": ""}),
        ("PAPERBOT_TIMEZONE", {"PAPERBOT_TIMEZONE": "Mars/Base"}),
        ("PAPERBOT_SCHEDULE", {"PAPERBOT_SCHEDULE": "61 * * * *"}),
        ("PORT", {"PORT": "abc"}),
        ("PAPERBOT_CHANNEL", {"PAPERBOT_CHANNEL": ""}),
        ("SLACK_BOT_TOKEN", {"SLACK_BOT_TOKEN": ""}),
    ],
)
def test_run_refuses_a_bad_setting_at_once(procs, tmp_path, slack, setting, env):
    full = env_for_process(tmp_path, slack.api_url, PORT=str(free_port()))
    full.update(env)
    done = procs.run("run", env=full, timeout=15)
    assert done.returncode != 0
    assert done.seconds < 8, done.seconds  # a start takes about two: it never waits on the network
    line = one_line(done.stderr)
    assert setting in line, line
    assert slack.calls == [], "a bad setting must stop the process before it talks to Slack"


def test_a_bot_token_slack_refuses_is_named_in_one_line(procs, tmp_path, slack):
    slack.fail_next("auth.test", error="invalid_auth")
    done = procs.run("run", env=env_for_process(tmp_path, slack.api_url, PORT=str(free_port())))
    assert (
        done.returncode != 0 and one_line(done.stderr) == "paperbot: SLACK_BOT_TOKEN: Slack refused it (invalid_auth)"
    )


def test_a_run_that_cannot_listen_posts_nothing_and_says_why(procs, tmp_path, slack):
    """This week's post is due (the schedule fires every minute), but a bot that cannot serve must not post it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = env_for_process(
            tmp_path, slack.api_url, PORT=str(port), PAPERBOT_SCHEDULE="* * * * *", PAPERBOT_MEETING="sun 23:59"
        )
        done = procs.run("run", env=env, timeout=30)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(f"paperbot: PORT: cannot listen on port {port}")
    assert slack.calls_to("chat.postMessage") == []
    assert db_rows(tmp_path, "SELECT * FROM deliveries") == []


def test_sigterm_while_starting_up_stops_cleanly(procs, tmp_path, slack):
    slack.fail_next("auth.test", accept_then="hang", seconds=20)  # start-up stalls where a slow Slack would
    proc = procs.start("run", env=env_for_process(tmp_path, slack.api_url, PORT=str(free_port())))
    assert slack.wait_for(lambda s: s.calls_to("auth.test"), timeout=20), proc.log()
    code, seconds = proc.terminate_and_wait(timeout=10)
    assert code == 0, proc.log()
    assert seconds < 5, seconds
    assert "Traceback" not in proc.log()


def test_sigterm_while_starting_in_socket_mode_connects_to_nothing_and_posts_nothing(procs, tmp_path, slack):
    """A stop asked for before the connection is open is a stop: no Socket Mode session, no weekly post."""
    slack.fail_next("auth.test", accept_then="hang", seconds=30)
    env = env_for_process(
        tmp_path,
        slack.api_url,
        SLACK_APP_TOKEN="xapp-test",
        PAPERBOT_SCHEDULE="* * * * *",
        PAPERBOT_MEETING="sun 23:59",
    )
    proc = procs.start("run", env=env)
    assert slack.wait_for(lambda s: s.calls_to("auth.test"), timeout=20), proc.log()
    code, seconds = proc.terminate_and_wait(timeout=15)
    assert code == 0 and seconds < 5, (code, seconds, proc.log())
    assert slack.calls_to("apps.connections.open") == [] and slack.calls_to("chat.postMessage") == []


def test_sigterm_while_slack_rate_limits_the_socket_mode_connection_stops_at_once(procs, tmp_path, slack):
    for _ in range(3):
        slack.fail_next("apps.connections.open", status=429, retry_after=30)
    env = env_for_process(
        tmp_path,
        slack.api_url,
        SLACK_APP_TOKEN="xapp-test",
        PAPERBOT_SCHEDULE="* * * * *",
        PAPERBOT_MEETING="sun 23:59",
    )
    proc = procs.start("run", env=env)
    assert slack.wait_for(lambda s: s.calls_to("apps.connections.open"), timeout=20), proc.log()
    time.sleep(1)
    code, seconds = proc.terminate_and_wait(timeout=15)
    assert code == 0 and seconds < 5, (code, seconds, proc.log())
    assert not slack.socket_connection_count and slack.calls_to("chat.postMessage") == []


def socket_mode_run(procs, tmp_path, slack):
    env = env_for_process(tmp_path, slack.api_url, SLACK_APP_TOKEN="xapp-test")
    proc = procs.start("run", env=env)
    assert slack.socket_connected.wait(20), proc.log()
    return proc


def test_sigterm_while_slack_rate_limits_a_socket_mode_reconnect_stops_within_seconds(procs, tmp_path, slack):
    proc = socket_mode_run(procs, tmp_path, slack)
    for _ in range(3):
        slack.fail_next("apps.connections.open", status=429, retry_after=100)
    slack.socket_disconnect()
    assert slack.wait_for(lambda s: [c for c in s.calls_to("apps.connections.open") if c.status == 429], timeout=30)
    code, seconds = proc.terminate_and_wait(timeout=30)
    assert code == 0 and seconds < 10, (code, seconds, proc.log())


def test_a_command_under_way_when_socket_mode_stops_is_still_answered(procs, tmp_path, slack):
    proc = socket_mode_run(procs, tmp_path, slack)
    slack.fail_next("users.info", accept_then="hang", seconds=1.5)  # is U1 an admin? Slack takes its time
    answers: list = []
    payload = dict(parse_qsl(slash_form("assign @U2 5 next", "U1", slack.response_url())))
    asking = threading.Thread(target=lambda: answers.append(slack.socket_send("slash_commands", payload, timeout=10)))
    asking.start()
    assert slack.wait_for(lambda s: s.calls_to("users.info"))  # the listener is waiting for users.info
    code, _ = proc.terminate_and_wait(timeout=30)
    asking.join()
    assert code == 0 and answers and answers[0].get("text"), (answers, proc.log())
    assert "Traceback" not in proc.log()


@pytest.mark.parametrize(
    "fault, words",
    [
        ({"error": "invalid_auth"}, "paperbot: SLACK_APP_TOKEN: Slack refused it for Socket Mode (invalid_auth)"),
        ({"status": 500}, "paperbot: cannot open a Socket Mode connection: "),
    ],
)
def test_a_socket_mode_connection_slack_refuses_is_one_line_that_names_the_cause(procs, tmp_path, slack, fault, words):
    for _ in range(6):
        slack.fail_next("apps.connections.open", **fault)
    env = env_for_process(tmp_path, slack.api_url, SLACK_APP_TOKEN="xapp-test")
    done = procs.run("run", env=env, timeout=60)
    assert done.returncode == 1 and one_line(done.stderr).startswith(words), done.stderr
    assert slack.calls_to("chat.postMessage") == []


def test_a_database_that_cannot_be_written_still_exports_and_dry_runs(procs, tmp_path, slack, read_only_db):
    env = env_for_process(tmp_path, slack.api_url, PAPERBOT_DB=str(read_only_db))
    done = procs.run("export", env=env)
    assert done.returncode == 0 and len(json.loads(done.stdout)) == 32, done.stderr
    done = procs.run("post-week", "--dry-run", "--at", "2026-12-07T09:00", env=env)
    assert done.returncode == 0 and "dry run: nothing was posted" in done.stdout, done.stderr


@pytest.mark.parametrize("verb", ["run", "export"])
def test_a_database_path_that_is_a_folder_is_named_in_one_line(procs, tmp_path, slack, verb):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    env = env_for_process(tmp_path, slack.api_url, PORT=str(free_port()), PAPERBOT_DB=str(folder))
    done = procs.run(verb, env=env, timeout=30)
    assert done.returncode != 0
    assert one_line(done.stderr).startswith(f"paperbot: PAPERBOT_DB: {folder} is a folder"), done.stderr


@pytest.fixture
def read_only_db(tmp_path):
    """An existing, seeded database file this process can read but not write, in a folder it can."""
    path = tmp_path / "paperbot.db"
    open_store(path).close()
    if os.geteuid() != 0:
        path.chmod(0o444)
        yield path
        return
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode:  # root ignores modes
        pytest.skip("cannot make a file immutable here")
    try:
        yield path
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=False)


@pytest.mark.parametrize("verb", ["run", "console"])
def test_a_database_that_cannot_be_written_stops_the_start_in_one_line(procs, tmp_path, slack, verb, read_only_db):
    env = env_for_process(tmp_path, slack.api_url, PORT=str(free_port()), PAPERBOT_DB=str(read_only_db))
    done = procs.run(verb, env=env, timeout=30, input="signup 3 next\n")
    assert done.returncode != 0
    assert one_line(done.stderr).startswith(f"paperbot: PAPERBOT_DB: cannot write {read_only_db}"), done.stderr
    assert slack.calls_to("chat.postMessage") == []


def test_the_evening_before_announces_the_next_mornings_meeting(procs, tmp_path, slack):
    env = env_for_process(tmp_path, slack.api_url, PAPERBOT_SCHEDULE="0 18 * * sun", PAPERBOT_MEETING="mon 10:00")
    done = procs.run("post-week", "--dry-run", "--at", "2026-12-06T18:00:00+01:00", env=env)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "2026-W50" in done.stdout and "Mon 07 Dec 2026 10:00" in done.stdout, done.stdout


def test_post_week_for_a_past_week_offers_a_meeting_still_ahead(procs, tmp_path, slack):
    past = monday(-4)
    env = env_for_process(tmp_path, slack.api_url, PAPERBOT_MEETING="thu 16:00")
    done = procs.run("post-week", "--dry-run", "--at", f"{past.isoformat()}T09:00:00", env=env)
    assert done.returncode == 0 and "[Sign up to present]" in done.stdout, done.stdout
    assert past.isoformat() not in done.stdout.split("[Sign up to present]")[1]  # its Thursday is over


# -- 3. exactly once ---------------------------------------------------------------


@pytest.mark.parametrize("verb", ["post-week", "remind"])
@pytest.mark.parametrize(
    "at, words", [("yesterday", "is not an ISO 8601 time"), ("9999-12-31T12:00", "is out of range")]
)
def test_a_bad_at_is_one_line(procs, tmp_path, slack, verb, at, words):
    done = procs.run(verb, "--at", at, env=env_for_process(tmp_path, slack.api_url))
    assert done.returncode != 0 and one_line(done.stderr).startswith("paperbot: --at: ") and words in done.stderr
    assert slack.calls_to("chat.postMessage") == []


def test_two_post_week_processes_at_once_post_once(procs, tmp_path, slack):
    env = env_for_process(tmp_path, slack.api_url)
    at = "2027-03-03T12:00"
    started = [procs.start("post-week", "--at", at, env=env) for _ in range(2)]
    codes = [p.wait(60) for p in started]
    logs = [p.log() for p in started]
    assert codes == [0, 0], logs
    assert len(slack.messages(CHANNEL)) == 1, logs
    assert len(slack.calls_to("chat.postMessage")) == 1
    assert sum("Posted the paper of the week 2027-W09" in log for log in logs) == 1, logs
    assert sum("2027-W09 already has its post" in log for log in logs) == 1, logs
    assert weekly_posts(slack)[0]["metadata"]["event_payload"]["week"] == "2027-W09"


def test_two_run_processes_catch_up_once(procs, tmp_path, slack):
    this_week = iso_week(datetime.now(TZ).date())
    servers = []
    for _ in range(2):
        port = free_port()
        env = env_for_process(
            tmp_path, slack.api_url, PORT=str(port), PAPERBOT_SCHEDULE="* * * * *", PAPERBOT_MEETING="sun 23:59"
        )
        servers.append(Server(procs.start("run", env=env), port, slack))
    for server in servers:
        server.wait_ready()
    assert slack.wait_for(lambda s: len(weekly_posts(s)) >= 1, timeout=20), [s.proc.log() for s in servers]
    # Both checked at start; let a late one misbehave.
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        assert len(weekly_posts(slack)) == 1
        time.sleep(0.1)
    logs = [s.proc.log() for s in servers]
    posts = weekly_posts(slack)
    assert len(posts) == 1, logs
    assert posts[0]["metadata"]["event_payload"]["week"] == this_week
    assert sum(f"posted the paper of the week {this_week}" in log for log in logs) == 1, logs
    assert db_rows(tmp_path, "SELECT state, attempts FROM deliveries WHERE kind = 'post'") == [("sent", 1)]
    for server in servers:
        code, _ = server.proc.terminate_and_wait()
        assert code == 0, server.proc.log()
        assert "Traceback" not in server.proc.log()
    assert len(weekly_posts(slack)) == 1


def test_sigterm_while_the_post_waits_out_a_rate_limit_stops_at_once_and_the_next_start_posts(procs, tmp_path, slack):
    slack.fail_next("chat.postMessage", status=429, retry_after=100)  # the bot waits up to 120 s for that
    server = start_server(procs, tmp_path, slack, PAPERBOT_SCHEDULE="* * * * *", PAPERBOT_MEETING="sun 23:59")
    assert slack.wait_for(lambda s: s.calls_to("chat.postMessage"), timeout=20), server.proc.log()
    code, seconds = server.proc.terminate_and_wait(timeout=30)
    assert code == 0 and seconds < 5, (code, seconds, server.proc.log())
    assert weekly_posts(slack) == []
    again = start_server(procs, tmp_path, slack, PAPERBOT_SCHEDULE="* * * * *", PAPERBOT_MEETING="sun 23:59")
    assert slack.wait_for(lambda s: len(weekly_posts(s)) == 1, timeout=20), again.proc.log()
    code, _ = again.proc.terminate_and_wait()
    assert code == 0 and len(weekly_posts(slack)) == 1
    assert "Traceback" not in server.proc.log() + again.proc.log()


def test_crash_after_slack_accepted_then_rerun_posts_nothing_more(procs, tmp_path, slack):
    env = env_for_process(tmp_path, slack.api_url)
    at = "2027-03-10T09:30"
    victim: dict = {}

    def kill_on_post(call):
        if call.method == "chat.postMessage" and "proc" in victim:
            os.kill(victim["proc"].pid, signal.SIGKILL)  # before the response leaves the stand-in

    slack.on_accept = kill_on_post
    victim["proc"] = procs.start("post-week", "--at", at, env=env)
    assert victim["proc"].wait(30) == -signal.SIGKILL, victim["proc"].log()
    slack.on_accept = None
    assert len(slack.messages(CHANNEL)) == 1
    assert db_rows(tmp_path, "SELECT state FROM deliveries WHERE kind = 'post'") == [("sending",)]

    again = procs.run("post-week", "--at", at, env=env)
    assert again.returncode == 0, again.stderr
    assert re.search(r"2027-W10 already ha(s|d) its post", again.stdout), again.stdout
    assert len(slack.messages(CHANNEL)) == 1
    assert len(slack.calls_to("chat.postMessage")) == 1
    assert db_rows(tmp_path, "SELECT state FROM deliveries WHERE kind = 'post'") == [("sent",)]

    third = procs.run("post-week", "--at", at, env=env)
    assert third.returncode == 0 and "2027-W10 already has its post" in third.stdout, third.stdout
    assert len(slack.messages(CHANNEL)) == 1


def test_dropped_connection_after_acceptance_posts_once(procs, tmp_path, slack):
    env = env_for_process(tmp_path, slack.api_url)
    slack.fail_next("chat.postMessage", accept_then="drop")
    done = procs.run("post-week", "--at", "2027-03-17T10:00", env=env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert len(slack.messages(CHANNEL)) == 1
    assert [c.status for c in slack.calls_to("chat.postMessage")] == [0]
    assert re.search(r"2027-W11 already ha(s|d) its post", done.stdout), done.stdout


def test_server_error_then_posts_once(procs, tmp_path, slack):
    # A 500 is uncertain: the bot looks at the history first, finds nothing, and posts once.
    env = env_for_process(tmp_path, slack.api_url)
    slack.fail_next("chat.postMessage", status=500)
    done = procs.run("post-week", "--at", "2027-03-18T10:00", env=env)
    assert done.returncode == 0, done.stderr
    assert "Posted the paper of the week 2027-W11" in done.stdout, done.stdout
    assert [c.status for c in slack.calls_to("chat.postMessage")] == [500, 200]
    assert slack.calls_to("conversations.history")
    assert len(slack.messages(CHANNEL)) == 1


def test_rate_limited_post_waits_and_posts_once(procs, tmp_path, slack):
    env = env_for_process(tmp_path, slack.api_url)
    slack.fail_next("chat.postMessage", status=429, retry_after=1)
    done = procs.run("post-week", "--at", "2027-03-24T10:00", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # the waits are told to a terminal only: a script reads the outcome alone
    assert "Posted the paper of the week 2027-W12" in done.stdout
    calls = slack.calls_to("chat.postMessage")
    assert [c.status for c in calls] == [429, 200]
    assert done.seconds >= 1  # it waited as Retry-After asked
    assert len(slack.messages(CHANNEL)) == 1


def test_not_in_channel_fails_in_one_line_then_posts_once(procs, tmp_path, slack):
    env = env_for_process(tmp_path, slack.api_url)
    at = "2027-03-31T10:00"
    slack.fail_next("chat.postMessage", error="not_in_channel")
    failed = procs.run("post-week", "--at", at, env=env)
    assert failed.returncode != 0
    assert "not_in_channel" in one_line(failed.stderr)
    assert slack.messages(CHANNEL) == []

    done = procs.run("post-week", "--at", at, env=env)
    assert done.returncode == 0, done.stderr
    assert "Posted the paper of the week 2027-W13" in done.stdout
    assert len(slack.messages(CHANNEL)) == 1
    again = procs.run("post-week", "--at", at, env=env)
    assert again.returncode == 0 and len(slack.messages(CHANNEL)) == 1


def test_skipped_week_and_dry_run_post_nothing(procs, tmp_path, slack):
    env = env_for_process(tmp_path, slack.api_url)
    skipped = monday(3)
    console = procs.run("console", env=env, input=f"skip {skipped.isoformat()}\n")
    assert console.returncode == 0, console.stderr
    assert "No meeting" in console.stdout, console.stdout

    done = procs.run("post-week", "--at", f"{skipped + timedelta(days=2)}T12:00", env=env)
    assert done.returncode == 0, done.stderr
    assert "skipped" in done.stdout, done.stdout
    assert slack.calls_to("chat.postMessage") == []

    papers = catalog(procs, tmp_path)
    week = monday(4)
    dry = procs.run("post-week", "--at", f"{week}T12:00", "--dry-run", env=env)
    assert dry.returncode == 0, dry.stderr
    shown = [p for p in papers.values() if p["title"] in dry.stdout]
    assert len(shown) == 1, dry.stdout
    assert shown[0]["summary"].strip() in dry.stdout
    assert "dry run" in dry.stdout
    assert slack.calls_to("chat.postMessage") == [] and slack.messages(CHANNEL) == []

    # The dry run showed what is then posted.
    real = procs.run("post-week", "--at", f"{week}T12:00", env=env)
    assert real.returncode == 0, real.stderr
    assert weekly_posts(slack)[0]["metadata"]["event_payload"]["paper_id"] == shown[0]["id"]


@pytest.mark.parametrize(
    "at, week",
    [
        ("2026-12-07T09:00", "2026-W50"),
        ("2026-12-31T10:00", "2026-W53"),
        ("2026-12-07T01:30+00:00", "2026-W50"),  # 01:30 UTC is 09:30 in Shanghai: past its slot
    ],
)
def test_weekly_post_metadata(procs, tmp_path, slack, at, week):
    env = env_for_process(tmp_path, slack.api_url, PAPERBOT_TIMEZONE="Asia/Shanghai")
    done = procs.run("post-week", "--at", at, env=env)
    assert done.returncode == 0, done.stderr
    (post,) = weekly_posts(slack)
    meta = post["metadata"]
    assert meta["event_type"] == "paper_of_the_week"
    assert meta["event_payload"]["week"] == week
    paper_id = meta["event_payload"]["paper_id"]
    assert SLUG.match(paper_id), paper_id
    assert paper_id in catalog(procs, tmp_path)


# -- 4. a kill in the middle of a burst of sign-ups ---------------------------------


def test_an_announcement_held_by_a_rate_limit_survives_a_crash(procs, tmp_path, slack):
    """Confirmed while Slack holds the bot off, then the bot is killed: the next start announces it."""
    server = start_server(procs, tmp_path, slack)
    time.sleep(2)  # the scheduler's first check (a catch-up post, if this week's slot is past) goes first
    slack.fail_next("chat.postMessage", status=429, retry_after=2)
    week = monday(4).isoformat()
    status, reply, _ = server.command(f"signup 5 {week}", user="U1")
    assert status == 200 and "You're signed up" in reply["text"]
    # Its line waits for the member to be quiet for 5 s (outbox_sender.ANNOUNCE_QUIET), then meets the 429.
    assert slack.wait_for(lambda s: [c for c in s.calls_to("chat.postMessage") if c.status == 429], timeout=20)
    os.kill(server.proc.pid, signal.SIGKILL)
    assert server.proc.wait(10) == -signal.SIGKILL
    assert [m for m in slack.messages(CHANNEL) if "will present" in m.get("text", "")] == []
    time.sleep(2)  # the Retry-After runs out while the bot is down
    again = start_server(procs, tmp_path, slack)
    assert slack.wait_for(
        lambda s: [m for m in s.messages(CHANNEL) if "will present" in m.get("text", "")], timeout=20
    ), again.proc.log()
    time.sleep(1)
    assert len([m for m in slack.messages(CHANNEL) if "will present" in m.get("text", "")]) == 1
    code, _ = again.proc.terminate_and_wait()
    assert code == 0 and db_rows(tmp_path, "SELECT count(*) FROM outbox") == [(0,)]


def test_announcements_held_when_the_bot_is_killed_go_out_after_the_restart_once(procs, tmp_path, slack):
    """A member's lines wait for them to be quiet (5 s): a kill meanwhile loses none, and the next start
    sends them, as one message, once."""
    server = start_server(procs, tmp_path, slack)
    for paper, weeks in ((5, 4), (6, 5)):
        status, reply, _ = server.command(f"signup {paper} {monday(weeks).isoformat()}", user="U1")
        assert status == 200 and "You're signed up" in reply["text"]
    os.kill(server.proc.pid, signal.SIGKILL)
    assert server.proc.wait(10) == -signal.SIGKILL
    assert [m for m in slack.messages(CHANNEL) if "will present" in m.get("text", "")] == []  # they were held
    again = start_server(procs, tmp_path, slack)
    assert slack.wait_for(lambda s: db_rows(tmp_path, "SELECT count(*) FROM outbox") == [(0,)], timeout=30), (
        again.proc.log()
    )
    [line] = [m["text"] for m in slack.messages(CHANNEL) if "will present" in m.get("text", "")]
    assert "<@U1> will present #5" in line and "<@U1> will present #6" in line


@pytest.mark.slow
def test_one_member_flooding_sign_ups_and_withdrawals_does_not_flood_the_channel(procs, tmp_path, slack):
    """Issue 23: 221 sign-up/withdraw pairs in 12 s posted 442 lines. Now they undo each other: none."""
    server = start_server(procs, tmp_path, slack)
    week = monday(4).isoformat()
    began = time.monotonic()
    for _ in range(200):
        for line in (f"signup 5 {week}", f"withdraw {week}"):
            status, _reply, _ = server.command(line, user="U1")
            assert status == 200
    flood = time.monotonic() - began
    assert slack.wait_for(lambda s: db_rows(tmp_path, "SELECT count(*) FROM outbox") == [(0,)], timeout=90), (
        server.proc.log()
    )
    lines = [m for m in slack.messages(CHANNEL) if "<@U1>" in m.get("text", "")]
    assert len(lines) <= 2, (flood, len(lines))  # none when the minute held the whole flood
    assert db_rows(tmp_path, "SELECT count(*) FROM slots") == [(0,)]


def test_a_change_made_in_the_console_is_announced_by_run(procs, tmp_path, slack):
    env = env_for_process(tmp_path, slack.api_url)
    done = procs.run("console", "--user", "U7", env=env, input=f"signup 5 {monday(4).isoformat()}\n")
    assert "(to the channel, sent by paperbot run: 📅 @U7 will present #5" in done.stdout, done.stdout
    procs.run("console", env=env, input=f"signup 6 {monday(5).isoformat()}\n")  # the operator, not a Slack user
    server = start_server(procs, tmp_path, slack)
    assert slack.wait_for(
        lambda s: [m for m in s.messages(CHANNEL) if "<@U7> will present #5" in m.get("text", "")], timeout=20
    ), server.proc.log()
    assert slack.wait_for(
        lambda s: [m for m in s.messages(CHANNEL) if "📅 @console will present #6" in m["text"]], timeout=20
    )
    assert "<@console>" not in json.dumps(slack.messages(CHANNEL))


def test_announcements_refused_before_a_restart_go_out_at_the_restart(procs, tmp_path, slack):
    slack.members.discard(CHANNEL)  # the bot was not invited yet
    server = start_server(procs, tmp_path, slack)
    status, reply, _ = server.command(f"signup 5 {monday(4).isoformat()}", user="U1")
    assert status == 200 and "You're signed up" in reply["text"]
    # Refused once the member has been quiet for 5 s (the catch-up post, if any, is refused too).
    assert slack.wait_for(
        lambda s: [c for c in s.calls_to("chat.postMessage") if "will present" in c.params.get("text", "")],
        timeout=20,
    )
    server.proc.terminate_and_wait(timeout=30)
    slack.members.add(CHANNEL)  # /invite @paperbot, then a restart
    start_server(procs, tmp_path, slack)
    # At once, not after the minute (up to ten) that a refused line waits before its next try.
    assert slack.wait_for(
        lambda s: [m for m in s.messages(CHANNEL) if "<@U1> will present #5" in m.get("text", "")], timeout=15
    )


def test_a_stop_does_not_wait_for_a_slack_call_that_hangs_and_loses_nothing(procs, tmp_path, slack):
    server = start_server(procs, tmp_path, slack)
    time.sleep(2)  # the scheduler's first check goes first
    slack.fail_next("chat.postMessage", accept_then="hang", seconds=60)
    status, reply, _ = server.command(f"signup 5 {monday(4).isoformat()}", user="U1")
    assert status == 200 and "You're signed up" in reply["text"]
    # The line is tried (and hangs) once the member has been quiet for 5 s; not the catch-up post.
    assert slack.wait_for(
        lambda s: [c for c in s.calls_to("chat.postMessage") if "will present" in c.params.get("text", "")],
        timeout=20,
    )
    code, seconds = server.proc.terminate_and_wait(timeout=30)
    assert code == 0 and seconds < 9, (code, seconds, server.proc.log())
    again = start_server(procs, tmp_path, slack)  # the hung line arrived: the next start finds it, once
    assert slack.wait_for(lambda s: db_rows(tmp_path, "SELECT count(*) FROM outbox") == [(0,)], timeout=20)
    lines = [m for m in slack.messages(CHANNEL) if "<@U1> will present #5" in m.get("text", "")]
    assert len(lines) == 1, again.proc.log()


def test_a_stop_does_not_wait_for_a_weekly_post_that_hangs_and_the_week_gets_one_post(procs, tmp_path, slack):
    slack.fail_next("chat.postMessage", accept_then="hang", seconds=60)  # Slack keeps the post, never answers
    server = start_server(
        procs, tmp_path, slack, PAPERBOT_SCHEDULE="* * * * *", PAPERBOT_MEETING="sun 23:59"
    )  # a slot is always past
    assert slack.wait_for(lambda s: s.calls_to("chat.postMessage"), timeout=20), server.proc.log()
    code, seconds = server.proc.terminate_and_wait(timeout=30)
    assert code == 0 and seconds < 9, (code, seconds, server.proc.log())
    again = start_server(procs, tmp_path, slack, PAPERBOT_SCHEDULE="* * * * *", PAPERBOT_MEETING="sun 23:59")
    assert slack.wait_for(lambda s: db_rows(tmp_path, "SELECT state FROM deliveries") == [("sent",)], timeout=20)
    posts = [m for m in slack.messages(CHANNEL) if (m.get("metadata") or {}).get("event_type") == "paper_of_the_week"]
    assert len(posts) == 1, again.proc.log()


def test_kill_mid_burst_loses_no_confirmed_signup(procs, tmp_path, slack):
    n = 90
    papers = tmp_path / "burst.jsonl"
    papers.write_text(
        "".join(
            json.dumps({"id": f"burst-{i:03d}", "title": f"Burst paper {i}", "tags": ["burst"]}) + "\n"
            for i in range(n)
        )
    )
    imported = procs.run("import", str(papers), env=env_for_process(tmp_path, NO_SLACK))
    assert imported.returncode == 0 and f"{n} added" in imported.stdout, imported.stdout + imported.stderr

    server = start_server(procs, tmp_path, slack)
    jobs: queue.Queue = queue.Queue()
    for i in range(n):
        jobs.put((f"UB{i:03d}", f"burst-{i:03d}", monday(2 + i)))
    confirmed: list[tuple[str, str, date]] = []
    failed: list = []
    lock = threading.Lock()
    killed = threading.Event()
    kill_after = 30

    def worker():
        while True:
            try:
                user, paper, week = jobs.get_nowait()
            except queue.Empty:
                return
            try:
                status, reply, _ = server.command(f"signup {paper} {week.isoformat()}", user=user, timeout=10)
            except (OSError, http.client.HTTPException) as e:  # the server is gone
                with lock:
                    failed.append((user, repr(e)))
                continue
            with lock:
                if status == 200 and "You're signed up" in reply.get("text", ""):
                    confirmed.append((user, paper, week))
                    if len(confirmed) >= kill_after and not killed.is_set():
                        killed.set()
                        os.kill(server.proc.pid, signal.SIGKILL)
                else:
                    failed.append((user, status, reply.get("text")))

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert killed.is_set(), (len(confirmed), failed[:5])
    assert server.proc.wait(10) == -signal.SIGKILL
    assert failed, "the kill should have cut the burst short"
    assert len(confirmed) >= kill_after

    rows = {
        (presenter, week): paper
        for week, presenter, paper in db_rows(
            tmp_path,
            "SELECT s.week, s.presenter, p.id FROM slots s JOIN papers p ON p.number = s.paper "
            "WHERE s.kind = 'presenter'",
        )
    }
    lost = [(u, p, w) for u, p, w in confirmed if rows.get((u, iso_week(w))) != p]
    assert lost == [], f"{len(lost)} confirmed sign-ups are missing: {lost[:5]}"

    # And the product itself says so, for one of them.
    user, paper, week = confirmed[-1]
    mine = procs.run("console", "--user", user, env=env_for_process(tmp_path, NO_SLACK), input="mine\n")
    assert mine.returncode == 0, mine.stderr
    assert f"Burst paper {int(paper.rsplit('-', 1)[1])}" in mine.stdout, mine.stdout


# -- 5. many processes racing for one week ---------------------------------------


def test_console_processes_racing_for_one_week(procs, tmp_path):
    env = env_for_process(tmp_path, NO_SLACK)
    week = monday(2)
    racers = []
    for i in range(1, 9):
        p = procs.start("console", "--user", f"U{i}", env=env, pipes=True, stdin=subprocess.PIPE)
        racers.append((f"U{i}", p, LineReader(p.popen.stdout)))
    # Each has opened the database and answered once: now they race.
    for _, p, _ in racers:
        p.popen.stdin.write("week\n")
        p.popen.stdin.flush()
    for _, _, reader in racers:
        reader.until(lambda line: line == "\n", timeout=30)
    for i, (_, p, _) in enumerate(racers, start=1):
        p.popen.stdin.write(f"signup {i} {week + timedelta(days=2)}\n")
    for _, p, _ in racers:
        p.popen.stdin.close()
    outputs = {}
    for user, p, reader in racers:
        outputs[user] = reader.rest(timeout=30)
        code, err = p.wait(10), p.popen.stderr.read()
        assert code == 0 and "Traceback" not in err, err

    winners = [u for u, out in outputs.items() if "You're signed up" in out]
    assert len(winners) == 1, outputs
    (winner,) = winners
    for user, out in outputs.items():
        if user != winner:
            assert re.search(rf"is taken: @{winner}\b", out), out
    assert db_rows(tmp_path, "SELECT presenter FROM slots WHERE week = ?", [iso_week(week)]) == [(winner,)]


# -- 6. import while run serves the same database ---------------------------------


def test_an_import_of_several_files_imports_again_unchanged(procs, tmp_path):
    """The files of one `import` are one list: an id-less row of the first never takes the id that the
    second names for another paper (which would retitle it, and the next import add it again)."""
    first = tmp_path / "a.yaml"
    first.write_text('- title: "Foo: A"\n- title: "Foo: B"\n', encoding="utf-8")
    second = tmp_path / "b.json"
    second.write_text(json.dumps([{"id": "foo-2", "title": "Something Else"}]), encoding="utf-8")
    env = env_for_process(tmp_path, NO_SLACK)
    once = procs.run("import", str(first), str(second), env=env)
    again = procs.run("import", str(first), str(second), env=env)
    assert once.returncode == 0 and again.returncode == 0, once.stderr + again.stderr
    assert "a.yaml: 2 added" in once.stdout and "b.json: 1 added" in once.stdout, once.stdout
    assert again.stdout.count("0 added, 0 updated") == 2, again.stdout
    exported = json.loads(procs.run("export", "--format", "json", env=env).stdout)
    assert {p["id"]: p["title"] for p in exported if p["id"].startswith("foo")} == {
        "foo": "Foo: A",
        "foo-2": "Something Else",
        "foo-3": "Foo: B",
    }


def test_import_while_serving(procs, tmp_path, slack):
    server = start_server(procs, tmp_path, slack)
    big = tmp_path / "big.jsonl"
    big.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"bulk-{i:04d}",
                    "title": f"Bulk paper {i}",
                    "summary": f"批量导入的论文 {i}: sharded training",
                    "tags": ["bulk-import", f"bulk-{i % 7}"],
                    "url": f"https://example.org/bulk/{i}",
                },
                ensure_ascii=False,
            )
            + "\n"
            for i in range(2000)
        ),
        encoding="utf-8",
    )

    stop = threading.Event()
    answered: list[tuple[float, int, float]] = []
    errors: list = []

    def keep_asking():
        texts = ["tags", "search sharded", "week", "tag parallelism-dp"]
        i = 0
        while not stop.is_set():
            try:
                status, _, seconds = server.command(texts[i % len(texts)], timeout=10)
                answered.append((time.monotonic(), status, seconds))
            except (OSError, http.client.HTTPException) as e:
                errors.append(repr(e))
            i += 1

    asker = threading.Thread(target=keep_asking)
    asker.start()
    try:
        began = time.monotonic()
        first = procs.run("import", str(big), env=env_for_process(tmp_path, NO_SLACK), timeout=60)
        ended = time.monotonic()
        time.sleep(0.3)
    finally:
        stop.set()
        asker.join(30)
    assert first.returncode == 0, first.stderr
    assert "2000 added" in first.stdout, first.stdout
    assert errors == []
    assert answered and all(status == 200 for _, status, _ in answered), answered
    assert max(seconds for _, _, seconds in answered) < 3
    assert any(began <= t <= ended for t, _, _ in answered), "no request was answered during the import"

    status, reply, seconds = server.command("tag bulk-import")
    assert status == 200 and seconds < 3
    assert "2000 papers tagged bulk-import" in reply["text"], reply["text"][:300]
    status, reply, _ = server.command("show bulk-1999")
    assert status == 200 and "Bulk paper 1999" in reply["text"]

    second = procs.run("import", str(big), env=env_for_process(tmp_path, NO_SLACK), timeout=60)
    assert second.returncode == 0, second.stderr
    assert "0 added" in second.stdout and "2000 unchanged" in second.stdout, second.stdout

    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join(
            [
                json.dumps({"id": "good-one", "title": "Good paper one", "tags": ["fresh-tag"]}),
                "{not json",
                json.dumps({"id": "no-title"}),
                json.dumps({"id": "good-two", "title": "Good paper two", "tags": ["fresh-tag"]}),
                json.dumps({"id": "bad-url", "title": "Bad url", "url": "ftp://x y"}),
                json.dumps([1, 2, 3]),
                json.dumps({"id": "Bad Id!", "title": "Bad id"}),
            ]
        )
        + "\n"
    )
    mixed = procs.run("import", str(bad), env=env_for_process(tmp_path, NO_SLACK))
    assert mixed.returncode == 0, mixed.stderr
    assert "2 added" in mixed.stdout and "5 skipped" in mixed.stdout, mixed.stdout
    for line in (2, 3, 5, 6, 7):
        assert re.search(rf"\bline {line}\b", mixed.stderr), mixed.stderr
    assert "line 1:" not in mixed.stderr and "line 4:" not in mixed.stderr
    assert "Traceback" not in mixed.stderr
    status, reply, _ = server.command("tag fresh-tag")
    assert status == 200 and "2 papers tagged fresh-tag" in reply["text"], reply.get("text")

    code, _ = server.proc.terminate_and_wait()
    assert code == 0, server.proc.log()


def test_a_file_that_cannot_be_read_never_stops_the_next_one(procs, tmp_path):
    broken = tmp_path / "broken.csv"
    broken.write_text('"id,title\nok-b,B\n', encoding="utf-8")  # a quote in the header, never closed
    bad_row = tmp_path / "bad-row.json"
    bad_row.write_text('[{"id": "s", "title": "bad \\ud800"}, {"id": "fine-a", "title": "Fine A"}]', encoding="utf-8")
    good = tmp_path / "good.yaml"
    good.write_text("- {id: fine-b, title: Fine B, tag: oops}\n", encoding="utf-8")
    done = procs.run("import", str(broken), str(bad_row), str(good), env=env_for_process(tmp_path, NO_SLACK))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"paperbot: {broken}: the first line is not valid CSV" in done.stderr
    assert f"{bad_row}: 1 added, 0 updated, 0 unchanged, 1 skipped" in done.stdout
    assert f"skipped: {bad_row} item 1: title holds a character that is not valid Unicode" in done.stderr
    assert f"{good}: 1 added" in done.stdout and f"note: {good}: key 'tag' (item 1) is not read" in done.stderr


def test_sign_ups_keep_their_3_seconds_during_a_big_import(procs, tmp_path, slack):
    """An import commits batch after batch; members signing up and withdrawing meanwhile must each get a turn."""
    server = start_server(procs, tmp_path, slack)
    big = tmp_path / "big.jsonl"
    big.write_text(
        "".join(
            json.dumps({"id": f"bulk-{i}", "title": f"Bulk paper {i}", "summary": "批量导入 sharded", "tags": ["bulk"]})
            + "\n"
            for i in range(30_000)
        ),
        encoding="utf-8",
    )
    importing = threading.Event()
    answers: list[tuple[str, int, str, float]] = []
    errors: list = []

    def member(k: int) -> None:
        i = 0
        while not importing.is_set():  # until the import has started
            time.sleep(0.01)
        while importing.is_set():
            i += 1
            week = monday(3 + (k * 40 + i) % 150).isoformat()
            text = f"signup {1 + k} {week}" if i % 2 else f"withdraw {week}"
            try:
                status, reply, seconds = server.command(text, user=f"UMEMBER{k}", timeout=20)
                answers.append((text, status, reply.get("text", ""), seconds))
            except (OSError, http.client.HTTPException) as e:
                errors.append(repr(e))
            time.sleep(0.05)

    members = [threading.Thread(target=member, args=(k,)) for k in range(4)]
    for t in members:
        t.start()
    try:
        importing.set()
        done = procs.run("import", str(big), env=env_for_process(tmp_path, NO_SLACK), timeout=120)
    finally:
        importing.clear()
        for t in members:
            t.join(30)
    assert done.returncode == 0 and "30000 added" in done.stdout, done.stderr
    assert errors == []
    assert len(answers) > 20, answers
    slow = [(text, seconds) for text, _, _, seconds in answers if seconds >= 3]
    assert slow == [], f"{len(slow)} of {len(answers)} over 3 s: {slow[:5]}"
    assert all(status == 200 and "went wrong" not in said for _, status, said, _ in answers), answers
    signed_up = [said for text, _, said, _ in answers if text.startswith("signup")]
    assert any("You're signed up" in said for said in signed_up), signed_up[:5]


# -- 7. reminders ----------------------------------------------------------------


def test_remind_sends_a_due_reminder_once(procs, tmp_path, slack):
    env = env_for_process(tmp_path, slack.api_url)
    week = monday(3)
    signup = procs.run("console", "--user", "U1", env=env, input=f"signup 5 {week}\n")
    assert "You're signed up" in signup.stdout, signup.stdout + signup.stderr
    meeting = datetime.combine(week + timedelta(days=3), datetime.min.time().replace(hour=16))  # thu 16:00
    due = meeting - timedelta(days=2)

    early = procs.run("remind", "--at", (due - timedelta(minutes=1)).isoformat(timespec="minutes"), env=env)
    assert early.returncode == 0 and "No reminders are due" in early.stdout, early.stdout + early.stderr
    assert slack.messages("DU1") == []

    first = procs.run("remind", "--at", due.isoformat(timespec="minutes"), env=env)
    assert first.returncode == 0, first.stderr
    assert "Reminded U1" in first.stdout, first.stdout
    dms = slack.messages("DU1")
    assert len(dms) == 1
    assert dms[0]["metadata"]["event_payload"]["week"] == iso_week(week)

    again = procs.run("remind", "--at", (due + timedelta(hours=1)).isoformat(timespec="minutes"), env=env)
    assert again.returncode == 0, again.stderr
    assert "No reminders are due" in again.stdout, again.stdout
    assert len(slack.messages("DU1")) == 1


def test_the_console_operators_own_slot_gets_no_reminder_and_no_failure(procs, tmp_path, slack):
    """The README's session: the operator signs up from the console, as `console`, whom Slack does not know."""
    env = env_for_process(tmp_path, slack.api_url)
    week = monday(3)
    assert "You're signed up" in procs.run("console", env=env, input=f"signup 5 {week}\n").stdout
    due = datetime.combine(week + timedelta(days=1), datetime.min.time().replace(hour=16))  # thu 16:00, 2 days ahead
    done = procs.run("remind", "--at", due.isoformat(timespec="minutes"), env=env)
    assert done.returncode == 0, done.stderr
    assert f"No reminder for console about {iso_week(week)}: not a Slack user." in done.stdout
    assert slack.calls_to("chat.postMessage") == [] and slack.calls_to("conversations.open") == []


def test_remind_run_twice_at_once_reminds_once_and_neither_fails(procs, tmp_path, slack):
    """`remind` from cron while another sends the same reminder (Slack slow to answer): not a failure."""
    env = env_for_process(tmp_path, slack.api_url)
    week = monday(3)
    assert "You're signed up" in procs.run("console", "--user", "U1", env=env, input=f"signup 5 {week}\n").stdout
    due = datetime.combine(week + timedelta(days=1), datetime.min.time().replace(hour=16))  # thu 16:00, 2 days ahead
    slack.on_accept = lambda call: time.sleep(2)
    started = [procs.start("remind", "--at", due.isoformat(timespec="minutes"), env=env) for _ in range(2)]
    codes = [p.wait(60) for p in started]
    logs = [p.log() for p in started]
    assert codes == [0, 0], logs
    assert len(slack.messages("DU1")) == 1
    assert sum("Reminded U1" in log for log in logs) == 1, logs


def test_remind_waiting_out_a_rate_limit_while_the_presenter_withdraws_sends_nothing_and_succeeds(
    procs, tmp_path, slack
):
    env = env_for_process(tmp_path, slack.api_url)
    week = monday(3)
    assert "You're signed up" in procs.run("console", "--user", "U1", env=env, input=f"signup 5 {week}\n").stdout
    due = datetime.combine(week + timedelta(days=1), datetime.min.time().replace(hour=16))  # thu 16:00, 2 days ahead
    withdrawn: list = []

    def withdraw() -> None:  # while `remind` waits for the 429, so before its Retry-After ends, however slow
        withdrawn.append(procs.run("console", "--user", "U1", env=env, input=f"withdraw {week}\n"))

    slack.fail_next("chat.postMessage", status=429, retry_after=1, meanwhile=withdraw)
    reminding = procs.start("remind", "--at", due.isoformat(timespec="minutes"), env=env)
    assert slack.wait_for(lambda s: withdrawn, timeout=60), reminding.log()
    assert "You gave up" in withdrawn[0].stdout, withdrawn[0].stdout + withdrawn[0].stderr
    assert reminding.wait(60) == 0, reminding.log()
    assert f"No reminder for U1 about {iso_week(week)} after all" in reminding.log()
    assert slack.messages("DU1") == []
