"""The SQLite file: connections and transactions; it applies the migrations (bot/store/migrations.py).

    store = Store("data/paperbot.db")        # created and migrated on first use
    with store.write() as db:                # BEGIN IMMEDIATE ... COMMIT
        db.execute("UPDATE papers SET title = ? WHERE id = ?", [title, slug])
    rows = store.db.query("SELECT * FROM papers")

Chat listeners run in a thread pool and scheduler jobs in another, and a
shared connection once lost a write, so every thread gets its own connection.
The file is in WAL mode (readers never wait for writers), each connection has a
busy timeout, and every read-then-write happens in `write()`, whose
BEGIN IMMEDIATE takes the write lock before the read, so two writers can never
both decide on the same stale state.

A file that exists is opened only when it is a paperbot database (NotADatabase
otherwise); a missing one is built beside it and moved into place whole, so
that no process ever sees a half-made database at the path. What a new database
holds besides its tables (the catalog's first papers) is the caller's `create`.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeGuard

import sqlite_utils

from bot.store.migrations import migrations

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 15_000

#: How often a writer that waits for the write lock asks for it again.
WRITE_POLL_SECONDS = 0.001


class Busy(sqlite3.OperationalError):
    """The write lock was not free before an answer was due (see Store.answering_by): nothing was written."""


class DiskFull(sqlite3.OperationalError):
    """The disk (or the file's size limit) left no room for a write: it was rolled back, nothing was changed."""


class Unavailable(sqlite3.OperationalError):
    """The database server (PostgreSQL) could not be reached or went away: nothing was written (or it is
    unknown whether a commit landed, which the claims' leases are made for). Here, not in the engine's
    module, so that callers catch it without loading the PostgreSQL driver."""


class NotADatabase(Exception):
    """The file at the path exists but is no paperbot database this version can use; str() says what
    it is instead, and `remedy` what to do."""

    def __init__(self, what: str, remedy: str = "restore it from a backup, or move it away to start a new one"):
        super().__init__(what)
        self.remedy = remedy


#: What a paperbot database's first 16 bytes are (every SQLite file's).
SQLITE_HEADER = b"SQLite format 3\x00"


#: Less room than this on the database's file system, and a failed write is taken for a full disk.
NEARLY_FULL_BYTES = 1 << 20


def is_disk_full(error: BaseException, path: Path | None = None) -> TypeGuard[sqlite3.Error]:
    """Is `error` SQLite saying that the disk or the database is full?

    SQLite says "full" when a write of the database or its log finds no room, but "disk I/O error"
    when growing its shared-memory file fails for the same reason: with `path`, an I/O error while
    the file system there has (almost) no room left is a full disk too.
    """
    if not isinstance(error, sqlite3.Error):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if code == sqlite3.SQLITE_FULL:
        return True
    if path is None or code is None or code & 0xFF != sqlite3.SQLITE_IOERR:
        return False
    try:
        room = os.statvfs(path.parent if path.name else path)
    except (OSError, AttributeError):  # no statvfs (Windows)
        return False
    return room.f_bavail * room.f_frsize < NEARLY_FULL_BYTES


def _disk_full(error: sqlite3.Error) -> DiskFull:
    full = DiskFull(f"the disk holding the database is full ({error})")
    full.sqlite_errorcode = sqlite3.SQLITE_FULL
    return full


def check_file(path: Path) -> None:
    """Raise NotADatabase unless the file at `path` (which exists) can be a paperbot database.

    Read before SQLite opens it: SQLite takes a file of 0 bytes for a new database, and would
    hang on a named pipe. Damage past the header shows when the file's tables are read (see _check_tables).
    """
    try:
        info = path.stat()
    except OSError as e:
        raise NotADatabase(f"cannot be read ({e.strerror or e})") from None
    if stat.S_ISDIR(info.st_mode):
        raise NotADatabase("is a folder, not a database file")
    if not stat.S_ISREG(info.st_mode):
        raise NotADatabase("is not a regular file (a pipe or a device)")
    if info.st_size == 0:
        raise NotADatabase("is empty (0 bytes): it was cut short or never finished")
    try:
        with path.open("rb") as f:
            header = f.read(100)
    except OSError as e:
        raise NotADatabase(f"cannot be read ({e.strerror or e})") from None
    if not header.startswith(SQLITE_HEADER):
        raise NotADatabase("is not a SQLite database")
    if len(header) < 100:
        raise NotADatabase("is cut short: it is damaged")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # The page count is valid when the change counter equals "version valid for" (SQLite's file format).
    # A checkpoint writes page 1 before the pages after it: with a log beside the file, it may be under way.
    try:
        checkpointing = path.with_name(path.name + "-wal").stat().st_size > 0
    except OSError:
        checkpointing = False
    if header[24:28] == header[92:96] and info.st_size < page_size * pages and not checkpointing:
        raise NotADatabase(f"is cut short ({info.st_size} of {page_size * pages} bytes): it is damaged")


def _check_tables(db: sqlite_utils.Database) -> None:
    """Raise NotADatabase unless `db` holds paperbot's migrations (a SQLite file of another program does not)."""
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        ours = (
            "_sqlite_migrations" in tables
            and db.execute(
                "SELECT 1 FROM _sqlite_migrations WHERE migration_set = ? LIMIT 1", [migrations.name]
            ).fetchone()
        )
    except sqlite3.DatabaseError as e:
        if not _damaged(e):
            raise
        raise NotADatabase(f"is damaged ({e})") from None
    if not ours:
        raise NotADatabase(
            "is a SQLite database of another program" if tables else "is a SQLite file without paperbot's tables"
        )
    # Every page read once (about half a second at 100,000 papers): damage found now, not by a sign-up.
    found = db.execute("PRAGMA quick_check(1)").fetchone()[0]
    if found != "ok":
        raise NotADatabase(f"is damaged ({found})")


def _check_version(db: sqlite_utils.Database) -> None:
    """Raise NotADatabase for a database a newer paperbot migrated: this one does not know its schema."""
    known = {m.name for m in migrations._migrations}
    unknown = [m.name for m in migrations.applied(db) if m.name not in known]
    if unknown:
        raise NotADatabase(f"was made by a newer paperbot (its migration {unknown[0]})", "upgrade paperbot to use it")


_TABLES: set[str] = set()


def _tables_of(db: sqlite_utils.Database) -> set[str]:
    return {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}


def _check_schema(db: sqlite_utils.Database) -> None:
    """Raise NotADatabase when a table or index that the migrations make is missing (dropped by hand,
    or lost to damage): found at start, not by the first sign-up that needs it."""
    if not _TABLES:  # what the migrations make, read off an empty database: never a list kept by hand
        fresh = sqlite_utils.Database(memory=True)
        migrations.apply(fresh)
        _TABLES.update(_tables_of(fresh))
        fresh.close()
    missing = sorted(_TABLES - _tables_of(db))
    if missing:
        raise NotADatabase(f"is damaged: its table or index {missing[0]} is missing")


def _begin_immediate(conn: sqlite3.Connection, answer_by: float | None = None) -> None:
    """BEGIN IMMEDIATE, waiting up to the busy timeout (or until `answer_by`, monotonic) for the
    write lock, asking every millisecond.

    SQLite's own busy handler sleeps longer and longer between tries (up to 100 ms), so a
    sign-up waiting behind an import, which lets go of the lock for a few milliseconds between
    its batches, would seldom try while the lock is free: it waited seconds. Asking every
    millisecond finds each gap.
    """
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        answering = False
        if answer_by is not None and answer_by < deadline:
            answering, deadline = True, answer_by
            if time.monotonic() > deadline:  # the answer is late already: the platform has told the user it failed
                raise Busy("the answer was due before the write could begin")
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as e:
                if "locked" not in str(e):
                    raise
                if time.monotonic() > deadline:
                    if answering:
                        raise Busy(str(e)) from None
                    raise
            time.sleep(WRITE_POLL_SECONDS)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


class Store:
    """One SQLite file, one connection per thread."""

    engine = "sqlite"

    def __init__(
        self,
        path: str | Path,
        *,
        create: Callable[[Store], None] | None = None,
        writes: bool = True,
        _building: bool = False,
    ):
        """Open the paperbot database at `path`, or make it when there is no file there.

        `create(store)` fills a new database before it appears at `path` (the catalog's first
        papers). `writes=False` for a reader (export): a read-only file (a backup) is then fine.
        Raises NotADatabase for a file that is there but is no paperbot database.
        """
        self.path = Path(path)
        self._writes = writes
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        #: Called by close(), for what other modules hold for this database (delivery's owner file).
        self.on_close: list[Callable[[], None]] = []
        #: Did this Store make the file (it was missing)?
        self.created = False
        memory = str(self.path) == ":memory:"
        if not memory and not _building:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not os.path.lexists(self.path):
                self.created = self._build(create)
            check_file(self.path)
        try:
            self._prepare(check=not memory and not _building)
        except BaseException:
            self.close()
            raise

    # -- connections -------------------------------------------------------

    @property
    def db(self) -> sqlite_utils.Database:
        """This thread's connection."""
        db = getattr(self._local, "db", None)
        if db is None:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            # NORMAL in WAL mode: a commit survives any crash of this process;
            # only a power cut can cost the last transactions.
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA journal_size_limit = 33554432")  # a WAL grown by an import shrinks back to 32 MB
            db = sqlite_utils.Database(conn, execute_plugins=False)
            self._local.db = db
            with self._all_lock:
                self._all.append(conn)
        return db

    @contextmanager
    def write(self) -> Iterator[sqlite_utils.Database]:
        """A write transaction that holds the write lock from its first read. A full disk raises
        DiskFull, after the rollback."""
        db = self.db
        try:
            # Inside the try: a signal just after BEGIN still rolls back.
            _begin_immediate(db.conn, getattr(self._local, "answer_by", None))
            yield db
            db.conn.execute("COMMIT")
        except BaseException as e:
            if db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
            if not isinstance(e, DiskFull) and is_disk_full(e, self.path):
                raise _disk_full(e) from e
            raise

    @contextmanager
    def answering_by(self, deadline: float) -> Iterator[None]:
        """Writes made meanwhile in this thread wait for the write lock until `deadline` (monotonic)
        at most, then raise Busy: an answer must keep the platform's deadline (3 seconds), whoever holds the lock."""
        self._local.answer_by = deadline
        try:
            yield
        finally:
            self._local.answer_by = None

    def close(self) -> None:
        with self._all_lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
            closing, self.on_close = self.on_close, []
        self._local = threading.local()
        for fn in closing:
            fn()

    def answers(self) -> bool:
        """Does the database answer a query now (for /healthz)?"""
        try:
            self.db.execute("SELECT 1").fetchone()
            return True
        except sqlite3.Error:
            return False

    # -- first use -----------------------------------------------------------

    def _build(self, create: Callable[[Store], None] | None) -> bool:
        """Make a new database beside the path, then link it there; False when another process's came first.

        A link fails on a file that exists, so of two processes making the same database one wins
        and the other opens the winner's, and the path never holds a database still being made.
        """
        part = self.path.with_name(f".{self.path.name}.new-{os.getpid()}-{threading.get_ident()}")
        for leftover in _with_journals(part):
            leftover.unlink(missing_ok=True)
        try:
            new = Store(part, writes=True, _building=True)
            try:
                if create is not None:
                    create(new)
            finally:
                new.close()
            try:
                os.link(part, self.path)
            except FileExistsError:
                return False
            except OSError:  # a file system without hard links: a rename, which a race could overwrite
                if os.path.lexists(self.path):
                    return False
                os.replace(part, self.path)
            return True
        except sqlite3.Error as e:
            if is_disk_full(e, self.path):
                raise _disk_full(e) from e
            raise
        finally:
            for leftover in _with_journals(part):
                leftover.unlink(missing_ok=True)

    def _prepare(self, *, check: bool) -> None:
        try:
            db = self.db
            if check:
                _check_tables(db)
            self._use_wal(db)
            # Two processes starting on one file must not both migrate it: the
            # whole run happens under one write lock (migrations nest as savepoints).
            with self.write():
                if check:
                    _check_version(db)
                migrations.apply(db)
                if check:
                    _check_schema(db)
                if self._writes:
                    # A real write, so that a file this process can read but not write (read-only, on a
                    # read-only mount) stops it here, named, and not at the first sign-up.
                    set_meta(db, "opened_at", datetime.now(UTC).isoformat(timespec="seconds"))
        except sqlite3.DatabaseError as e:
            if not isinstance(e, DiskFull) and is_disk_full(e, self.path):
                raise _disk_full(e) from e
            if not check or not _damaged(e):
                raise
            raise NotADatabase(f"is damaged ({e})") from None

    @staticmethod
    def _use_wal(db: sqlite_utils.Database) -> None:
        # Switching a new file to WAL needs an exclusive lock, and SQLite answers
        # "database is locked" at once, without the busy timeout, while another
        # process is creating the same file: wait for it as a busy timeout would.
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                with db.ensure_autocommit_on():
                    db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)


def set_meta(db: sqlite_utils.Database, key: str, value: str) -> None:
    """Keep `value` under `key` in the meta table (either engine)."""
    db.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [key, value],
    )


def _damaged(error: sqlite3.DatabaseError) -> bool:
    """Does `error` say the file's content is broken (rather than the file being busy, read-only or full)?"""
    code = getattr(error, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB) or "malformed" in str(error)


def _with_journals(path: Path) -> list[Path]:
    return [
        path,
        path.with_name(path.name + "-wal"),
        path.with_name(path.name + "-shm"),
        path.with_name(path.name + "-journal"),
    ]
