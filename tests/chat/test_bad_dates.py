"""Words shaped as dates are dates: one that is no real date is named as such, never "no paper"."""

from __future__ import annotations

import pytest

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.chat import commands, context
from bot.chat.commands import VERBS
from bot.chat.registry import DATE, SLOT
from bot.console.render import render as console_text
from bot.schedule.signups import Member
from tests.support.clock import TZ, at


def _dated_examples() -> list[str]:
    """Each verb's example with its date (or paper-or-date) argument made `{}`."""
    found = []
    for verb in VERBS.values():
        words = verb.example.split()[len(verb.words.split()) :]
        for k, arg in enumerate(a for a in verb.args if not a.hidden):
            if arg.kind in (DATE, SLOT) and k < len(words):
                found.append(" ".join([verb.words, *words[:k], "{}", *words[k + 1 :]]))
    return found


def test_every_verb_taking_a_date_is_asked():
    assert {line.split()[0] for line in _dated_examples()} >= {"withdraw", "slides", "signup", "unassign", "skip"}


@pytest.mark.parametrize("line", _dated_examples())
@pytest.mark.parametrize("bad", ["2026-13-01", "2026-02-30", "2026-W60"])
def test_a_date_that_is_no_real_date_is_named_as_one(store, line, bad):
    group = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))
    ctx = context.Context(store, group, Member("UADMIN", lambda: True), at("2026-12-02 10:00"))
    reply = console_text(commands.run(ctx, line.replace("@ada", "U0ADA").format(bad)).reply)
    assert reply.startswith("✗ ") and "no paper" not in reply
    assert ("not a real date" in reply) if "W" not in bad else ("has no week 60" in reply), reply


@pytest.mark.parametrize(
    "line",
    dict.fromkeys([*_dated_examples(), "questions {}", "going {}", "swap accept {} U0ADA"]),
)
@pytest.mark.parametrize("end", ["9999-12-31", "9999-W52"])
def test_a_week_whose_meeting_falls_past_the_calendars_end_is_refused_in_one_line(store, line, end):
    # A Sunday meeting in the week of 9999-12-31 would be on 10000-01-02, which no calendar holds.
    group = MeetingCalendar(TZ, Meeting.parse("sun 20:00"), PostSchedule("0 9 * * mon", TZ))
    ctx = context.Context(store, group, Member("UADMIN", lambda: True), at("2026-12-02 10:00"))
    reply = console_text(commands.run(ctx, line.replace("@ada", "U0ADA").format(end)).reply)
    assert reply.startswith("✗ ") and "too far ahead" in reply and len(reply.splitlines()) == 1, reply
