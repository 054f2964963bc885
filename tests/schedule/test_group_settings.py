"""A group's settings from chat, checked as the environment's are; where a command applies."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bot.chat import commands, context
from bot.console.render import render
from bot.schedule import groups
from bot.schedule.signups import Member
from bot.settings import SettingError, Settings

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=ZoneInfo("UTC"))
ENV = Settings.load({"PAPERBOT_CHANNEL": "C0ENV", "PAPERBOT_MEETING": "thu 16:00"}, dotenv=None)


def run(store, line: str, where: str | None = "C0NEW", user: str = "ops", admin: bool = True) -> str:
    member = Member(user, lambda: admin)
    ctx = context.Context(store, ENV.group, member, NOW, ENV.focus_tag, ENV.channel, lambda change: None, where=where)
    ctx.env = groups.from_settings(ENV)
    return render(commands.run(ctx, line).reply)


def stored(store):
    return store.db.execute("SELECT * FROM groups WHERE channel = 'C0NEW'").fetchone()


@pytest.mark.parametrize(
    ("setting", "value", "env_name"),
    [
        ("timezone", "Mars/Base", "PAPERBOT_TIMEZONE"),
        ("schedule", "0 9 * *", "PAPERBOT_SCHEDULE"),
        ("schedule", "0 25 * * mon", "PAPERBOT_SCHEDULE"),
        ("meeting", "someday 16:00", "PAPERBOT_MEETING"),
        ("meeting", "thu 25:00", "PAPERBOT_MEETING"),
        ("remind-days", "0", "PAPERBOT_REMIND_DAYS"),
        ("remind-days", "two", "PAPERBOT_REMIND_DAYS"),
        ("rotation", "random", "PAPERBOT_ROTATION"),
        ("meeting-minutes", "5", "PAPERBOT_MEETING_MINUTES"),
    ],
)
def test_a_bad_value_is_refused_in_one_line_as_the_environments_and_changes_nothing(store, setting, value, env_name):
    run(store, "group start")
    before = stored(store)
    said = run(store, f"group set {setting} {value}")
    with pytest.raises(SettingError) as env_error:
        Settings.load({env_name: value}, dotenv=None)
    problem = str(env_error.value).split(": ", 1)[1]  # the same words after the setting's name
    assert said == f"✗ {setting}: {problem}. Nothing was changed.", said
    assert stored(store) == before


def test_each_setting_is_kept_and_shown(store):
    run(store, "group start")
    for line in (
        "group set timezone Europe/Berlin",
        'group set schedule "30 8 * * tue"',
        "group set meeting “wed 17:30”",
        "group set remind-days 3",
        "group set focus-tag Parallelism_DP",
        "group set admins @U1 @U2",
        "group set rotation votes",
        "group set meeting-minutes 90",
    ):
        assert run(store, line).startswith("Set "), line
    shown = run(store, "group", user="U9", admin=False)
    for part in ("Europe/Berlin", "30 8 * * tue", "wed 17:30", "`3`", "parallelism-dp", "@U1", "votes", "`90`"):
        assert part in shown, (part, shown)
    assert "Next post: Tue 08 Dec 2026 08:30 CET" in shown, shown
    assert run(store, "group set focus-tag none").startswith("Set focus-tag to `none`")
    assert run(store, "group set focus-tag no-such-tag").startswith("✗ focus-tag: no paper has the tag")


def test_a_groups_admin_acts_in_it_and_the_install_admins_everywhere(store):
    run(store, "group start")
    run(store, "group set admins U7")
    assert run(store, "skip next", user="U7", admin=False).startswith("No meeting")
    assert run(store, "skip next", where="C0ENV", user="U7", admin=False).startswith("✗ Only admins")
    assert run(store, "group start", where="C0THIRD", user="U7", admin=False).startswith("✗ Only the install's")
    assert run(store, "group stop", user="U7", admin=False).startswith("Stopped")


def test_the_environments_group_is_set_in_the_environment(store):
    said = run(store, "group set meeting fri 10:00", where="C0ENV")
    assert "PAPERBOT_MEETING" in said and "Nothing was changed" in said
    assert run(store, "group start", where="C0ENV").startswith("This channel is a reading group already")


def test_one_group_answers_everywhere_and_several_name_their_channels(store):
    assert run(store, "schedule", where=None).startswith("Coming weeks")  # only the environment's group
    assert run(store, "schedule", where="C0ELSE").startswith("Coming weeks")
    run(store, "group start")
    said = run(store, "signup 3", where=None, user="U5", admin=False)
    assert "#C0ENV" in said and "#C0NEW" in said and "nothing was done" in said, said
    assert store.db.execute("SELECT count(*) FROM slots").fetchone()[0] == 0
    run(store, "group stop")  # a stopped group is no longer one to choose
    assert run(store, "signup 3", where=None, user="U5", admin=False).startswith("You're signed up")


def test_a_channel_with_no_group_says_how_to_start_one(store):
    assert "An admin starts one here with `/paper group start`" in run(store, "group", where="C0ELSE")
    assert run(store, "group set timezone UTC", where="C0ELSE").startswith("✗ This channel has no reading group")
    assert run(store, "group start", where=None).startswith("✗ Type `/paper group start` in the channel")


@pytest.mark.parametrize(
    "line",
    ["edit 5 title Mine", "archive 5", "restore 5", "delete 5", "suggestions", "add https://arxiv.org/abs/2501.00001"],
)
def test_a_groups_admin_is_sent_to_the_installs_admins_for_the_catalog(store, line):
    """The catalog is every group's: a group's own admin may not change it, and is told who may."""
    run(store, "group start")
    run(store, "group set admins U7")
    before = store.db.execute("SELECT * FROM papers ORDER BY number").fetchall()
    said = run(store, line, user="U7", admin=False)
    assert said.startswith("✗ Only admins can ") and said.endswith(
        "Ask one of the install's admins, who keep the catalog."
    )
    assert store.db.execute("SELECT * FROM papers ORDER BY number").fetchall() == before


@pytest.mark.parametrize(
    ("schedule", "several"), [("* * * * *", True), ("0 9 * * mon,thu", True), ("0 9 * * tue", False)]
)
def test_a_schedule_that_fires_more_than_once_a_week_is_told_it_posts_once_at_the_first(store, schedule, several):
    """PAPERBOT_SCHEDULE takes such a crontab (the contract: the first slot of each week); so does the group,
    and says so."""
    run(store, "group start")
    said = run(store, f'group set schedule "{schedule}"')
    assert said.startswith(f"Set schedule to `{schedule}`"), said
    note = "Note: this schedule fires more than once a week; the group posts once a week, at the first of them."
    assert (note in said) is several, said
    Settings.load({"PAPERBOT_SCHEDULE": schedule}, dotenv=None)  # the environment's setting takes it too
