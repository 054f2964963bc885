"""The SQLite file: migrations keep data, first use is safe under concurrency, writes are not lost."""

from __future__ import annotations

import sqlite3
import threading

import sqlite_utils

from bot import catalog
from bot.store import Store, migrations


def test_an_older_database_is_migrated_and_keeps_its_data(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m002_schedule")  # the database as the first release left it
    db.execute("INSERT INTO papers (id, title, added_at, updated_at) VALUES ('mine', 'My own paper', 'x', 'x')")
    db.close()

    store = Store(path)
    assert [p.id for p in catalog.all_papers(store)] == ["mine"]  # kept, and not seeded over
    assert store.db.execute("SELECT count(*) FROM slots").fetchone()[0] == 0  # the new tables exist
    assert migrations.pending(store.db) == []
    assert [m.name for m in migrations.applied(store.db)][:2] == ["m001_catalog", "m002_schedule"]
    store.close()


def test_many_threads_opening_a_new_file_at_once(tmp_path):
    path = tmp_path / "new.db"
    errors = []
    barrier = threading.Barrier(8)

    def open_it():
        barrier.wait()
        try:
            Store(path).close()
        except Exception as e:  # pragma: no cover - the assertion below shows it
            errors.append(e)

    threads = [threading.Thread(target=open_it) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    store = Store(path)
    assert catalog.count(store) == 32  # seeded once, not eight times
    store.close()


def test_wal_mode_and_one_connection_per_thread(store):
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    seen = {}

    def grab(name):
        seen[name] = store.db

    threads = [threading.Thread(target=grab, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(db) for db in seen.values()} | {id(store.db)}) == 4


def test_a_failed_write_changes_nothing(store):
    try:
        with store.write() as db:
            db.execute("UPDATE papers SET title = 'half done' WHERE number = 1")
            raise sqlite3.IntegrityError("something went wrong halfway")
    except sqlite3.IntegrityError:
        pass
    assert catalog.by_number(store, 1).title.startswith("Chopper")
