"""The SQLite file: connections, transactions and migrations.

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
import re
import secrets
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
from sqlite_utils.migrations import Migrations

log = logging.getLogger(__name__)

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

        -- Messages that must reach the chat exactly once: the weekly post
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
    # the indexed words, so that a prefix can be spelled as the words it stands for:
    # here every term of the index as it stands (SQL only, so this step never changes).
    db.executescript(
        """
        CREATE VIRTUAL TABLE paper_titles USING fts5(text, prefix='2 3');
        CREATE VIRTUAL TABLE paper_tag_words USING fts5(text, prefix='2 3');
        CREATE TABLE search_vocab (term TEXT NOT NULL PRIMARY KEY) WITHOUT ROWID;
        INSERT INTO paper_titles (rowid, text) SELECT rowid, title FROM paper_search;
        INSERT INTO paper_tag_words (rowid, text) SELECT rowid, tags FROM paper_search;
        CREATE VIRTUAL TABLE temp.m004_terms USING fts5vocab(main, paper_search, 'row');
        INSERT INTO search_vocab (term) SELECT term FROM temp.m004_terms;
        DROP TABLE temp.m004_terms;
        """
    )


@migrations()
def m005_valid_ids(db: sqlite_utils.Database) -> None:
    # Ids that earlier versions made or accepted but that no longer read back: only digits
    # (`1999` now reads as paper number 1999) and double dashes from cutting a long slug
    # (`…-distributed--2`). Renamed, so that every paper can be named by its id and an
    # export imports again whole; everything else refers to papers by number.

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
    # Announcements and post updates, kept until the chat platform has them (see outbox.py).
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


@migrations()
def m008_groups(db: sqlite_utils.Database) -> None:
    # Several reading groups in one install (see groups.py). Group 1 is the environment's
    # (PAPERBOT_CHANNEL and the rest): its row holds no settings, only its existence, so that
    # every earlier sign-up, skip and post is its history. A group of the chat is one channel.
    # slots gets group_id in its primary key: SQLite changes a primary key only by a new
    # table, so slots is rebuilt, every row kept as group 1's, with its CHECKs and indexes.
    db.executescript(
        """
        CREATE TABLE groups (
            id INTEGER PRIMARY KEY,
            platform TEXT,                      -- the adapter's name; NULL for group 1 (the environment's)
            channel TEXT,                       -- the platform's channel id; NULL for group 1 (PAPERBOT_CHANNEL)
            timezone TEXT NOT NULL DEFAULT 'UTC',
            schedule TEXT NOT NULL DEFAULT '0 9 * * mon',
            meeting TEXT,                       -- 'thu 16:00'; NULL: the post's day and time
            remind_days INTEGER NOT NULL DEFAULT 2,
            focus_tag TEXT,
            admins TEXT NOT NULL DEFAULT '',    -- member ids, comma-separated
            rotation TEXT NOT NULL DEFAULT 'catalog' CHECK (rotation IN ('catalog', 'votes')),
            meeting_minutes INTEGER NOT NULL DEFAULT 60,
            stopped INTEGER NOT NULL DEFAULT 0 CHECK (stopped IN (0, 1)),
            started_by TEXT,
            updated_at TEXT NOT NULL,
            CHECK ((id = 1) = (channel IS NULL))
        );
        CREATE UNIQUE INDEX groups_by_channel ON groups (channel) WHERE channel IS NOT NULL;
        INSERT INTO groups (id, updated_at) VALUES (1, strftime('%Y-%m-%dT%H:%M:%S+00:00', 'now'));

        CREATE TABLE slots_by_group (
            group_id INTEGER NOT NULL DEFAULT 1 REFERENCES groups(id),
            week TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('presenter', 'skipped')),
            presenter TEXT,
            paper INTEGER REFERENCES papers(number),
            booked_by TEXT NOT NULL,
            booked_at TEXT NOT NULL,
            CHECK ((kind = 'presenter') = (presenter IS NOT NULL AND paper IS NOT NULL)),
            PRIMARY KEY (group_id, week)
        );
        INSERT INTO slots_by_group (group_id, week, kind, presenter, paper, booked_by, booked_at)
            SELECT 1, week, kind, presenter, paper, booked_by, booked_at FROM slots;
        DROP TABLE slots;
        ALTER TABLE slots_by_group RENAME TO slots;
        CREATE INDEX slots_by_presenter ON slots (presenter, week);
        CREATE INDEX slots_by_paper ON slots (paper, week);
        """
    )


@migrations()
def m009_paper_details(db: sqlite_utils.Database) -> None:
    # Papers gain authors and a year (both optional), and the arXiv id and DOI their link names,
    # normalised (paper_refs.py), so that a paper added again by id, DOI or link is found, not
    # added twice. Suggestions wait apart from the catalog and get a paper number only when accepted.
    db.executescript(
        """
        ALTER TABLE papers ADD COLUMN authors TEXT NOT NULL DEFAULT '';
        ALTER TABLE papers ADD COLUMN year INTEGER;
        ALTER TABLE papers ADD COLUMN arxiv_id TEXT;   -- 2501.18512, hep-th/9901001: no version
        ALTER TABLE papers ADD COLUMN doi TEXT;        -- lower case
        CREATE INDEX papers_by_arxiv_id ON papers (arxiv_id) WHERE arxiv_id IS NOT NULL;
        CREATE INDEX papers_by_doi ON papers (doi) WHERE doi IS NOT NULL;

        CREATE TABLE suggestions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            group_id INTEGER NOT NULL DEFAULT 1,
            suggested_by TEXT NOT NULL,            -- the member's user id on the platform it came from
            platform TEXT NOT NULL DEFAULT '',     -- slack, discord, console: where to tell them the outcome
            title TEXT NOT NULL,
            authors TEXT NOT NULL DEFAULT '',
            year INTEGER,
            summary TEXT NOT NULL DEFAULT '',
            url TEXT NOT NULL DEFAULT '',
            arxiv_id TEXT,
            doi TEXT,
            state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'accepted', 'declined')),
            paper INTEGER,                         -- the catalog's number, once accepted (no foreign key:
                                                   -- a suggestion never stops a paper's deletion)
            decided_by TEXT,
            created_at TEXT NOT NULL,
            decided_at TEXT
        );
        CREATE INDEX suggestions_by_state ON suggestions (state, id);
        CREATE INDEX suggestions_by_arxiv_id ON suggestions (arxiv_id) WHERE arxiv_id IS NOT NULL;
        CREATE INDEX suggestions_by_doi ON suggestions (doi) WHERE doi IS NOT NULL;
        """
    )
    # The links papers have today (paper_refs.py reads the same and more from then on), in SQL only,
    # so that this step never changes: arxiv.org/abs/ID and /pdf/ID (a version, .pdf dropped), doi.org/DOI.
    db.executescript(
        """
        CREATE TEMP TABLE m009_ids AS
            SELECT number, rtrim(replace(substr(url, instr(url, 'arxiv.org/') + 14), '.pdf', ''), '/') AS id
            FROM papers
            WHERE url LIKE 'http%://arxiv.org/abs/_%' OR url LIKE 'http%://arxiv.org/pdf/_%'
               OR url LIKE 'http%://www.arxiv.org/abs/_%' OR url LIKE 'http%://www.arxiv.org/pdf/_%';
        UPDATE m009_ids SET id = rtrim(rtrim(id, '0123456789'), 'v')
            WHERE rtrim(id, '0123456789') LIKE '%_v';
        UPDATE papers SET arxiv_id = (SELECT id FROM m009_ids WHERE m009_ids.number = papers.number)
            WHERE number IN (SELECT number FROM m009_ids);
        DROP TABLE m009_ids;
        UPDATE papers SET doi = lower(substr(url, instr(url, 'doi.org/') + 8))
            WHERE url LIKE 'http%://doi.org/10._%/_%' OR url LIKE 'http%://dx.doi.org/10._%/_%';
        """
    )


@migrations()
def m010_votes_archive_talk_links(db: sqlite_utils.Database) -> None:
    # Votes are on papers, for the whole install: one a member, the primary key makes it so.
    # An archived paper (archived_at set) leaves lists, search and the rotation but keeps its rows.
    # Talk links (slides, a recording, notes) belong to one group's week; a week may have several.
    db.executescript(
        """
        CREATE TABLE votes (
            paper INTEGER NOT NULL REFERENCES papers(number),
            member TEXT NOT NULL,
            voted_at TEXT NOT NULL,
            PRIMARY KEY (paper, member)
        ) WITHOUT ROWID;
        CREATE INDEX votes_by_member ON votes (member);

        ALTER TABLE papers ADD COLUMN archived_at TEXT;
        -- The few archived papers, found without reading every paper (lists and search leave them out).
        CREATE INDEX papers_archived ON papers (number) WHERE archived_at IS NOT NULL;

        CREATE TABLE talk_links (
            id INTEGER PRIMARY KEY,
            group_id INTEGER NOT NULL DEFAULT 1,
            week TEXT NOT NULL,
            url TEXT NOT NULL,
            added_by TEXT NOT NULL,
            added_at TEXT NOT NULL,
            UNIQUE (group_id, week, url)
        );
        """
    )


@migrations()
def m011_calendar(db: sqlite_utils.Database) -> None:
    # The calendar's memory of each week it has shown (so that a changed week gets a higher
    # SEQUENCE and a week that lost its talk stays as CANCELLED), the secret parts of the feeds'
    # and the group's page's URLs, members' names as their platform gave them, and the Discord
    # scheduled event made for each week (Discord has no idempotency key: the id is kept).

    db.executescript(
        """
        CREATE TABLE calendar_weeks (
            group_id INTEGER NOT NULL DEFAULT 1,
            week TEXT NOT NULL,
            fingerprint TEXT NOT NULL,             -- what the event said, hashed; '' once cancelled
            sequence INTEGER NOT NULL DEFAULT 0,   -- RFC 5545 SEQUENCE: grows with each change
            changed_at TEXT NOT NULL,              -- UTC, ISO 8601: the event's DTSTAMP and Last-Modified
            presenter TEXT,                        -- the last presenter shown: their feed shows the cancel
            PRIMARY KEY (group_id, week)
        );
        CREATE TABLE group_secrets (
            group_id INTEGER NOT NULL DEFAULT 1 PRIMARY KEY,
            secret TEXT NOT NULL UNIQUE,
            made_at TEXT NOT NULL
        );
        CREATE TABLE member_secrets (
            member TEXT NOT NULL PRIMARY KEY,
            secret TEXT NOT NULL UNIQUE,
            made_at TEXT NOT NULL
        );
        CREATE TABLE member_names (
            member TEXT NOT NULL PRIMARY KEY,
            name TEXT NOT NULL,
            asked_at REAL NOT NULL                 -- unix time: asked again after a day
        );
        CREATE TABLE discord_events (
            group_id INTEGER NOT NULL DEFAULT 1,
            week TEXT NOT NULL,
            event_id TEXT,                         -- NULL while being made: a crash leaves it to be matched
            fingerprint TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (group_id, week)
        );
        """
    )
    # The domain of the events' UIDs: this install's own, so that two installs never share a UID.
    db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('calendar_uid_domain', ?)", [secrets.token_hex(6)])


@migrations()
def m012_group_started_at(db: sqlite_utils.Database) -> None:
    # When a chat group was started (or last resumed): its first post is for the first slot at or
    # after it, never for a week whose slot passed before the group existed. NULL (group 1, and the
    # groups started before this column) is "long ago": their posts go on as before, since a group's
    # `updated_at` is its latest change, and a setting changed after this week's slot must not take
    # that week's post away.
    db.execute("ALTER TABLE groups ADD COLUMN started_at TEXT")


@migrations()
def m013_talk_links_go_with_their_talk(db: sqlite_utils.Database) -> None:
    # Talk materials belong to the talk, not to its week: a withdrawn, cleared or replaced talk takes
    # its links with it (before, they showed on the next presenter's talk of that week). Triggers, so
    # that every way a slot goes or changes hands does it. The links already kept for a week with no
    # talk now, or added before its talk was booked, were an earlier talk's (a time that cannot be
    # read keeps its link).
    db.executescript(
        """
        DELETE FROM talk_links WHERE NOT EXISTS (
            SELECT 1 FROM slots s WHERE s.group_id = talk_links.group_id AND s.week = talk_links.week
            AND s.kind = 'presenter' AND coalesce(julianday(s.booked_at) <= julianday(talk_links.added_at), 1)
        );
        CREATE TRIGGER talk_links_go_with_their_talk AFTER DELETE ON slots BEGIN
            DELETE FROM talk_links WHERE group_id = OLD.group_id AND week = OLD.week;
        END;
        CREATE TRIGGER talk_links_go_with_a_changed_talk AFTER UPDATE OF kind, presenter, paper ON slots
        WHEN OLD.kind IS NOT NEW.kind OR OLD.presenter IS NOT NEW.presenter OR OLD.paper IS NOT NEW.paper BEGIN
            DELETE FROM talk_links WHERE group_id = OLD.group_id AND week = OLD.week;
        END;
        """
    )


#: How often a writer that waits for the write lock asks for it again.
WRITE_POLL_SECONDS = 0.001


class Busy(sqlite3.OperationalError):
    """The write lock was not free before an answer was due (see Store.answering_by): nothing was written."""


class DiskFull(sqlite3.OperationalError):
    """The disk (or the file's size limit) left no room for a write: it was rolled back, nothing was changed."""


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
                    db.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES ('opened_at', ?)",
                        [datetime.now(UTC).isoformat(timespec="seconds")],
                    )
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
