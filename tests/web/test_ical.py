"""`paperbot calendar`: RFC 5545 that two independent parsers read, and events that follow the schedule."""

from __future__ import annotations

import io
import re
import shutil
from contextlib import redirect_stdout

import icalendar
import pytest
import vobject

from bot import cli
from bot.catalog.queries import open_store
from bot.chat import commands, context
from bot.schedule.signups import Member

ENV = {
    "PAPERBOT_TIMEZONE": "Europe/Berlin",
    "PAPERBOT_MEETING": "thu 16:00",
    "PAPERBOT_MEETING_MINUTES": "90",
    "PAPERBOT_ADMINS": "UADMIN",
}


@pytest.fixture
def group(tmp_path, seeded_file, monkeypatch):
    """A database and the environment of `paperbot calendar`; `do(text, user)` types a command."""
    shutil.copyfile(seeded_file, tmp_path / "paperbot.db")
    monkeypatch.chdir(tmp_path)
    for name in list(__import__("os").environ):
        if name.startswith(("PAPERBOT_", "SLACK_", "DISCORD_")):
            monkeypatch.delenv(name)
    for name, value in {**ENV, "PAPERBOT_DB": str(tmp_path / "paperbot.db")}.items():
        monkeypatch.setenv(name, value)
    settings = cli.load_settings(__import__("os").environ)
    store = open_store(tmp_path / "paperbot.db")

    def do(line: str, user: str = "U1") -> str:
        ctx = context.Context(store, settings.group, Member(user, lambda: user == "UADMIN"), settings.now())
        answer = commands.run(ctx, line)
        assert answer.reply.ok, answer.reply
        return answer

    do.store = store
    yield do
    store.close()


class Out(io.StringIO):
    """stdout with the bytes buffer that `calendar` writes to."""

    def __init__(self):
        super().__init__()
        self.buffer = io.BytesIO()


def calendar(*args: str) -> bytes:
    out = Out()
    with redirect_stdout(out):
        assert cli.main(["calendar", *args]) == 0
    return out.buffer.getvalue()


def events(raw: bytes) -> dict[str, icalendar.Event]:
    return {str(e["uid"]): e for e in icalendar.Calendar.from_ical(raw).walk("VEVENT")}


def test_the_file_keeps_rfc_5545s_rules_and_two_parsers_read_the_same_events(group):
    title = 'Commas, semicolons; and a backslash \\ in "one" very long title that must be folded over lines'
    with group.store.write() as db:
        db.execute("UPDATE papers SET title = ?, summary = ? WHERE number = 3", [title, "第一行，中文摘要;\nline two"])
    group("signup 3 next", "U1")
    group("assign U2 5 2027-02-04", "UADMIN")
    raw = calendar()

    # RFC 5545 3.1: every line ends in CRLF and is at most 75 octets; no bare LF anywhere.
    assert raw.endswith(b"\r\n") and b"\n" not in raw.replace(b"\r\n", b"")
    for line in raw.split(b"\r\n"):
        assert len(line) <= 75, line
    unfolded = raw.replace(b"\r\n ", b"").decode()
    # 3.3.11: commas, semicolons and backslashes in TEXT are escaped, a newline is \n.
    assert "SUMMARY:Commas\\, semicolons\\; and a backslash \\\\ in" in unfolded
    assert "DESCRIPTION:第一行，中文摘要\\;\\nline two" in unfolded
    assert "BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin" in unfolded
    assert re.search(r"DTSTAMP:\d{8}T\d{6}Z", unfolded)

    ours = events(raw)
    assert len(ours) == 2
    [first] = [e for e in ours.values() if str(e["summary"]).startswith("Commas")]
    assert str(first["summary"]) == f"{title} — U1"  # the console's name: the id as typed
    assert first["dtstart"].params["TZID"] == "Europe/Berlin"
    assert (first.decoded("dtend") - first.decoded("dtstart")).total_seconds() == 90 * 60
    assert first.decoded("dtstart").strftime("%a %H:%M") == "Thu 16:00"

    # vobject parses it on its own, with its own unfolding and unescaping.
    theirs = {e.uid.value: e for e in vobject.readOne(raw.decode()).vevent_list}
    assert set(theirs) == set(ours)
    for uid, event in theirs.items():
        assert event.summary.value == str(ours[uid]["summary"])
        assert event.dtstart.value == ours[uid].decoded("dtstart")
        assert int(event.sequence.value) == int(ours[uid]["sequence"])
    assert theirs[str(first["uid"])].summary.value == f"{title} — U1"
    assert theirs[str(first["uid"])].description.value.startswith("第一行，中文摘要;\nline two")


def test_a_signup_changes_the_weeks_event_under_the_same_uid_with_a_higher_sequence(group):
    group("assign U2 5 2027-03-04", "UADMIN")
    before = events(calendar())
    [(uid, event)] = before.items()
    assert int(event["sequence"]) == 0 and "— U2" in str(event["summary"])
    again = events(calendar())
    assert int(again[uid]["sequence"]) == 0, "an unchanged week keeps its sequence"

    group("withdraw 2027-03-04", "U2")  # the week loses its booking: cancelled, same UID
    lost = events(calendar())
    assert set(lost) == {uid} and str(lost[uid]["status"]) == "CANCELLED" and int(lost[uid]["sequence"]) == 1

    group("signup 7 2027-03-04", "U3")
    after = events(calendar())
    assert set(after) == {uid}
    assert str(after[uid]["status"]) == "CONFIRMED" and int(after[uid]["sequence"]) == 2
    assert str(after[uid]["summary"]).endswith("— U3")


def test_a_skipped_week_is_cancelled(group):
    group("assign U2 5 2027-03-11", "UADMIN")
    [(uid, event)] = events(calendar()).items()
    group("unassign 2027-03-11", "UADMIN")
    group("skip 2027-03-11", "UADMIN")
    skipped = events(calendar())
    assert str(skipped[uid]["status"]) == "CANCELLED" and int(skipped[uid]["sequence"]) > int(event["sequence"])
    group("skip 2027-03-18", "UADMIN")  # a week skipped before it had a talk is cancelled too
    assert [str(e["status"]) for e in events(calendar()).values()] == ["CANCELLED", "CANCELLED"]


def test_member_gives_that_members_own_talks(group):
    group("assign U2 5 2027-03-04", "UADMIN")
    group("assign U3 6 2027-03-11", "UADMIN")
    mine = events(calendar("--member", "U2"))
    assert [str(e["summary"]).rsplit(" — ", 1)[1] for e in mine.values()] == ["U2"]


def test_a_channel_that_is_no_groups_gets_one_line(group, capsys):
    assert cli.main(["calendar", "--channel", "C0NOTHERE"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--channel" in err


def test_a_posted_week_without_a_presenter_is_an_event_of_its_paper(group):
    from datetime import datetime

    from bot.calendar import Week

    week = Week.containing(datetime.now(), __import__("zoneinfo").ZoneInfo("Europe/Berlin"))
    with group.store.write() as db:
        db.execute(
            "INSERT INTO deliveries (kind, dest, key, state, paper, claimed_at, updated_at) "
            "VALUES ('post', 'C0PAPERS', ?, 'sent', 3, 0, 'now')",
            [week.key],
        )
    [event] = events(calendar()).values()
    assert str(event["summary"]).startswith("Megatron-LM") and " — " not in str(event["summary"])
    assert str(event["uid"]).startswith(f"{week.key}-group1@")
