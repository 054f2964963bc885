"""Sign-ups, withdrawals and the admin verbs, through the command layer a user types into."""

from __future__ import annotations

import threading
from datetime import datetime

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.calendar import Meeting, MeetingCalendar, PostSchedule, Week
from bot.chat import commands
from bot.chat.context import Context
from bot.console.render import inline, render
from bot.console.session import serve as console_serve
from bot.schedule import slots
from bot.schedule.rows import BookedWeeks
from bot.schedule.signups import Member
from bot.slack.members import PLATFORM as SLACK
from tests.support.clock import TZ, at


@pytest.fixture
def group():
    return MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ), remind_days=2)


class Room:
    """The group's members typing /paper commands at a given moment."""

    def __init__(self, store, group, now: datetime):
        self.store, self.group, self.now = store, group, now

    def run(self, user: str, line: str, admin: bool = False):
        ctx = Context(self.store, self.group, Member(user, lambda: admin), self.now, platform=SLACK)
        return commands.run(ctx, line)

    def say(self, user: str, line: str, admin: bool = False) -> str:
        return render(self.run(user, line, admin).reply)

    def slots(self) -> list[tuple]:
        return self.store.db.execute("SELECT week, kind, presenter, paper FROM slots ORDER BY week").fetchall()


@pytest.fixture
def room(store, group):
    return Room(store, group, at("2026-12-02 10:00"))  # Wednesday of 2026-W49; meeting Thu 3 Dec 16:00


def test_signup_takes_the_first_open_week_this_week_included(room):
    answer = room.run("U1", "signup streaming-diloco")
    assert answer.change.line.week.key == "2026-W49"
    assert "You're signed up" in render(answer.reply) and "Thu 03 Dec 2026 16:00" in render(answer.reply)
    assert inline(commands.announcement(answer.change)).startswith("📅 @U1 will present #29 Streaming DiLoCo")
    assert room.run("U2", "signup 7").change.line.week.key == "2026-W50"
    assert room.slots() == [("2026-W49", "presenter", "U1", 29), ("2026-W50", "presenter", "U2", 7)]


def test_after_this_weeks_meeting_the_first_open_week_is_next_week(room):
    room.now = at("2026-12-03 16:00")
    assert room.run("U1", "signup 7").change.line.week.key == "2026-W50"


@pytest.mark.parametrize(
    "line, reply",
    [
        ("signup nope", "There is no paper `nope`"),
        ("signup stream-diloco", "Did you mean `streaming-diloco`?"),
        ("signup 7 2026-02-30", "is not a real date"),
        ("signup 7 yesterday", "is not a date"),
        ("signup 7 2026-11-26", "is over"),  # last week
        (
            "signup 7 9999-12-31",
            "too far ahead: bookings reach 520 weeks, about ten years. Pick a week up to `2036-11-13`",
        ),
        ("signup 7 2036-11-17", "too far ahead"),
        ("signup 7 2026-12-03", "is over"),  # today, but the meeting is after... see below
        ("signup", "Usage: `/paper signup <paper> [<date>]`"),
        ("signup 1 2 3", "Usage:"),
        ("withdraw 7", "You have no coming slot for #7"),
        ("withdraw next", "Nobody presents in the week of"),
        ("mine", "none — sign up"),
    ],
)
def test_wrong_requests_get_one_line_and_change_nothing(room, line, reply):
    if line == "signup 7 2026-12-03":
        room.now = at("2026-12-03 17:00")  # Thursday after the meeting
    text = room.say("U1", line)
    assert reply in text
    if line.startswith(("signup", "withdraw")):
        assert "\n" not in text.strip() and text.startswith("✗")
    assert room.slots() == []


def test_signing_up_twice_for_ones_own_week_says_so(room):
    assert "You're signed up" in room.say("U1", "signup 7 2026-12-07")
    again = room.say("U1", "signup 7 2026-12-07")  # a second click of the post's button
    assert "You're already signed up for the week of" in again and "#7" in again and "taken" not in again
    assert "is taken: @U1 presents" in room.say("U2", "signup 8 2026-12-07")
    assert len(room.slots()) == 1


@pytest.mark.parametrize("line", ["assign @U2 7 9999-12-31", "skip 9999-12-27"])
def test_admins_cannot_reach_past_ten_years_either(room, line):
    assert "too far ahead" in room.say("UADMIN", line, admin=True)
    assert room.slots() == []


