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


class _Session:
    """One connection of the pool, shared by every Store of the process on that database (the house and
    each place): `schema` is the search_path it was last set to (see PgStore.schema)."""

    def __init__(self, raw: psycopg.Connection):
        self.raw = raw
        self.schema: str | None = _UNSET

    @property
    def idle(self) -> bool:
        return self.raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


#: A session's schema before any was set (a new connection's search_path is the server's default).
_UNSET = "\x00"
#: Connections a process keeps to one database, whatever its threads and places: a statement borrows
#: one and gives it back, a transaction holds one from BEGIN to its end.
POOL_SIZE = 16


class _Sessions:
    """The pool of connections of every Store of this process on one database URL.

    Threads do not own connections: a statement outside a transaction borrows one (preferring one
    already in its schema) and gives it back; a transaction keeps its own, pinned to its thread,
    until COMMIT or ROLLBACK. So a hosted install's hundreds of places and the threads that serve
    them hold at most POOL_SIZE connections, far under the server's max_connections."""

    def __init__(self, url: str, size: int = POOL_SIZE):
        self.url = url
        self.size = size
        self.local = threading.local()
        self.raw: list[psycopg.Connection] = []  # every connection of the pool, lent or idle
        self._idle: list[_Session] = []
        self._free = threading.Condition()
        self.stores = 0

    def connect(self, *, apart: bool = False) -> psycopg.Connection:
        try:
            raw = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, **_TCP)
        except psycopg.Error as e:
            _raise_as_sqlite(e)
            raise  # not reached
        if not apart:
            with self._free:
                self.raw.append(raw)
        return raw

    def pinned(self) -> _Session | None:
        """The session of this thread's open transaction, if any."""
        return getattr(self.local, "pinned", None)

    def borrow(self, schema: str | None) -> _Session:
        """This thread's transaction's session, else an idle one (one already in `schema` first), else a
        new one while the pool has room; waits for one to come back when it has none (Busy after LOCK_WAIT_MS)."""
        session = self.pinned()
        if session is not None:
            return session
        deadline = time.monotonic() + LOCK_WAIT_MS / 1000
        with self._free:
            while True:
                for i in range(len(self._idle) - 1, -1, -1):
                    if self._idle[i].schema == schema:
                        return self._idle.pop(i)
                if self._idle:
                    return self._idle.pop()
                if len(self.raw) < self.size:
                    self.raw.append(None)  # type: ignore[arg-type]  # a place held while connecting, outside the lock
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Busy(f"all {self.size} connections to the database stayed in use")
                self._free.wait(left)
        try:
            raw = self.connect(apart=True)
        except BaseException:
            with self._free:
                self.raw.remove(None)  # type: ignore[arg-type]
                self._free.notify()
            raise
        with self._free:
            self.raw[self.raw.index(None)] = raw  # type: ignore[arg-type]
        return _Session(raw)

    def give_back(self, session: _Session) -> None:
        """After a statement: a session in a transaction stays pinned to this thread; any other goes back
        to the pool (a broken or closed one is dropped)."""
        if not session.raw.closed and not session.raw.broken and not session.idle:
            self.local.pinned = session
            return
        self.local.pinned = None
        if session.raw.closed or session.raw.broken:
            self.drop(session.raw)
            return
        with self._free:
            if session.raw in self.raw:
                self._idle.append(session)
                self._free.notify()

    def renew(self, session: _Session) -> None:
        """A new connection in place of the session's dead one (Unavailable when the server does not answer)."""
        self.drop(session.raw)
        raw = self.connect()
        session.raw, session.schema = raw, _UNSET

    def drop(self, raw: psycopg.Connection) -> None:
        with self._free:
            if raw in self.raw:
                self.raw.remove(raw)
            self._idle = [s for s in self._idle if s.raw is not raw]
            self._free.notify()
        with suppress(psycopg.Error):
            raw.close()

    def close(self) -> None:
        with self._free:
            for raw in self.raw:
                if raw is not None:
                    with suppress(psycopg.Error):
                        raw.close()
            self.raw.clear()
            self._idle.clear()
        self.local = threading.local()


_sessions: dict[str, _Sessions] = {}
_sessions_lock = threading.Lock()


