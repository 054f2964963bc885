"""The benchmark's clients: signed /paper requests over keep-alive HTTP, timed end to end.

Runs in worker processes (see bench.py), never in the process that hosts the
Slack stand-in, so the clock of a request is not held up by the stand-in
taking announcements.

    sequential(url, secret, lines)          -> {"ms": [...], "errors": [...], "kinds": {...}}
    interleaved(url, secret, lines, floor_url, floor_line) -> the same, and "floor_ms" taken in between
    load(url, secret, mix, seconds, threads, signup_base) -> the same, for concurrent clients
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import random
import threading
import time
from datetime import date, timedelta
from urllib.parse import urlencode, urlsplit

PATH = "/slack/events"
TIMEOUT = 10.0  # seconds; anything slower is an error anyway (Slack gives up after 3)


def trigger_id() -> str:
    """A trigger_id of its own for each request, as Slack's: the bot refuses a body it has seen (a replay)."""
    return f"{time.time_ns()}.{random.getrandbits(48):012x}"


def timed_post(conn: http.client.HTTPConnection, path: str, body: bytes, headers: dict, start: float):
    """POST on a keep-alive connection: (milliseconds since `start`, status, body); status 0, no response.
    A server that closed the idle connection is reconnected once, and the time counts."""
    for attempt in (1, 2):
        try:
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            return (time.perf_counter() - start) * 1000, response.status, response.read()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
            conn.close()
            if attempt == 2:
                return (time.perf_counter() - start) * 1000, 0, repr(e).encode()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            return (time.perf_counter() - start) * 1000, 0, repr(e).encode()
    raise AssertionError("unreachable")


class Client:
    """One keep-alive connection; every request freshly signed, as Slack signs it."""

    def __init__(self, url: str, secret: str):
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port
        self.path = parts.path or PATH
        self.secret = secret.encode()
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)

    def command(self, text: str, user: str = "UBENCH1") -> tuple[float, int, bytes]:
        """POST /paper `text`; returns (milliseconds, status, body). Status 0: no response."""
        form = urlencode(
            {
                "team_id": "T0TEST",
                "channel_id": "C0BENCH",
                "user_id": user,
                "command": "/paper",
                "text": text,
                "response_url": "https://hooks.slack.invalid/commands/T0TEST/1/x",
                "trigger_id": trigger_id(),
                "api_app_id": "A0TEST",
            }
        ).encode()
        start = time.perf_counter()
        ts = str(int(time.time()))
        sig = "v0=" + hmac.new(self.secret, b"v0:" + ts.encode() + b":" + form, hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": sig,
        }
        return timed_post(self.conn, self.path, form, headers, start)

    def close(self) -> None:
        self.conn.close()


def classify(status: int, body: bytes) -> str:
    """'ok', 'signed-up', 'withdrawn', 'taken' (a refusal, still a real reply), or 'error: ...'."""
    if status != 200:
        return f"error: HTTP {status} {body[:120]!r}"
    try:
        reply = json.loads(body)
    except ValueError:
        return f"error: not JSON {body[:120]!r}"
    if not isinstance(reply, dict) or not reply.get("text"):
        return f"error: no text {body[:120]!r}"
    text = reply["text"]
    if text.startswith("You're signed up"):
        return "signed-up"
    if "is open again" in text:
        return "withdrawn"
    if "Something went wrong" in text:
        return "error: the bot's apology"
    if " is taken" in text or "already presented" in text or "is over" in text:
        return "taken"
    return "ok"


def _count(out: dict, ms: float, kind: str) -> None:
    """One timed reply into `out` ({"ms", "kinds", "errors"})."""
    out["ms"].append(ms)
    out["kinds"][kind.split(":")[0]] = out["kinds"].get(kind.split(":")[0], 0) + 1
    if kind.startswith("error"):
        out["errors"].append(kind)


def sequential(url: str, secret: str, lines: list[tuple[str, str]], warmup: int = 5) -> dict:
    """Send (text, user) pairs one after another; the first `warmup` are not counted."""
    client = Client(url, secret)
    out = {"ms": [], "errors": [], "kinds": {}}
    try:
        for i, (text, user) in enumerate(lines):
            ms, status, body = client.command(text, user)
            if i >= warmup:
                _count(out, ms, classify(status, body))
    finally:
        client.close()
    out["errors"] = out["errors"][:20]
    return out


