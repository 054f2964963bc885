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
