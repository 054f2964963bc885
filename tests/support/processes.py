"""Real `python -m bot` processes on one SQLite file: started, read line by line with deadlines, talked
to over HTTP as Slack does, and killed in teardown if they still run."""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import os
import queue
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from tests.support.clock import TZ
from tests.support.slack_group import CHANNEL, env_for_process
from tests.support.slack_harness import sign, slash_form

BOT = [sys.executable, "-m", "bot"]


# -- processes -------------------------------------------------------------------


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


class LineReader:
    """Reads a pipe in a thread, so that a test can wait for a line with a deadline."""

    def __init__(self, pipe):
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self._thread = threading.Thread(target=self._pump, args=(pipe,), daemon=True)
        self._thread.start()

    def _pump(self, pipe):
        for line in iter(pipe.readline, ""):
            self.lines.put(line)
        self.lines.put(None)

    def _next(self, deadline: float, timeout: float, waiting_for: str, got: list[str]) -> str | None:
        """The next line (None at EOF); fails once the deadline passes."""
        try:
            return self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no {waiting_for} within {timeout} s; got {got!r}") from None

    def until(self, predicate, timeout: float) -> list[str]:
        """Lines read until one satisfies predicate (inclusive); fails at EOF or timeout."""
        got: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            line = self._next(deadline, timeout, "matching line", got)
            if line is None:
                raise AssertionError(f"EOF before a matching line; got {got!r}")
            got.append(line)
            self.seen.append(line)
            if predicate(line):
                return got

    def rest(self, timeout: float) -> str:
        """Everything up to EOF."""
        got: list[str] = []
        deadline = time.monotonic() + timeout
        while (line := self._next(deadline, timeout, "EOF", got)) is not None:
            got.append(line)
            self.seen.append(line)
        return "".join(got)


class Proc:
    """A started child: Popen plus where its output goes."""

    def __init__(self, popen: subprocess.Popen, out: Path | None, err: Path | None):
        self.popen, self.out_path, self.err_path = popen, out, err

    @property
    def pid(self) -> int:
        return self.popen.pid

    def poll(self):
        return self.popen.poll()

    def wait(self, timeout: float) -> int:
        return self.popen.wait(timeout)

    def log(self) -> str:
        """stdout + stderr so far (for processes started with output to files)."""
        parts = []
        for path in (self.out_path, self.err_path):
            if path is not None and path.exists():
                parts.append(path.read_text(encoding="utf-8", errors="replace"))
        return "".join(parts)

    def stderr(self) -> str:
        return self.err_path.read_text(encoding="utf-8", errors="replace") if self.err_path else ""

    def terminate_and_wait(self, timeout: float = 10) -> tuple[int, float]:
        started = time.monotonic()
        self.popen.send_signal(signal.SIGTERM)
        code = self.popen.wait(timeout)
        return code, time.monotonic() - started


