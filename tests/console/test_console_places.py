"""`paperbot console --place ID`: the commands of a terminal on one place's store, its writes kept
there; the install's own console (no --place) never sees them."""

from __future__ import annotations

import io

from bot import cli
from bot.catalog.queries import open_store
from bot.places.registry import Places

LAB = "slack-T0LAB"


def _console(monkeypatch, tmp_path, capsys, stdin: str, *argv: str) -> tuple[int, str, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(["console", *argv])
    return (code, *capsys.readouterr())


def test_the_console_of_a_place_writes_that_place_alone(monkeypatch, tmp_path, capsys):
    house = open_store(tmp_path / "paperbot.db")
    Places(house, tmp_path / "paperbot.db").join(LAB, "slack", "Lab group")
    house.close()
    (tmp_path / "lab.yaml").write_text("- title: The lab's first paper\n")
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    assert cli.main(["import", "--place", LAB, str(tmp_path / "lab.yaml")]) == 0

    code, out, err = _console(
        monkeypatch, tmp_path, capsys, "group start\nvote 1\nshow 1\n", "--place", LAB, "--channel", "C0LAB"
    )
    assert code == 0 and "Started a reading group" in out and "The lab's first paper" in out, (out, err)
    assert "votes: 1" in out, out

    code, out, err = _console(monkeypatch, tmp_path, capsys, "show 1\n", "--channel", "C0LAB")
    assert code == 0 and "The lab's first paper" not in out and "votes: 1" not in out, out
    code, out, err = _console(monkeypatch, tmp_path, capsys, "group\n", "--place", LAB, "--channel", "C0LAB")
    assert code == 0 and "C0LAB" in out, out

    code, out, err = _console(monkeypatch, tmp_path, capsys, "show 1\n", "--place", "slack-T0NOPE")
    assert (
        code == 1
        and out == ""
        and err == "paperbot: --place: there is no place slack-T0NOPE: `paperbot places` lists them\n"
    )
