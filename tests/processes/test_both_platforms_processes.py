"""One real `paperbot run` with both SLACK_BOT_TOKEN and DISCORD_TOKEN set: both platforms' HTTP
routes on one PORT, and each group's weekly post through its own platform's stand-in, once."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from datetime import time as dtime
from urllib.parse import parse_qsl

import pytest

from tests.support.clock import TZ
from tests.support.databases import connect
from tests.support.discord_standin import PUBLIC_KEY, DiscordStandin, slash
from tests.support.discord_standin import TOKEN as DISCORD_TOKEN
from tests.support.discord_standin import sign as discord_sign
from tests.support.processes import MEETING_ALWAYS_AHEAD, Server, free_port, monday, one_line, weekly_posts
from tests.support.slack_group import CHANNEL, env_for_process
from tests.support.slack_harness import slash_form
from tests.support.slack_standin import SlackStandin

pytestmark = pytest.mark.slow

DISCORD_CHANNEL = "1000000000000000004"
DISCORD_ADMIN = "1300000000000000001"


@pytest.fixture
def slack():
    with SlackStandin(channels={CHANNEL}, members={CHANNEL}, users={"UADMIN": {}, "U1": {}}) as standin:
        yield standin


@pytest.fixture
def discord():
    with DiscordStandin(channels={DISCORD_CHANNEL, "1000000000000000003"}, users={DISCORD_ADMIN: {}}) as d:
        yield d


def discord_posts(discord, channel: str) -> list[dict]:
    return [
        m
        for m in discord.messages(channel)
        if any("paper of the week" in ((e.get("footer") or {}).get("text") or "") for e in m.get("embeds") or [])
    ]


def env_both(tmp_path, slack, discord, **extra: str) -> dict[str, str]:
    both = {
        "DISCORD_TOKEN": DISCORD_TOKEN,
        "DISCORD_PUBLIC_KEY": PUBLIC_KEY,
        "DISCORD_API_URL": discord.api_url,
        "PAPERBOT_ADMINS": f"UADMIN,{DISCORD_ADMIN}",  # both platforms' ids, mixed
    }
    return env_for_process(tmp_path, slack.api_url, **{**both, **extra})


def start_both(procs, tmp_path, slack, discord, port: int, **extra: str) -> Server:  # noqa: F811
    server = Server(procs.start("run", env=env_both(tmp_path, slack, discord, PORT=str(port), **extra)), port, slack)
    server.wait_ready()
    return server


def interact(server: Server, interaction: dict) -> dict:
    body = json.dumps(interaction)
    status, data, _ = server.request("POST", "/discord/interactions", body, discord_sign(body))
    assert status == 200, (status, data, server.proc.log())
    return json.loads(data)


def start_discord_group(server: Server) -> None:
    start = slash("group", DISCORD_ADMIN)
    start["data"]["options"] = [{"name": "group", "type": 2, "options": [{"name": "start", "type": 1, "options": []}]}]
    start["channel_id"] = DISCORD_CHANNEL
    said = interact(server, start)
    assert "Started a reading group" in json.dumps(said), said


def until(predicate, what: str, server: Server, timeout: float = 45) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        assert server.proc.poll() is None, server.proc.log()
        time.sleep(0.1)
    raise AssertionError(f"{what} within {timeout} s:\n{server.proc.log()}")


def test_one_run_serves_slack_and_discord_and_posts_each_group_on_its_own(procs, tmp_path, slack, discord):  # noqa: F811
    port = free_port()
    server = start_both(procs, tmp_path, slack, discord, port, **MEETING_ALWAYS_AHEAD)

    # Both platforms' signed requests on the one PORT, and the health check.
    status, reply, seconds = server.command("tag parallelism-dp")
    assert status == 200 and "32 papers tagged parallelism-dp" in reply["text"], (status, reply, server.proc.log())
    answer = interact(server, slash("tag", DISCORD_ADMIN, name="parallelism-dp"))
    assert "parallelism-dp" in json.dumps(answer), answer
    assert server.request("GET", "/healthz")[0] == 200

    # Group 1 is on Slack (PAPERBOT_CHANNEL C…): its week's post, caught up at start, through Slack.
    until(lambda: len(weekly_posts(slack)) == 1, "no weekly post in Slack's channel", server)

    # A group started from Discord, in a Discord channel.
    start_discord_group(server)

    # Stopped and started again: the start's catch-up posts the Discord group's week through Discord,
    # and group 1's week, posted already, is not posted again.
    code, seconds = server.proc.terminate_and_wait(timeout=15)
    assert code == 0 and seconds < 10, (code, seconds, server.proc.log())
    assert "Traceback" not in server.proc.log()
    # As if the group had been started before this week's slot, which a group started today missed.
    with connect(tmp_path) as db:
        db.execute(  # and meeting after every moment of the week's latest slot, so that one is always due
            "UPDATE groups SET started_at = '2026-01-01T00:00:00+00:00', schedule = '0 0 * * mon', "
            "meeting = 'sun 23:59' WHERE channel = ?",
            [DISCORD_CHANNEL],
        )
    server = start_both(procs, tmp_path, slack, discord, free_port(), **MEETING_ALWAYS_AHEAD)
    until(lambda: len(discord_posts(discord, DISCORD_CHANNEL)) == 1, "no weekly post in Discord's channel", server)
    status, reply, _ = server.command("tags")
    assert status == 200, server.proc.log()

    code, _ = server.proc.terminate_and_wait(timeout=15)
    assert code == 0 and "Traceback" not in server.proc.log(), server.proc.log()
    assert len(weekly_posts(slack)) == 1 and len(discord_posts(discord, DISCORD_CHANNEL)) == 1
    assert discord.messages("1000000000000000003") == []  # nothing of group 1's went to Discord
    assert not [m for m in slack.messages(CHANNEL) if "Started a reading group" in json.dumps(m)]


def test_post_week_and_remind_with_both_tokens_reach_each_group_through_its_platform(
    procs,  # noqa: F811
    tmp_path,
    slack,
    discord,
):
    server = start_both(procs, tmp_path, slack, discord, free_port())
    start_discord_group(server)
    # Sign-ups two weeks ahead: group 1 meets on Thursdays 16:00 Berlin, the Discord group at its
    # post's time, Mondays 09:00 UTC.
    week = monday(2)
    thursday = week + timedelta(days=3)
    status, reply, _ = server.command(f"signup 3 {thursday.isoformat()}", user="U1")
    assert status == 200 and "You're signed up" in reply["text"], reply
    signed = slash("signup", DISCORD_ADMIN, paper="7", date=week.isoformat())
    signed["channel_id"] = DISCORD_CHANNEL
    assert "You're signed up" in json.dumps(interact(server, signed))
    code, _ = server.proc.terminate_and_wait(timeout=15)
    assert code == 0, server.proc.log()
    before = len(weekly_posts(slack)), len(discord_posts(discord, DISCORD_CHANNEL))

    env = env_both(tmp_path, slack, discord)
    next_monday = datetime.combine(monday(1), dtime(9, 30), tzinfo=UTC).isoformat()  # the Discord group's meets
    done = procs.run("post-week", "--at", next_monday, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"to {CHANNEL}." in done.stdout and f"to {DISCORD_CHANNEL}." in done.stdout, done.stdout
    assert len(weekly_posts(slack)) == before[0] + 1
    assert len(discord_posts(discord, DISCORD_CHANNEL)) == before[1] + 1

    # The Discord group's presenter from Saturday 09:00 UTC before their Monday; group 1's from Tuesday.
    sunday = datetime.combine(week - timedelta(days=1), dtime(12, 0), tzinfo=UTC).isoformat()
    done = procs.run("remind", "--at", sunday, env=env)
    assert done.returncode == 0 and f"Reminded {DISCORD_ADMIN} about #7" in done.stdout, done.stdout + done.stderr
    assert len(discord.messages(discord.dm_channel(DISCORD_ADMIN))) == 1
    wednesday = datetime.combine(week + timedelta(days=2), dtime(12, 0), tzinfo=TZ).isoformat()
    done = procs.run("remind", "--at", wednesday, env=env)
    assert done.returncode == 0 and "Reminded U1 about #3" in done.stdout, done.stdout + done.stderr
    assert len(slack.messages("DU1")) == 1


def test_socket_mode_and_the_gateway_together_with_healthz_on_port(procs, tmp_path, slack, discord):  # noqa: F811
    port = free_port()
    env = env_both(
        tmp_path,
        slack,
        discord,
        PORT=str(port),
        SLACK_APP_TOKEN="xapp-test",
        DISCORD_PUBLIC_KEY="",
        **MEETING_ALWAYS_AHEAD,
    )
    server = Server(procs.start("run", env=env), port, slack)
    server.wait_ready()  # /healthz on PORT, with neither platform on HTTP
    assert slack.socket_connected.wait(20), server.proc.log()
    assert discord.wait_for(lambda d: d.gateway_connected == 1, 20), server.proc.log()

    payload = dict(parse_qsl(slash_form("tag parallelism-dp", "U1", slack.response_url())))
    acked = slack.socket_send("slash_commands", payload, timeout=10)
    assert "32 papers tagged parallelism-dp" in acked["text"], acked
    interaction = slash("tag", DISCORD_ADMIN, name="parallelism-dp")
    discord.dispatch(interaction)
    answered = discord.answer_to(interaction)
    assert answered is not None and "parallelism-dp" in json.dumps(answered), server.proc.log()
    assert server.request("POST", "/slack/events", "x")[0] == 404  # no HTTP route for a platform not on HTTP

    until(lambda: len(weekly_posts(slack)) == 1, "no weekly post in Slack's channel", server)
    code, seconds = server.proc.terminate_and_wait(timeout=15)
    assert code == 0 and seconds < 10, (code, seconds, server.proc.log())
    assert "Traceback" not in server.proc.log()


def test_a_token_either_platform_refuses_ends_the_start_in_one_line_having_posted_nothing(
    procs,  # noqa: F811
    tmp_path,
    slack,
    discord,
):
    discord.token = "other." + discord.token
    done = procs.run("run", env=env_both(tmp_path, slack, discord, PORT=str(free_port())), timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("paperbot: DISCORD_TOKEN: Discord refused it"), done.stderr
    assert weekly_posts(slack) == [] and "Traceback" not in done.stderr
    done = procs.run("run", env=env_both(tmp_path, slack, discord, PAPERBOT_CHANNEL="general"))
    assert done.returncode == 2 and one_line(done.stderr).startswith("paperbot: PAPERBOT_CHANNEL: 'general' is not"), (
        done.stderr
    )
