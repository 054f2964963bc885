"""The HTTP door: malformed signatures, malformed signed payloads, replays and slow connections.

A real waitress server on 127.0.0.1 in this process, serving the real Bolt app against the Slack
stand-in; requests are raw bytes on a socket where headers must be odd.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import socket
import subprocess
import sys
import threading
import time
from urllib.parse import urlencode

import pytest

from bot.web import http_door
from tests.support.slack_door import Door
from tests.support.slack_group import SECRET
from tests.support.slack_harness import sign, slash_form

# -- a server in this process ----------------------------------------------------------


@pytest.fixture
def door(make_harness):
    made: list[Door] = []

    def make(application=None, **limits) -> Door:
        d = Door(make_harness(), application, **limits)
        made.append(d)
        return d

    yield make
    for d in made:
        d.close()


def refusals(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage().startswith("refused a request")]


def assert_no_traceback(caplog) -> None:
    assert not [r for r in caplog.records if r.exc_info or r.exc_text], caplog.text
    assert "Traceback" not in caplog.text


def slots(harness) -> list[tuple]:
    return harness.bot.store.db.execute("SELECT * FROM slots").fetchall()


def signed(body: bytes, timestamp: str | None = None) -> dict[str, str]:
    timestamp = timestamp or str(int(time.time()))
    digest = hmac.new(SECRET.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": "v0=" + digest}


# -- 1. malformed signature headers ---------------------------------------------------------

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def _headers(case: str, body: bytes) -> list[tuple[str, bytes]]:
    """The signature headers of one malformed case, for `body`."""
    now = str(int(time.time()))
    good = signed(body, now)
    sig, ts = good["X-Slack-Signature"].encode(), now.encode()
    cases = {
        "unicode digit (Latin-1 \\xb2)": [("X-Slack-Request-Timestamp", b"\xb2"), ("X-Slack-Signature", sig)],
        "superscript digits in UTF-8": [("X-Slack-Request-Timestamp", "¹²³".encode()), ("X-Slack-Signature", sig)],
        "Arabic-Indic digits": [("X-Slack-Request-Timestamp", "١٧٣٣".encode()), ("X-Slack-Signature", sig)],
        "a sign": [("X-Slack-Request-Timestamp", b"+" + ts), ("X-Slack-Signature", sig)],
        "negative": [("X-Slack-Request-Timestamp", b"-" + ts), ("X-Slack-Signature", sig)],
        "a space inside": [("X-Slack-Request-Timestamp", ts[:4] + b" " + ts[4:]), ("X-Slack-Signature", sig)],
        "a huge number": [("X-Slack-Request-Timestamp", b"9" * 400), ("X-Slack-Signature", sig)],
        "an exponent": [("X-Slack-Request-Timestamp", b"1e9"), ("X-Slack-Signature", sig)],
        "empty timestamp": [("X-Slack-Request-Timestamp", b""), ("X-Slack-Signature", sig)],
        "no timestamp": [("X-Slack-Signature", sig)],
        "no signature": [("X-Slack-Request-Timestamp", ts)],
        "neither": [],
        "timestamp twice": [
            ("X-Slack-Request-Timestamp", ts),
            ("X-Slack-Request-Timestamp", ts),
            ("X-Slack-Signature", sig),
        ],
        "signature twice": [("X-Slack-Request-Timestamp", ts), ("X-Slack-Signature", sig), ("X-Slack-Signature", sig)],
        "non-hex signature": [("X-Slack-Request-Timestamp", ts), ("X-Slack-Signature", b"v0=" + b"z" * 64)],
        "short signature": [("X-Slack-Request-Timestamp", ts), ("X-Slack-Signature", sig[:20])],
        "another version": [("X-Slack-Request-Timestamp", ts), ("X-Slack-Signature", b"v1=" + sig[3:])],
        "no version": [("X-Slack-Request-Timestamp", ts), ("X-Slack-Signature", sig[3:])],
        "upper-case hex": [("X-Slack-Request-Timestamp", ts), ("X-Slack-Signature", b"v0=" + sig[3:].upper())],
        "signature not UTF-8": [("X-Slack-Request-Timestamp", ts), ("X-Slack-Signature", b"v0=\xff\xfe" + sig[5:])],
        "wrong secret": [
            ("X-Slack-Request-Timestamp", ts),
            ("X-Slack-Signature", sign(body.decode(), int(now), secret="not-it")["x-slack-signature"].encode()),
        ],
        "ten minutes old": [
            ("X-Slack-Request-Timestamp", str(int(now) - 600).encode()),
            ("X-Slack-Signature", signed(body, str(int(now) - 600))["X-Slack-Signature"].encode()),
        ],
        "ten minutes ahead": [
            ("X-Slack-Request-Timestamp", str(int(now) + 600).encode()),
            ("X-Slack-Signature", signed(body, str(int(now) + 600))["X-Slack-Signature"].encode()),
        ],
    }
    return cases[case]


MALFORMED_SIGNATURES = [
    "unicode digit (Latin-1 \\xb2)",
    "superscript digits in UTF-8",
    "Arabic-Indic digits",
    "a sign",
    "negative",
    "a space inside",
    "a huge number",
    "an exponent",
    "empty timestamp",
    "no timestamp",
    "no signature",
    "neither",
    "timestamp twice",
    "signature twice",
    "non-hex signature",
    "short signature",
    "another version",
    "no version",
    "upper-case hex",
    "signature not UTF-8",
    "wrong secret",
    "ten minutes old",
    "ten minutes ahead",
]


def test_every_malformed_signature_is_a_401_in_one_line_and_changes_nothing(door, caplog):
    caplog.set_level(logging.INFO)
    d = door()
    for case in MALFORMED_SIGNATURES:
        body = slash_form("signup 5 next", "U1", d.h.slack.response_url()).encode()
        head = b"POST /slack/events HTTP/1.1\r\nHost: paperbot\r\nContent-Type: application/x-www-form-urlencoded"
        for name, value in _headers(case, body):
            head += b"\r\n" + name.encode() + b": " + value
        before = len(refusals(caplog))
        status, answer = d.raw(head, body)
        assert status == 401, (case, status, answer)
        said = refusals(caplog)[before:]
        assert len(said) == 1 and "without a valid Slack signature" in said[0].getMessage(), (case, caplog.text)
    assert slots(d.h) == []
    assert_no_traceback(caplog)
    assert d.command("tags")[0] == 200  # and it goes on serving


# -- 2. signed but malformed payloads --------------------------------------------------------


def _interactive(payload) -> tuple[bytes, str]:
    return urlencode({"payload": payload if isinstance(payload, str) else json.dumps(payload)}).encode(), FORM[
        "Content-Type"
    ]


def _event(envelope: dict) -> tuple[bytes, str]:
    return json.dumps({"token": "t", "team_id": "T0TEST", "api_app_id": "A0TEST", **envelope}).encode(), (
        "application/json"
    )


USER = {"id": "U1", "team_id": "T0TEST"}
VIEW = {"id": "V1", "type": "modal", "callback_id": "add_paper", "private_metadata": "", "state": {"values": {}}}
ACTION = {"type": "button", "action_id": "signup:5", "value": "signup 5", "block_id": "b"}

MALFORMED_PAYLOADS = {
    # events
    "event a list": _event({"type": "event_callback", "event": [1, 2]}),
    "event a string": _event({"type": "event_callback", "event": "app_home_opened"}),
    "event without a type": _event({"type": "event_callback", "event": {"user": "U1"}}),
    "event's user a list": _event({"type": "event_callback", "event": {"type": "app_home_opened", "user": [1]}}),
    "event's message a string": _event({"type": "event_callback", "event": {"type": "message", "message": "x"}}),
    "event's tab a number": _event({"type": "event_callback", "event": {"type": "app_home_opened", "tab": 1}}),
    "authorizations an object": _event(
        {"type": "event_callback", "event": {"type": "app_home_opened"}, "authorizations": {"a": 1}}
    ),
    "authorizations of numbers": _event(
        {"type": "event_callback", "event": {"type": "app_home_opened"}, "authorizations": [1]}
    ),
    "shared channel with event a list": _event({"type": "event_callback", "is_ext_shared_channel": True, "event": []}),
    "url_verification without challenge": _event({"type": "url_verification"}),
    "JSON list": (b"[1, 2]", "application/json"),
    "JSON not JSON": (b"{bad", "application/json"),
    "JSON null": (b"null", "application/json"),
    "JSON without type": _event({"event": {"type": "x"}}),
    "JSON type a number": _event({"type": 7}),
    "type with a line break": _event({"type": "x\nERROR forged line", "event": []}),
    # forms
    "view a string": _interactive({"type": "view_submission", "user": USER, "view": "V1"}),
    "view without callback_id": _interactive({"type": "view_submission", "user": USER, "view": {"id": "V1"}}),
    "view's state values a list": _interactive(
        {"type": "view_submission", "user": USER, "view": {**VIEW, "state": {"values": [1]}}}
    ),
    "view's state input a string": _interactive(
        {"type": "view_submission", "user": USER, "view": {**VIEW, "state": {"values": {"title": {"title": "x"}}}}}
    ),
    "view's private_metadata a number": _interactive(
        {"type": "view_submission", "user": USER, "view": {**VIEW, "private_metadata": 5}}
    ),
    "view_submission without user": _interactive({"type": "view_submission", "view": VIEW}),
    "view_submission's user a string": _interactive({"type": "view_submission", "user": "U1", "view": VIEW}),
    "view_closed with view a list": _interactive({"type": "view_closed", "user": USER, "view": []}),
    "payload not JSON": _interactive("nope"),
    "payload a JSON list": _interactive("[1]"),
    "payload a JSON string": _interactive('"block_actions"'),
    "payload without type": _interactive({"user": USER, "actions": [ACTION]}),
    "actions not a list": _interactive({"type": "block_actions", "user": USER, "actions": ACTION}),
    "actions empty": _interactive({"type": "block_actions", "user": USER, "actions": []}),
    "actions of strings": _interactive({"type": "block_actions", "user": USER, "actions": ["signup:5"]}),
    "action without action_id": _interactive({"type": "block_actions", "user": USER, "actions": [{"value": "x"}]}),
    "action's value a number": _interactive(
        {"type": "block_actions", "user": USER, "actions": [{**ACTION, "value": 5}]}
    ),
    "block_actions's container a string": _interactive(
        {"type": "block_actions", "user": USER, "actions": [ACTION], "container": "message"}
    ),
    "block_actions's channel a number": _interactive(
        {"type": "block_actions", "user": USER, "actions": [ACTION], "channel": 5}
    ),
    "block_actions's team a list": _interactive(
        {"type": "block_actions", "user": USER, "actions": [ACTION], "team": []}
    ),
    "block_actions's user id a number": _interactive({"type": "block_actions", "user": {"id": 5}, "actions": [ACTION]}),
    "block_actions's response_url a list": _interactive(
        {"type": "block_actions", "user": USER, "actions": [ACTION], "response_url": []}
    ),
    "shortcut without callback_id": _interactive({"type": "shortcut", "user": USER}),
    "block_suggestion without action_id": _interactive({"type": "block_suggestion", "user": USER}),
    "slash command without command": (urlencode({"user_id": "U1", "text": "help"}).encode(), FORM["Content-Type"]),
    "slash command without user_id": (urlencode({"command": "/paper", "text": "help"}).encode(), FORM["Content-Type"]),
    "slash command not starting with /": (
        urlencode({"command": "paper", "user_id": "U1"}).encode(),
        FORM["Content-Type"],
    ),
    "empty body": (b"", FORM["Content-Type"]),
    # neither form nor JSON
    "plain text": (b"hello there", "text/plain"),
    "XML": (b"<a>1</a>", "application/xml"),
    "not UTF-8": (b"command=/paper&text=\xff\xfe&user_id=U1", FORM["Content-Type"]),
    "JSON of another charset": (
        '{"type": "event_callback", "event": {"type": "x"}}'.encode("utf-16"),
        "application/json",
    ),
}


def test_signed_malformed_payloads_are_a_400_in_one_line(door, caplog):
    caplog.set_level(logging.INFO)
    d = door()
    for case, (body, kind) in MALFORMED_PAYLOADS.items():
        before = len(refusals(caplog))
        status, answer = d.post(body, {"Content-Type": kind, **signed(body)})
        assert status == 400, (case, status, answer)
        said = refusals(caplog)[before:]
        assert len(said) == 1 and "with a malformed body" in said[0].getMessage(), (case, caplog.text)
        assert "\n" not in said[0].getMessage()
    assert_no_traceback(caplog)
    assert slots(d.h) == []
    assert d.command("tags")[0] == 200


def test_the_shapes_slack_sends_still_pass_the_door(door, caplog):
    """A click, a submitted form, an event and a slash command as Slack sends them: answered as before."""
    d = door()
    status, reply = d.command("signup 5 next")
    assert status == 200 and reply["text"].startswith("You're signed up"), reply
    click = {
        "type": "block_actions",
        "team": {"id": "T0TEST", "domain": "x"},
        "user": USER,
        "api_app_id": "A0TEST",
        "trigger_id": "1.2.3",
        "container": {"type": "message", "message_ts": "1.2", "channel_id": "C0TEST", "is_ephemeral": True},
        "channel": {"id": "C0TEST", "name": "x"},
        "message": {
            "type": "message",
            "text": "x",
            "user": "UBOT",
            "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "x"}}],
        },
        "response_url": d.h.slack.response_url(),
        "actions": [
            {
                **ACTION,
                "action_id": "show:5",
                "value": "show 5",
                "text": {"type": "plain_text", "text": "Show"},
                "action_ts": "1.2",
            }
        ],
    }
    body, kind = _interactive(click)
    assert d.post(body, {"Content-Type": kind, **signed(body)})[0] == 200
    home = {
        "type": "event_callback",
        "event_id": "Ev9",
        "event": {"type": "app_home_opened", "user": "U1", "tab": "home", "channel": "D1"},
    }
    body, kind = _event(home)
    assert d.post(body, {"Content-Type": kind, **signed(body)})[0] == 200
    closed = {
        "type": "view_closed",
        "user": USER,
        "team": None,
        "view": {**VIEW, "state": {"values": {"t": {"t": {"type": "plain_text_input", "value": None}}}}},
    }
    body, kind = _interactive(closed)
    assert d.post(body, {"Content-Type": kind, **signed(body)})[0] == 200
    challenge = _event({"type": "url_verification", "challenge": "abc"})[0]
    status, data = d.post(challenge, {"Content-Type": "application/json", **signed(challenge)})
    assert status == 200 and b"abc" in data
    assert refusals(caplog) == []
    assert_no_traceback(caplog)
    assert d.raw(b"GET /healthz HTTP/1.1\r\nHost: x")[0] == 200
    assert d.raw(b"GET /wp-login.php HTTP/1.1\r\nHost: x")[0] == 404


def test_a_command_whose_text_says_payload_is_answered(door, caplog):
    """Bolt takes any form containing the word "payload" for an interactive payload and answered 404."""
    caplog.set_level(logging.INFO)
    d = door()
    status, reply = d.command("search payload")
    assert status == 200 and reply.get("text"), (status, reply)
    status, reply = d.command("signup payload-paper next")
    assert status == 200 and "payload-paper" in reply["text"], reply
    assert refusals(caplog) == []


def test_what_still_fails_inside_bolt_is_a_400_in_one_line(door, caplog):
    """The outer guard: a middleware that raises (here one added for the test) gets no 500 and leaves
    no traceback; Bolt's line about it stays, in one line."""
    caplog.set_level(logging.INFO)
    d = door()

    @d.h.app.middleware
    def boom(body, next):
        if body.get("command") == "/boom":
            raise RuntimeError("the middleware broke")
        return next()

    body = urlencode({"command": "/boom", "user_id": "U1", "text": "", "trigger_id": "1.2"})
    status, _ = d.post(body, sign(body))
    assert status == 400, status
    assert "the middleware broke" in caplog.text
    assert_no_traceback(caplog)
    assert d.command("tags")[0] == 200


