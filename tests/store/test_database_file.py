"""The database file: only a missing file is made; anything else that is not a paperbot database is refused
in one line and left as it is, by every verb; a full disk is said in one line and changes nothing."""

from __future__ import annotations

import io
import os
import sqlite3

import pytest

from bot import cli
from bot.catalog import queries as catalog
from bot.store.connection import NotADatabase, Store

#: About SQLite's file itself: PostgreSQL's counterparts are in tests/store/test_postgres.py.
pytestmark = pytest.mark.sqlite_only

VERBS = [
    ["console"],
    ["run"],
    ["post-week", "--dry-run"],
    ["post-week"],
    ["remind"],
    ["import", "papers.json"],
    ["export"],
    ["init"],
]


def _paperbot_db(path) -> None:
    catalog.open_store(path).close()


def _emptied(path) -> None:
    path.write_bytes(b"")


def _random_bytes(path) -> None:
    path.write_bytes(os.urandom(8192))


def _another_programs(path) -> None:
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    other.execute("INSERT INTO moz_places (url) VALUES ('https://example.org')")
    other.commit()
    other.close()


def _blank_sqlite(path) -> None:
    blank = sqlite3.connect(path)
    blank.execute("PRAGMA user_version = 1")  # a header, no tables
    blank.commit()
    blank.close()


def _cut_in_half(path) -> None:
    _paperbot_db(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _header_overwritten(path) -> None:
    _paperbot_db(path)
    with path.open("r+b") as f:  # the schema page scribbled over, the header intact
        f.seek(100)
        f.write(os.urandom(3000))


def _a_table_dropped(path) -> None:
    _paperbot_db(path)
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE slots")


def _an_index_dropped(path) -> None:
    _paperbot_db(path)
    with sqlite3.connect(path) as conn:
        conn.execute("DROP INDEX slots_by_presenter")


def _from_a_newer_paperbot(path) -> None:
    _paperbot_db(path)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES ('paperbot', 'm099_later', 'x')"
        )


def _a_folder(path) -> None:
    path.mkdir()


def _a_pipe(path) -> None:
    os.mkfifo(path)


NOT_DATABASES = {
    "emptied": (_emptied, "is empty (0 bytes)"),
    "random bytes": (_random_bytes, "is not a SQLite database"),
    "another program's": (_another_programs, "is a SQLite database of another program"),
    "blank SQLite": (_blank_sqlite, "without paperbot's tables"),
    "cut in half": (_cut_in_half, "is cut short"),
    "scribbled over": (_header_overwritten, "is damaged"),
    "a table dropped": (_a_table_dropped, "its table or index slots is missing"),
    "an index dropped": (_an_index_dropped, "its table or index slots_by_presenter is missing"),
    "from a newer paperbot": (_from_a_newer_paperbot, "was made by a newer paperbot (its migration m099_later)"),
    "a folder": (_a_folder, "is a folder"),
    "a pipe": (_a_pipe, "is not a regular file"),
}


def _fingerprint(path):
    if path.is_dir() or not path.is_file():
        return sorted(p.name for p in path.iterdir()) if path.is_dir() else "special"
    return path.read_bytes()


@pytest.mark.parametrize("kind", list(NOT_DATABASES))
def test_a_file_that_is_not_a_paperbot_database_is_refused_and_left_as_it_is(tmp_path, kind):
    make, words = NOT_DATABASES[kind]
    path = tmp_path / "paperbot.db"
    make(path)
    before = _fingerprint(path)
    with pytest.raises(NotADatabase) as refused:
        catalog.open_store(path)
    assert words in str(refused.value)
    assert _fingerprint(path) == before
    # Nothing made beside it (SQLite's own -wal and -shm of a WAL file aside).
    assert {p.name for p in tmp_path.iterdir()} <= {"paperbot.db", "paperbot.db-wal", "paperbot.db-shm"}


def _main(monkeypatch, tmp_path, capsys, argv, db):
    monkeypatch.chdir(tmp_path)
    for name, value in {
        "PAPERBOT_DB": str(db),
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": "secret",
        "SLACK_API_URL": "http://127.0.0.1:9/api/",
        "PAPERBOT_CHANNEL": "C0PAPERS",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.stdin", io.StringIO("tags\n"))
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", VERBS, ids=lambda a: " ".join(a))
def test_every_verb_refuses_an_emptied_database_in_one_line(tmp_path, monkeypatch, capsys, argv):
    (tmp_path / "papers.json").write_text('[{"title": "A paper"}]', encoding="utf-8")
    db = tmp_path / "data" / "paperbot.db"
    db.parent.mkdir()
    db.write_bytes(b"")
    code, out, err = _main(monkeypatch, tmp_path, capsys, argv, db)
    assert code == 1
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"paperbot: PAPERBOT_DB: {db} ")
    assert "0 bytes" in err
    assert db.read_bytes() == b""  # not seeded, not migrated: left for its owner to restore


def test_a_missing_file_is_made_whole_and_the_next_start_opens_it(tmp_path):
    path = tmp_path / "paperbot.db"
    store = catalog.open_store(path)
    assert store.created and catalog.count(store) == 32
    store.close()
    again = catalog.open_store(path)
    assert not again.created and catalog.count(again) == 32
    again.close()
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("paperbot.db")) == []


def test_a_store_alone_knows_no_papers(tmp_path):
    """store.py makes tables; the first papers are the catalog's business (catalog.open_store)."""
    store = Store(tmp_path / "bare.db")
    assert store.db.execute("SELECT count(*) FROM papers").fetchone()[0] == 0
    store.close()


def test_a_database_damaged_in_its_middle_is_refused_at_start(tmp_path):
    from bot.catalog.papers import PaperInput

    path = tmp_path / "paperbot.db"
    store = catalog.open_store(path)
    catalog.upsert(store, [PaperInput(id=f"p-{i}", title=f"Paper {i}", summary="总结" * 500) for i in range(300)])
    store.close()
    size = path.stat().st_size
    with path.open("r+b") as f:  # a run of pages in the middle overwritten, header and schema intact
        f.seek(size // 2 // 4096 * 4096)
        f.write(os.urandom(64 * 1024))
    with pytest.raises(NotADatabase, match="is damaged"):
        catalog.open_store(path)
