"""The SQLite file: connections, migrations and first-use seeding.

    store = Store("data/paperbot.db")        # created, migrated and seeded on first use
    with store.write() as db:                # BEGIN IMMEDIATE ... COMMIT
        db.execute("UPDATE papers SET title = ? WHERE id = ?", [title, slug])
    rows = store.db.query("SELECT * FROM papers")

Slack listeners run in a thread pool and scheduler jobs in another, and a
shared connection once lost a write, so every thread gets its own connection.
The file is in WAL mode (readers never wait for writers), each connection has a
busy timeout, and every read-then-write happens in `write()`, whose
BEGIN IMMEDIATE takes the write lock before the read, so two writers can never
both decide on the same stale state.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import sqlite_utils
from sqlite_utils.migrations import Migrations

log = logging.getLogger(__name__)

#: The group's first list, loaded into a new database: data/ of a clone, or its copy in an
#: installed package (pyproject.toml ships data/ as bot/seed/).
SEED_FILE = next(
    (
        path
        for path in (
            Path(__file__).resolve().parent.parent / "data" / "papers.yaml",
            Path(__file__).resolve().parent / "seed" / "papers.yaml",
        )
        if path.is_file()
    ),
    Path(__file__).resolve().parent.parent / "data" / "papers.yaml",
)

BUSY_TIMEOUT_MS = 15_000

migrations = Migrations("paperbot")


@migrations()
def m001_catalog(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        CREATE TABLE meta (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL);

        -- number: the stable number shown beside a paper (#7); never reused.
        -- id: the short slug (streaming-diloco) that imports match on.
        CREATE TABLE papers (
            number INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '',
            url TEXT NOT NULL DEFAULT '',
            added_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
        CREATE TABLE paper_tags (
            tag INTEGER NOT NULL REFERENCES tags(id),
            paper INTEGER NOT NULL REFERENCES papers(number) ON DELETE CASCADE,
            PRIMARY KEY (tag, paper)
        ) WITHOUT ROWID;
        CREATE INDEX paper_tags_by_paper ON paper_tags (paper, tag);

        -- Search text, one row per paper (rowid = papers.number), written by
        -- catalog.py in the same transaction as the paper. Han and kana runs
        -- are stored as overlapping bigrams, see search_terms.py.
        CREATE VIRTUAL TABLE paper_search USING fts5(title, summary, tags, prefix='2 3');
        """
    )