def interleaved(
    url: str,
    secret: str,
    lines: list[tuple[str, str]],
    floor_url: str,
    floor_line: tuple[str, str],
    block: int = 40,
    warmup: int = 5,
    prime: tuple[str, str] | None = None,
) -> dict:
    """`sequential` to `url`, in blocks of `block` requests, each block after as many to `floor_url`.

    The floor's samples ("floor_ms") are taken in the same seconds as the command's, so a
    machine that slows down or speeds up during a run moves both alike. One keep-alive
    connection to each server; the first `warmup` lines (and as many floor requests) are not counted,
    nor is `prime`, a line sent first to `url` (and `floor_line` to the floor) on the new connections.
    """
    bot, floor = Client(url, secret), Client(floor_url, secret)
    out: dict = {"ms": [], "errors": [], "kinds": {}, "floor_ms": [], "floor_errors": []}
    try:
        if prime is not None:
            bot.command(*prime)
            floor.command(*floor_line)
        for text, user in lines[:warmup]:
            bot.command(text, user)
            floor.command(*floor_line)
        rest = lines[warmup:]
        for start in range(0, len(rest), block):
            part = rest[start : start + block]
            for _ in part:
                ms, status, body = floor.command(*floor_line)
                out["floor_ms"].append(ms)
                if classify(status, body).startswith("error"):
                    out["floor_errors"].append(classify(status, body))
            for text, user in part:
                ms, status, body = bot.command(text, user)
                _count(out, ms, classify(status, body))
    finally:
        bot.close()
        floor.close()
    out["errors"], out["floor_errors"] = out["errors"][:20], out["floor_errors"][:20]
    return out


def rotating(urls: list[str], secret: str, lines: list[tuple[str, str]], block: int = 40, warmup: int = 5) -> dict:
    """`lines` to each of `urls`, a block of `block` to each in turn (one keep-alive connection each):
    {url: {"ms", "errors", "kinds"}}. Servers measured in the same seconds, so that a machine
    that slows down or speeds up during the run moves them alike. The first `warmup` lines to
    each are not counted."""
    clients = {url: Client(url, secret) for url in urls}
    out = {url: {"ms": [], "errors": [], "kinds": {}} for url in urls}
    try:
        for text, user in lines[:warmup]:
            for client in clients.values():
                client.command(text, user)
        rest = lines[warmup:]
        for start in range(0, len(rest), block):
            for url, client in clients.items():
                for text, user in rest[start : start + block]:
                    ms, status, body = client.command(text, user)
                    _count(out[url], ms, classify(status, body))
    finally:
        for client in clients.values():
            client.close()
    for part in out.values():
        part["errors"] = part["errors"][:20]
    return out


def week_dates(first_monday: str, start: int, n: int) -> list[str]:
    monday = date.fromisoformat(first_monday)
    return [(monday + timedelta(weeks=start + k)).isoformat() for k in range(n)]


def load(url: str, secret: str, mix: list[str], seconds: float, threads: int, signups: dict) -> dict:
    """`threads` clients, each sending commands from `mix` round-robin for `seconds`.

    An entry "SHOW" is `show` of a random paper (of `signups["papers"]`). "SIGNUP" in the mix is, in
    turn, a sign-up of a paper nobody has yet, for the client thread's own week, and its withdrawal:
    both write and are announced. `signups` gives {"first_monday", "week_offset", "paper_offset",
    "per_thread"}: thread k books week `week_offset + k`, with papers from `paper_offset + k * per_thread`.
    """
    results: list[dict] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client_thread(k: int) -> None:
        client = Client(url, secret)
        ms: list[float] = []
        kinds: dict[str, int] = {}
        errors: list[str] = []
        per = signups["per_thread"]
        [week] = week_dates(signups["first_monday"], signups["week_offset"] + k, 1)
        paper0 = signups["paper_offset"] + k * per
        n_signup = 0
        rng = random.Random(signups["week_offset"] * 100 + k)
        i = k  # threads start at different places in the mix
        while time.monotonic() < deadline:
            text = mix[i % len(mix)]
            i += 1
            user = f"UL{k:02d}{i % 50:03d}"
            if text == "SHOW":
                text = f"show {rng.randint(1, signups['papers'])}"
            elif text == "SIGNUP":
                if n_signup >= 2 * per:
                    continue
                paper = paper0 + n_signup // 2
                text = f"signup {paper} {week}" if n_signup % 2 == 0 else f"withdraw {week}"
                user = f"US{signups['week_offset']}X{k}"
                n_signup += 1
            t, status, body = client.command(text, user)
            kind = classify(status, body)
            ms.append(t)
            kinds[kind.split(":")[0]] = kinds.get(kind.split(":")[0], 0) + 1
            if kind.startswith("error") and len(errors) < 20:
                errors.append(f"{text!r}: {kind}")
        client.close()
        with lock:
            results.append({"ms": ms, "kinds": kinds, "errors": errors})

    start = time.monotonic()
    cpu0 = time.process_time()
    pool = [threading.Thread(target=client_thread, args=(k,), daemon=True) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(seconds + 2 * TIMEOUT)
    elapsed = time.monotonic() - start
    merged = {"ms": [], "kinds": {}, "errors": [], "elapsed": elapsed, "client_cpu_s": time.process_time() - cpu0}
    for r in results:
        merged["ms"].extend(r["ms"])
        for k, v in r["kinds"].items():
            merged["kinds"][k] = merged["kinds"].get(k, 0) + v
        merged["errors"].extend(r["errors"])
    merged["errors"] = merged["errors"][:20]
    missing = threads - len(results)
    if missing:
        merged["kinds"]["error"] = merged["kinds"].get("error", 0) + missing
        merged["errors"].append(f"{missing} client threads did not finish")
    return merged