# -- 3. replays --------------------------------------------------------------------------------


def test_a_replayed_withdrawal_is_refused_and_changes_nothing(door, caplog):
    caplog.set_level(logging.INFO)
    d = door()
    assert d.command("signup 5 next")[1]["text"].startswith("You're signed up")
    withdrawal = slash_form("withdraw 5", "U1", d.h.slack.response_url())
    captured = sign(withdrawal)
    status, data = d.post(withdrawal, captured)
    assert status == 200 and "open again" in json.loads(data)["text"], data
    assert d.command("signup 5 next")[1]["text"].startswith("You're signed up")  # signed up again meanwhile
    booked = slots(d.h)
    status, _ = d.post(withdrawal, captured)  # the captured withdrawal, sent again within five minutes
    assert status == 401
    assert slots(d.h) == booked and booked, "a replay changed the schedule"
    [said] = [r.getMessage() for r in refusals(caplog)]
    assert "a replay" in said
    assert_no_traceback(caplog)


def test_the_same_signed_request_twice_is_answered_once(door):
    d = door()
    body = slash_form("tags", "U1", d.h.slack.response_url())
    headers = sign(body)
    assert d.post(body, headers)[0] == 200
    assert d.post(body, headers)[0] == 401
    assert d.command("tags")[0] == 200  # a fresh request is answered


