"""PAPERBOT_GROUP_NAME names the group on its page and in its calendar (X-WR-CALNAME)."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import icalendar
import pytest

from bot import cli


class _Out(io.StringIO):
    """stdout with the bytes buffer that `calendar` writes to."""

    def __init__(self):
        super().__init__()
        self.buffer = io.BytesIO()


@pytest.mark.parametrize(
    ("typed", "shown"), [("  Systems   Reading Club ", "Systems Reading Club"), ("", "Reading group")]
)
def test_the_group_name_titles_the_calendar_and_the_page(tmp_path, monkeypatch, typed, shown):
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    monkeypatch.setenv("PAPERBOT_GROUP_NAME", typed)
    out = _Out()
    with redirect_stdout(out):
        assert cli.main(["calendar"]) == 0
    assert str(icalendar.Calendar.from_ical(out.buffer.getvalue())["X-WR-CALNAME"]) == shown

    with redirect_stdout(io.StringIO()):
        assert cli.main(["site", str(tmp_path / "public")]) == 0
    assert f"<title>{shown} — talks and papers</title>" in (tmp_path / "public" / "index.html").read_text()


def _calendar(args: list[str]) -> icalendar.Calendar:
    out = _Out()
    with redirect_stdout(out):
        assert cli.main(["calendar", *args]) == 0
    return icalendar.Calendar.from_ical(out.buffer.getvalue())


def test_group_set_name_names_a_chat_groups_calendar_its_events_and_page(tmp_path, monkeypatch):
    from bot.catalog import queries as catalog
    from bot.chat import commands, context
    from bot.schedule import groups
    from bot.schedule.signups import Member
    from bot.settings import Settings

    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    monkeypatch.delenv("PAPERBOT_GROUP_NAME", raising=False)
    store = catalog.open_store(tmp_path / "paperbot.db")
    env = Settings.load({}, dotenv=None)

    def run(line: str) -> None:
        ctx = context.Context(store, env.group, Member("ops", lambda: True), env.now(), where="C0NEW")
        ctx.env = groups.from_settings(env)
        commands.run(ctx, line)

    run("group start")
    run("signup 7 next")
    before = _calendar(["--channel", "C0NEW"])
    assert str(before["X-WR-CALNAME"]) == "Reading group in C0NEW"
    (event,) = before.walk("VEVENT")
    assert "Reading group:" not in str(event.get("DESCRIPTION", "")) and event["SEQUENCE"] == 0

    run('group set name "Systems <b>Club</b>"')
    after = _calendar(["--channel", "C0NEW"])
    assert str(after["X-WR-CALNAME"]) == "Systems <b>Club</b>"
    (event,) = after.walk("VEVENT")
    assert "Reading group: Systems <b>Club</b>" in str(event["DESCRIPTION"]) and event["SEQUENCE"] == 1
    with redirect_stdout(io.StringIO()):
        assert cli.main(["site", str(tmp_path / "public"), "--channel", "C0NEW"]) == 0
    page = (tmp_path / "public" / "index.html").read_text()
    assert "<title>Systems &lt;b&gt;Club&lt;/b&gt; — talks and papers</title>" in page
    assert "<h1>Systems &lt;b&gt;Club&lt;/b&gt;</h1>" in page and "<b>Club" not in page
    store.close()


def test_the_dry_run_post_opens_with_the_groups_name(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    monkeypatch.setenv("PAPERBOT_GROUP_NAME", "Systems Reading Club")
    monkeypatch.setenv("PAPERBOT_MEETING", "thu 16:00")
    assert cli.main(["post-week", "--dry-run", "--at", "2026-12-07T10:00"]) == 0
    assert capsys.readouterr().out.startswith("📄 Systems Reading Club · Paper of the week 2026-W50: #1 ")
