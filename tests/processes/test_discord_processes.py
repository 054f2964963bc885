"""A real `paperbot run` (and `post-week`) on Discord: HTTP interactions signed as Discord signs
them, the stand-in as Discord's REST API, one SQLite file in tmp_path."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.calendar import Week
from tests.support.databases import connect
from tests.support.discord_group import ADMIN, CHANNEL, MEMBER
from tests.support.discord_group import SHY as NO_DMS
from tests.support.discord_process import BOT, env_for
from tests.support.discord_standin import (
    APP_ID,
    GUILD,
    DiscordStandin,
    click,
    ping,
    pings,
    sign,
    slash,
)
from tests.support.processes import MEETING_ALWAYS_AHEAD

pytestmark = pytest.mark.slow


@pytest.fixture
def discord():
    with DiscordStandin(channels={CHANNEL}, users={ADMIN: {}, MEMBER: {}, NO_DMS: {"dms": False}}) as d:
        yield d


def answer(response: dict) -> dict:
    """The message of an immediate ephemeral answer."""
    assert response["type"] == 4, response
    assert response["data"]["flags"] & 64
    return response["data"]


def shown(message: dict) -> str:
    return message.get("content", "") + "\n" + "\n".join(e.get("description", "") for e in message.get("embeds", []))


def everything(message: dict) -> str:
    """All the text a message shows: content, and each embed's title, description, fields and footer."""
    parts = [message.get("content", "")]
    for e in message.get("embeds", []):
        parts += [e.get("title", ""), e.get("description", ""), (e.get("footer") or {}).get("text", "")]
        parts += [f["name"] + "\n" + f["value"] for f in e.get("fields", [])]
    return "\n".join(parts)


def papers_in(message: dict) -> set[int]:
    import re

    return {int(n) for n in re.findall(r"\*\*#(\d+)\*\*", shown(message))}


def test_registers_paper_in_the_guild_and_answers_a_ping(run_bot, discord):
    bot = run_bot()
    [command] = discord.registered[GUILD]
    assert command["name"] == "paper"
    subs = {o["name"]: o for o in command["options"]}
    assert {"tag", "show", "signup", "assign", "skip"} <= set(subs)
    assert [o["type"] for o in subs["assign"]["options"]][:1] == [6]
    assert subs["show"]["options"][0]["autocomplete"] and subs["tag"]["options"][0]["autocomplete"]
    assert "permissions=309237730304" in bot.log.read_text() and f"client_id={APP_ID}" in bot.log.read_text()
    assert bot.interact(ping()) == (200, {"type": 1})


@pytest.mark.parametrize("mode", ["http", "gateway"])
def test_a_tag_command_lists_all_32_papers_privately(run_bot, discord, mode):
    bot = run_bot(mode)
    status, response = bot.interact(slash("tag", MEMBER, tag="parallelism-dp"))
    assert status == 200
    message = answer(response)
    assert "32 papers tagged" in message["content"]
    numbers = papers_in(message)
    pages = [message]
    while len(numbers) < 32 and message.get("components"):  # paged, if need be: the Next button
        [row] = message["components"]
        next_id = [b["custom_id"] for b in row["components"] if b["label"].startswith("Next")][0]
        status, response = bot.interact(click(next_id, MEMBER))
        assert response["type"] == 7
        message = response["data"]
        numbers |= papers_in(message)
        pages.append(message)
    assert len(numbers) == 32
    for page in pages:
        assert page["allowed_mentions"] == {"parse": []}


def test_forged_and_missing_signatures_are_refused_and_change_nothing(run_bot, discord, tmp_path):
    bot = run_bot()
    signup = slash("signup", MEMBER, paper="7")
    body = json.dumps(signup)
    forged = sign(body)
    forged["X-Signature-Ed25519"] = ("0" if forged["X-Signature-Ed25519"][0] != "0" else "1") + forged[
        "X-Signature-Ed25519"
    ][1:]
    assert bot.request("POST", "/discord/interactions", body, forged)[0] == 401
    assert bot.request("POST", "/discord/interactions", body, {"Content-Type": "application/json"})[0] == 401
    other = sign(json.dumps(ping()))  # a signature of another body
    assert bot.request("POST", "/discord/interactions", body, other)[0] == 401
    assert bot.request("POST", "/discord/interactions", "{not json", sign("{not json"))[0] == 400
    db = connect(tmp_path)
    assert db.execute("SELECT count(*) FROM slots").fetchone()[0] == 0
    headers = sign(body)
    assert bot.request("POST", "/discord/interactions", body, headers)[0] == 200
    assert bot.request("POST", "/discord/interactions", body, headers)[0] == 401  # the same request again: a replay
    assert db.execute("SELECT count(*) FROM slots").fetchone()[0] == 1
    log = bot.log.read_text()
    assert "Traceback" not in log and log.count("refused a request to /discord/interactions") == 5


