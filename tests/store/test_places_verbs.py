"""The operator's verbs on a hosted install's places, on real databases (either engine): `paperbot
places` lists them, `--place ID` reaches one and no other, an unknown place is one line and makes
nothing, `forget` deletes one for good and never `home`, and a database from before places is all
of it `home`."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot import cli
from bot.catalog.queries import open_store
from bot.places.registry import Places, place_file
from bot.store.postgres import schema_name
from tests.support import databases
from tests.support.slack_group import group_settings

LAB, CLUB = "slack-T0LAB", "discord-1234567"
OLD_DB = Path(__file__).parents[1] / "data" / "paperbot-16cc2ce.db"


def _main(monkeypatch, capsys, tmp_path: Path, *argv: str, stdin: str = "", **env: str) -> tuple[int, str, str]:
    """`paperbot ARGV` in this process with the test group's settings on this test's database."""
    monkeypatch.chdir(tmp_path)  # no .env
    for name, value in {**group_settings(tmp_path, "http://127.0.0.1:9/api/"), **env}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _hosted(tmp_path: Path) -> str:
    """The install's database (its starter list at home) with two places: a Slack workspace, and a
    Discord server that removed the bot."""
    database = databases.database_for(tmp_path)
    house = open_store(database)
    places = Places(house, database)
    places.join(LAB, "slack", "Lab group")
    places.join(CLUB, "discord", "Reading club")
    places.leave(CLUB)
    places.close()
    house.close()
    return database


def _papers(tmp_path: Path, *titles: str) -> str:
    path = tmp_path / "papers.yaml"
    path.write_text("".join(f"- title: {t}\n" for t in titles))
    return str(path)


def _exported(monkeypatch, capsys, tmp_path, *place: str, **env: str) -> list[tuple[int, str]]:
    code, out, err = _main(monkeypatch, capsys, tmp_path, "export", *place, **env)
    assert code == 0, err
    return [(p["number"], p["title"]) for p in json.loads(out)]


def _made(database: str) -> set[str]:
    """The places' stores that exist: SQLite files beside the database, or PostgreSQL schemas."""
    if databases.ON_POSTGRES:
        with _pg(database) as conn:
            rows = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'place_%'").fetchall()
        return {r[0] for r in rows}
    folder = place_file(Path(database), LAB).parent
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def _pg(url: str):
    import psycopg  # noqa: PLC0415 - only on PostgreSQL

    return psycopg.connect(url, autocommit=True)


def test_places_lists_home_and_each_place_with_its_groups_papers_and_last_activity(monkeypatch, capsys, tmp_path):
    _hosted(tmp_path)
    code, out, err = _main(monkeypatch, capsys, tmp_path, "import", "--place", LAB, _papers(tmp_path, "Lab paper"))
    assert code == 0 and "1 added" in out, err
    code, out, err = _main(
        monkeypatch, capsys, tmp_path, "console", "--place", LAB, "--channel", "C0LAB", stdin="group start\n"
    )
    assert code == 0 and "Started a reading group" in out, err
    home_papers = len(_exported(monkeypatch, capsys, tmp_path))

    code, out, err = _main(monkeypatch, capsys, tmp_path, "places")
    assert code == 0 and err == "", err
    header, *lines = out.splitlines()
    assert header.split() == ["ID", "PLATFORM", "STATE", "PAPERS", "GROUPS", "LAST_ACTIVITY", "CHANNELS", "NAME"]
    rows = {line.split(None, 7)[0]: line.split(None, 7) for line in lines}  # a script splits off the name
    assert [line.split()[0] for line in lines][0] == "home" and rows.keys() == {
        "home",
        LAB,
        CLUB,
    }  # then as they joined
    home, lab, club = rows["home"], rows[LAB], rows[CLUB]
    assert home[1:5] == ["slack", "active", str(home_papers), "1"] and home[6:] == ["C0PAPERS", "this install's own"]
    assert lab[1:5] == ["slack", "active", "1", "1"] and lab[6:] == ["C0LAB", "Lab group"]
    assert club[1:] == ["discord", "gone", "0", "0", "-", "-", "Reading club"]
    for row in (home, lab):  # the starter list, the import and the group start: each place's latest activity
        assert datetime.now(UTC) - datetime.strptime(row[5], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) < timedelta(
            minutes=5
        ), row