@migrations()
def m002_schedule(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        -- One row per week that has a presenter or is skipped; the primary key
        -- is what makes "one presenter a week" true under any race.
        CREATE TABLE slots (
            week TEXT NOT NULL PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('presenter', 'skipped')),
            presenter TEXT,
            paper INTEGER REFERENCES papers(number),
            booked_by TEXT NOT NULL,
            booked_at TEXT NOT NULL,
            CHECK ((kind = 'presenter') = (presenter IS NOT NULL AND paper IS NOT NULL))
        );
        CREATE INDEX slots_by_presenter ON slots (presenter, week);
        CREATE INDEX slots_by_paper ON slots (paper, week);

        -- Messages that must reach Slack exactly once: the weekly post
        -- (kind 'post', dest = channel, key = week) and presenter reminders
        -- (kind 'reminder', dest = user, key = week). See delivery.py.
        CREATE TABLE deliveries (
            kind TEXT NOT NULL,
            dest TEXT NOT NULL,
            key TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('claimed', 'sending', 'sent')),
            paper INTEGER REFERENCES papers(number),
            owner TEXT,
            lease_until REAL NOT NULL DEFAULT 0,   -- unix time; the owner's claim lapses after it
            retry_at REAL NOT NULL DEFAULT 0,      -- unix time; after a refusal, wait before trying again
            claimed_at REAL NOT NULL,              -- unix time of the first claim: no attempt is older
            attempts INTEGER NOT NULL DEFAULT 0,
            channel TEXT,
            ts TEXT,
            last_error TEXT,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (kind, dest, key)
        );
        CREATE INDEX deliveries_by_paper ON deliveries (kind, paper) WHERE state = 'sent';
        """
    )


@migrations()
def m003_tag_counts(db: sqlite_utils.Database) -> None:
    # `tag` answers "N papers tagged X" on every call, and counting 40,000
    # index entries each time costs milliseconds: each tag keeps its count,
    # recounted by catalog.py in the transaction that changes its papers.
    db.executescript(
        """
        ALTER TABLE tags ADD COLUMN papers INTEGER NOT NULL DEFAULT 0;
        UPDATE tags SET papers = (SELECT count(*) FROM paper_tags WHERE tag = tags.id);
        """
    )


@migrations()
def m004_search_groups(db: sqlite_utils.Database) -> None:
    # "Best first" reads titles, then tags, then everything. A column filter on
    # the one index would walk every match of a common word to find the few in
    # titles, so titles and tags get indexes of their own. search_vocab lists
    # the indexed words, so that a prefix can be spelled as the words it stands for.
    from bot import search_terms

    db.executescript(
        """
        CREATE VIRTUAL TABLE paper_titles USING fts5(text, prefix='2 3');
        CREATE VIRTUAL TABLE paper_tag_words USING fts5(text, prefix='2 3');
        CREATE TABLE search_vocab (term TEXT NOT NULL PRIMARY KEY) WITHOUT ROWID;
        INSERT INTO paper_titles (rowid, text) SELECT rowid, title FROM paper_search;
        INSERT INTO paper_tag_words (rowid, text) SELECT rowid, tags FROM paper_search;
        """
    )
    words: set[str] = set()
    for title, summary, tags in db.execute("SELECT title, summary, tags FROM paper_search"):
        for text in (title, summary, tags):
            words |= search_terms.index_form(text)[1]
    db.conn.executemany("INSERT INTO search_vocab (term) VALUES (?)", [(w,) for w in sorted(words)])


@migrations()
def m005_valid_ids(db: sqlite_utils.Database) -> None:
    # Ids that earlier versions made or accepted but that no longer read back: only digits
    # (`1999` now reads as paper number 1999) and double dashes from cutting a long slug
    # (`…-distributed--2`). Renamed, so that every paper can be named by its id and an
    # export imports again whole; everything else refers to papers by number.
    import re

    valid = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    taken = {pid for (pid,) in db.execute("SELECT id FROM papers")}
    for number, pid in db.execute("SELECT number, id FROM papers ORDER BY number").fetchall():
        if valid.match(pid) and not pid.isdigit():
            continue
        new = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "", pid.lower())).strip("-")
        if not new or new.isdigit():
            new = f"paper-{new}".rstrip("-")
        candidate, n = new[:40].strip("-"), 1
        while candidate in taken:
            n += 1
            candidate = f"{new[:36].strip('-')}-{n}"
        taken.discard(pid)
        taken.add(candidate)
        db.execute("UPDATE papers SET id = ? WHERE number = ?", [candidate, number])


@migrations()
def m006_outbox(db: sqlite_utils.Database) -> None:
    # Announcements and post updates, kept until Slack has them (see outbox.py).
    db.executescript(
        """
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('announce', 'refresh')),
            payload TEXT NOT NULL,                  -- JSON
            created_at REAL NOT NULL,               -- unix time
            next_try REAL NOT NULL DEFAULT 0,       -- unix time: not before
            attempts INTEGER NOT NULL DEFAULT 0,
            owner TEXT,
            lease_until REAL NOT NULL DEFAULT 0,    -- unix time; a taken item is its owner's until then
            last_error TEXT
        );
        CREATE INDEX outbox_due ON outbox (next_try);
        """
    )


@migrations()
def m007_message_ref(db: sqlite_utils.Database) -> None:
    # A delivered message is known by its platform's own reference (a message's timestamp or id):
    # the column says what it holds for any platform. RENAME COLUMN keeps every row.
    db.execute("ALTER TABLE deliveries RENAME COLUMN ts TO message_ref")


#: The FTS5 indexes, and how they merge their segments: as FTS5 does by default, or not
#: at all while a big import writes (its end merges each index once, see catalog.optimize).
SEARCH_TABLES = ("paper_titles", "paper_tag_words", "paper_search")
MERGING = {"automerge": 4, "crisismerge": 16}
MERGING_DEFERRED = {"automerge": 0, "crisismerge": 1000}


def set_merging(db: sqlite_utils.Database, settings: dict[str, int]) -> None:
    for table in SEARCH_TABLES:
        for key, value in settings.items():
            db.execute(f"INSERT INTO {table} ({table}, rank) VALUES (?, ?)", [key, value])


#: How often a writer that waits for the write lock asks for it again.
WRITE_POLL_SECONDS = 0.001


class Busy(sqlite3.OperationalError):
    """The write lock was not free before an answer was due (see Store.answering_by): nothing was written."""


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
        answering = answer_by is not None and answer_by < deadline
        if answering:
            deadline = answer_by
            if time.monotonic() > deadline:  # the answer is late already: Slack has told the user it failed
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

    def __init__(self, path: str | Path, seed: Path | None = SEED_FILE, *, writes: bool = True):
        """`writes=False` for a reader (export): a read-only file (a backup) is then fine."""
        self.path = Path(path)
        self._writes = writes
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        #: Called by close(), for what other modules hold for this database (delivery's owner file).
        self.on_close: list[Callable[[], None]] = []
        self._prepare(seed)

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
        """A write transaction that holds the write lock from its first read."""
        db = self.db
        try:
            # Inside the try: a signal just after BEGIN still rolls back.
            _begin_immediate(db.conn, getattr(self._local, "answer_by", None))
            yield db
        except BaseException:
            if db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
            raise
        else:
            db.conn.execute("COMMIT")

    @contextmanager
    def answering_by(self, deadline: float) -> Iterator[None]:
        """Writes made meanwhile in this thread wait for the write lock until `deadline` (monotonic)
        at most, then raise Busy: an answer must keep Slack's 3 seconds, whoever holds the lock."""
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

    # -- first use -----------------------------------------------------------

    def _prepare(self, seed: Path | None) -> None:
        db = self.db
        self._use_wal(db)
        # Two processes starting on a new file must not both migrate it: the
        # whole run happens under one write lock (migrations nest as savepoints).
        with self.write():
            migrations.apply(db)
            seeded = db.execute("SELECT value FROM meta WHERE key = 'seeded'").fetchone()
            if seeded is None:
                # Only an empty catalog is seeded: papers someone already has are never overwritten.
                empty = db.execute("SELECT count(*) FROM papers").fetchone()[0] == 0
                count = self._seed(seed) if empty else 0
                db.execute("INSERT INTO meta (key, value) VALUES ('seeded', ?)", [str(count)])
            if self._writes:
                # A real write, so that a file this process can read but not write (read-only, on a
                # read-only mount) stops it here, named, and not at the first sign-up.
                db.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('opened_at', ?)",
                    [datetime.now(UTC).isoformat(timespec="seconds")],
                )
            # An import that was killed leaves merging off, and searches would slow down as segments pile up.
            if db.execute("SELECT v FROM paper_search_config WHERE k = 'automerge'").fetchone() == (0,):
                set_merging(db, MERGING)

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

    def _seed(self, seed: Path | None) -> int:
        if seed is None or not seed.is_file():
            log.warning("no seed catalog at %s; starting with an empty catalog", seed)
            return 0
        from bot import catalog, papers_file

        report = papers_file.read(seed)
        for problem in report.problems:
            log.warning("seed %s", problem)
        catalog.upsert(self, report.papers, in_transaction=True)
        return len(report.papers)