def test_the_replay_window_forgets_a_signature_once_no_request_can_carry_it():
    now = [1_000_000.0]
    window = http_door.ReplayWindow(300, clock=lambda: now[0])
    assert window.first_time("v0=a", 1_000_000)
    assert not window.first_time("v0=a", 1_000_000)
    now[0] += 299
    assert not window.first_time("v0=a", 1_000_000)
    now[0] += 2  # past the timestamp's five minutes: the signature is stale, so it may be forgotten
    assert window.first_time("v0=b", now[0]) and len(window) == 1


# -- 4. slow connections ------------------------------------------------------------------------


class Tricklers:
    """`n` sockets from `addresses` that send a request head one line at a time and never finish it.
    Bounded: each sends at most `lines` lines, and all close when the block ends."""

    def __init__(self, port: int, n: int, addresses: list[str], every: float = 2.0, lines: int = 15):
        self.port, self.every, self.lines = port, every, lines
        self.socks: list[socket.socket] = []
        self.stop = threading.Event()
        for i in range(n):
            s = socket.socket()
            s.bind((addresses[i % len(addresses)], 0))
            s.settimeout(5)
            s.connect(("127.0.0.1", port))
            s.sendall(b"POST /slack/events HTTP/1.1\r\n")
            self.socks.append(s)
        self.thread = threading.Thread(target=self._trickle, daemon=True)
        self.thread.start()

    def _trickle(self) -> None:
        for i in range(self.lines):
            if self.stop.wait(self.every):
                return
            for s in self.socks:
                with contextlib.suppress(OSError):
                    s.sendall(b"X-Slow-%d: 1\r\n" % i)

    def open_count(self) -> int:
        """How many of the sockets the server has not closed."""
        open_ = 0
        for s in self.socks:
            s.setblocking(False)
            try:
                open_ += s.recv(1) != b""
            except BlockingIOError:
                open_ += 1
            except OSError:
                pass
        return open_

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        for s in self.socks:
            s.close()