def test_a_title_with_mentions_shows_as_text_and_pings_nobody(run_bot, discord, tmp_path):
    papers = tmp_path / "papers.yaml"
    papers.write_text('- id: loud\n  title: "@everyone <@123> **x**"\n  tags: [loud]\n  summary: "<@&456> @here"\n')
    env = env_for(tmp_path, discord)
    done = subprocess.run(BOT + ["import", str(papers)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    bot = run_bot()
    for sub, options in (("tag", {"tag": "loud"}), ("show", {"paper": "loud"}), ("search", {"words": "everyone"})):
        message = answer(bot.interact(slash(sub, MEMBER, **options))[1])
        assert pings(message) == set(), message
        text = everything(message)
        assert "<@123>" not in text.replace("\\<@123>", "") and "@everyone" not in text
        assert "\\*\\*x\\*\\*" in text  # the stars shown, not bold
    # Signed up for the week, the weekly post names the paper: it pings nobody either.
    week_post = subprocess.run(BOT + ["post-week"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert week_post.returncode == 0, week_post.stderr
    for m in discord.messages(CHANNEL):
        assert pings(m) == set()


@pytest.mark.parametrize("mode", ["http", "gateway"])
def test_post_week_twice_gives_one_post_and_its_button_books_the_week(run_bot, discord, tmp_path, mode):
    env = env_for(tmp_path, discord, **MEETING_ALWAYS_AHEAD)
    first = subprocess.run(BOT + ["post-week"], cwd=tmp_path, env=env, capture_output=True, text=True)
    second = subprocess.run(BOT + ["post-week"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert first.returncode == 0 and second.returncode == 0, (first.stderr, second.stderr)
    assert "Posted the paper of the week" in first.stdout and "already has its post" in second.stdout
    [post] = discord.messages(CHANNEL)
    week = post["embeds"][0]["footer"]["text"].split("· ")[1]
    assert week in first.stdout and week in post["content"]
    labels = [[c["label"] for c in row["components"]] for row in post["components"]]
    assert labels == [["Sign up to present"], ["Going", "Can't go", "Ask a question"]]
    signup = post["components"][0]["components"][0]

    bot = run_bot(mode, **MEETING_ALWAYS_AHEAD)
    status, response = bot.interact(click(signup["custom_id"], MEMBER, post))
    assert status == 200
    message = answer(response)
    assert "signed up" in message["content"]
    # The button offers the post's meeting, which is ahead.
    db = connect(tmp_path)
    assert db.execute("SELECT week, presenter FROM slots").fetchall() == [(Week.from_key(week).key, MEMBER)]
    # The announcement and the post's update go out through the outbox.
    assert discord.wait_for(lambda d: len(d.messages(CHANNEL)) == 2 and d.messages(CHANNEL)[0]["edited_timestamp"])
    posted, announced = discord.messages(CHANNEL)
    assert f"<@{MEMBER}>" in posted["embeds"][0]["description"]
    labels = [[c["label"] for c in row["components"]] for row in posted["components"]]
    assert labels == [["Going", "Can't go", "Ask a question"]]
    assert f"<@{MEMBER}> will present" in announced["content"] and pings(announced) == set()


def test_the_gateway_identifies_without_intents_heartbeats_and_reconnects(run_bot, discord):
    discord.heartbeat_ms = 300
    bot = run_bot("gateway")
    [session] = discord.gateway_sessions
    assert session["identify"]["intents"] == 0 and "v=10" in session["query"]
    assert discord.wait_for(lambda d: d.gateway_sessions[0]["heartbeats"] >= 2, 5)
    discord.gateway_disconnect()
    assert discord.wait_for(lambda d: len(d.gateway_sessions) == 2 and d.gateway_connected == 1, 15)
    assert answer(bot.interact(slash("week", MEMBER))[1])["allowed_mentions"] == {"parse": []}
    assert "Traceback" not in bot.log.read_text()
    code = bot.proc.poll()
    assert code is None
    bot.proc.terminate()
    assert bot.proc.wait(10) == 0 and "Traceback" not in bot.log.read_text()


@pytest.mark.parametrize("refused_by", ["rest", "gateway"])
def test_a_token_discord_refuses_ends_run_in_one_line(discord, tmp_path, refused_by):
    if refused_by == "rest":
        discord.token = "other." + discord.token
    else:  # REST takes it, the Gateway closes with 4004
        discord.gateway_token = "other." + discord.token
    env = env_for(tmp_path, discord, DISCORD_PUBLIC_KEY="")
    done = subprocess.run(BOT + ["run"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    [line] = done.stderr.strip().splitlines()[-1:]
    assert line.startswith("paperbot: DISCORD_TOKEN: Discord refused it") and "Traceback" not in done.stderr


@pytest.mark.parametrize("nonce_remembered", [True, False])
def test_a_kill_after_discord_took_the_post_and_before_it_was_recorded_posts_nothing_more(
    discord, tmp_path, nonce_remembered
):
    env = env_for(tmp_path, discord, **MEETING_ALWAYS_AHEAD)
    proc: list[subprocess.Popen] = []

    def kill_on_post(call) -> None:
        if call.route == "create_message" and proc:
            proc[0].kill()  # SIGKILL: Discord has the message, the bot never hears so
            proc[0].wait(10)

    discord.on_accept = kill_on_post
    proc.append(
        subprocess.Popen(
            BOT + ["post-week"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    )
    assert proc[0].wait(30) == -9
    discord.on_accept = None
    assert len(discord.messages(CHANNEL)) == 1
    if not nonce_remembered:  # minutes later: only the channel's history can tell
        discord.forget_nonces()
    again = subprocess.run(BOT + ["post-week"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30)
    assert again.returncode == 0, again.stderr
    assert len(discord.messages(CHANNEL)) == 1
    assert "an earlier attempt arrived" in again.stdout or "already" in again.stdout


def test_remind_sends_a_dm_once(discord, tmp_path):
    env = env_for(tmp_path, discord)
    next_week = datetime.now(ZoneInfo("Europe/Berlin")).date() + timedelta(days=7)
    monday = next_week - timedelta(days=next_week.weekday())
    line = f"assign {MEMBER} 3 {monday.isoformat()}\n"  # the console's operator is an admin
    booked = subprocess.run(BOT + ["console"], cwd=tmp_path, env=env, input=line, capture_output=True, text=True)
    assert booked.returncode == 0 and "presents" in booked.stdout, booked.stdout + booked.stderr
    at = (monday + timedelta(days=2)).isoformat() + "T12:00"  # Wednesday: a day before Thursday's meeting
    for _ in range(2):
        done = subprocess.run(BOT + ["remind", "--at", at], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    [dm] = discord.messages(discord.dm_channel(MEMBER))
    assert "Reminder: you present" in dm["embeds"][0]["description"] and pings(dm) == set()


def test_run_says_at_start_when_the_channel_is_wrong(run_bot, discord):
    bot = run_bot(PAPERBOT_CHANNEL="1000000000000000099")
    deadline = time.monotonic() + 10
    while "PAPERBOT_CHANNEL 1000000000000000099" not in bot.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "Unknown Channel" in bot.log.read_text() and "no such channel" in bot.log.read_text()


def test_run_and_post_week_at_once_make_one_post(run_bot, discord, tmp_path):
    env = env_for(tmp_path, discord, **MEETING_ALWAYS_AHEAD)
    discord.fail_next("create_message", 429, retry_after=1.0)  # whoever goes first waits a moment
    posting = subprocess.Popen(BOT + ["post-week"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    run_bot(**MEETING_ALWAYS_AHEAD)  # its scheduler looks at the week's post at once: the week's slot is past
    out, _ = posting.communicate(timeout=60)
    assert posting.returncode == 0, out
    # post-week ends once the week's post is recorded, by itself or by run (it waits for run's claim):
    # from then on neither posts it again.
    db = connect(tmp_path)
    assert db.execute("SELECT state FROM deliveries WHERE kind = 'post'").fetchall() == [("sent",)]
    assert len(discord.messages(CHANNEL)) == 1


def test_a_discord_install_reads_its_settings_from_dotenv(discord, tmp_path):
    env = env_for(tmp_path, discord, **MEETING_ALWAYS_AHEAD)  # a post is due whatever day the test runs
    settings = {k: env.pop(k) for k in list(env) if k.startswith(("DISCORD_", "PAPERBOT_"))}
    (tmp_path / ".env").write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    done = subprocess.run(BOT + ["post-week"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert "Posted the paper of the week" in done.stdout and len(discord.messages(CHANNEL)) == 1
    (tmp_path / ".env").write_text("".join(f"{k}={v}\n" for k, v in settings.items()) + "SLACK_BOT_TOKEN=xoxb-1\n")
    both = subprocess.run(BOT + ["post-week"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30)
    # Both tokens: group 1 is on Discord (its channel is digits), and its week has its post already.
    assert both.returncode == 0 and "already has its post" in both.stdout, both.stderr
