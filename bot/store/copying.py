"""`paperbot copy FROM TO`: an install's whole history into a new database, SQLite or PostgreSQL, either way.

    copied = copying.copy("data/paperbot.db", "postgresql://paperbot@db/paperbot", show=str)  # or CannotCopy(line)
    copied.tables        # [("papers", 100000), ...]: each count the same in FROM and TO

Every table is copied, and the list is read off the two databases, never kept by hand: a table or a
column that one side has and the other lacks stops the copy before it writes, named, so a table a
later migration adds is copied or refused, never forgotten. What is not data stays behind: the
migrations each side applied (TO is made and migrated by this paperbot, and FROM must be at the same
migrations), SQLite's FTS5 shadow tables (FTS5 indexes the rows again) and PostgreSQL's generated
tsvector columns. The numbers handed out travel with the rows: SQLite's sqlite_sequence and
PostgreSQL's identity sequences, so that a paper number once given is never given again on the copy.

FROM is opened read-only and read in one snapshot, so a bot may go on serving it meanwhile. TO must be
new: a missing SQLite file (made beside its path, moved into place whole), or a database holding no
more than a fresh schema does. The copy is one transaction on TO (on PostgreSQL, making the schema
too): a failure leaves TO as it was. PostgreSQL is written with COPY.

A hosted install keeps each place's tables apart (bot/places/registry.py): its own SQLite file beside
FROM's, or its own schema in FROM's database. `copy(..., within=Within(place, file, schema))` copies
one place's tables, which must be in FROM's list of places, and they alone become TO: a one-place
install of their own. Without `within`, the install's own tables are copied (its list of places too,
not the places' tables: `Copied.places` names those left behind).
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from bot.store import postgres_schema
from bot.store.connection import NotADatabase, Store, check_file
from bot.store.migrations import migrations
from bot.store.postgres import CONNECT_TIMEOUT_S, MIGRATION_LOCK, WRITE_LOCK, Database, is_url

#: The tables holding each engine's record of the migrations it applied: TO keeps its own.
MIGRATION_TABLES = {"_sqlite_migrations", "paperbot_migrations"}
#: What FTS5 keeps beside each of its tables (its index, rebuilt from the rows as they are inserted).
FTS5_SHADOWS = ("data", "idx", "content", "docsize", "config")
#: The meta keys a new database holds before anyone used it (`init --empty` included).
FRESH_META = {"page_version", "calendar_uid_domain", "opened_at", "seeded", "seeded_digest"}
#: Rows sent to SQLite at a time.
BATCH = 5000


class CannotCopy(Exception):
    """The copy was refused or failed, and TO was left as it was; str() is the one line to show."""


@dataclass(frozen=True)
class Within:
    """One place of a hosted install at FROM: its id, as FROM's `places` table lists it, and where its
    tables are: its SQLite file (FROM a file) or its schema (FROM a PostgreSQL database)."""

    place: str
    file: Path | None = None
    schema: str | None = None


@dataclass(frozen=True)
class Copied:
    #: Each table and its rows, in the order copied (every count checked the same on both sides).
    tables: list[tuple[str, int]]
    seconds: float
    #: The places FROM lists whose tables stayed behind (a copy of the install's own tables).
    places: tuple[str, ...] = ()

    def lines(self, source: str, target: str) -> list[str]:
        """What `paperbot copy` says: a line a table, then one in all (`source`, `target` as shown)."""
        width = max(len(t) for t, _ in self.tables)
        rows = sum(n for _, n in self.tables)
        return [f"{t:<{width}}  {n:>10,}" for t, n in sorted(self.tables)] + [
            f"Copied {rows:,} rows in {len(self.tables)} tables from {source} to {target} "
            f"in {self.seconds:.1f} s; every table has as many rows in both."
        ]


def copy(
    source: str | Path, target: str | Path, *, show: Callable[[str | Path], str], within: Within | None = None
) -> Copied:
    """Copy the install at `source` into `target` (each a path or a postgresql:// URL); `show` names a
    database in a message (without its password). `within`: that place's tables alone."""
    started = time.monotonic()
    if str(source) == str(target) or (
        not is_url(source) and not is_url(target) and Path(source).resolve() == Path(target).resolve()
    ):
        raise CannotCopy(f"FROM and TO are the same database ({show(target)})")
    house = _PgSource(str(source), show) if is_url(source) else _SqliteSource(Path(source), show)
    src: Source = house
    try:
        places = house.places()
        if within is not None:
            if within.place not in places:
                raise CannotCopy(f"FROM {show(source)} has no place {within.place}: `paperbot places` lists them")
            house.close()
            if is_url(source):
                src = _PgSource(str(source), show, schema=within.schema)
            else:
                assert within.file is not None  # a SQLite FROM's place is a file
                src = _SqliteSource(within.file, show)
        tables = _into_postgres(src, str(target), show) if is_url(target) else _into_sqlite(src, Path(target), show)
    except (sqlite3.Error, psycopg.Error) as e:
        raise CannotCopy(f"the copy failed and {show(target)} was left as it was: {_one_line(e)}") from e
    finally:
        src.close()
    return Copied(tables, time.monotonic() - started, () if within is not None else tuple(sorted(places)))


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


# -- what each engine's schema holds ----------------------------------------------------------------


def _sqlite_tables(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """Each table's columns to copy (an FTS5 table's `rowid` first: the paper's number it indexes)."""
    found = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
    virtual: set[str] = set()
    for name, sql in found:
        using = re.match(r"\s*CREATE\s+VIRTUAL\s+TABLE\s+.*?\bUSING\s+(\w+)", sql or "", re.I | re.S)
        if using and using.group(1).lower() != "fts5":
            raise CannotCopy(f"table {name} is a {using.group(1)} virtual table, which copy does not know how to copy")
        if using:
            virtual.add(name)
    shadows = {f"{v}_{s}" for v in virtual for s in FTS5_SHADOWS}
    tables: dict[str, list[str]] = {}
    for name, _ in found:
        if name in shadows or name in MIGRATION_TABLES or name.startswith("sqlite_"):
            continue
        # table_xinfo's `hidden`: 0 for a stored column (1: FTS5's own, 2 and 3: generated).
        columns = [c[1] for c in conn.execute(f'PRAGMA table_xinfo("{name}")') if c[6] == 0]
        tables[name] = (["rowid"] if name in virtual else []) + columns
    return tables


def _pg_tables(raw: psycopg.Connection) -> dict[str, list[str]]:
    """Each table's columns to copy, generated ones (the search tables' tsvectors) left to PostgreSQL."""
    tables: dict[str, list[str]] = {}
    for table, column in raw.execute(
        "SELECT c.table_name, c.column_name FROM information_schema.columns c "
        "JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
        "WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.is_generated = 'NEVER' "
        "ORDER BY c.table_name, c.ordinal_position"
    ):
        if table not in MIGRATION_TABLES:
            tables.setdefault(table, []).append(column)
    return tables


def _compare(theirs: dict[str, list[str]], ours: dict[str, list[str]]) -> None:
    """Refuse, naming it, a table or column that FROM and TO do not both have: copy cannot know
    where its rows would go (or where TO's would come from)."""
    if only_theirs := sorted(theirs.keys() - ours.keys()):
        raise CannotCopy(f"FROM has a table TO's schema lacks ({only_theirs[0]}): copy does not know how to copy it")
    if only_ours := sorted(ours.keys() - theirs.keys()):
        raise CannotCopy(f"TO's schema has a table FROM lacks ({only_ours[0]}): copy does not know how to fill it")
    for table in sorted(ours):
        odd = sorted(set(theirs[table]) ^ set(ours[table]))
        if odd:
            raise CannotCopy(
                f"table {table} has a column on one side only ({odd[0]}): copy does not know how to copy it"
            )


def _parents_first(tables: Iterable[str], parents: dict[str, set[str]]) -> list[str]:
    """The tables in an order that inserts each row after the rows it refers to; meta last, after
    SQLite's triggers have bumped its page version for every row before it (FROM's value wins)."""
    names = set(tables)
    pending, order = sorted(names - {"meta"}), list[str]()
    while pending:
        ready = [t for t in pending if parents.get(t, set()) - {t} <= set(order)]
        if not ready:
            raise CannotCopy(f"the foreign keys of {', '.join(pending)} go round in a circle: copy cannot order them")
        order += ready
        pending = [t for t in pending if t not in ready]
    return order + sorted(names & {"meta"})


def _migrations_of(applied: set[str], show: str) -> None:
    """Refuse FROM unless its migrations are this paperbot's: its tables are then TO's."""
    known = {m.name for m in migrations._migrations}
    newer, missing = sorted(applied - known), sorted(known - applied)
    if newer:
        raise CannotCopy(f"FROM {show} was made by a newer paperbot (its migration {newer[0]}): copy with that version")
    if missing:
        raise CannotCopy(
            f"FROM {show} is at an older paperbot's schema (without {missing[0]}): open it once with this "
            "paperbot (any verb) to migrate it, then copy"
        )


# -- FROM: read-only, one snapshot --------------------------------------------------------------------


class _SqliteSource:
    def __init__(self, path: Path, show: Callable[[str | Path], str]):
        if not os.path.lexists(path):
            raise CannotCopy(f"FROM {show(path)}: there is no such file")
        try:
            check_file(path)
        except NotADatabase as e:
            raise CannotCopy(f"FROM {show(path)} {e}: it is not a paperbot database") from None
        # mode=ro: never written, not even a journal's checkpoint; BEGIN: every read in one snapshot.
        self.conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
        try:
            self.conn.execute("BEGIN")
            tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "_sqlite_migrations" not in tables:
                what = "a SQLite database of another program" if tables else "a SQLite file without paperbot's tables"
                raise CannotCopy(f"FROM {show(path)} is {what}: it is not a paperbot database")
            applied = self.conn.execute(
                "SELECT name FROM _sqlite_migrations WHERE migration_set = ?", [migrations.name]
            ).fetchall()
            if not applied:
                raise CannotCopy(f"FROM {show(path)} is a SQLite database of another program: not a paperbot database")
            _migrations_of({r[0] for r in applied}, show(path))
        except sqlite3.DatabaseError as e:
            self.conn.close()
            raise CannotCopy(f"FROM {show(path)} cannot be read as a paperbot database ({_one_line(e)})") from None
        except BaseException:
            self.conn.close()
            raise

    def tables(self) -> dict[str, list[str]]:
        return _sqlite_tables(self.conn)

    def rows(self, table: str, columns: Sequence[str]) -> Iterator[Sequence[Any]]:
        return self.conn.execute(f'SELECT {_names(columns)} FROM "{table}"')

    def count(self, table: str) -> int:
        return int(self.conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])

    def numbers_given(self) -> dict[str, int]:
        """The highest number each AUTOINCREMENT table handed out (a deleted paper's included)."""
        return {name: int(seq) for name, seq in self.conn.execute("SELECT name, seq FROM sqlite_sequence")}

    def places(self) -> set[str]:
        """The places a hosted install at FROM lists (bot/places/registry.py)."""
        return {r[0] for r in self.conn.execute("SELECT id FROM places")}

    def close(self) -> None:
        self.conn.close()


class _PgSource:
    def __init__(self, url: str, show: Callable[[str | Path], str], *, schema: str | None = None):
        try:
            self.raw = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.Error as e:
            raise CannotCopy(f"FROM {show(url)}: cannot use the PostgreSQL database ({_one_line(e)})") from None
        try:
            if schema is not None:  # a place's tables: every name below is read in its schema
                self.raw.execute(f'SET search_path TO "{schema}"')
            # One snapshot for every table, and no write can happen through this connection.
            self.raw.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            if self.raw.execute("SELECT to_regclass('paperbot_migrations')").fetchone() == (None,):
                what = "another program's" if _pg_tables(self.raw) else "empty"
                raise CannotCopy(f"FROM {show(url)} is {what}: it is not a paperbot database")
            _migrations_of({r[0] for r in self.raw.execute("SELECT name FROM paperbot_migrations")}, show(url))
            self._types = {
                (t, c): u
                for t, c, u in self.raw.execute(
                    "SELECT table_name, column_name, udt_name FROM information_schema.columns "
                    "WHERE table_schema = current_schema()"
                )
            }
        except BaseException:
            self.raw.close()
            raise

    def tables(self) -> dict[str, list[str]]:
        return _pg_tables(self.raw)

    def blocks(self, table: str, columns: Sequence[str]) -> Iterator[bytes]:
        """The rows as COPY's own data, for a PostgreSQL TO to take as they are."""
        with self.raw.cursor() as cur, cur.copy(f'COPY (SELECT {_names(columns)} FROM "{table}") TO STDOUT') as out:
            for block in out:
                yield bytes(block)

    def rows(self, table: str, columns: Sequence[str]) -> Iterator[Sequence[Any]]:
        with self.raw.cursor() as cur, cur.copy(f'COPY (SELECT {_names(columns)} FROM "{table}") TO STDOUT') as out:
            out.set_types([self._types[table, c] for c in columns])
            yield from out.rows()

    def count(self, table: str) -> int:
        row = self.raw.execute(f'SELECT count(*) FROM "{table}"').fetchone()
        return int(row[0]) if row else 0

    def numbers_given(self) -> dict[str, int]:
        """The last number each identity column handed out (a deleted paper's included)."""
        given = {}
        for table, _, sequence in _identities(self.raw):
            row = self.raw.execute(f"SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {sequence}").fetchone()
            given[table] = int(row[0]) if row else 0
        return given

    def places(self) -> set[str]:
        """The places a hosted install at FROM lists (bot/places/registry.py)."""
        return {r[0] for r in self.raw.execute("SELECT id FROM places")}

    def close(self) -> None:
        self.raw.close()


def _identities(raw: psycopg.Connection) -> list[tuple[str, str, str]]:
    """(table, column, its sequence) for each identity column."""
    return [
        (t, c, s)
        for t, c, s in raw.execute(
            "SELECT table_name, column_name, pg_get_serial_sequence(quote_ident(table_name), column_name) "
            "FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES' "
            "ORDER BY table_name"
        )
    ]


def _names(columns: Sequence[str]) -> str:
    return ", ".join(f'"{c}"' for c in columns)


Source = _SqliteSource | _PgSource


# -- TO: one transaction ------------------------------------------------------------------------------


class _SqliteTarget:
    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def tables(self) -> dict[str, list[str]]:
        return _sqlite_tables(self.conn)

    def parents(self, tables: Iterable[str]) -> dict[str, set[str]]:
        return {t: {r[2] for r in self.conn.execute(f'PRAGMA foreign_key_list("{t}")')} for t in tables}

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql).fetchall()

    def execute(self, sql: str) -> None:
        self.conn.execute(sql)

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """Rows poured in without the secondary indexes, made again after in one pass each, nor the
        triggers: the rows are what triggers left in FROM already (meta's page version, which they
        bump a row at a time, is copied last)."""
        made = self.conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL "
            "ORDER BY type, name"
        ).fetchall()
        for kind, name, _ in made:
            self.conn.execute(f'DROP {kind.upper()} "{name}"')
        yield
        for _, _, sql in made:
            self.conn.execute(sql)

    def load(self, table: str, columns: Sequence[str], src: Source) -> None:
        rows = iter(src.rows(table, columns))
        sql = f'INSERT INTO "{table}" ({_names(columns)}) VALUES ({", ".join("?" * len(columns))})'
        while batch := [row for _, row in zip(range(BATCH), rows, strict=False)]:
            self.conn.executemany(sql, batch)

    def numbers_given(self, given: dict[str, int]) -> None:
        """sqlite_sequence at least as high as FROM's numbers, for the AUTOINCREMENT tables (the
        others number from their highest row, as SQLite does)."""
        autoincrement = {
            r[0]
            for r in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%AUTOINCREMENT%'"
            )
        }
        for table, number in sorted(given.items()):
            if table not in autoincrement or number <= 0:
                continue
            row = self.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", [table]).fetchone()
            if row is None:
                self.conn.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", [table, number])
            elif row[0] < number:
                self.conn.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = ?", [number, table])