_CROWD = """
import socket, sys, time
port, n, every, lines = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
addresses = sys.argv[5].split(",")
socks = []
for i in range(n):
    s = socket.socket()
    s.bind((addresses[i % len(addresses)], 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    s.sendall(b"POST /slack/events HTTP/1.1\\r\\n")
    socks.append(s)
print("ready", flush=True)
for i in range(lines):
    time.sleep(every)
    for s in socks:
        try:
            s.sendall(b"X-Slow-%d: 1\\r\\n" % i)
        except OSError:
            pass
"""


class CrowdProcess:
    """Tricklers in a process of their own, as an attacker's are: the server under test keeps its own
    interpreter lock. Bounded as Tricklers are; killed when the block ends."""

    def __init__(self, port: int, n: int, addresses: list[str], every: float = 2.0, lines: int = 15):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _CROWD, str(port), str(n), str(every), str(lines), ",".join(addresses)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout.readline().strip() == "ready"

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def timed_command(d: Door, tries: int = 3) -> tuple[int, float]:
    """The status and the fastest of `tries` answers: the suite's other workers share the two cores,
    and one answer held up by them says nothing of the door."""
    answers = []
    for _ in range(tries):
        started = time.monotonic()
        try:
            status, _ = d.command("tags")
        except TimeoutError:  # no answer in 5 s: a try that counts as one, not the end of the test
            status = 0
        answers.append((status, time.monotonic() - started))
    return min(answers, key=lambda a: (a[0] != 200, a[1]))


