"""`post-week --place ID` and `remind --place ID` send to that place alone, with its own token: a Slack
workspace's, which its install keeps sealed with PAPERBOT_SECRET_KEY, or the Discord application's
in the place's server; a place that cannot be reached is one line and sends nothing."""

from __future__ import annotations

import io
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from slack_sdk.oauth.installation_store import Bot

from bot import cli
from bot.catalog.queries import open_store
from bot.places.registry import Places
from bot.places.sealing import Seal
from bot.slack.installs import SlackInstalls
from tests.support import discord_standin
from tests.support.databases import database_for
from tests.support.discord_standin import DiscordStandin
from tests.support.slack_group import CHANNEL, group_settings
from tests.support.slack_standin import SlackStandin

KEY = Fernet.generate_key().decode()
LAB, OTHER, CLUB = "slack-T0LAB", "slack-T0OTHER", "discord-20000000000000001"
CLUB_CHANNEL = "30000000000000001"


@pytest.fixture
def slack():
    with SlackStandin(channels={CHANNEL, "C0LAB", "C0OTHER"}, users={"U1": {}, "U2": {}}) as standin:
        yield standin


def _main(monkeypatch, capsys, tmp_path: Path, slack, *argv: str, stdin: str = "", **env: str) -> tuple[int, str, str]:
    """`paperbot ARGV` in this process: the install's own workspace's settings (home), its key."""
    monkeypatch.chdir(tmp_path)  # no .env
    for name, value in {**group_settings(tmp_path, slack.api_url), "PAPERBOT_SECRET_KEY": KEY, **env}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _installed(tmp_path: Path, *workspaces: tuple[str, str, str]) -> None:
    """Each (team, name, token) installed the app through Slack's flow: a place with its token."""
    database = database_for(tmp_path)
    house = open_store(database)
    places = Places(house, database)
    installs = SlackInstalls(places, Seal(KEY))
    for team, name, token in workspaces:
        bot = Bot(
            team_id=team, team_name=name, bot_token=token, bot_id="B1", bot_user_id="UBOT", installed_at=time.time()
        )
        installs.save_bot(bot)
    places.close()
    house.close()


def _monday() -> date:
    """The coming week's Monday: a group a place starts in chat posts and meets then at 09:00 UTC."""
    today = datetime.now(UTC).date()
    return today + timedelta(days=7 - today.weekday())


def _group(monkeypatch, capsys, tmp_path, slack, place: str, channel: str, title: str, **env: str) -> None:
    """A paper and a group of `place`'s own, in `channel`, where U1 presents it this coming week."""
    (tmp_path / "papers.yaml").write_text(f"- title: {title}\n")
    code, out, err = _main(monkeypatch, capsys, tmp_path, slack, "import", "--place", place, "papers.yaml", **env)
    assert code == 0, err
    for argv, stdin in [([], "group start\n"), (["--user", "U1"], f"signup 1 {_monday()}\n")]:
        code, out, err = _main(
            monkeypatch, capsys, tmp_path, slack, "console", "--place", place, "--channel", channel, *argv,
            stdin=stdin, **env,
        )  # fmt: skip
        assert code == 0 and ("Started" in out or "signed up" in out), (out, err)


def test_each_workspace_gets_its_post_and_reminder_with_its_own_token(monkeypatch, capsys, tmp_path, slack):
    _installed(tmp_path, ("T0LAB", "Lab group", "xoxb-lab"), ("T0OTHER", "Other lab", "xoxb-other"))
    _group(monkeypatch, capsys, tmp_path, slack, LAB, "C0LAB", "The lab's paper")
    _group(monkeypatch, capsys, tmp_path, slack, OTHER, "C0OTHER", "The other lab's paper")
    monday = _monday()

    code, out, err = _main(monkeypatch, capsys, tmp_path, slack, "post-week", "--place", LAB, "--at", f"{monday}T09:30")
    assert code == 0 and out.startswith("Posted the paper of the week ") and "to C0LAB." in out, (out, err)
    [post] = slack.calls_to("chat.postMessage")
    assert post.token == "xoxb-lab" and post.params["channel"] == "C0LAB" and "The lab's paper" in str(post.params)
    assert slack.messages("C0OTHER") == [] and slack.messages(CHANNEL) == []

    code, out, err = _main(
        monkeypatch, capsys, tmp_path, slack, "post-week", "--place", OTHER, "--at", f"{monday}T09:30"
    )
    assert code == 0 and "to C0OTHER." in out, (out, err)
    assert [c.token for c in slack.calls_to("chat.postMessage")] == ["xoxb-lab", "xoxb-other"]
    assert len(slack.messages("C0LAB")) == 1 and len(slack.messages("C0OTHER")) == 1

    due = f"{monday - timedelta(days=2)}T09:30+00:00"  # PAPERBOT_REMIND_DAYS before the meeting
    code, out, err = _main(monkeypatch, capsys, tmp_path, slack, "remind", "--place", OTHER, "--at", due)
    assert code == 0 and out.startswith("Reminded U1 about #1 The other lab's paper"), (out, err)
    reminder = [c.token for c in slack.calls_to("chat.postMessage") if c.params["channel"] in ("U1", "DU1")]
    assert reminder == ["xoxb-other"] and len(slack.messages("DU1")) == 1  # not the lab's reminder