class _PgTarget:
    def __init__(self, raw: psycopg.Connection):
        self.raw = raw

    def tables(self) -> dict[str, list[str]]:
        return _pg_tables(self.raw)

    def parents(self, tables: Iterable[str]) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {t: set() for t in tables}
        for child, parent in self.raw.execute(
            "SELECT child.relname, parent.relname FROM pg_constraint c "
            "JOIN pg_class child ON child.oid = c.conrelid JOIN pg_class parent ON parent.oid = c.confrelid "
            "WHERE c.contype = 'f' AND child.relnamespace = current_schema()::regnamespace"
        ):
            found.setdefault(child, set()).add(parent)
        return found

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        return self.raw.execute(sql).fetchall()

    def execute(self, sql: str) -> None:
        self.raw.execute(sql)

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """Rows poured in without the foreign keys and the secondary indexes (the search's GIN among
        them), which are made again after, each in one pass over its table, and the keys checked then."""
        keys = self.raw.execute(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE contype = 'f' AND connamespace = current_schema()::regnamespace ORDER BY conname"
        ).fetchall()
        indexes = self.raw.execute(
            "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = current_schema()::regnamespace "
            "AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid) ORDER BY 1"
        ).fetchall()
        for table, name, _ in keys:
            self.raw.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
        for index, _ in indexes:
            self.raw.execute(f"DROP INDEX {index}")
        yield
        self.raw.execute("SET LOCAL maintenance_work_mem = '256MB'")
        for _, definition in indexes:
            self.raw.execute(definition)
        for table, name, definition in keys:
            self.raw.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')

    def load(self, table: str, columns: Sequence[str], src: Source) -> None:
        with self.raw.cursor() as cur, cur.copy(f'COPY "{table}" ({_names(columns)}) FROM STDIN') as into:
            if isinstance(src, _PgSource):  # PostgreSQL to PostgreSQL: COPY's data as it comes
                for block in src.blocks(table, columns):
                    into.write(block)
            else:
                for row in src.rows(table, columns):
                    into.write_row(row)

    def numbers_given(self, given: dict[str, int]) -> None:
        """Each identity sequence past the numbers copied and those FROM handed out."""
        for table, column, sequence in _identities(self.raw):
            row = self.raw.execute(f'SELECT max("{column}") FROM "{table}"').fetchone()
            highest = max(given.get(table, 0), int(row[0]) if row and row[0] is not None else 0)
            if highest > 0:
                self.raw.execute("SELECT setval(%s, %s)", [sequence, highest])


