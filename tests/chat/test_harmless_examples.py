"""Help's examples, pasted as they are, destroy nothing: each changes nothing, or its reply says how
to undo it and that undo brings everything back."""

from __future__ import annotations

import re

import pytest

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.chat import commands, context
from bot.chat.commands import VERBS
from bot.console.render import render as console_text
from bot.schedule.signups import Member
from tests.support.clock import TZ, at

#: What a member would miss if it went: the catalog, the talks, the votes, the suggestions, the groups.
_STATE = (
    "SELECT number, id, title, summary, url, archived_at FROM papers ORDER BY number",
    "SELECT tag, paper FROM paper_tags ORDER BY tag, paper",
    "SELECT group_id, week, kind, presenter, paper FROM slots ORDER BY group_id, week",
    "SELECT paper, member FROM votes ORDER BY paper, member",
    "SELECT id, state FROM suggestions ORDER BY id",
    "SELECT id, channel, schedule, meeting, stopped FROM groups ORDER BY id",
)
_UNDO = re.compile(r"(?:Undo|Changed your mind\?|To add it back):? `/paper ([^`]+)`")


def _state(store) -> list:
    return [store.db.execute(sql).fetchall() for sql in _STATE]


def _say(store, line: str, user: str = "UADMIN") -> str:
    group = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))
    ctx = context.Context(store, group, Member(user, lambda: True), at("2026-12-02 10:00"))
    return console_text(commands.run(ctx, line).reply)


def _examples() -> list[str]:
    found = []
    for verb in VERBS.values():
        found.append(verb.example)
        found += [sub.example for sub in verb.subs]
    return found


@pytest.mark.parametrize("example", _examples())
def test_a_pasted_example_destroys_nothing(store, example):
    assert "signed up" in _say(store, "signup 7 next", user="U0MEMBER")  # a talk the example could clear
    before = _state(store)
    reply = _say(store, example)
    if _state(store) == before:
        return
    undo = _UNDO.search(reply)
    again = example if "Again takes it back" in reply else None  # a toggle: the same command undoes it
    undoing = undo[1] if undo is not None else again
    assert undoing is not None, f"`{example}` changed something and did not say how to undo it: {reply}"
    _say(store, undoing)
    assert _state(store) == before, f"`{example}`'s undo `{undoing}` did not bring everything back"


@pytest.mark.parametrize("example", _examples())
def test_an_example_with_half_a_surrogate_pair_gets_one_line_and_changes_nothing(store, example):
    # Discord's and Slack's forms come as JSON, which may carry a lone surrogate (\ud800): no database
    # or platform takes one, so it is refused before any verb sees it.
    before = _state(store)
    said = _say(store, f"{example} \ud800", user="U0MEMBER")
    assert said.startswith("✗") and "not valid Unicode" in said and len(said.splitlines()) == 1, said
    assert _state(store) == before
