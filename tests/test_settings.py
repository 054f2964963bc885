"""Settings: from the environment and .env (the environment wins), every mistake caught at start."""

from __future__ import annotations

import os

import pytest

from bot.calendar import Meeting
from bot.settings import SettingError
from bot.slack.settings import SETTINGS, SlackSettings


def test_defaults_are_the_contracts():
    s = SlackSettings.load({}, dotenv=None)
    assert s.api_url == "https://slack.com/api/"
    assert s.port == 3000
    assert str(s.db_path) == "data/paperbot.db"
    assert s.schedule.expr == "0 9 * * mon"
    assert s.timezone.key == "UTC"
    assert s.meeting == Meeting(0, s.meeting.at) and s.meeting.at.hour == 9  # the post's day and time
    assert s.remind_days == 2 and s.admins == frozenset() and s.focus_tag is None and not s.socket_mode


def test_dotenv_is_read_and_the_environment_wins(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text('PAPERBOT_TIMEZONE="Asia/Shanghai"\nPORT=4000\n# a comment\nexport PAPERBOT_ADMINS=U1,U2\n')
    s = SlackSettings.load({"PORT": "5000"}, dotenv=env_file)
    assert s.timezone.key == "Asia/Shanghai" and s.port == 5000 and s.admins == {"U1", "U2"}


def test_a_database_path_under_home_means_home(tmp_path):
    from pathlib import Path

    assert SlackSettings.load({"PAPERBOT_DB": "~/reading/paperbot.db"}, dotenv=None).db_path == (
        Path.home() / "reading" / "paperbot.db"
    )


def test_blank_values_mean_default(tmp_path):
    # .env.example copied as it is must work: its blanks are "not set".
    s = SlackSettings.load({"SLACK_APP_TOKEN": "", "PAPERBOT_MEETING": " ", "PAPERBOT_FOCUS_TAG": ""}, dotenv=None)
    assert s.app_token is None and s.focus_tag is None


@pytest.mark.parametrize(
    "name, value, words",
    [
        ("SLACK_BOT_TOKEN", "xoxp-user-token", "xoxb-"),
        ("SLACK_APP_TOKEN", "xoxb-wrong", "xapp-"),
        ("SLACK_API_URL", "slack.com/api", "http"),
        ("PORT", "abc", "whole number"),
        ("PORT", "70000", "between"),
        ("PAPERBOT_CHANNEL", "#papers", "channel ID"),
        ("PAPERBOT_SCHEDULE", "every monday", "5 fields"),
        ("PAPERBOT_SCHEDULE", "0 25 * * mon", "valid crontab"),
        ("PAPERBOT_TIMEZONE", "Mars/Base", "unknown time zone"),
        ("PAPERBOT_TIMEZONE", "../etc/passwd", "unknown time zone"),
        ("PAPERBOT_TIMEZONE", "localtime", "unknown time zone"),
        ("PAPERBOT_TIMEZONE", "Factory", "unknown time zone"),
        ("PAPERBOT_MEETING", "thursday afternoon", "weekday and a time"),
        ("PAPERBOT_REMIND_DAYS", "two", "whole number"),
        ("PAPERBOT_REMIND_DAYS", "0", "between 1 and 14"),
        ("PAPERBOT_ADMINS", "U1,@ada", "not a Slack user ID"),
        ("PAPERBOT_FOCUS_TAG", "###", "not a tag"),
    ],
)
def test_a_malformed_setting_is_one_line_naming_it(name, value, words):
    with pytest.raises(SettingError) as err:
        SlackSettings.load({name: value}, dotenv=None)
    message = str(err.value)
    assert message.startswith(f"{name}: ") and words in message and "\n" not in message


def test_require_names_the_missing_setting():
    s = SlackSettings.load({}, dotenv=None)
    with pytest.raises(SettingError, match="^SLACK_BOT_TOKEN: is not set"):
        s.require("SLACK_BOT_TOKEN")
    with pytest.raises(SettingError, match="^PAPERBOT_CHANNEL: is not set"):
        s.require("PAPERBOT_CHANNEL")


def test_focus_tag_is_folded():
    assert SlackSettings.load({"PAPERBOT_FOCUS_TAG": "#Parallelism_DP"}, dotenv=None).focus_tag == "parallelism-dp"


def test_env_example_lists_every_setting_and_nothing_else():
    from tests.support.repo import ROOT

    names = [
        line.split("=", 1)[0].strip()
        for line in (ROOT / ".env.example").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    # PAPERBOT_DB is there commented out: a value in .env would take the Docker image's database off its volume.
    assert sorted(names) == sorted(set(SETTINGS) - {"PAPERBOT_DB"})
    # ...and copying it unchanged gives a valid configuration, with the database at its default.
    loaded = SlackSettings.load({}, dotenv=ROOT / ".env.example")
    assert str(loaded.db_path) == "data/paperbot.db"


@pytest.mark.parametrize(
    "dotenv, words",
    [
        (
            "A=1\n\nPAPERBOT_TIMEZOME=Asia/Shanghai\n",
            "line 3: PAPERBOT_TIMEZOME is not a paperbot setting (did you mean PAPERBOT_TIMEZONE?)",
        ),
        ("PAPERBOT_TIMEZONE Asia/Shanghai\n", "line 1 cannot be read ('PAPERBOT_TIMEZONE Asia/Shanghai')"),
        ('PAPERBOT_TIMEZONE="Asia/Shanghai\nPORT=3000\n', "line 1 cannot be read"),
        (
            "paperbot_timezone=Asia/Shanghai\n",
            "line 1: paperbot_timezone is not a paperbot setting (did you mean PAPERBOT_TIMEZONE?)",
        ),
        (
            "PAPERBOT-CHANNEL=C0PAPERS\n",
            "line 1: PAPERBOT-CHANNEL is not a paperbot setting (did you mean PAPERBOT_CHANNEL?)",
        ),
        ("PAPERBOT_TIMEZONE\n", "line 1: PAPERBOT_TIMEZONE has no '=': write PAPERBOT_TIMEZONE=value"),
        # Slack's names too: each would leave the bot talking to slack.com, or on port 3000.
        (
            "SLACK_API_ULR=http://127.0.0.1:9/api/\n",
            "line 1: SLACK_API_ULR is not a paperbot setting (did you mean SLACK_API_URL?)",
        ),
        ("SLACK_BOT_TOKN=xoxb-1\n", "line 1: SLACK_BOT_TOKN is not a paperbot setting (did you mean SLACK_BOT_TOKEN?)"),
        ("port=8080\n", "line 1: port is not a paperbot setting (did you mean PORT?)"),
    ],
)
def test_a_dotenv_line_that_would_be_ignored_stops_the_start(tmp_path, dotenv, words):
    """Left as it is, each would run the bot in UTC without a word."""
    path = tmp_path / ".env"
    path.write_text(dotenv, encoding="utf-8")
    with pytest.raises(SettingError) as e:
        SlackSettings.load({}, dotenv=path)
    assert str(e.value) == f"{path}: {words}" or str(e.value).startswith(f"{path}: {words}")


def test_a_dotenv_may_hold_other_tools_names(tmp_path):
    path = tmp_path / ".env"
    path.write_text(
        "SLACK_CLIENT_ID=123\nSLACK_CLIENT_SECRET=s\nSLACK_USER_TOKEN=xoxp-1\nSLACK_APP_ID=A1\nDATABASE_URL=x\n"
        "HOST=0.0.0.0\nexport PAPERBOT_TIMEZONE=Asia/Shanghai\nPAPERBOT_HOSTED=false\n",
        encoding="utf-8",
    )
    # SLACK_CLIENT_ID is paperbot's too since hosted installs: PAPERBOT_HOSTED=false keeps one workspace.
    loaded = SlackSettings.load({}, dotenv=path)
    assert str(loaded.timezone) == "Asia/Shanghai" and not loaded.installs


@pytest.mark.parametrize("argv, verbose", [(["run", "-v"], True), (["-v", "run"], True), (["run"], False)])
def test_v_goes_before_or_after_the_verb(argv, verbose):
    """A failure says 'run with -v for details', and people put it after the verb."""
    from bot.cli import parser

    assert parser().parse_args(argv).verbose is verbose


def test_a_dotenv_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / ".env"
    path.write_bytes("PAPERBOT_TIMEZONE=Europe/Zürich\n".encode("latin-1"))
    with pytest.raises(SettingError, match=r"\.env: is not UTF-8 text \(byte 26\): save it as UTF-8"):
        SlackSettings.load({}, dotenv=path)


def test_a_missing_signing_secret_names_socket_mode_too():
    """The manifest sets up Socket Mode: `run` with the bot token alone names both ways in."""
    s = SlackSettings.load({"SLACK_BOT_TOKEN": "xoxb-1"}, dotenv=None)
    with pytest.raises(SettingError) as err:
        s.require("SLACK_SIGNING_SECRET")
    line = str(err.value)
    assert "SLACK_APP_TOKEN" in line and "Socket Mode" in line and "\n" not in line


def test_a_missing_token_says_where_slack_shows_it():
    with pytest.raises(SettingError, match="api.slack.com/apps → your app → OAuth & Permissions"):
        SlackSettings.load({}, dotenv=None).require("SLACK_BOT_TOKEN")


def test_the_groups_own_settings_know_no_platform():
    from bot import settings as core

    s = core.Settings.load({"PAPERBOT_ADMINS": "ada,U1", "PAPERBOT_CHANNEL": "papers"}, dotenv=None)
    assert s.admins == {"ada", "U1"} and s.channel == "papers"
    assert not any(name.startswith("SLACK") for name in core.SETTINGS)
    assert set(core.SETTINGS) < set(SETTINGS)


def test_run_with_no_token_at_all_names_both_ways_in_one_line(tmp_path, monkeypatch, capsys):
    from bot import cli

    for name in [n for n in os.environ if n.startswith(("PAPERBOT_", "SLACK_", "DISCORD_"))]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no .env
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    assert cli.main(["run"]) != 0
    err = capsys.readouterr().err
    (line,) = err.strip().splitlines()
    assert line.startswith("paperbot: SLACK_BOT_TOKEN or DISCORD_TOKEN: neither is set"), line
    assert "api.slack.com/apps" in line and "discord.com/developers/applications" in line


def test_every_bad_setting_is_named_at_once_one_line_each():
    bad = {"PAPERBOT_TIMEZONE": "Mars/Base", "PAPERBOT_REMIND_DAYS": "0", "PORT": "abc", "PAPERBOT_MEETING": "soon"}
    with pytest.raises(SettingError) as err:
        SlackSettings.load(bad, dotenv=None)
    lines = str(err.value).splitlines()
    assert sorted(line.split(":")[0] for line in lines) == sorted(bad), lines
    assert any("unknown time zone" in line for line in lines) and any("between 1 and 14" in line for line in lines)


def test_run_prints_every_bad_setting_on_a_line_of_its_own(monkeypatch, capsys, tmp_path):
    from bot import cli

    monkeypatch.chdir(tmp_path)  # no .env
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("PAPERBOT_SCHEDULE", "0 25 * * mon")
    monkeypatch.setenv("PAPERBOT_ROTATION", "random")
    assert cli.main(["run"]) == cli.EXIT_USAGE
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(":")[:2] for line in lines] == [
        ["paperbot", " PAPERBOT_SCHEDULE"],
        ["paperbot", " PAPERBOT_ROTATION"],
    ]


def test_a_schedule_that_announces_no_meeting_is_refused_in_one_line(monkeypatch):
    """`0 9 29 2 *` fires on 29 February only: at the start of December 2026 none of the coming year's meetings."""
    from datetime import datetime

    import bot.settings

    class December(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2026, 12, 4, 12, 0, tzinfo=tz)

    monkeypatch.setattr(bot.settings, "datetime", December)
    with pytest.raises(SettingError) as err:
        SlackSettings.load({"PAPERBOT_SCHEDULE": "0 9 29 2 *", "PAPERBOT_MEETING": "thu 16:00"}, dotenv=None)
    assert str(err.value).startswith("PAPERBOT_SCHEDULE: ") and "\n" not in str(err.value)
    assert "announces none of the next 53 meetings" in str(err.value)
