"""The test group on Slack: its channel, its signing secret, and its settings (as environment
variables, as `SlackSettings`, and as a real process's environment)."""

from __future__ import annotations

import io
import os
from pathlib import Path

from bot import cli
from bot.slack.settings import SlackSettings
from tests.support.databases import database_for

SECRET = "test-signing-secret"
CHANNEL = "C0PAPERS"


def group_settings(tmp_path: Path, api_url: str) -> dict[str, str]:
    """The test group's settings, as environment variables."""
    return {
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": api_url,
        "PAPERBOT_DB": database_for(tmp_path),
        "PAPERBOT_CHANNEL": CHANNEL,
        "PAPERBOT_TIMEZONE": "Europe/Berlin",
        "PAPERBOT_SCHEDULE": "0 9 * * mon",
        "PAPERBOT_MEETING": "thu 16:00",
        "PAPERBOT_ADMINS": "UADMIN",
        # Look-ups never leave the machine: a test that wants answers points these at a stand-in.
        "PAPERBOT_ARXIV_API": "http://127.0.0.1:9/api/query",
        "PAPERBOT_CROSSREF_API": "http://127.0.0.1:9",
    }


def settings_for(tmp_path: Path, api_url: str = "http://127.0.0.1:9/api/", **env: str) -> SlackSettings:
    values = {**group_settings(tmp_path, api_url), **env}
    return SlackSettings.load({k: v for k, v in values.items() if v is not None}, dotenv=None)


def env_for_process(tmp_path: Path, api_url: str, **extra: str) -> dict[str, str]:
    """Environment for a real `python -m bot` process (no .env is read from tmp_path)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERBOT_"))}
    return {**env, **group_settings(tmp_path, api_url), "PYTHONUNBUFFERED": "1", **extra}


def post_week(monkeypatch, tmp_path: Path, capsys, slack, *argv: str, **env: str) -> tuple[int, str, str]:
    """`paperbot post-week ARGV` in this process, with the test group's environment and `env`:
    its exit code, stdout and stderr."""
    monkeypatch.chdir(tmp_path)  # no .env
    for name, value in {**group_settings(tmp_path, slack.api_url), **env}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code = cli.main(["post-week", *argv])
    out, err = capsys.readouterr()
    return code, out, err