Target = _SqliteTarget | _PgTarget


def _fill(src: Source, dst: Target, show: str) -> list[tuple[str, int]]:
    """Copy every table of `src` into `dst`, inside the caller's transaction on `dst`."""
    ours = dst.tables()
    _compare(src.tables(), ours)
    _refuse_used(dst, ours, show)
    order = _parents_first(ours, dst.parents(ours))
    for table in reversed(order):  # the fresh schema's own rows (group 1, meta) make way for FROM's
        dst.execute(f'DELETE FROM "{table}"')
    copied = []
    with dst.bulk():
        for table in order:
            dst.load(table, ours[table], src)
            theirs, now = src.count(table), _count(dst, table)
            if theirs != now:
                raise CannotCopy(f"{table} has {theirs:,} rows in FROM but {now:,} after the copy: nothing was copied")
            copied.append((table, now))
    dst.numbers_given(src.numbers_given())
    return copied


def _count(dst: Target, table: str) -> int:
    return int(dst.query(f'SELECT count(*) FROM "{table}"')[0][0])


def _refuse_used(dst: Target, tables: dict[str, list[str]], show: str) -> None:
    """Refuse a TO that holds more than a fresh schema does (group 1's row, meta's own keys)."""
    if papers := _count(dst, "papers"):
        raise CannotCopy(f"TO {show} already holds an install ({papers:,} paper{'s' * (papers != 1)}): {REFUSED}")
    for table in sorted(tables):
        if table == "groups":
            extra = dst.query("SELECT count(*) FROM groups WHERE id <> 1")[0][0]
        elif table == "meta":
            keys = [k for (k,) in dst.query("SELECT key FROM meta") if k not in FRESH_META]
            extra = len(keys)
        else:
            extra = _count(dst, table)
        if extra:
            raise CannotCopy(
                f"TO {show} already holds an install ({extra:,} row{'s' * (extra != 1)} in {table}): {REFUSED}"
            )


