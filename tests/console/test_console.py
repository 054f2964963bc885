"""The console as an operator uses it: members named as a terminal can, and a new database said once."""

from __future__ import annotations

import io

import pytest

from bot import cli
from bot.catalog import import_files
from bot.console.session import read_member


@pytest.mark.parametrize(
    ("word", "member"),
    [
        ("@ada", "ada"),
        ("ada", "ada"),
        ("U0ADA123", "U0ADA123"),
        ("<@U0ADA123|ada>", "U0ADA123"),  # a mention copied from Slack
        ("<@U0ADA123>", "U0ADA123"),
        ("@", None),
        ("<@>", None),
        ("a b", None),
    ],
)
def test_a_member_is_named_by_id_at_sign_or_a_pasted_mention(word, member):
    assert read_member(word) == member


def _main(monkeypatch, tmp_path, capsys, stdin: str, *argv: str):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(list(argv))
    return (code, *capsys.readouterr())


def test_the_console_acts_as_a_member_written_with_an_at_sign(tmp_path, monkeypatch, capsys):
    code, out, err = _main(monkeypatch, tmp_path, capsys, "signup 7 next\nmine\n", "console", "--user", "@ada")
    assert code == 0, err
    assert "You're signed up" in out
    assert "#7" in out.split("Your coming slots", 1)[1]


def test_init_says_its_new_database_once_and_how_to_start_afresh(tmp_path, monkeypatch, capsys):
    code, out, err = _main(monkeypatch, tmp_path, capsys, "", "init", "--empty")
    assert code == 0 and out.count("new database") == 1 and "new database" not in err, (out, err)
    code, out, err = _main(monkeypatch, tmp_path, capsys, "", "init")
    assert code == 1 and "exists already" in err and "remove the file" in err, err


def test_a_line_of_env_that_cannot_be_read_stops_every_verb(tmp_path, monkeypatch, capsys):
    """Verbs log nothing of their own (only `run` does): a skipped .env line is still said, not ignored."""
    (tmp_path / ".env").write_text("PAPERBOT_TIMEZONE=UTC\nthis is not a line\n")
    code, out, err = _main(monkeypatch, tmp_path, capsys, "", "export")
    assert code == 2 and err == "paperbot: .env: line 2 cannot be read ('this is not a line'): write it as NAME=value\n"


def test_import_names_a_hundred_skipped_rows_and_counts_the_rest(tmp_path, monkeypatch, capsys):
    rows = "\n".join('{"summary": "no title"}' for _ in range(250))
    (tmp_path / "bad.jsonl").write_text(rows + "\n", encoding="utf-8")
    code, out, err = _main(monkeypatch, tmp_path, capsys, "", "import", "bad.jsonl")
    lines = err.splitlines()
    assert sum(line.startswith("skipped: bad.jsonl line ") for line in lines) == import_files.SKIPPED_SHOWN
    assert "skipped: 150 more rows, not named here" in lines
    assert "bad.jsonl: 0 added, 0 updated, 0 unchanged, 250 skipped" in out + err


def test_the_schedule_marks_where_each_month_begins(tmp_path, monkeypatch, capsys):
    """Booked weeks months apart: each month is named where it begins, so the jump shows."""
    from datetime import date, timedelta

    later, much_later = date.today() + timedelta(weeks=9), date.today() + timedelta(weeks=20)
    lines = f"assign @ada 7 {later}\nassign @bo 8 {much_later}\nschedule\n"
    code, out, err = _main(monkeypatch, tmp_path, capsys, lines, "console")
    assert code == 0, err
    shown = out.split("Coming weeks", 1)[1].splitlines()
    months = [i for i, line in enumerate(shown) if line.startswith("  ") and not line.startswith("    ")]
    assert len(months) >= 3  # this month, and the two bookings' months further on
    for i in months:  # each name stands above a week of its month, and names a month that is not the last one's
        name = shown[i].strip()
        assert shown[i + 1].startswith("    ") and name.split()[0][:3] in shown[i + 1], (name, shown[i + 1])
    names = [shown[i].strip() for i in months]
    assert len(set(names)) == len(names)
