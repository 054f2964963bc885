"""The database a test runs on: a SQLite file in its folder, or, with PAPERBOT_TEST_ENGINE=postgresql,
a database of its own on a PostgreSQL server that this test process started (tests/support/postgres.py).

    PAPERBOT_DB = database_for(tmp_path)       # the same answer for the same folder

CI runs the store, delivery, scheduler, groups and process tests a second time on PostgreSQL; a test
that is about SQLite's file itself is marked `sqlite_only` and skipped there.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

from tests.support.postgres import Server, binaries

ENGINE = os.environ.get("PAPERBOT_TEST_ENGINE", "sqlite")
ON_POSTGRES = ENGINE == "postgresql"

_server: Server | None = None
_made: dict[str, str] = {}
_lock = threading.Lock()


def _stop_and_remove(server: Server, folder: Path) -> None:
    """Stop the server, then delete its files: a test run leaves no cluster behind (dozens of them filled /tmp)."""
    try:
        server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def server() -> Server:
    """This test process's PostgreSQL server, started at first use and stopped at exit; a test that
    needs one is skipped where PostgreSQL is not installed (and fails on a PostgreSQL run)."""
    global _server
    if binaries() is None and not ON_POSTGRES:  # a run on PostgreSQL must have it; another skips what needs it
        import pytest  # noqa: PLC0415 - only tests call this

        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql-15); .ci/run installs it")
    with _lock:
        if _server is None:
            folder = Path(tempfile.mkdtemp(prefix="paperbot-pg-"))
            _server = Server.start(folder)
            atexit.register(_stop_and_remove, _server, folder)
        return _server


def database_for(folder: Path, *, template: str | None = None) -> str:
    """PAPERBOT_DB for a test whose files are in `folder`: its SQLite file, or its own PostgreSQL
    database (empty, or a copy of `template`'s), made at the first ask."""
    if not ON_POSTGRES:
        return str(folder / "paperbot.db")
    key = str(folder)
    with _lock:
        known = _made.get(key)
    if known is not None:
        return known
    import psycopg  # noqa: PLC0415 - only on PostgreSQL

    pg = server()
    name = "t" + hashlib.sha1(key.encode()).hexdigest()[:16]
    with psycopg.connect(pg.url(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    url = pg.url(name)
    with _lock:
        _made[key] = url
    return url


class _Connection:
    """A test's own connection to its database on either engine, for reading (and a little writing)
    behind the processes' backs: execute(sql with ? parameters), commit on leaving a with block."""

    def __init__(self, folder: Path):
        if ON_POSTGRES:
            import psycopg  # noqa: PLC0415 - only on PostgreSQL

            self._pg = psycopg.connect(database_for(folder), autocommit=True)
        else:
            import sqlite3  # noqa: PLC0415 - the common case, kept beside the other

            self._sqlite = sqlite3.connect(folder / "paperbot.db", timeout=15)

    def execute(self, sql: str, params=()):
        if ON_POSTGRES:
            from bot.store.postgres import translate  # noqa: PLC0415 - only on PostgreSQL

            return self._pg.execute(translate(sql), list(params) or None)
        return self._sqlite.execute(sql, list(params))

    def close(self) -> None:
        (self._pg if ON_POSTGRES else self._sqlite).close()

    def __enter__(self) -> _Connection:
        return self

    def __exit__(self, *exc) -> None:
        if not ON_POSTGRES:
            self._sqlite.commit()
        self.close()


def connect(folder: Path) -> _Connection:
    """The database of the test whose files are in `folder` (SQLite's paperbot.db, or its PostgreSQL one)."""
    return _Connection(folder)


def db_rows(folder: Path, sql: str, params=()) -> list[tuple]:
    with connect(folder) as db:
        return db.execute(sql, params).fetchall()
