"""The PostgreSQL engine: the same Store as SQLite's (bot/store/connection.py), on a database server.

    store = PgStore("postgresql://paperbot@db/paperbot")   # created and migrated on first use
    with store.write() as db:                                # BEGIN; the install's write lock ... COMMIT
        db.execute("UPDATE papers SET title = ? WHERE id = ?", [title, slug])

Domain code writes one SQL for both engines (`?` and `:name` parameters, ON CONFLICT, RETURNING), and
this module translates the parameters for psycopg. Every write transaction takes one transaction-level
advisory lock first, as SQLite's BEGIN IMMEDIATE takes its write lock: so a read-then-write decides on
state no other writer can change meanwhile, on every replica (a port of the claims without it sent
more than one weekly post for most of 2,000 keys; see ../shared/notes/scale-facts.md).

Errors keep SQLite's families (IntegrityError, OperationalError), so that domain code catches one
family on both engines: a lost or refused server is `Unavailable`, an OperationalError.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import psycopg.errors

from bot.store.connection import Busy, DiskFull, NotADatabase, Store, Unavailable, set_meta

log = logging.getLogger(__name__)

#: How long a connection attempt may take: a chat answer is due within 3 seconds.
CONNECT_TIMEOUT_S = 2
#: Over TCP, a server that vanished (no reset: a host gone, a network cut) is noticed within seconds,
#: not the system's minutes: data unacknowledged for 2.5 s, or an idle connection's probes unanswered.
_TCP: dict[str, Any] = {
    "tcp_user_timeout": 2500,
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 2,
    "keepalives_count": 3,
}
#: How long a writer waits for the install's write lock (SQLite's busy timeout is the same).
LOCK_WAIT_MS = 15_000
#: The advisory lock every write transaction takes: crc32, the same in every process (never hash()).
WRITE_LOCK = zlib.crc32(b"paperbot write")
MIGRATION_LOCK = zlib.crc32(b"paperbot migrations")


def is_url(text: str | Path) -> bool:
    """Is PAPERBOT_DB a PostgreSQL URL (libpq's postgresql:// or postgres://) rather than a path?"""
    return isinstance(text, str) and text.startswith(("postgresql://", "postgres://"))


class _IntegrityError(sqlite3.IntegrityError):
    """A constraint refused a write (PostgreSQL's, raised as SQLite's family)."""


# -- SQL ------------------------------------------------------------------------

_TOKENS = re.compile(r"""('(?:[^']|'')*')|("(?:[^"]|"")*")|(::)|(\?)|:([A-Za-z_]\w*)|(%)""")
_translated: dict[str, str] = {}


def translate(sql: str) -> str:
    """`sql` with SQLite's parameters (`?`, `:name`) as psycopg's (`%s`, `%(name)s`), and `%` doubled;
    string literals, quoted names and casts (`::`) left alone."""
    done = _translated.get(sql)
    if done is None:

        def one(m: re.Match[str]) -> str:
            if m.group(4):
                return "%s"
            if m.group(5):
                return f"%({m.group(5)})s"
            if m.group(6):
                return "%%"
            return m.group(0)

        done = _TOKENS.sub(one, sql)
        if len(_translated) < 5000:
            _translated[sql] = done
    return done


def _raise_as_sqlite(e: psycopg.Error) -> None:
    if isinstance(e, psycopg.errors.DiskFull):
        raise DiskFull(f"the disk holding the database is full ({e})") from e
    if isinstance(e, psycopg.IntegrityError):
        raise _IntegrityError(str(e)) from e
    if isinstance(e, psycopg.errors.LockNotAvailable):
        raise Busy(str(e)) from e
    if isinstance(e, psycopg.OperationalError | psycopg.InterfaceError):
        raise Unavailable(str(e).strip() or type(e).__name__) from e
    raise e


#: What makes a new connection in place of a dead one (the store's).
Renew = Callable[[psycopg.Connection], psycopg.Connection]
#: Statements safe to send again on a new connection when the old one is found dead as they are sent
#: (the server restarted since this connection's last use): they change nothing by themselves.
_SAFE_AGAIN = re.compile(r"\s*(BEGIN|SELECT)\b", re.I)


class Connection:
    """A psycopg connection in SQLite's shape: execute, executemany, in_transaction.

    With `renew` (the store's), a connection found dead by a statement outside a transaction that
    is safe to repeat is replaced and the statement sent again: after a restart of the server, the
    first use of each thread's connection answers, rather than saying the database is away."""

    def __init__(self, raw: psycopg.Connection, renew: Renew | None = None):
        self.raw = raw
        self._renew = renew

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != psycopg.pq.TransactionStatus.IDLE

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> psycopg.Cursor:
        idle = self._renew is not None and not self.in_transaction
        try:
            return self.raw.execute(translate(sql), params if params else None, prepare=False)
        except psycopg.Error as e:
            if not (idle and self.raw.broken and _SAFE_AGAIN.match(sql)):
                _raise_as_sqlite(e)
        assert self._renew is not None
        self.raw = self._renew(self.raw)
        try:
            return self.raw.execute(translate(sql), params if params else None, prepare=False)
        except psycopg.Error as e:
            _raise_as_sqlite(e)
            raise  # not reached

    def executemany(self, sql: str, rows: Any) -> None:
        rows = list(rows)
        if not rows:
            return
        try:
            with self.raw.cursor() as cur:
                cur.executemany(translate(sql), rows)
        except psycopg.Error as e:
            _raise_as_sqlite(e)

    def close(self) -> None:
        self.raw.close()


class Database:
    """What domain code holds (sqlite_utils.Database's shape on SQLite): execute, query, conn."""

    engine = "postgresql"

    def __init__(self, raw: psycopg.Connection, renew: Renew | None = None):
        self.conn = Connection(raw, renew)

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> psycopg.Cursor:
        return self.conn.execute(sql, params)

    def query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        cur = self.conn.execute(sql, params)
        names = [c.name for c in cur.description or []]
        for row in cur.fetchall():
            yield dict(zip(names, row, strict=True))

    def executescript(self, sql: str) -> None:
        # PostgreSQL runs several statements in one simple query (no parameters).
        try:
            self.conn.raw.execute(sql.encode(), prepare=False)
        except psycopg.Error as e:
            _raise_as_sqlite(e)


# -- the store --------------------------------------------------------------------


class PgStore(Store):
    """One PostgreSQL database, one connection per thread (made again after the server went away).

    A Store, so that domain code typed for one takes either: its `db` has the shape of
    sqlite_utils.Database that domain code uses (execute, query, conn.executemany)."""

    engine = "postgresql"

    def __init__(  # noqa: PLR0913 - Store's signature
        self,
        url: str,
        *,
        create: Callable[[Store], None] | None = None,
        writes: bool = True,
        _building: bool = False,
    ):
        self.url = url
        #: Where liveness keeps owner files on SQLite; PostgreSQL's are advisory locks, so none.
        self.path = Path(":memory:")
        self._writes = writes
        self._local = threading.local()
        self._raw: list[psycopg.Connection] = []
        self._raw_lock = threading.Lock()
        self.on_close: list[Callable[[], None]] = []
        self.created = False
        try:
            self._prepare_server(create)
        except BaseException:
            self.close()
            raise

    # -- connections -------------------------------------------------------

    def connect(self, *, apart: bool = False) -> psycopg.Connection:
        """A new connection; `apart`: the caller's alone, which it closes, not the store (liveness
        holds one for its session lock, shared by every Store of the process on this database)."""
        try:
            raw = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, **_TCP)
        except psycopg.Error as e:
            _raise_as_sqlite(e)
            raise  # not reached
        if not apart:
            with self._raw_lock:
                self._raw.append(raw)
        return raw

    @property
    def db(self) -> Any:
        """This thread's connection; a broken one is replaced on the next use."""
        db: Database | None = getattr(self._local, "db", None)
        if db is not None and (db.conn.raw.closed or db.conn.raw.broken):
            self._forget(db)
            db = None
        if db is None:
            db = Database(self.connect(), self._renew)
            self._local.db = db
        return db

    def _renew(self, dead: psycopg.Connection) -> psycopg.Connection:
        """A new connection in place of `dead` (Unavailable when the server does not answer)."""
        with self._raw_lock:
            if dead in self._raw:
                self._raw.remove(dead)
        with suppress(psycopg.Error):
            dead.close()
        return self.connect()

    def _forget(self, db: Database) -> None:
        self._local.db = None
        with self._raw_lock:
            if db.conn.raw in self._raw:
                self._raw.remove(db.conn.raw)
        with suppress(psycopg.Error):
            db.conn.raw.close()

    @contextmanager
    def write(self) -> Iterator[Any]:
        """A write transaction holding the install's write lock from its first statement."""
        db = self.db
        conn = db.conn
        try:
            conn.execute("BEGIN")
            answer_by = getattr(self._local, "answer_by", None)
            wait_ms = LOCK_WAIT_MS
            if answer_by is not None:
                wait_ms = int((answer_by - time.monotonic()) * 1000)
                if wait_ms <= 0:
                    raise Busy("the answer was due before the write could begin")
            conn.execute(f"SET LOCAL lock_timeout = {min(wait_ms, LOCK_WAIT_MS)}")
            conn.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK})")
            yield db
            conn.execute("COMMIT")
        except BaseException:
            if not conn.raw.closed and not conn.raw.broken and conn.in_transaction:
                try:
                    conn.raw.execute("ROLLBACK")
                except psycopg.Error:
                    self._forget(db)
            elif conn.raw.broken:
                self._forget(db)
            raise

    def close(self) -> None:
        with self._raw_lock:
            for raw in self._raw:
                with suppress(psycopg.Error):
                    raw.close()
            self._raw.clear()
            closing, self.on_close = self.on_close, []
        self._local = threading.local()
        for fn in closing:
            fn()

    # -- first use -----------------------------------------------------------

    def _prepare_server(self, create: Callable[[Store], None] | None) -> None:
        from bot.store import postgres_schema  # noqa: PLC0415 - its SQL is read only at start

        db = self.db
        # Several replicas starting together: one migrates, the others wait for it, then see it done.
        with self.write():
            db.execute(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            foreign = postgres_schema.foreign_tables(db)
            if foreign:
                raise NotADatabase(
                    f"holds tables of another program ({foreign[0]})", "give paperbot a database of its own"
                )
            self.created = postgres_schema.apply(db)
            if self._writes:
                set_meta(db, "opened_at", datetime.now(UTC).isoformat(timespec="seconds"))
        if self.created and create is not None:
            create(self)
