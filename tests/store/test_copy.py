"""`paperbot copy FROM TO`: an install with history goes SQLite -> PostgreSQL -> SQLite whole, and the
bot answers the same on each; a used TO, a FROM that is no paperbot database and a copy failing half
way leave every database as it was. On a real PostgreSQL server, whichever engine the run tests."""

from __future__ import annotations

import hashlib
import io
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import psycopg
import pytest

from bot import cli
from bot.catalog.queries import open_store
from bot.intake import suggestions
from bot.intake.lookup import Found
from tests.support import databases, postgres
from tests.support.slack_group import CHANNEL, group_settings, post_week

pytestmark = pytest.mark.skipif(postgres.binaries() is None, reason="PostgreSQL is not installed")

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.fixture
def pg_url() -> str:
    """A new, empty database on this test process's PostgreSQL server."""
    return databases.server().new_database()


def _main(monkeypatch, capsys, db, *argv: str, stdin: str = "", **env: str) -> tuple[int, str, str]:
    """`paperbot ARGV` in this process with the test group's settings on database `db`."""
    for name, value in {**group_settings(Path("."), "http://127.0.0.1:9/api/"), "PAPERBOT_DB": str(db), **env}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _history(monkeypatch, capsys, tmp_path: Path, slack) -> Path:
    """A SQLite install that has lived: sign-ups, a delivered post, votes, a suggestion, a talk's link,
    calendar secrets, a second group, a deleted paper, questions and attendance: its file."""
    monkeypatch.chdir(tmp_path)  # no .env
    db = tmp_path / "paperbot.db"
    now = datetime.now(BERLIN)
    monday = (now + timedelta(days=7 - now.weekday())).date()  # the coming week's slot, Monday 09:00
    thursday = f"{monday + timedelta(days=3)}"
    public = {"PAPERBOT_PUBLIC_URL": "http://127.0.0.1:9"}
    for user, lines in [
        ("ada", f"signup 3 {thursday}\nvote 5\nslides {thursday} https://example.org/slides.pdf\ncalendar\n"),
        ("bob", f"vote 5\nvote 2\ngoing {thursday}\ncalendar\n"),
        (None, "delete 32 confirm\narchive 7\n"),
    ]:
        code, out, err = _main(
            monkeypatch, capsys, db, "console", *(["--user", user] if user else []), stdin=lines, **public
        )
        assert code == 0 and ("http://127.0.0.1:9/" in out or user is None), (out, err)
    code, out, err = _main(monkeypatch, capsys, db, "console", "--channel", "C0OTHER", stdin="group start\n")
    assert code == 0 and "Started a reading group" in out, (out, err)
    code, out, err = post_week(
        monkeypatch, tmp_path, capsys, slack, "--at", f"{monday}T09:30", "--channel", CHANNEL, PAPERBOT_DB=str(db)
    )
    assert code == 0 and len(slack.calls_to("chat.postMessage")) == 1, (out, err)
    code, ics, err = _main(monkeypatch, capsys, db, "calendar")
    assert code == 0 and "BEGIN:VEVENT" in ics, err
    store = open_store(db)
    suggestions.add(store, "U1", Found("A suggested paper", url="https://example.org/suggested"), "slack")
    with store.write() as w:
        week = datetime.fromisoformat(thursday).strftime("%G-W%V")
        w.execute(
            "INSERT INTO questions (group_id, week, asked_by, platform, text, asked_at) VALUES (1, ?, 'bob', 'slack', "
            "'Why pipeline parallelism?', '2026-12-01T10:00:00+00:00')",
            [week],
        )
        w.execute("INSERT INTO discord_events (group_id, week, event_id, fingerprint) VALUES (2, ?, '99', 'f')", [week])
        w.execute("INSERT INTO member_names (member, name, asked_at) VALUES ('ada', 'Ada L.', 1.5)")
        w.execute("INSERT INTO event_interest (group_id, week, member) VALUES (2, ?, 'carol')", [week])
    store.close()
    return db