def test_export_import_and_console_reach_one_place_and_no_other(monkeypatch, capsys, tmp_path):
    _hosted(tmp_path)
    home = _exported(monkeypatch, capsys, tmp_path)
    assert len(home) > 1  # the starter list stays at home
    code, out, err = _main(
        monkeypatch, capsys, tmp_path, "import", "--place", LAB, _papers(tmp_path, "Only in the lab")
    )
    assert code == 0 and out.endswith("1 added, 0 updated, 0 unchanged, 0 skipped\n"), (out, err)

    assert _exported(monkeypatch, capsys, tmp_path, "--place", LAB) == [(1, "Only in the lab")]  # numbered from 1
    assert _exported(monkeypatch, capsys, tmp_path) == home
    assert _exported(monkeypatch, capsys, tmp_path, "--place", "home") == home
    assert _exported(monkeypatch, capsys, tmp_path, "--place", CLUB) == []

    code, out, err = _main(monkeypatch, capsys, tmp_path, "console", "--place", LAB, stdin="show 1\nsearch lab\n")
    assert code == 0 and "Only in the lab" in out and home[0][1] not in out, (out, err)
    code, out, err = _main(monkeypatch, capsys, tmp_path, "console", stdin="search only in the lab\n")
    assert code == 0 and "Only in the lab" not in out, out


@pytest.mark.parametrize(
    "verb",
    [["export"], ["import", "papers.yaml"], ["console"], ["post-week", "--dry-run"], ["remind", "--dry-run"]],
)
def test_an_unknown_place_is_one_line_and_makes_nothing(monkeypatch, capsys, tmp_path, verb):
    database = _hosted(tmp_path)
    _papers(tmp_path, "A paper")
    made = _made(database)
    for place, said in [
        ("slack-T0NOPE", "paperbot: --place: there is no place slack-T0NOPE: `paperbot places` lists them\n"),
        ("../../etc", "paperbot: --place: '../../etc' is not a place id (home, slack-T…, slack-E… or discord-…): "),
        ("slack-T0NOPE\n", "paperbot: --place: 'slack-T0NOPE\\n' is not a place id"),  # a pasted line's end
    ]:
        code, out, err = _main(monkeypatch, capsys, tmp_path, verb[0], "--place", place, *verb[1:], stdin="list\n")
        assert code == 1 and out == "" and err.startswith(said) and err.count("\n") == 1, (out, err)
    assert _made(database) == made


