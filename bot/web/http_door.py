"""The HTTP door, for any platform's route: who may come in, and how long they may take.

    window = ReplayWindow()                  # signatures seen in the last five minutes
    server = http_server(application, port)  # waitress, with the slow-connection defence
    server = http_server(Lanes(app, apart), port)  # the paths `apart` takes served by threads of their own
    arrival(environ)                         # when the request had come in whole (monotonic)

The platform's own check (an HMAC, an Ed25519 signature) lives in the platform's folder and records
each verified signature here; what the bot answers to a refused request is `refuse`. A server
that cannot start raises `StartError`, the same for every platform; `listen` (http_server, its
port refused as a StartError), `healthz` and `warn_of_schedule` are every platform's start-up.
"""

from __future__ import annotations

import hashlib
import heapq
import io
import logging
import re
import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import NamedTuple

from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import BaseWSGIServer, create_server
from waitress.task import ThreadedTaskDispatcher

from bot.settings import check_focus_tag
from bot.store import engine

log = logging.getLogger(__name__)

#: A signature is good for five minutes either side of its timestamp.
WINDOW_SECONDS = 300
#: A request's head and body must have come in whole within this many seconds of its first byte.
REQUEST_SECONDS = 10.0
#: Open connections from one address; a proxy in front keeps its own pool well under this.
PER_ADDRESS = 256
#: Open connections in all, far above what a platform or a proxy opens (poll(), not select(), so no 1,024 ceiling).
CONNECTION_LIMIT = 4096
#: A connection idle this long between requests is closed.
IDLE_SECONDS = 15
THREADS = 8
#: Threads of the side lane (Lanes): the pages' and feeds', apart from the platforms' THREADS.
SIDE_THREADS = 4
#: The largest body: a platform's largest request (a submitted form, a click on a long message) is a few hundred KB.
MAX_BODY = 2 * 1024 * 1024
#: The largest request line and headers: a platform's or a browser's are a few KB. waitress's own bound
#: (256 KB) let a long `?q=` be kept whole in urlsplit's cache (128 request lines: 50 MB that stayed).
MAX_HEAD = 16 * 1024
#: What the channel stamps on each request; a client's own header of that name is overwritten.
ARRIVED = "X_PAPERBOT_ARRIVED"


class StartError(RuntimeError):
    """A platform's `run` cannot start (a refused token, a port taken); str() is the one line to show."""


class ReplayWindow:
    """Signatures already taken within their validity, so that a captured request sent again is refused.

    Only verified signatures are recorded, so nobody without the secret can grow it; each is
    forgotten once its timestamp is too old for any request to carry it. With a PostgreSQL `store`,
    they are kept in its table `seen_signatures`, shared by every replica on that database (a request
    replayed to another replica is refused too); with SQLite's (one process) or none, in memory."""

    def __init__(self, seconds: float = WINDOW_SECONDS, clock: Callable[[], float] = time.time, store=None):
        self.seconds, self.clock = seconds, clock
        self.store = store if store is not None and engine.is_postgres(store) else None
        self._seen: dict[str, float] = {}
        self._expiry: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        self._taken = 0
        self._away = False

    def first_time(self, signature: str, timestamp: float) -> bool:
        """Record `signature` (of a request stamped `timestamp`, Unix seconds); False if seen before."""
        now = self.clock()
        forget_at = max(timestamp, now) + self.seconds
        if self.store is not None:
            try:
                first = self._first_in_database(signature, forget_at, now)
                self._away = False
                return first
            except sqlite3.Error as e:  # the database away: this process's memory, and the answer says the rest
                if not self._away:  # said once while it is away, not at every request
                    log.warning("keeping requests' signatures in memory until the database answers: %s", e)
                self._away = True
        with self._lock:
            while self._expiry and self._expiry[0][0] < now:
                _, old = heapq.heappop(self._expiry)
                self._seen.pop(old, None)
            if signature in self._seen:
                return False
            self._seen[signature] = forget_at
            heapq.heappush(self._expiry, (forget_at, signature))
            return True

    def _first_in_database(self, signature: str, forget_at: float, now: float) -> bool:
        # One statement, atomic by itself (no write lock: a signature never waits behind an import's batch).
        db = self.store.db  # type: ignore[union-attr]
        taken = db.execute(
            "INSERT INTO seen_signatures (signature, forget_at) VALUES (?, ?) "
            "ON CONFLICT (signature) DO NOTHING RETURNING signature",
            [signature, forget_at],
        ).fetchone()
        if taken is None:  # a replay: the same signature is the same timestamp, and that was checked fresh
            return False
        self._taken += 1
        if self._taken % 100 == 1:  # now and then, the rows no request can carry any more
            db.execute("DELETE FROM seen_signatures WHERE forget_at < ?", [now])
        return True

    def __len__(self) -> int:
        if self.store is not None:
            return int(self.store.db.execute("SELECT count(*) FROM seen_signatures").fetchone()[0])
        return len(self._seen)