class Procs:
    def __init__(self, tmp_path: Path):
        self.tmp_path = tmp_path
        self.started: list[subprocess.Popen] = []
        self._n = 0

    def start(
        self,
        *args: str,
        env: dict,
        exe: list[str] | None = None,
        pipes: bool = False,
        stdin=subprocess.DEVNULL,
    ) -> Proc:
        """Start `python -m bot ARGS` in tmp_path; output to files (or to pipes)."""
        self._n += 1
        out = err = None
        if pipes:
            stdout = stderr = subprocess.PIPE
        else:
            out = self.tmp_path / f"proc{self._n}-{args[0]}.out"
            err = self.tmp_path / f"proc{self._n}-{args[0]}.err"
            stdout, stderr = out.open("w"), err.open("w")
        try:
            popen = subprocess.Popen(
                [*(exe or BOT), *args],
                cwd=self.tmp_path,
                env=env,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                text=True,
                encoding="utf-8",
                errors="replace",
            )
        finally:
            if not pipes:
                stdout.close()
                stderr.close()
        self.started.append(popen)
        return Proc(popen, out, err)

    def run(
        self,
        *args: str,
        env: dict,
        input: str | None = None,
        exe: list[str] | None = None,
        timeout: float = 30,
    ) -> Done:
        started = time.monotonic()
        proc = self.start(*args, env=env, exe=exe, pipes=True, stdin=subprocess.PIPE)
        try:
            out, err = proc.popen.communicate(input or "", timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.popen.kill()
            out, err = proc.popen.communicate()
            raise AssertionError(f"{args} did not finish within {timeout} s:\n{out}\n{err}") from None
        return Done(proc.popen.returncode, out, err, time.monotonic() - started)

    def close(self) -> None:
        for p in self.started:
            if p.poll() is None:
                p.kill()
        for p in self.started:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(10)
            for stream in (p.stdin, p.stdout, p.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got {len(lines)}:\n{text}"
    assert "Traceback" not in text
    return lines[0]


# -- HTTP ------------------------------------------------------------------------


#: Ports for `run` processes: each xdist worker its own range below the kernel's ephemeral ports, taken
#: in turn, so that two tests never pick the same free port before either child has bound it; each run
#: starts at a random place in its range, so that two suites run at once seldom meet either.
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
_PORTS = itertools.count(20000 + 1000 * (_WORKER % 12) + random.randrange(900))


def free_port() -> int:
    for port in _PORTS:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port")


class Server:
    """A `run` process in HTTP mode, and a way to talk to it as Slack does."""

    def __init__(self, proc: Proc, port: int, slack):
        self.proc, self.port, self.slack = proc, port, slack

    def request(
        self,
        method: str,
        path: str,
        body: str = "",
        headers: dict | None = None,
        timeout: float = 10,
    ) -> tuple[int, bytes, float]:
        started = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body.encode(), headers=headers or {})
            response = conn.getresponse()
            data = response.read()
            return response.status, data, time.monotonic() - started
        finally:
            conn.close()

    def wait_ready(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"run exited with {self.proc.poll()}:\n{self.proc.log()}")
            try:
                if self.request("GET", "/healthz", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"run did not serve within {timeout} s:\n{self.proc.log()}")

    def form(self, text: str, user: str = "U1") -> str:
        return slash_form(text, user, self.slack.response_url())

    def command(self, text: str, user: str = "U1", timeout: float = 10) -> tuple[int, dict, float]:
        body = self.form(text, user)
        status, data, seconds = self.request("POST", "/slack/events", body, sign(body), timeout=timeout)
        return status, (json.loads(data) if data and status == 200 else {}), seconds


def start_server(procs: Procs, tmp_path: Path, slack, **env: str) -> Server:
    port = free_port()
    proc = procs.start("run", env=env_for_process(tmp_path, slack.api_url, PORT=str(port), **env))
    server = Server(proc, port, slack)
    server.wait_ready()
    return server


# -- dates and Slack state -------------------------------------------------------


#: A group whose latest slot always announces a meeting still ahead (Monday 00:00's is that Sunday's at 23:59):
#: for a catch-up at the real time, which with another rhythm has hours of the week with no post due.
MEETING_ALWAYS_AHEAD = {"PAPERBOT_SCHEDULE": "0 0 * * mon", "PAPERBOT_MEETING": "sun 23:59"}


def monday(weeks_ahead: int) -> date:
    """The Monday `weeks_ahead` weeks after this week's, in the group's zone.

    With weeks_ahead >= 2 its meeting is always ahead, so the week is bookable.
    """
    today = datetime.now(TZ).date()
    return today - timedelta(days=today.weekday()) + timedelta(weeks=weeks_ahead)


def iso_week(day: date) -> str:
    iso = day.isocalendar()
    return f"{iso.year}-W{iso.week:02d}"


def weekly_posts(slack, channel: str = CHANNEL) -> list[dict]:
    return [m for m in slack.messages(channel) if (m.get("metadata") or {}).get("event_type") == "paper_of_the_week"]