@pytest.mark.sqlite_only
def test_a_place_of_a_database_that_is_not_there_makes_no_database(monkeypatch, capsys, tmp_path):
    code, out, err = _main(monkeypatch, capsys, tmp_path, "export", "--place", LAB)
    assert code == 1 and err == (
        f"paperbot: --place: there is no place {LAB}: PAPERBOT_DB {tmp_path / 'paperbot.db'} does not exist\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_forget_asks_then_deletes_a_place_and_its_tokens_for_good(monkeypatch, capsys, tmp_path):
    database = _hosted(tmp_path)
    _main(monkeypatch, capsys, tmp_path, "import", "--place", LAB, _papers(tmp_path, "One", "Two"))
    _main(monkeypatch, capsys, tmp_path, "console", "--place", LAB, "--channel", "C0LAB", stdin="group start\n")
    house = open_store(database)
    with house.write() as db:  # the install that made the place keeps its (sealed) token
        db.execute(
            "INSERT INTO slack_installs (place, team_id, bot_token, installed_at) VALUES (?, 'T0LAB', 'sealed', 'x')",
            [LAB],
        )
    house.close()
    lab = schema_name(LAB) if databases.ON_POSTGRES else f"{LAB}.db"
    assert lab in _made(database)

    code, out, err = _main(monkeypatch, capsys, tmp_path, "forget", LAB, stdin="n\n")
    assert code == 1 and out == "", err
    assert err == (
        f"Delete place {LAB} (Lab group): 2 papers and 1 group, and everything else of its own, for good? [y/N] "
        f"paperbot: forget: {LAB} is kept: nothing was deleted\n"
    )
    assert _exported(monkeypatch, capsys, tmp_path, "--place", LAB) == [(1, "One"), (2, "Two")]

    code, out, err = _main(monkeypatch, capsys, tmp_path, "forget", LAB, stdin="yes\n")
    assert code == 0 and out == f"Forgot {LAB}: deleted 2 papers and 1 group, and everything else of its own.\n"
    assert lab not in _made(database)
    house = open_store(database)
    assert house.db.execute("SELECT count(*) FROM slack_installs").fetchone()[0] == 0
    assert [r[0] for r in house.db.execute("SELECT id FROM places").fetchall()] == [CLUB]
    house.close()
    code, out, err = _main(monkeypatch, capsys, tmp_path, "places")
    assert LAB not in out

    code, out, err = _main(monkeypatch, capsys, tmp_path, "forget", CLUB, "--yes")
    assert code == 0 and out == f"Forgot {CLUB}: deleted 0 papers and 0 groups, and everything else of its own.\n"
    assert err == ""  # --yes: nothing asked


def test_forget_refuses_home_and_an_unknown_place_in_one_line(monkeypatch, capsys, tmp_path):
    _hosted(tmp_path)
    home = _exported(monkeypatch, capsys, tmp_path)
    for argv, said in [
        (["forget", "home", "--yes"], "paperbot: forget: home is the install's own place, its database itself, "),
        (["forget", LAB + "X", "--yes"], f"paperbot: forget: there is no place {LAB}X: `paperbot places` lists them"),
        (["forget", "nope", "--yes"], "paperbot: forget: 'nope' is not a place id"),
    ]:
        code, out, err = _main(monkeypatch, capsys, tmp_path, *argv)
        assert code == 1 and out == "" and err.startswith(said) and err.count("\n") == 1, err
    assert _exported(monkeypatch, capsys, tmp_path) == home


@pytest.mark.sqlite_only
def test_a_database_from_before_places_is_all_of_it_home(monkeypatch, capsys, tmp_path):
    """tests/data/paperbot-16cc2ce.db (tests/data/make_old_db.py), opened by this paperbot: `places`
    lists home alone with its group, and every paper, sign-up and post is still there."""
    db = tmp_path / "paperbot.db"
    shutil.copyfile(OLD_DB, db)
    old = sqlite3.connect(db)
    papers = old.execute("SELECT number, title FROM papers ORDER BY number").fetchall()
    slots = old.execute("SELECT week, kind, presenter, paper FROM slots ORDER BY week").fetchall()
    sent = old.execute("SELECT kind, dest, key, state FROM deliveries ORDER BY kind").fetchall()
    old.close()
    assert len(papers) == 5 and len(slots) == 4 and len(sent) == 2

    code, out, err = _main(monkeypatch, capsys, tmp_path, "places", PAPERBOT_CHANNEL="C0OLD")
    assert code == 0, err
    header, home = out.splitlines()
    assert home.split(None, 7)[:5] == ["home", "slack", "active", "5", "1"]
    assert home.split(None, 7)[5].startswith("2026-12-0") and home.split(None, 7)[6:] == ["C0OLD", "this install's own"]

    assert _exported(monkeypatch, capsys, tmp_path, PAPERBOT_CHANNEL="C0OLD") == papers
    new = sqlite3.connect(db)
    assert new.execute("SELECT week, kind, presenter, paper FROM slots ORDER BY week").fetchall() == slots
    assert new.execute("SELECT kind, dest, key, state FROM deliveries ORDER BY kind").fetchall() == sent
    assert new.execute("SELECT count(*) FROM places").fetchone()[0] == 0
    new.close()
    assert not place_file(db, LAB).parent.exists()  # no place was made


@pytest.mark.sqlite_only
def test_forget_deletes_a_place_whose_file_is_broken(monkeypatch, capsys, tmp_path):
    database = _hosted(tmp_path)
    place_file(Path(database), LAB).write_bytes(b"not a database" * 100)  # a disk's fault, a careless copy
    code, out, err = _main(monkeypatch, capsys, tmp_path, "places")  # listed, and every other place with it
    assert code == 0 and CLUB in out, err
    assert [line.split()[:5] for line in out.splitlines() if line.startswith(LAB)] == [
        [LAB, "slack", "active", "?", "?"]
    ]
    code, out, err = _main(monkeypatch, capsys, tmp_path, "forget", LAB, "--yes")
    assert (code, err) == (0, ""), err
    assert out == f"Forgot {LAB}: deleted its tables, which could not be read, and everything else of its own.\n"
    assert not place_file(Path(database), LAB).exists()
    code, out, err = _main(monkeypatch, capsys, tmp_path, "places")
    assert code == 0 and LAB not in out, err