def test_a_place_that_cannot_be_reached_is_one_line_and_nothing_is_sent(monkeypatch, capsys, tmp_path, slack):
    _installed(tmp_path, ("T0LAB", "Lab group", "xoxb-lab"))
    _group(monkeypatch, capsys, tmp_path, slack, LAB, "C0LAB", "The lab's paper")
    monday = _monday()
    at = ("--at", f"{monday}T09:30")
    for verb in ("post-week", "remind"):
        code, out, err = _main(monkeypatch, capsys, tmp_path, slack, verb, "--place", LAB, *at, PAPERBOT_SECRET_KEY="")
        assert code == 2 and err.startswith("paperbot: PAPERBOT_SECRET_KEY: is not set (") and err.count("\n") == 1, err
        other_key = Fernet.generate_key().decode()
        code, out, err = _main(
            monkeypatch, capsys, tmp_path, slack, verb, "--place", LAB, *at, PAPERBOT_SECRET_KEY=other_key
        )
        assert code == 1 and err == (
            f"paperbot: place {LAB} has no Slack token: the app is not installed there now "
            "(or PAPERBOT_SECRET_KEY is not the key that sealed it)\n"
        )
    code, out, err = _main(monkeypatch, capsys, tmp_path, slack, "post-week", "--place", LAB, "--dry-run", *at)
    assert code == 0 and "The lab's paper" in out and "(dry run: nothing was posted to C0LAB)" in out, err

    database = database_for(tmp_path)
    house = open_store(database)
    SlackInstalls(Places(house, database), Seal(KEY)).uninstalled(None, "T0LAB")
    house.close()
    code, out, err = _main(monkeypatch, capsys, tmp_path, slack, "post-week", "--place", LAB, *at)
    assert code == 1 and err == (
        f"paperbot: place {LAB} is gone (the app was uninstalled or the bot removed): nothing is sent there; "
        f"`paperbot forget {LAB}` deletes its data\n"
    )
    assert slack.calls_to("chat.postMessage") == []


def test_a_place_without_groups_has_no_post_due(monkeypatch, capsys, tmp_path, slack):
    _installed(tmp_path, ("T0LAB", "Lab group", "xoxb-lab"))
    code, out, err = _main(monkeypatch, capsys, tmp_path, slack, "post-week", "--place", LAB)
    assert code == 0 and out == f"No group's post is due: place {LAB} has no group that posts.\n", err
    assert slack.calls_to("chat.postMessage") == []


def test_a_discord_server_gets_its_post_through_the_application(monkeypatch, capsys, tmp_path, slack):
    """The install's own place is a Slack workspace; a Discord server is a place of its own, posted
    to with DISCORD_TOKEN."""
    database = database_for(tmp_path)
    house = open_store(database)
    Places(house, database).join(CLUB, "discord", "Reading club")
    house.close()
    with DiscordStandin(channels={CLUB_CHANNEL}, users={"40000000000000001": {}}) as discord:
        env = {"DISCORD_TOKEN": discord_standin.TOKEN, "DISCORD_API_URL": discord.api_url}
        (tmp_path / "papers.yaml").write_text("- title: The club's paper\n")
        code, out, err = _main(monkeypatch, capsys, tmp_path, slack, "import", "--place", CLUB, "papers.yaml", **env)
        assert code == 0, err
        code, out, err = _main(
            monkeypatch, capsys, tmp_path, slack, "console", "--place", CLUB, "--channel", CLUB_CHANNEL,
            stdin="group start\n", **env,
        )  # fmt: skip
        assert code == 0 and "Started" in out, (out, err)
        monday = _monday()
        at = ("--at", f"{monday}T09:30")
        code, out, err = _main(
            monkeypatch, capsys, tmp_path, slack, "post-week", "--place", CLUB, *at, DISCORD_TOKEN=""
        )
        assert code == 2 and err.startswith("paperbot: DISCORD_TOKEN: is not set") and err.count("\n") == 1, err
        code, out, err = _main(monkeypatch, capsys, tmp_path, slack, "post-week", "--place", CLUB, *at, **env)
        assert code == 0 and f"to {CLUB_CHANNEL}." in out, (out, err)
        [message] = discord.messages(CLUB_CHANNEL)
        assert "The club's paper" in str(message)
    assert slack.calls_to("chat.postMessage") == []
