"""Going and can't go as the console shows them, and the post's update held for a quiet moment."""

from __future__ import annotations

import json
import time

from bot import cli
from bot.calendar import Meeting, MeetingCalendar, PostSchedule, Week
from bot.chat import commands, context
from bot.console.render import render as console_text
from bot.delivery import outbox
from bot.schedule import weekly
from bot.schedule.signups import Member
from tests.support.clock import TZ, at

GROUP = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))


def say(store, line, user="U1", when="2026-12-07 10:00", admin=False) -> str:
    ctx = context.Context(store, GROUP, Member(user, lambda: admin), at(when))
    return console_text(commands.run(ctx, line).reply)


def test_going_and_cantgo_in_the_console_and_past_after_the_meeting(store):
    say(store, "signup 5 2026-12-10", user="U9")
    assert "You're going to the meeting on Thu 10 Dec 2026 16:00" in say(store, "going", user="U1")
    assert "(2 going)" in say(store, "going 2026-12-10", user="U2")
    assert "(3 going)" in say(store, "going this", user="U3")
    assert "(3 going)" in say(store, "cantgo", user="U4")
    back = say(store, "going", user="U3")
    assert back.startswith("You took back that you're going") and "(2 going)" in back
    say(store, "going", user="U3")
    assert "3 going" not in say(store, "past", when="2026-12-10 15:00")  # not given yet
    shown = say(store, "past", when="2026-12-11 10:00")
    assert "#5" in shown and "@U9" in shown and "3 going" in shown
    assert say(store, "going 2026-12-10", when="2026-12-11 10:00").startswith("✗ The meeting of that week")


def test_the_console_post_shows_the_count_and_the_buttons(store):
    post = weekly.plan(store, GROUP, Week(2026, 50), None, None, at("2026-12-07 09:00"))
    post.going, post.questions = 3, 1
    shown = console_text(post)
    assert "👥 3 going · 1 question" in shown
    assert "[Going] → going 2026-12-10" in shown and "[Can't go] → cantgo 2026-12-10" in shown


def test_the_help_names_going_and_cantgo(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("help\n"))
    assert cli.main(["console"]) == 0
    out = capsys.readouterr().out
    assert "going [<date>]" in out and "cantgo [<date>]" in out


def test_a_posts_update_waits_for_a_quiet_moment_and_one_waits_at_a_time(store):
    payload = {"week": "2026-W50", "channel": "C0PAPERS"}
    with store.write() as db:
        outbox.hold_refresh(db, payload, quiet=5.0, longest=60.0)
    [(first, created)] = store.db.execute("SELECT next_try, created_at FROM outbox").fetchall()
    assert abs(first - created - 5.0) < 0.01
    assert outbox.take(store) == []  # held
    with store.write() as db:  # a later click moves it on, within the longest hold
        outbox.hold_refresh(db, payload, quiet=5.0, longest=60.0)
        outbox.hold_refresh(db, payload, quiet=120.0, longest=60.0)
    [(later, kept)] = store.db.execute("SELECT next_try, payload FROM outbox").fetchall()
    assert later > first and later <= created + 60.0 and json.loads(kept) == payload
    with store.write() as db:  # its quiet moment has come
        db.execute("UPDATE outbox SET next_try = ?", [time.time() - 1])
    [item] = outbox.take(store)
    assert item.kind == outbox.ItemKind.REFRESH
    with store.write() as db:  # being sent (it may have planned before this click): a new one waits
        outbox.hold_refresh(db, payload, quiet=5.0, longest=60.0)
    assert store.db.execute("SELECT count(*) FROM outbox").fetchone()[0] == 2