class Refused(Exception):
    """A request refused at the door: `status` (401, 400) and why, said after "refused a request to
    <path> from <address>" in the log ("without a valid signature (a wrong one)")."""

    def __init__(self, status: int, why: str):
        super().__init__(why)
        self.status = status


#: A signature's timestamp: ASCII digits only (str.isdigit() takes "²", and int() then fails).
TIMESTAMP = re.compile(r"[0-9]{1,12}")


class Signed(NamedTuple):
    """A request's signature headers, both there and well formed, and its timestamp as a number."""

    timestamp: str
    signature: str
    stamp: int


def fresh_timestamp(timestamp: str | None, signature: str | None, shape: re.Pattern, now: float) -> Signed:
    """The request's signature headers when both are there, well formed (`shape` for the
    signature) and within WINDOW_SECONDS of `now`; else Refused(401). The platform checks the rest."""
    if timestamp is None or signature is None:
        raise Refused(401, "none")
    # waitress joins a repeated header with ", ", which neither pattern takes.
    if not TIMESTAMP.fullmatch(timestamp) or not shape.fullmatch(signature):
        raise Refused(401, "a malformed one")
    stamp = int(timestamp)
    if abs(now - stamp) > WINDOW_SECONDS:
        raise Refused(401, "too old or too new")
    return Signed(timestamp, signature, stamp)


#: A run of a secret's alphabet (token_urlsafe's) long enough to be a feed's or page's secret, or most of one.
_SECRETISH = re.compile(r"[A-Za-z0-9_-]{10,}")
#: A path in a line (`/g/<secret>/calendar.ics`), up to a space.
_PATH = re.compile(r"/\S*")
#: A path's segment kept as it is: a word of lowercase letters (`g`, `calendar.ics`), `.`, `..` or `*`.
_PLAIN_SEGMENT = re.compile(r"[a-z]+(?:[.-][a-z]+)*|\.\.?|\*")


def _hashed(word: str) -> str:
    return "#" + hashlib.sha256(word.encode()).hexdigest()[:8]


def unsecret(text: str) -> str:
    """`text` (a log line) with what may be a secret, or a secret one character off, as a short hash
    of it (`#3fa2b1c4`): a line still tells requests apart and never holds a secret. A path in it
    (up to a space) as unsecret_path has it; elsewhere, each run of a secret's alphabet of ten
    characters or more, but a run of lowercase letters (no secret of 32 characters is one)."""

    def run(found: re.Match) -> str:
        word = found[0]
        return word if word.isalpha() and word.islower() else _hashed(word)

    return "".join(
        unsecret_path(piece) if piece.startswith("/") else _SECRETISH.sub(run, piece) for piece in _split_paths(text)
    )


def unsecret_path(path: str) -> str:
    """A request's path with each segment but a word of lowercase letters (`g`, `calendar.ics`) hashed
    whole: a secret cut into short pieces (`/g/abc.def.ghi/`, `/g/abc def/`) is not logged piece by piece."""
    return "/".join(p if not p or _PLAIN_SEGMENT.fullmatch(p) else _hashed(p) for p in path.split("/"))


def _split_paths(text: str) -> list[str]:
    """`text` cut into its paths and the text between them, in order."""
    pieces, at = [], 0
    for found in _PATH.finditer(text):
        pieces += [text[at : found.start()], found[0]]
        at = found.end()
    return [*pieces, text[at:]]


class _Unsecret(logging.Filter):
    """waitress's lines (`Client disconnected while serving /g/<secret>/`, a traceback) as one line
    with no secret in it: the message hashed by `unsecret`, an error's traceback cut to its type."""

    def filter(self, record: logging.LogRecord) -> bool:
        line = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            line = f"{line} ({type(record.exc_info[1]).__name__})"
        record.msg, record.args = unsecret(" ".join(line.split())), None
        record.exc_info = record.exc_text = None
        return True


_REASONS = {400: "400 Bad Request", 401: "401 Unauthorized", 404: "404 Not Found", 413: "413 Content Too Large"}


