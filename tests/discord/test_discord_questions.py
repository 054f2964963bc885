"""Questions before the meeting on Discord: a thread on the weekly post, made once, each question in
it once; the post's Ask a question button and its form; the reminder's list."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bot.schedule import questions, reminders, weekly
from tests.support.discord_group import CHANNEL, MEMBER, respond
from tests.support.discord_standin import check_message, click, slash, submit

TZ = ZoneInfo("Europe/Berlin")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=TZ)


def said(response: dict) -> str:
    data = response["data"]
    return data.get("content", "") + "".join(e.get("description", "") for e in data.get("embeds") or [])


def test_questions_go_once_in_a_thread_on_the_post(make_bot, discord):
    now = at("2026-12-02 10:00")
    bot = make_bot()
    bot.clock = lambda: now
    outcome = weekly.post_week(bot.store, bot.group, bot.transport, CHANNEL, now, force=True)
    post = outcome.result.sent.ref
    asked = respond(bot, discord, slash("ask", MEMBER, question="Why an outer optimizer?"))
    assert "Saved: question 1" in said(asked)
    respond(bot, discord, slash("ask", MEMBER, question="What about stragglers?"))
    bot.background.drain(10)
    assert discord.wait_for(lambda d: len(d.messages(post)) == 2)
    # Again: the scheduler's check, a second process, a restart.
    questions.discuss(bot.store, [bot.env], lambda g: bot.transport, now)
    in_thread = discord.messages(post)
    assert len(in_thread) == 2 and [c.status for c in discord.calls_to("create_thread")] == [201]
    assert discord.threads[post]["parent_id"] == CHANNEL and discord.threads[post]["name"] == "Questions · 2026-W49"
    assert "Why an outer optimizer?" in in_thread[0]["embeds"][0]["description"]
    for m in in_thread:
        check_message(m)


def test_a_restarted_bot_finds_the_thread_made(make_bot, discord):
    now = at("2026-12-02 10:00")
    first, second = make_bot(), make_bot()
    outcome = weekly.post_week(first.store, first.group, first.transport, CHANNEL, now, force=True)
    post = outcome.result.sent.ref
    questions.ask(first.store, first.group, now, MEMBER, "discord", "One?", None)
    questions.discuss(first.store, [first.env], lambda g: first.transport, now)
    questions.ask(first.store, first.group, now, MEMBER, "discord", "Two?", None)
    questions.discuss(second.store, [second.env], lambda g: second.transport, now)  # a process that made none
    assert [c.status for c in discord.calls_to("create_thread")] == [201, 400]
    assert len(discord.messages(post)) == 2


def test_the_posts_button_opens_a_form_and_the_reminder_lists_the_questions(make_bot, discord):
    now = at("2026-12-02 10:00")
    bot = make_bot()
    bot.clock = lambda: now
    weekly.post_week(bot.store, bot.group, bot.transport, CHANNEL, now, force=True)
    [message] = discord.messages(CHANNEL)
    ask = next(c for row in message["components"] for c in row["components"] if c["label"] == "Ask a question")
    opened = respond(bot, discord, click(ask["custom_id"], MEMBER, message))
    assert opened["type"] == 9 and opened["data"]["components"][0]["components"][0]["type"] == 4
    done = respond(bot, discord, submit(opened["data"], MEMBER, {"question": "Is the code out?"}))
    assert "Saved: question 1" in said(done)
    respond(bot, discord, slash("signup", MEMBER, paper="7", date="2026-12-03"))
    [sent] = reminders.send_due(bot.store, bot.group, bot.transport, at("2026-12-02 10:00"), force=True)
    assert sent.result.status == "sent"
    [dm] = discord.messages(discord.dm_channel(MEMBER))
    assert "1 question so far" in str(dm["embeds"]) and "Is the code out?" in str(dm["embeds"])