def test_the_last_bookable_week_is_ten_years_out_and_the_schedule_still_answers(room):
    assert "You're signed up" in room.say("U1", "signup 7 2036-11-13")
    # A far week written before bookings had a horizon (or by hand) must not break anyone's schedule.
    room.store.db.execute(
        "INSERT INTO slots (week, kind, presenter, paper, booked_by, booked_at) "
        "VALUES ('9999-W52', 'presenter', 'U2', 8, 'U2', '2026-12-02')"
    )
    schedule = room.say("U3", "schedule")
    assert "Thu 13 Nov 2036 16:00" in schedule and "#7" in schedule and "9999" not in schedule
    assert "9999" in room.say("U2", "mine")  # still theirs to see
    assert "Cleared the week" in room.say("UADMIN", "unassign 9999-12-27", admin=True)  # and an admin can clear it


def test_taken_week_says_who_has_it_and_which_weeks_are_open(room):
    room.run("U1", "signup 7 2026-12-10")
    text = room.say("U2", "signup 8 2026-12-07")  # another day of the same week
    assert text.startswith("✗ The week of Thu 10 Dec 2026 is taken: @U1 presents #7")
    assert "Open weeks: `2026-12-03`, `2026-12-17`, `2026-12-24`" in text
    assert room.slots() == [("2026-W50", "presenter", "U1", 7)]


def test_a_paper_is_presented_once_but_an_admin_may_repeat_it(room):
    room.run("U1", "signup 7 next")
    assert "#7 AsyncDiff" in room.say("U2", "signup 7") and "is taken: @U1 presents it on Thu 10 Dec" in room.say(
        "U2", "signup 7"
    )
    assert "You already present #7" in room.say("U1", "signup asyncdiff 2026-12-21")
    assert "@U2 presents #7" in room.say("UADMIN", "assign @U2 7 2026-12-21", admin=True)
    assert [r[3] for r in room.slots()] == [7, 7]
    room.now = at("2026-12-31 10:00")  # both meetings are over
    assert (
        "#7 AsyncDiff: Parallelizing Diffusion Models by Asynchronous Denoising was presented by @U2 (Thu 24 Dec 2026)"
        in room.say("U3", "signup 7")
    )


def test_withdraw_only_your_own_slot(room):
    room.run("U1", "signup 7 next")
    text = room.say("U2", "withdraw 2026-12-08")
    assert "@U1's slot, not yours" in text
    assert "You have no coming slot" in room.say("U2", "withdraw 7")
    assert "only they can withdraw" in room.say("UADMIN", "withdraw next", admin=True)  # admins unassign instead
    assert len(room.slots()) == 1
    answer = room.run("U1", "withdraw 7")
    assert "The week is open again" in render(answer.reply)
    assert "open again (@U1 was to present #7" in inline(commands.announcement(answer.change))
    assert room.slots() == []


def test_cannot_withdraw_after_the_meeting(room):
    room.run("U1", "signup 7")  # this week, Thu 3 Dec 16:00
    room.now = at("2026-12-03 16:30")
    assert "is over" in room.say("U1", "withdraw 2026-12-03")
    assert "no coming slot" in room.say("U1", "withdraw 7")
    assert len(room.slots()) == 1
    assert "Your past slots" in room.say("U1", "mine")


@pytest.mark.parametrize("line", ["assign @U2 7", "unassign next", "skip next", "add"])
def test_non_admins_cannot(room, line):
    room.run("U3", "signup 9 next")
    before = room.slots()
    text = room.say("U1", line)
    assert text.startswith("✗ Only admins can")
    assert room.slots() == before


def test_an_admin_booking_a_paper_that_is_coming_up_already_is_told_so(room):
    say = lambda line: room.say("UADMIN", line, admin=True)  # noqa: E731
    room.run("U1", "signup 7 2026-12-10")
    said = say("assign @U2 7 2026-12-17")
    assert said.startswith("@U2 presents #7")
    assert said.endswith("It is also coming up on Thu 10 Dec 2026 16:00 CET (@U1).")
    assert say("assign @U3 7 2026-12-31").endswith("coming up on Thu 10 Dec 2026 16:00 CET (@U1) and 1 more week.")
    assert "also coming up" not in say("assign @U4 8 2027-01-07")  # a paper nobody has
    assert len(room.slots()) == 4  # papers may repeat: all four weeks are booked