def _sqlite_rows(path: Path) -> dict[str, list]:
    """Every row of every table a paperbot SQLite file holds, FTS5's own shadow tables aside (their
    segments are laid out by the order of writes), and the migrations' names without their times."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    fts = [n for n in names if n in ("paper_search", "paper_titles", "paper_tag_words")]
    shadows = {f"{t}_{s}" for t in fts for s in ("data", "idx", "content", "docsize", "config")}
    rows = {}
    for name in names:
        if name in shadows:
            continue
        sql = (
            f"SELECT name FROM {name}"
            if name == "_sqlite_migrations"
            else f"SELECT {'rowid, ' if name in fts else ''}* FROM {name}"
        )
        rows[name] = sorted(conn.execute(sql).fetchall(), key=repr)
    conn.close()
    return rows


def _file_digest(path: Path) -> str:
    return "".join(
        hashlib.sha256(p.read_bytes()).hexdigest() for p in (path, path.with_name(path.name + "-wal")) if p.exists()
    )


def test_an_install_goes_to_postgresql_and_back_whole_and_the_bot_answers_the_same(
    monkeypatch, capsys, tmp_path, slack, pg_url
):
    db = _history(monkeypatch, capsys, tmp_path, slack)
    before, digest = _sqlite_rows(db), _file_digest(db)
    for table in ("deliveries", "outbox", "votes", "talk_links", "suggestions", "member_secrets", "group_secrets"):
        assert before[table], table
    for table in ("calendar_weeks", "questions", "attendance", "discord_events", "member_names", "event_interest"):
        assert before[table], table
    assert len(before["groups"]) == 2 and before["sqlite_sequence"] == [("papers", 32), ("suggestions", 1)]
    data = {name: rows for name, rows in before.items() if name not in ("_sqlite_migrations", "sqlite_sequence")}

    code, out, err = _main(monkeypatch, capsys, db, "copy", str(db), pg_url)
    assert code == 0 and err == "", err
    lines = out.splitlines()
    rows = sum(len(r) for r in data.values())
    assert lines[-1].startswith(f"Copied {rows:,} rows in {len(data)} tables from {db} to postgresql://"), out
    assert "papers" in out and any(line.split() == ["papers", "31"] for line in lines), out
    assert _file_digest(db) == digest  # FROM only read

    back = tmp_path / "back" / "paperbot.db"
    code, out, err = _main(monkeypatch, capsys, db, "copy", pg_url, str(back))
    assert code == 0 and err == "", err
    assert _sqlite_rows(back) == before

    answers = {}
    for where in (db, pg_url, back):
        asked = "schedule\nshow 3\nshow 5\nsuggestions\nstats\nsearch training\nsearch 数据并行\n"
        code, out, err = _main(monkeypatch, capsys, where, "console", "--channel", CHANNEL, stdin=asked)
        assert code == 0, err
        answers[str(where)] = out
    assert "slides.pdf" in answers[str(db)] and "votes: 2" in answers[str(db)] and "@ada" in answers[str(db)]
    assert answers[str(db)] == answers[str(back)]
    assert answers[str(db)] == answers[pg_url]

    # Numbers are never given twice: #32 was deleted before the copy, so the next paper is #33.
    (tmp_path / "new.yaml").write_text("- title: A paper added after the move\n")
    for where in (pg_url, back):
        code, out, err = _main(monkeypatch, capsys, where, "import", str(tmp_path / "new.yaml"))
        assert code == 0, err
        code, out, err = _main(monkeypatch, capsys, where, "console", stdin="show 33\n")
        assert "#33 A paper added after the move" in out, out


def test_a_used_target_is_refused_and_left_as_it_is(monkeypatch, capsys, tmp_path, pg_url):
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "from.db"
    open_store(source).close()
    used = tmp_path / "used.db"
    open_store(used).close()  # the starter list: 32 papers
    open_store(pg_url).close()
    with psycopg.connect(pg_url) as conn:  # a fresh schema, but for one vote
        conn.execute("DELETE FROM papers WHERE number > 1")
        conn.execute("INSERT INTO votes (paper, member, voted_at) VALUES (1, 'ada', 'now')")
    file_before, pg_before = _sqlite_rows(used), _pg_rows(pg_url)

    code, out, err = _main(monkeypatch, capsys, source, "copy", str(source), str(used))
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert f"paperbot: copy: TO {used} already holds an install (32 papers)" in err
    code, out, err = _main(monkeypatch, capsys, source, "copy", str(source), pg_url)
    assert code == 1 and err.count("\n") == 1 and "already holds an install (1 paper)" in err, err
    assert _sqlite_rows(used) == file_before and _pg_rows(pg_url) == pg_before


def test_a_fresh_schema_is_an_empty_target(monkeypatch, capsys, tmp_path, pg_url):
    monkeypatch.chdir(tmp_path)
    source, empty = tmp_path / "from.db", tmp_path / "empty.db"
    open_store(source).close()
    code, out, err = _main(monkeypatch, capsys, empty, "init", "--empty")
    assert code == 0, err
    open_store(pg_url, seed=None).close()
    for target in (str(empty), pg_url):
        code, out, err = _main(monkeypatch, capsys, source, "copy", str(source), target)
        assert code == 0 and "Copied" in out, err
    assert _sqlite_rows(empty) == _sqlite_rows(source)


def _pg_rows(url: str) -> dict[str, list]:
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
        return {t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}


def test_a_source_that_is_no_paperbot_database_is_refused_and_nothing_is_made(monkeypatch, capsys, tmp_path, pg_url):
    monkeypatch.chdir(tmp_path)
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE things (x)")
    empty_pg = databases.server().new_database()
    target = tmp_path / "to.db"
    for source, says in [
        (text, "is not a SQLite database"),
        (other, "is a SQLite database of another program"),
        (tmp_path / "missing.db", "there is no such file"),
        (empty_pg, "is empty: it is not a paperbot database"),
    ]:
        for to in (str(target), pg_url):
            code, out, err = _main(monkeypatch, capsys, target, "copy", str(source), to)
            assert code == 1 and out == "" and err.count("\n") == 1 and says in err, err
    assert not target.exists() and _pg_rows(pg_url) == {} and _pg_rows(empty_pg) == {}


def test_a_copy_that_fails_half_way_leaves_the_target_as_it_was(monkeypatch, capsys, tmp_path, pg_url):
    """A year that SQLite kept as text (it types loosely) cannot go into PostgreSQL's integer column:
    the transaction that made TO's schema and copied the tables before papers is rolled back whole."""
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "from.db"
    open_store(source).close()
    with sqlite3.connect(source) as conn:
        conn.execute("UPDATE papers SET year = 'soon' WHERE number = 3")
    code, out, err = _main(monkeypatch, capsys, source, "copy", str(source), pg_url)
    assert code == 1 and err.count("\n") == 1, err
    assert "the copy failed and postgresql://" in err and "was left as it was" in err and "soon" in err
    assert _pg_rows(pg_url) == {}


