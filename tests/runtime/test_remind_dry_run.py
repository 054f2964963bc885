"""`paperbot remind --dry-run` names the reminders due at --at and sends nothing."""

from __future__ import annotations

import io

import pytest

from bot import cli
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL, group_settings
from tests.support.slack_standin import SlackStandin


@pytest.fixture
def slack():
    with SlackStandin(channels={CHANNEL}, users={"UADMIN": {}, "U1": {}}) as standin:
        yield standin


def remind(monkeypatch, tmp_path, capsys, slack, *argv) -> tuple[int, str, str]:
    monkeypatch.chdir(tmp_path)  # no .env
    for name, value in group_settings(tmp_path, slack.api_url).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code = cli.main(["remind", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_remind_dry_run_names_what_is_due_and_sends_nothing(slack, make_harness, monkeypatch, tmp_path, capsys):
    h = make_harness(Clock(at("2026-12-03 12:00")))
    assert "signed up" in h.command("signup 3 2026-12-10", user="U1")["text"]
    due = ("--at", "2026-12-08T16:30")  # two days before Thursday's meeting, at its time of day
    code, out, err = remind(monkeypatch, tmp_path, capsys, slack, "--dry-run", *due)
    assert code == 0, err
    assert "Would remind U1 about #3" in out and "(2026-W50)" in out and "nothing was sent" in out, out
    assert slack.messages("DU1") == []
    code, out, err = remind(monkeypatch, tmp_path, capsys, slack, "--dry-run", "--at", "2026-12-07T12:00")
    assert code == 0 and out.strip() == "No reminders are due.", out
    code, out, err = remind(monkeypatch, tmp_path, capsys, slack, *due)  # sent for real, then no longer due
    assert code == 0 and "Reminded U1" in out, err
    assert len(slack.messages("DU1")) == 1
    code, out, err = remind(monkeypatch, tmp_path, capsys, slack, "--dry-run", *due)
    assert out.strip() == "No reminders are due.", out