def test_admin_assign_unassign_skip(room):
    say = lambda line: room.say("UADMIN", line, admin=True)  # noqa: E731
    assert "@U2 presents #7" in say("assign <@U2> 7 next")  # as help writes it; @U2 and U2 do too
    assert "is taken" in say("assign @U3 8 next") and "/paper unassign 2026-12-10" in say("assign @U3 8 next")
    assert "has a presenter (@U2)" in say("skip next")
    assert "Cleared the week" in say("unassign next")
    assert "has nobody to clear" in say("unassign next")
    assert "No meeting in the week of" in say("skip next")
    assert "already skipped" in say("skip next")
    assert "it is skipped" in room.say("U1", "signup 7 next")
    assert "Name the presenter" in say("assign ada 7")
    assert room.slots() == [("2026-W50", "skipped", None, None)]
    assert "is over" in say("skip 2026-11-26") and "is over" in say("unassign 2026-11-26")


def test_schedule_shows_presenters_open_weeks_and_skips(room):
    room.run("U1", "signup 7 2026-12-10")
    room.run("UADMIN", "skip 2026-12-24", admin=True)
    room.run("U2", "signup 8 2027-03-04")
    lines = slots.schedule(room.store, room.group, room.now)
    states = [(line.week.key, line.state) for line in lines]
    assert states[:5] == [
        ("2026-W49", "open"),
        ("2026-W50", "presenter"),
        ("2026-W51", "open"),
        ("2026-W52", "skipped"),
        ("2026-W53", "open"),
    ]
    assert ("2027-W09", "presenter") in states
    assert len([s for s in states if s[1] == "open"]) == 4


def test_schedule_shows_the_next_26_presenters_and_how_many_more_weeks_are_booked(room):
    for i in range(30):
        room.run(f"U{i}", f"signup {i + 1} {Week(2026, 50).plus(i).monday}")
    lines = slots.schedule(room.store, room.group, room.now)
    assert [(line.week, line.state) for line in lines[:27]] == [(Week(2026, 49), "open")] + [
        (Week(2026, 50).plus(i), "presenter") for i in range(26)
    ]
    # The four weeks after them are booked too: one line says so, and the open weeks follow.
    more = lines[27]
    assert (more.week, more.state, more.weeks) == (Week(2026, 50).plus(26), "booked", 4)
    assert [(line.week, line.state) for line in lines[28:]] == [(Week(2026, 50).plus(30 + i), "open") for i in range(3)]
    weeks_shown = [
        line for line in room.say("U1", "schedule").splitlines() if not line.startswith("  ") or line[2] == " "
    ]
    shown = weeks_shown  # the month names between weeks left out
    assert shown[28].endswith("—  4 more weeks booked") and f"{more.meeting:%d %b %Y}" in shown[28]  # after the heading
    assert shown[29].endswith("—  open") and f"{lines[28].meeting:%d %b %Y}" in shown[29]


def reference_schedule(room) -> list[tuple[str, str]]:
    """The schedule's rule spelled out plainly: the first 26 presenters from the first week ahead, the first 4
    open weeks, and the skips up to the last of those."""
    start = slots.first_week_ahead(room.group, room.now)
    booked = {Week.from_key(w): kind for w, kind, _, _ in room.slots()}
    presenters = sorted(w for w, kind in booked.items() if kind == "presenter" and w >= start)[:26]
    free, week = [], start
    while len(free) < 4:
        if week not in booked and room.group.meeting_of(week) > room.now:
            free.append(week)
        week = week.plus(1)
    last = max(presenters + free)
    skips = [w for w, kind in booked.items() if kind == "skipped" and start <= w <= last]
    states = {w: "presenter" for w in presenters} | {w: "open" for w in free} | {w: "skipped" for w in skips}
    # Presenters past the 26th, before a listed week: one 'booked' line for each run between listed weeks.
    runs: dict[Week, list[Week]] = {}
    unlisted = [w for w, kind in booked.items() if kind == "presenter" and w >= start and w not in presenters]
    for w in sorted(w for w in unlisted if w < last):
        runs.setdefault(min(x for x in states if x > w), []).append(w)
    lines = [(w.key, state, 1) for w, state in states.items()] + [(r[0].key, "booked", len(r)) for r in runs.values()]
    return sorted(lines)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.integers(-3, 90), st.sampled_from(["presenter", "skipped"]), max_size=60))