@pytest.mark.slow  # 1,100 sockets
def test_slow_sockets_from_one_address_leave_room_for_slack(door):
    """1,100 sockets from one address trickling a header line every two seconds (the attack that
    filled waitress's connection limit): an honest request from elsewhere answers within 3 s."""
    d = door()
    crowd = Tricklers(d.port, 1100, ["127.0.0.2"])
    try:
        status, seconds = timed_command(d)
        assert status == 200 and seconds < 3, (status, seconds)
        assert crowd.open_count() <= http_door.PER_ADDRESS
    finally:
        crowd.close()


def test_connections_that_ended_count_no_more(door):
    """The cap counts connections open now: many requests one after another from one address all answer."""
    d = door(per_address=3)
    assert [d.command("tags")[0] for _ in range(12)] == [200] * 12


@pytest.mark.slow  # 1,100 sockets
def test_slow_sockets_from_many_addresses_fit_below_the_connection_limit(door):
    """1,100 slow sockets from five addresses, none over its cap: an honest request still answers in 3 s."""
    d = door()
    crowd = CrowdProcess(d.port, 1100, [f"127.0.0.{i}" for i in range(2, 7)])
    try:
        status, seconds = timed_command(d)
        assert status == 200 and seconds < 3, (status, seconds)
    finally:
        crowd.close()


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_request_that_takes_too_long_to_arrive_is_cut_off(door):
    """Trickling a header line every half second keeps a connection from being idle, but not open:
    the whole request must come in within the deadline."""
    d = door(request_seconds=2.0)
    crowd = Tricklers(d.port, 20, ["127.0.0.2"], every=0.3)
    try:
        deadline = time.monotonic() + 30  # a backstop: they are cut off at 2 s
        while crowd.open_count() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert crowd.open_count() == 0, "slow requests were still open past their deadline"
        assert timed_command(d)[0] == 200
    finally:
        crowd.close()


def test_each_request_says_when_it_came_in_whole(door):
    """The arrival stamp, which a reply's 3 seconds count from; a client's own header of that name is ignored."""
    seen: list = []

    def app(environ, start_response):
        seen.append((http_door.arrival(environ), time.monotonic()))
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    d = door(application=app)
    status, _ = d.raw(b"GET / HTTP/1.1\r\nHost: x\r\nX-Paperbot-Arrived: 1.0")
    assert status == 200
    [(arrived, taken)] = seen
    assert arrived is not None and 0 <= taken - arrived < 1, (arrived, taken)