REFUSED = "copy writes only into a new SQLite file or an empty database, and left it as it is"


def _into_sqlite(src: Source, path: Path, show: Callable[[str | Path], str]) -> list[tuple[str, int]]:
    copied: list[list[tuple[str, int]]] = []

    def fill(store: Store) -> None:
        with store.write() as db:
            copied.append(_fill(src, _SqliteTarget(db.conn), show(path)))

    existed = os.path.lexists(path)
    try:
        # A missing file is filled beside its path and moved there whole; an existing one in one transaction.
        store = Store(path, create=None if existed else fill, writes=False)
    except NotADatabase as e:
        raise CannotCopy(f"TO {show(path)} {e}: {REFUSED}") from None
    try:
        if existed or not store.created:  # or another process made it meanwhile
            fill(store)
    finally:
        store.close()
    return copied[-1]


def _into_postgres(src: Source, url: str, show: Callable[[str | Path], str]) -> list[tuple[str, int]]:
    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as e:
        raise CannotCopy(f"TO {show(url)}: cannot use the PostgreSQL database ({_one_line(e)})") from None
    try:
        raw.execute("BEGIN")
        # The locks of every writer and of the migrations, as PgStore takes them: TO's schema is made
        # in this transaction too, so a failure leaves an empty database empty.
        raw.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK})")
        raw.execute(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
        db = Database.on(raw)
        foreign = postgres_schema.foreign_tables(db)
        if foreign:
            raise CannotCopy(f"TO {show(url)} holds tables of another program ({foreign[0]}): {REFUSED}")
        try:
            postgres_schema.apply(db)
        except NotADatabase as e:
            raise CannotCopy(f"TO {show(url)} {e}: {REFUSED}") from None
        copied = _fill(src, _PgTarget(raw), show(url))
        raw.execute("COMMIT")
        return copied
    finally:
        raw.close()  # before a COMMIT: rolled back