@example({i: "skipped" for i in range(20)} | {i: "presenter" for i in range(20, 80)})  # more rows than one read
def test_schedule_is_the_first_26_presenters_4_open_weeks_and_skips_among_them(room, layout):
    room.store.db.execute("DELETE FROM slots")
    papers: dict[Week, int] = {}
    for offset, kind in layout.items():
        week = Week(2026, 49).plus(offset)
        paper, presenter = (offset % 32 + 1, f"U{offset}") if kind == "presenter" else (None, None)
        papers[week] = paper
        room.store.db.execute(
            "INSERT INTO slots (week, kind, presenter, paper, booked_by, booked_at) VALUES (?, ?, ?, ?, 'UADMIN', '')",
            [week.key, kind, presenter, paper],
        )
    lines = slots.schedule(room.store, room.group, room.now)
    runs = [(line.week.key, line.state, line.weeks if isinstance(line, BookedWeeks) else 1) for line in lines]
    assert runs == reference_schedule(room)
    for line in lines:
        assert line.meeting == room.group.meeting_of(line.week)
        if line.state == "presenter":
            assert line.paper.number == papers[line.week] and line.presenter.startswith("U")


def all_at_once(n: int, fn) -> list:
    """fn(0) .. fn(n - 1), each in its own thread, released together; their results."""
    results: list = []
    barrier = threading.Barrier(n)

    def go(i: int):
        barrier.wait()
        results.append(fn(i))

    threads = [threading.Thread(target=go, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_many_threads_racing_for_one_week_one_wins(room):
    results = all_at_once(40, lambda i: room.say(f"U{i}", f"signup {i % 32 + 1} 2026-12-10"))
    wins = [r for r in results if r.startswith("You're signed up")]
    assert len(wins) == 1
    assert all("is taken" in r or "already presented" in r for r in results if r not in wins)
    assert len(room.slots()) == 1


def test_many_threads_without_a_date_each_get_their_own_week(room):
    results = all_at_once(20, lambda i: room.run(f"U{i}", f"signup {i + 1}"))
    weeks = sorted(a.change.line.week.key for a in results)
    assert len(weeks) == len(set(weeks)) == 20
    assert len(room.slots()) == 20


@pytest.mark.sqlite_only
def test_the_console_says_when_a_command_failed_and_reads_the_next(room):
    import io

    from bot.console.session import serve as console_serve

    room.store.db.execute("PRAGMA query_only = ON")  # as when the database file became read-only
    out = io.StringIO()
    context = lambda: Context(room.store, room.group, Member("U1", lambda: False), room.now)  # noqa: E731
    assert console_serve(context, stdin=io.StringIO("signup 7\nshow 7\n"), stdout=out) == 0
    said = out.getvalue()
    assert "Something went wrong on my side (OperationalError: attempt to write a readonly database)" in said
    assert "#7 " in said and "nobody has presented it yet" in said
    assert room.slots() == []


def test_the_helps_assign_example_works_in_the_console(room):
    """`assign @ada 7 next`, as help writes it: the console names a member `@ada` or `ada`."""
    import io

    out = io.StringIO()
    context = lambda: Context(room.store, room.group, Member("console", lambda: True), room.now)  # noqa: E731
    console_serve(context, stdin=io.StringIO("assign @ada 7 next\nassign bob 8 2026-12-17\n"), stdout=out)
    said = out.getvalue()
    assert "@ada presents #7 " in said and "@bob presents #8 " in said, said
    assert [(kind, presenter) for _, kind, presenter, _ in room.slots()] == [("presenter", "ada"), ("presenter", "bob")]


@pytest.mark.parametrize("typed, meant", [("serach diloco", "search"), ("shwo 7", "show"), ("sigup 7", "signup")])
def test_a_mistyped_verb_gets_did_you_mean_not_all_of_help(room, typed, meant):
    said = room.say("U1", typed)
    assert f"Did you mean `{meant}`?" in said and "Usage: `/paper " in said
    assert "/paper commands:" not in said  # not the whole help
    assert "/paper commands:" in room.say("U1", "frobnicate")  # nothing like a verb: the help


def test_the_console_takes_a_mention_as_the_console_writes_it_only(room):
    """The console reads @ada or ada, and a Slack mention pasted whole; anything else names the form it wants."""
    from bot.console.session import read_member

    assert read_member("@ada") == read_member("ada") == "ada"
    assert read_member("<@U2|ada>") == "U2"  # a mention pasted from Slack names its member
