"""A full disk: every way in says so in one line, changes nothing, and loses nothing.

Two ways to fill it: SQLite's `max_page_count` on every connection (the file may not grow: SQLite answers
SQLITE_FULL, as it does for a full disk; runs anywhere), and a real small tmpfs holding the database (needs
root and mount; skipped where it cannot be had).
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys

import pytest

from bot import cli
from bot.catalog import queries as catalog
from tests.support.clock import at

#: About SQLite's file itself: PostgreSQL's counterparts are in tests/store/test_postgres.py.
pytestmark = pytest.mark.sqlite_only

FULL = "disk"


@pytest.fixture
def clock():
    from tests.support.clock import Clock

    return Clock(at("2026-12-02 10:00"))


@pytest.fixture
def capped(monkeypatch):
    """From now on, no connection lets the database file grow by a page (SQLite's answer: SQLITE_FULL)."""
    real = sqlite3.connect

    def connect(*args, **kwargs):
        conn = real(*args, **kwargs)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        return conn

    def cap(store) -> None:
        monkeypatch.setattr("bot.store.connection.sqlite3.connect", connect)
        store.close()  # every thread opens its connection again, capped

    return cap


def _papers_file(path, n: int) -> None:
    rows = [{"title": f"A long paper number {i}", "summary": "x" * 3000, "tags": ["big"]} for i in range(n)]
    path.write_text(json.dumps(rows), encoding="utf-8")


def test_the_add_form_on_a_full_disk_says_so_beside_the_title_not_a_500(make_harness, clock, capped):
    h = make_harness(clock)
    before = catalog.count(h.bot.store)
    capped(h.bot.store)
    errors = h.submit("add_paper", {"title": "A new paper", "url": None, "summary": "词" * 2000, "tags": "new"})
    assert errors["response_action"] == "errors"
    assert "disk" in errors["errors"]["title"] and "full" in errors["errors"]["title"]
    assert catalog.count(h.bot.store) == before
    assert catalog.find(h.bot.store, "a-new-paper") is None


def test_import_on_a_full_disk_says_so_in_one_line_and_keeps_the_catalog(tmp_path, monkeypatch, capsys, capped):
    db = tmp_path / "paperbot.db"
    catalog.open_store(db).close()
    _papers_file(tmp_path / "big.json", 200)
    monkeypatch.setenv("PAPERBOT_DB", str(db))
    monkeypatch.chdir(tmp_path)

    class Opened:
        def close(self):
            pass

    capped(Opened())
    code = cli.main(["import", "big.json"])
    out, err = capsys.readouterr()
    assert code == 1
    assert len(err.strip().splitlines()) == 1, err
    assert "the disk holding the database is full: the import stopped after 0 papers added" in err
    assert "unusable" not in err and "not a usable" not in err
    monkeypatch.undo()
    store = catalog.open_store(db)
    assert catalog.count(store) == 32  # the batch that found no room was rolled back whole
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store.close()


# -- a real full disk -------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs, mounted for this test."""
    where = tmp_path / "disk"
    where.mkdir()
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("a real full disk needs a tmpfs, which needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(folder, leave: int) -> None:
    """Fill the file system of `folder` but `leave` bytes."""
    free = os.statvfs(folder)
    room = free.f_bavail * free.f_frsize - leave
    with (folder / "ballast").open("wb") as f:
        f.write(b"\0" * max(room, 0))


def _paperbot(*args, env, stdin=""):
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], input=stdin, capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_really_full_disk_is_said_in_one_line_by_the_console_and_import(small_disk, tmp_path):
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERBOT_"))},
        "PAPERBOT_DB": str(small_disk / "paperbot.db"),
        "PAPERBOT_TIMEZONE": "Europe/Berlin",
    }
    made = _paperbot("console", env=env, stdin="signup 3 2027-01-04\n")
    assert made.returncode == 0 and "signed up" in made.stdout, made.stderr
    _fill(small_disk, leave=56 * 1024)  # room for SQLite to open the file, and for a few pages more

    lines = "".join(f"signup {n} 2027-02-{n:02d}\n" for n in range(4, 12)) + "tag parallelism-dp\n"
    full = _paperbot("console", env=env, stdin=lines)
    assert full.returncode == 0, full.stderr
    assert "Traceback" not in full.stdout + full.stderr and "went wrong" not in full.stdout
    assert "The disk that holds the catalog is full, so nothing was changed." in full.stdout
    assert "32 papers tagged parallelism-dp" in full.stdout  # reading still works

    _papers_file(tmp_path / "big.json", 300)
    imported = _paperbot("import", str(tmp_path / "big.json"), env=env)
    assert imported.returncode == 1
    assert len(imported.stderr.strip().splitlines()) == 1, imported.stderr
    assert "the disk holding the database is full" in imported.stderr

    (small_disk / "ballast").unlink()  # space again: nothing was lost, everything works
    after = _paperbot("console", env=env, stdin="mine\nsignup 12 2027-03-01\n")
    assert "2027" in after.stdout and "#3" in after.stdout, after.stdout
    assert "signed up" in after.stdout
    check = sqlite3.connect(small_disk / "paperbot.db")
    assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    check.close()


def test_the_console_on_a_full_disk_at_start_says_so_in_one_line(small_disk):
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERBOT_"))},
        "PAPERBOT_DB": str(small_disk / "paperbot.db"),
    }
    _fill(small_disk, leave=0)
    started = _paperbot("console", env=env, stdin=io.StringIO("tags\n").getvalue())
    assert started.returncode == 1
    assert len(started.stderr.strip().splitlines()) == 1, started.stderr
    assert "the disk holding the database is full" in started.stderr
    assert "Traceback" not in started.stderr and "not a usable" not in started.stderr
    assert not (small_disk / "paperbot.db").exists()  # no half-made database left at the path
