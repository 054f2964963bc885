"""`stats`: the group's history in words, on every platform (here as the console draws it)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.chat import commands, context
from bot.chat.replies import Stats
from bot.console.render import render
from bot.schedule.signups import Member
from tests.support.history import seed_history
from tests.support.slack_group import settings_for

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def _ask(store, settings, line: str = "stats", public_url: str | None = None):
    ctx = context.Context(store, settings.group, Member("U9", lambda: False), NOW, channel=settings.channel)
    ctx.public_url = public_url
    return commands.run(ctx, line)


def test_stats_tells_the_talks_by_month_presenter_and_tag_and_who_went(tmp_path, store):
    settings = settings_for(tmp_path)
    seed_history(store, settings.group, NOW)
    answer = _ask(store, settings)
    assert isinstance(answer.reply, Stats) and answer.reply.image_url is None, "no picture address unless served"
    said = render(answer.reply)
    assert said.splitlines() == [
        "📊 7 talks given, 2026-09 to 2026-12, by 3 presenters.",
        "Per month: 2026-09 2 · 2026-10 2 · 2026-11 2 · 2026-12 1",
        "Presenters: @U1 3 · @U2 2 · @U3 2",
        "Tags: parallelism-dp 7 · llm 4 · moe 3",
        "Going: 2026-09-24 0 · 2026-10-08 0 · 2026-10-22 4 · 2026-11-05 2 · 2026-11-19 3 · 2026-12-03 0 "
        "(1.3 a meeting)",
    ]
    helped = render(_ask(store, settings, "help").reply)
    assert "stats" in helped and "the group's history" in helped


def test_stats_before_any_talk_says_so(tmp_path, store):
    reply = _ask(store, settings_for(tmp_path)).reply
    assert not isinstance(reply, Stats) and "No talk has been given yet" in render(reply)


def test_stats_names_where_its_picture_is_served_behind_the_groups_secret(tmp_path, store):
    settings = settings_for(tmp_path)
    seed_history(store, settings.group, NOW)
    reply = _ask(store, settings, public_url="https://example.org/reading/").reply
    assert isinstance(reply, Stats) and reply.image_url is not None
    assert reply.image_url.startswith("https://example.org/reading/g/") and "/stats.png?v=" in reply.image_url
    again = _ask(store, settings, public_url="https://example.org/reading/").reply
    assert again.image_url == reply.image_url, "the same history, the same address: a platform may keep it"
    with store.write() as db:
        db.execute("DELETE FROM attendance WHERE member = 'M0'")
    changed = _ask(store, settings, public_url="https://example.org/reading/").reply
    assert changed.image_url != reply.image_url, "a new history, a new address: never an old picture"
