"""`paperbot copy --place ID FROM TO`: one place of a hosted install, alone, becomes TO, an install
of its own, from either engine to either; a place FROM does not list is one line and makes nothing;
a copy of the install's own tables says which places' tables stay behind."""

from __future__ import annotations

import io
import json
from pathlib import Path

import psycopg
import pytest

from bot import cli
from bot.catalog.queries import open_store
from bot.places.registry import Places, is_url
from bot.store.engine import shown
from tests.support import databases, postgres
from tests.support.slack_group import group_settings

pytestmark = pytest.mark.skipif(postgres.binaries() is None, reason="PostgreSQL is not installed")

LAB, OTHER = "slack-T0LAB", "slack-T0OTHER"


def _main(monkeypatch, capsys, db, *argv: str, stdin: str = "") -> tuple[int, str, str]:
    """`paperbot ARGV` in this process with the test group's settings on database `db`."""
    for name, value in {**group_settings(Path("."), "http://127.0.0.1:9/api/"), "PAPERBOT_DB": str(db)}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _hosted(monkeypatch, capsys, tmp_path: Path, db: str) -> None:
    """A hosted install at `db`: place LAB with two papers and a group in C0LAB where ada presents
    #1, place OTHER with a paper of its own."""
    house = open_store(db)
    places = Places(house, db if is_url(db) else Path(db))
    places.join(LAB, "slack", "Lab group")
    places.join(OTHER, "slack", "Other lab")
    places.close()
    house.close()
    for place, titles in [(LAB, ["Lab one", "Lab two"]), (OTHER, ["Not the lab's"])]:
        (tmp_path / "papers.yaml").write_text("".join(f"- title: {t}\n" for t in titles))
        code, out, err = _main(monkeypatch, capsys, db, "import", "--place", place, str(tmp_path / "papers.yaml"))
        assert code == 0, err
    for argv, stdin in [([], "group start\n"), (["--user", "ada"], "signup 1 next\n")]:
        code, out, err = _main(
            monkeypatch, capsys, db, "console", "--place", LAB, "--channel", "C0LAB", *argv, stdin=stdin
        )
        assert code == 0 and ("Started" in out or "signed up" in out), (out, err)


def _exported(monkeypatch, capsys, db) -> list[tuple[int, str]]:
    code, out, err = _main(monkeypatch, capsys, db, "export")
    assert code == 0, err
    return [(p["number"], p["title"]) for p in json.loads(out)]


def _tables(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]


@pytest.mark.parametrize(
    ("source", "target"), [("sqlite", "sqlite"), ("sqlite", "postgresql"), ("postgresql", "sqlite")]
)
def test_a_place_copied_alone_becomes_an_install_of_its_own(monkeypatch, capsys, tmp_path, source, target):
    monkeypatch.chdir(tmp_path)
    made = {"sqlite": lambda name: str(tmp_path / name), "postgresql": lambda name: databases.server().new_database()}
    db, to = made[source]("hosted.db"), made[target]("lab.db")
    _hosted(monkeypatch, capsys, tmp_path, db)

    code, out, err = _main(monkeypatch, capsys, db, "copy", "--place", LAB, db, to)
    assert code == 0 and err == "", err
    assert f"tables from {shown(db)} (place {LAB}) to {shown(to)} in " in out.splitlines()[-1], out
    assert ["papers", "2"] in [line.split() for line in out.splitlines()]

    assert _exported(monkeypatch, capsys, to) == [(1, "Lab one"), (2, "Lab two")]  # its own, numbers and all
    code, out, err = _main(monkeypatch, capsys, to, "console", "--channel", "C0LAB", stdin="schedule\n")
    assert code == 0 and "@ada" in out and "Lab one" in out, (out, err)
    code, out, err = _main(monkeypatch, capsys, to, "places")
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["home"] and "C0LAB" in out, out
    assert _exported(monkeypatch, capsys, db) != _exported(monkeypatch, capsys, to)  # FROM's home is not in it


def test_a_place_that_from_does_not_list_is_one_line_and_nothing_is_made(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    db, pg_url = str(tmp_path / "hosted.db"), databases.server().new_database()
    _hosted(monkeypatch, capsys, tmp_path, db)
    for to in (str(tmp_path / "to.db"), pg_url):
        code, out, err = _main(monkeypatch, capsys, db, "copy", "--place", "slack-T0NOPE", db, to)
        assert (
            code == 1
            and out == ""
            and err == (f"paperbot: copy: FROM {db} has no place slack-T0NOPE: `paperbot places` lists them\n")
        )
        code, out, err = _main(monkeypatch, capsys, db, "copy", "--place", "no place", db, to)
        assert code == 1 and err.startswith("paperbot: copy: --place: 'no place' is not a place id"), err
    assert not (tmp_path / "to.db").exists() and _tables(pg_url) == []


def test_a_copy_of_the_installs_own_tables_names_the_places_left_behind(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "hosted.db")
    _hosted(monkeypatch, capsys, tmp_path, db)
    code, out, err = _main(monkeypatch, capsys, db, "copy", db, str(tmp_path / "home.db"))
    assert code == 0 and out.splitlines()[-1].startswith("Copied ") and f"from {db} to " in out, err
    assert err == (
        f"paperbot: note: FROM serves 2 places besides home ({LAB}, {OTHER}), whose tables are not copied "
        "(TO lists them, empty): `paperbot copy --place ID FROM TO` copies one into a database of its own\n"
    )