def test_a_table_copy_does_not_know_stops_it_before_it_writes(monkeypatch, capsys, tmp_path, pg_url):
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "from.db"
    open_store(source).close()
    with sqlite3.connect(source) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    for to in (str(tmp_path / "to.db"), pg_url):
        code, out, err = _main(monkeypatch, capsys, source, "copy", str(source), to)
        assert code == 1 and "FROM has a table TO's schema lacks (notes)" in err, err
    assert not (tmp_path / "to.db").exists() and _pg_rows(pg_url) == {}


def test_from_and_to_the_same_file_is_refused(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    open_store(tmp_path / "a.db").close()
    code, out, err = _main(monkeypatch, capsys, "x", "copy", "a.db", str(tmp_path / "a.db"))
    assert code == 1 and "FROM and TO are the same database" in err, err


def test_the_group_channel_is_copied_so_its_settings_survive(monkeypatch, capsys, tmp_path, pg_url):
    """A group started in chat on the copy gets an id of its own, after the copied ones."""
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "from.db"
    code, out, err = _main(monkeypatch, capsys, source, "console", "--channel", "C0OTHER", stdin="group start\n")
    assert code == 0, err
    code, out, err = _main(monkeypatch, capsys, source, "copy", str(source), pg_url)
    assert code == 0, err
    code, out, err = _main(monkeypatch, capsys, pg_url, "console", "--channel", "C0THIRD", stdin="group start\n")
    assert code == 0 and "Started a reading group" in out, err
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT id, channel FROM groups ORDER BY id").fetchall() == [
            (1, None),
            (2, "C0OTHER"),
            (3, "C0THIRD"),
        ]
