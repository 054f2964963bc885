"""`group set name`: a chat group's name, checked, shown, announced and cleared; group 1's is the
environment's; a database from before names keeps its groups, with none."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
import sqlite_utils

from bot.catalog import queries as catalog
from bot.chat import commands, context
from bot.console.render import render
from bot.schedule import groups
from bot.schedule.signups import Member
from bot.settings import Settings
from bot.store.connection import migrations

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=ZoneInfo("UTC"))
ENV = Settings.load({"PAPERBOT_CHANNEL": "C0ENV", "PAPERBOT_MEETING": "thu 16:00"}, dotenv=None)


def run(store, line: str, where: str | None = "C0NEW", admin: bool = True) -> str:
    member = Member("ops" if admin else "U9", lambda: admin)
    ctx = context.Context(store, ENV.group, member, NOW, ENV.focus_tag, ENV.channel, lambda change: None, where=where)
    ctx.env = groups.from_settings(ENV)
    return render(commands.run(ctx, line).reply)


def test_a_name_is_set_shown_listed_announced_and_cleared(store):
    run(store, "group start")
    assert run(store, 'group set name "  Systems   Reading Club "').startswith("Set name to `Systems Reading Club`.")
    queued = store.db.execute("SELECT payload FROM outbox ORDER BY id DESC LIMIT 1").fetchone()
    assert queued is not None and "name is now" in queued[0] and "Systems Reading Club" in queued[0], queued
    shown = run(store, "group", admin=False)
    assert shown.startswith("Systems Reading Club — reading group in #C0NEW (settings from chat)."), shown
    assert "name `Systems Reading Club`" in shown, shown
    listed = run(store, "groups", admin=False)
    assert "• Systems Reading Club in #C0NEW · meets" in listed, listed
    assert run(store, "group set name none").startswith("Set name to `none`.")
    assert run(store, "group", admin=False).startswith("Reading group in #C0NEW"), "no name: as before"
    assert "• #C0NEW · meets" in run(store, "groups", admin=False)


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("x" * 81, "is 81 characters long; a group's name is at most 80"),
        ('""', "is empty: type the group's name, or none"),
        ("Tab\u200bbed\x07", "has a control character: a name is one line of plain text"),
        ("y" * 300, "'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy'… is 300 characters long; a value here is at most 200"),
    ],
)
def test_a_bad_name_is_refused_in_one_line_and_changes_nothing(store, value, why):
    run(store, "group start")
    run(store, "group set name Kept")
    said = run(store, f"group set name {value}")
    assert said == f"✗ name: {why}. Nothing was changed.", said
    assert groups.of_channel(store, groups.from_settings(ENV), "C0NEW").name == "Kept"


def test_group_ones_name_is_the_environments(store):
    said = run(store, "group set name Club", where="C0ENV")
    assert said.startswith("✗ This group's settings come from the environment: set `PAPERBOT_GROUP_NAME`"), said
    named = Settings.load({"PAPERBOT_CHANNEL": "C0ENV", "PAPERBOT_GROUP_NAME": "Systems Club"}, dotenv=None)
    assert groups.from_settings(named).name == "Systems Club"
    assert "name `Systems Club`" in render(
        commands.run(
            context.Context(
                store, named.group, Member("U9"), NOW, channel="C0ENV", where="C0ENV", env=groups.from_settings(named)
            ),
            "group",
        ).reply
    )


def test_the_settings_usage_lists_name(store):
    run(store, "group start")
    assert "meeting-minutes, name; " in run(store, "group set"), run(store, "group set")


def test_a_database_from_before_names_keeps_its_groups_with_no_name(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m015_group_name")
    db.execute(
        "INSERT INTO groups (platform, channel, timezone, meeting, updated_at) "
        "VALUES ('slack', 'C0OLD', 'Europe/Berlin', 'thu 16:00', 'x')"
    )
    db.close()
    store = catalog.open_store(path)
    env = groups.from_settings(ENV)
    old = groups.of_channel(store, env, "C0OLD")
    assert old is not None and old.name is None and str(old.calendar.meeting) == "thu 16:00"
    groups.change(store, old, "name", "Old Club", lambda word: None)
    assert groups.of_channel(store, env, "C0OLD").name == "Old Club"
    store.close()