class Connection:
    """A psycopg connection in SQLite's shape (execute, executemany, in_transaction), in one schema.

    Each statement runs on a session of the pool (its transaction's, when one is open in this thread)
    after setting its search_path to the store's schema when another store used it last: so every
    statement of a place's store sees that place's tables and no other's. A session found dead by a
    statement outside a transaction that is safe to repeat is replaced and the statement sent again:
    after a restart of the server, the first statement answers, rather than saying the database is away."""

    def __init__(self, sessions: _Sessions, schema: str | None):
        self._sessions = sessions
        self._schema = schema

    def _ready(self) -> _Session:
        session = self._sessions.borrow(self._schema)
        if session.schema != self._schema:
            if not session.idle:
                # A statement of one store inside another's transaction: a programming error, said loudly.
                raise RuntimeError(f"a statement in schema {self._schema!r} within a transaction of {session.schema!r}")
            try:
                self._set_path(session)
            except BaseException:
                self._sessions.give_back(session)
                raise
        return session

    def _set_path(self, session: _Session) -> None:
        path = f'"{self._schema}"' if self._schema else "public"
        try:
            session.raw.execute(f"SET search_path TO {path}", prepare=False)
        except psycopg.Error as e:
            if not session.raw.broken:
                _raise_as_sqlite(e)
            self._sessions.renew(session)
            session.raw.execute(f"SET search_path TO {path}", prepare=False)
        session.schema = self._schema

    @property
    def in_transaction(self) -> bool:
        return self._sessions.pinned() is not None

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> psycopg.Cursor:
        session = self._ready()
        try:
            idle = session.idle
            try:
                return session.raw.execute(translate(sql), params if params else None, prepare=False)
            except psycopg.Error as e:
                if not (idle and session.raw.broken and _SAFE_AGAIN.match(sql)):
                    _raise_as_sqlite(e)
            try:
                self._sessions.renew(session)
                self._set_path(session)
                return session.raw.execute(translate(sql), params if params else None, prepare=False)
            except psycopg.Error as e:
                _raise_as_sqlite(e)
                raise  # not reached
        finally:
            self._sessions.give_back(session)

    def executemany(self, sql: str, rows: Any) -> None:
        rows = list(rows)
        if not rows:
            return
        session = self._ready()
        try:
            with session.raw.cursor() as cur:
                cur.executemany(translate(sql), rows)
        except psycopg.Error as e:
            _raise_as_sqlite(e)
        finally:
            self._sessions.give_back(session)

    def executescript(self, sql: str) -> None:
        session = self._ready()
        try:
            session.raw.execute(sql.encode(), prepare=False)
        except psycopg.Error as e:
            _raise_as_sqlite(e)
        finally:
            self._sessions.give_back(session)

    def end(self, rollback: bool) -> None:
        """After a failure inside a transaction: roll it back, or drop its session when that cannot be."""
        session = self._sessions.pinned()
        if session is None:
            return
        if rollback and not session.raw.closed and not session.raw.broken:
            try:
                session.raw.execute("ROLLBACK")
            except psycopg.Error:
                self._sessions.local.pinned = None
                self._sessions.drop(session.raw)
                return
            self._sessions.give_back(session)
            return
        self._sessions.local.pinned = None
        self._sessions.drop(session.raw)


class Database:
    """What domain code holds (sqlite_utils.Database's shape on SQLite): execute, query, conn."""

    engine = "postgresql"

    def __init__(self, sessions: _Sessions, schema: str | None):
        self.conn = Connection(sessions, schema)

    @classmethod
    def on(cls, raw: psycopg.Connection, schema: str | None = None) -> Database:
        """A database over one connection of the caller's (`copy`'s transaction), whose search_path is `schema`'s."""
        sessions = _Sessions("", size=1)
        session = _Session(raw)
        session.schema = schema
        sessions.raw.append(raw)
        sessions.give_back(session)  # pinned when in a transaction, else the pool's one idle session
        return cls(sessions, schema)

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> psycopg.Cursor:
        return self.conn.execute(sql, params)

    def query(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        cur = self.conn.execute(sql, params)
        names = [c.name for c in cur.description or []]
        for row in cur.fetchall():
            yield dict(zip(names, row, strict=True))

    def executescript(self, sql: str) -> None:
        # PostgreSQL runs several statements in one simple query (no parameters).
        self.conn.executescript(sql)


# -- the store --------------------------------------------------------------------


def schema_name(place: str) -> str:
    """The PostgreSQL schema that holds place `place`'s tables: its id, lower case, in letters, digits and `_`."""
    return "place_" + re.sub(r"[^a-z0-9]", "_", place.lower())[:50]


class PgStore(Store):
    """One PostgreSQL database (or one place's schema in it), on a pool of connections shared by every
    store of the process on that database (the house's and each place's).

    A Store, so that domain code typed for one takes either: its `db` has the shape of
    sqlite_utils.Database that domain code uses (execute, query, conn.executemany)."""

    engine = "postgresql"

    def __init__(  # noqa: PLR0913 - Store's signature
        self,
        url: str,
        *,
        create: Callable[[Store], None] | None = None,
        writes: bool = True,
        schema: str | None = None,
        _building: bool = False,
    ):
        self.url = url
        #: The schema of a place's tables (schema_name); None: the house's, `public`.
        self.schema = schema
        #: Where liveness keeps owner files on SQLite; PostgreSQL's are advisory locks, so none.
        self.path = Path(":memory:")
        self._writes = writes
        self._local = threading.local()
        self._write_lock = WRITE_LOCK if schema is None else zlib.crc32(f"paperbot write {schema}".encode())
        with _sessions_lock:
            self._sessions = _sessions.get(url) or _sessions.setdefault(url, _Sessions(url))
            self._sessions.stores += 1
        self._db = Database(self._sessions, schema)
        self.on_close: list[Callable[[], None]] = []
        self.created = False
        self._closed = False
        try:
            self._prepare_server(create)
        except BaseException:
            self.close()
            raise

    # -- connections -------------------------------------------------------

    def connect(self, *, apart: bool = False) -> psycopg.Connection:
        """A new connection; `apart`: the caller's alone, which it closes, not the store (liveness
        holds one for its session lock, shared by every Store of the process on this database)."""
        return self._sessions.connect(apart=apart)

    @property
    def db(self) -> Any:
        """The database as this store sees it (its schema), on this thread's session."""
        return self._db

    @contextmanager
    def write(self) -> Iterator[Any]:
        """A write transaction holding the install's (the place's) write lock from its first statement."""
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
            conn.execute(f"SELECT pg_advisory_xact_lock({self._write_lock})")
            yield db
            conn.execute("COMMIT")
        except BaseException:
            conn.end(rollback=True)
            raise

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            with _sessions_lock:
                self._sessions.stores -= 1
                last = self._sessions.stores == 0
                if last:
                    _sessions.pop(self.url, None)
            if last:
                self._sessions.close()
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
            if self.schema is not None:  # a place's: its tables in a schema of its own
                db.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
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