def refuse(environ, start_response, refusal: Refused) -> Iterable[bytes]:
    """Answer a refused request: its status and a short body; one log line, never the body's text."""
    path = unsecret_path(environ.get("PATH_INFO") or "")  # a feed's address one character off holds its secret
    log.warning("refused a request to %s from %s %s", path, environ.get("REMOTE_ADDR"), refusal)
    start_response(_REASONS.get(refusal.status, f"{refusal.status} Refused"), [("Content-Type", "application/json")])
    return [b'{"error": "invalid request"}' if refusal.status == 401 else b'{"error": "bad request"}']


def read_body(environ) -> bytes:
    """The request's body (waitress has it whole, within MAX_BODY), left readable again for what follows."""

    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise Refused(400, "a malformed Content-Length") from None
    body = environ["wsgi.input"].read(length) if length > 0 else b""
    environ["wsgi.input"] = io.BytesIO(body)
    return body


def arrival(environ) -> float | None:
    """When the request had come in whole (monotonic), before it perhaps waited for a free thread."""
    try:
        return float(environ.get("HTTP_" + ARRIVED, ""))
    except ValueError:
        return None


class _Doorkeeper:
    """Counts of open connections per address, and of connections cut, said once a minute at most."""

    def __init__(self, per_address: int):
        self.per_address = per_address
        self.open: dict[str, int] = defaultdict(int)
        self.lock = threading.Lock()
        self.cut = {"too many from one address": 0, "too slow to send a request": 0}
        self.said_at = 0.0

    def note(self, why: str) -> None:
        with self.lock:
            self.cut[why] += 1
            now = time.monotonic()
            if now - self.said_at < 60:
                return
            self.said_at = now
            counts, self.cut = self.cut, dict.fromkeys(self.cut, 0)
        log.warning(
            "closed connections at the door: %s", ", ".join(f"{n} {why}" for why, n in counts.items() if n) or "none"
        )


def _channel_class(keeper: _Doorkeeper, request_seconds: float) -> type:
    # waitress has no deadline for a whole request (channel_timeout counts idleness, which a trickle
    # resets), no per-address cap and no arrival time, so its channel and parser are extended here;
    # pyproject bounds its version, and test_http_door.py checks each.
    class StampedParser(HTTPRequestParser):
        stamped = False

        def received(self, data: bytes) -> int:
            n = super().received(data)
            if self.completed and not self.stamped:
                # Before the channel hands the request to a thread; a client's header of this name is replaced.
                # The parser's headers are a dict it fills; types-waitress says a read-only Mapping.
                self.headers[ARRIVED] = repr(time.monotonic())  # type: ignore[index]
                self.stamped = True
            return n

    class DoorChannel(HTTPChannel):
        parser_class = StampedParser
        _began: float | None = None  # monotonic: the first byte of the request being read
        _address: str | None = None

        def __init__(self, server, sock, addr, adj, map=None):
            super().__init__(server, sock, addr, adj, map)
            address = addr[0] if isinstance(addr, tuple) and addr else str(addr)
            with keeper.lock:
                crowded = keeper.open[address] >= keeper.per_address
                if not crowded:
                    keeper.open[address] += 1
                    self._address = address
            if crowded:
                self.will_close = True  # closed at the loop's next turn, having read nothing
                keeper.note("too many from one address")

        def received(self, data: bytes) -> bool:
            if self.request is None and self._began is None:
                self._began = time.monotonic()
            outcome = super().received(data)
            if self.request is None:
                self._began = None
            return outcome

        def readable(self) -> bool:
            if self._began is not None and not self.will_close and time.monotonic() - self._began > request_seconds:
                self.will_close = True
                keeper.note("too slow to send a request")
            return super().readable()

        def del_channel(self, map=None) -> None:
            # Every way a connection ends (close, handle_close, an error) passes here.
            if self._address is not None:
                with keeper.lock:
                    keeper.open[self._address] -= 1
                    if keeper.open[self._address] <= 0:
                        del keeper.open[self._address]
                self._address = None
            super().del_channel(map)

    return DoorChannel


class Lanes:
    """A WSGI application whose requests for the paths `apart` takes are served by SIDE_THREADS
    threads of their own, the rest by http_server's `threads`: a crowd of page readers then waits
    for the pages' threads and never for the platforms', whose replies are due within 3 seconds."""

    def __init__(self, application: Callable, apart: Callable[[str], bool], threads: int = SIDE_THREADS):
        self.application, self.apart, self.threads = application, apart, threads

    def __call__(self, environ, start_response):
        return self.application(environ, start_response)


