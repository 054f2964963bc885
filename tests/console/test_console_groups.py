"""Several reading groups from the console: announced in each group's channel, each group on the
platform its channel's id is of, and a console that says which group it acted on."""

from __future__ import annotations

import io
import json
import sqlite3

import pytest

from bot import cli
from bot.catalog.queries import open_store
from bot.schedule import groups

DISCORD_CHANNEL = "123456789012345678"


@pytest.fixture
def console(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    for name in ("PAPERBOT_CHANNEL", "PAPERBOT_ADMINS", "SLACK_BOT_TOKEN", "DISCORD_BOT_TOKEN", "PAPERBOT_TIMEZONE"):
        monkeypatch.delenv(name, raising=False)

    def run(typed: str, *argv: str, channel: str | None = None):
        if channel is None:
            monkeypatch.delenv("PAPERBOT_CHANNEL", raising=False)
        else:
            monkeypatch.setenv("PAPERBOT_CHANNEL", channel)
        monkeypatch.setattr("sys.stdin", io.StringIO(typed))
        code = cli.main(["console", *argv])
        return (code, *capsys.readouterr())

    run.db = tmp_path / "paperbot.db"
    return run


def _outbox(db) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [json.loads(p)["channel"] for (p,) in conn.execute("SELECT payload FROM outbox ORDER BY id")]


def test_a_group_started_in_this_session_has_its_changes_queued_for_its_channel(console):
    typed = "group start\ngroup set timezone Europe/Zurich\nsignup 3\n"
    code, out, err = console(typed, "--channel", "C0X")
    assert code == 0, err
    assert "(to the channel, sent by paperbot run: 📅 @console will present #3" in out, out
    assert _outbox(console.db) == ["C0X", "C0X", "C0X"]  # the start, the setting and the sign-up


def test_a_group_started_from_the_console_is_on_its_channels_platform(console):
    assert console("group start\n", "--channel", "C0SLACK")[0] == 0
    assert console("group start\n", "--channel", DISCORD_CHANNEL)[0] == 0
    store = open_store(console.db)
    env = groups.Group(groups.ENV, None, groups.chat_groups(store)[0].calendar)  # no PAPERBOT_CHANNEL
    assert [(g.channel, g.platform) for g in groups.chat_groups(store)] == [
        ("C0SLACK", "slack"),
        (DISCORD_CHANNEL, "discord"),
    ]
    assert [g.channel for g in groups.posting(store, env, "Discord")] == [DISCORD_CHANNEL]
    assert [g.channel for g in groups.posting(store, env, "Slack")] == ["C0SLACK"]


def test_a_channel_of_no_platforms_form_is_refused_in_one_line(console):
    code, out, err = console("group start\n", "--channel", "nowhere")
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and "--channel: 'nowhere' is no platform's channel ID" in err, err
    assert groups.chat_groups(open_store(console.db)) == []


def test_with_several_groups_the_console_says_how_to_type_in_a_groups_channel(console):
    assert console("group start\n", "--channel", "C0SECOND", channel="C0FIRST")[0] == 0
    code, out, err = console("schedule\n", channel="C0FIRST")
    assert "nothing was done" in out and "`paperbot console --channel C0FIRST`" in out, out


def test_with_several_groups_the_console_names_the_group_it_acted_on(console):
    for channel in ("C0FIRST", "C0SECOND"):
        assert console("group start\n", "--channel", channel)[0] == 0
    assert console("group stop\n", "--channel", "C0FIRST")[0] == 0
    code, out, err = console("schedule\n")
    assert code == 0 and out.startswith("in #C0SECOND:\n"), out


def test_the_group_without_a_channel_is_described_in_one_bracket(console):
    code, out, err = console("group\n")
    first = out.splitlines()[0]
    assert first.startswith("Reading group (settings from the environment; no channel yet"), first
    assert first.count("(") == 1, first


BAD_ZONES = ["Europe", "America/Argentina", "zone.tab", "Europe/Berlin/", "../zoneinfo/UTC", "x" * 300, "Z" * 5000]


@pytest.mark.parametrize("zone", BAD_ZONES)
def test_a_zone_that_is_no_zone_is_refused_in_one_line_naming_it(console, zone):
    """`group set timezone Europe` (a folder of the zone database) or a long name gave "Something
    went wrong" and a traceback: one line naming the zone, and nothing changes."""
    code, out, err = console(f"group start\ngroup set timezone {zone}\ngroup\n", "--channel", "C0X")
    assert code == 0, err
    said = [line for line in out.splitlines() if line.startswith("✗")]
    assert len(said) == 1 and said[0].startswith(f"✗ timezone: {'unknown time zone ' if len(zone) < 200 else ''}"), said
    assert repr(zone[:40])[:-1] in said[0] and said[0].endswith("Nothing was changed.") and len(said[0]) < 300, said
    assert "went wrong" not in out + err and "Traceback" not in err, out + err
    with sqlite3.connect(console.db) as db:
        assert db.execute("SELECT timezone FROM groups WHERE channel = 'C0X'").fetchone() == ("UTC",)


@pytest.mark.parametrize("setting", ["schedule", "meeting", "remind-days", "meeting-minutes", "rotation", "admins"])
def test_a_huge_setting_value_is_refused_in_one_line(console, setting):
    code, out, err = console(f"group start\ngroup set {setting} {'9' * 5000}\n", "--channel", "C0X")
    assert code == 0 and "went wrong" not in out + err and "Traceback" not in err, out + err
    said = [line for line in out.splitlines() if line.startswith("✗")]
    assert len(said) == 1 and len(said[0]) < 400, said


@pytest.mark.parametrize("zone", BAD_ZONES)
def test_a_paperbot_timezone_that_is_no_zone_stops_the_start_in_one_line(console, monkeypatch, zone):
    monkeypatch.setenv("PAPERBOT_TIMEZONE", zone)
    code, out, err = console("", "--channel", "C0X")
    shown = zone[:60] + ("…" if len(zone) > 60 else "")
    assert code != 0 and f"PAPERBOT_TIMEZONE: unknown time zone {shown!r}" in err, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