class _LaneDispatcher(ThreadedTaskDispatcher):
    """waitress's task dispatcher (the main lane), with a second one beside it (the side lane): a channel
    is queued for the side lane's threads when the request it is about to serve is for a path `apart`
    takes, else for the main lane's."""

    def __init__(self, apart: Callable[[str], bool], side_threads: int):
        super().__init__()
        self.apart = apart
        self.side = ThreadedTaskDispatcher()
        self.side.set_thread_count(side_threads)

    def add_task(self, task) -> None:
        # waitress calls this holding the channel's requests_lock, with the request to serve first in line.
        request = task.requests[0] if task.requests else None
        if request is not None and request.error is None and self.apart(request.path or ""):
            self.side.add_task(task)
        else:
            super().add_task(task)

    def shutdown(self, cancel_pending: bool = True, timeout: int = 5) -> bool:
        side = self.side.shutdown(cancel_pending, timeout)
        return super().shutdown(cancel_pending, timeout) and side


def http_server(
    application: Callable,
    port: int,
    host: str = "0.0.0.0",
    *,
    threads: int = THREADS,
    request_seconds: float = REQUEST_SECONDS,
    per_address: int = PER_ADDRESS,
    connection_limit: int = CONNECTION_LIMIT,
):
    """A waitress server for a WSGI application (call .run() to serve, .close() to stop).

    Each request's environ says when it came in whole (see arrival). Connections that send no
    whole request within `request_seconds`, and those past `per_address` from one address, are
    closed, so that slow or idle sockets from anyone who can reach the port cannot crowd out the
    platform's requests. A `Lanes` application has its side lane's threads besides `threads`."""
    _allow_open_files(connection_limit + 64)
    dispatcher = None
    if isinstance(application, Lanes):
        dispatcher = _LaneDispatcher(application.apart, application.threads)
        dispatcher.set_thread_count(threads)
    for name in ("waitress", "waitress.queue"):
        waitress_log = logging.getLogger(name)
        if not any(isinstance(f, _Unsecret) for f in waitress_log.filters):
            waitress_log.addFilter(_Unsecret())
    server = create_server(
        application,
        host=host,
        port=port,
        threads=threads,
        ident="paperbot",
        channel_timeout=IDLE_SECONDS,
        cleanup_interval=5,
        connection_limit=connection_limit,
        asyncore_use_poll=True,
        max_request_body_size=MAX_BODY,
        max_request_header_size=MAX_HEAD,
        clear_untrusted_proxy_headers=True,
        _dispatcher=dispatcher,
    )
    channel = _channel_class(_Doorkeeper(per_address), request_seconds)
    # One server for one host; a host that resolves to several addresses gets one for each.
    for listening in [server] if isinstance(server, BaseWSGIServer) else list((server.map or {}).values()):
        if isinstance(listening, BaseWSGIServer):
            listening.channel_class = channel
    return server


def listen(application: Callable, port: int, host: str = "0.0.0.0", **limits):
    """http_server's server for `application`; StartError (one line naming PORT) when the port cannot be had."""
    try:
        return http_server(application, port, host, **limits)
    except OSError as e:
        raise StartError(f"PORT: cannot listen on port {port} ({e.strerror or e})") from None


def healthz(start_response, store=None) -> list[bytes]:
    """The answer at /healthz: the process is up and serving, and (given its `store`) whether the database
    answers: 503 when it does not, so that a balancer sends requests to a replica that can answer them."""
    if store is not None and not store.answers():
        start_response("503 Service Unavailable", [("Content-Type", "text/plain"), ("Retry-After", "5")])
        return [b"the database does not answer\n"]
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok\n"]


def warn_of_schedule(settings, store, logger: logging.Logger) -> None:
    """Before a server starts: the focus tag checked, and a schedule the operator may not mean
    (meetings that no slot announces) said as a warning on `logger`, not refused."""

    check_focus_tag(settings, store)
    if problem := settings.group.weeks_without_post(settings.now()):
        logger.warning(problem)


def serve_beside(server, name: str = "feeds-http") -> Callable[[], None]:
    """Run `server` (http_server's) in a thread of its own, beside a platform's connection (Socket
    Mode, the Gateway) that holds the main thread; the function returned stops it."""
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()

    def stop() -> None:
        server.close()
        thread.join(2.0)

    return stop


def _allow_open_files(wanted: int) -> None:
    """Raise this process's open-file limit towards `wanted` (as far as the hard limit allows)."""
    try:
        import resource  # noqa: PLC0415 (POSIX only: elsewhere the limit stays as it is)
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        new = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        except (ValueError, OSError) as e:
            log.warning("cannot raise the open-file limit to %s (%s): fewer connections fit", wanted, e)
