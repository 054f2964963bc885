"""A new place starts with an empty catalog: the commands that would list papers say, in one line,
how to add one, instead of nothing; a catalog with papers answers as before."""

from __future__ import annotations

import pytest

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.catalog.queries import open_store
from bot.chat import commands, context
from bot.chat.replies import Notice
from bot.console.render import render as console_text
from bot.rich_text import text
from bot.schedule.signups import Member
from tests.support.clock import TZ, at
from tests.support.databases import database_for

GROUP = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))
HINT = (
    "The catalog is empty: add a paper with `/paper add <link>` (admins), or suggest one with `/paper suggest <link>`."
)
LISTING = ["tags", "tag parallelism-dp", "search diloco", "search", "show 7", "related 7", "week"]


@pytest.fixture
def empty(tmp_path):
    folder = tmp_path / "new-place"
    folder.mkdir()
    store = open_store(database_for(folder), seed=None)  # as a new place, or `paperbot init --empty`, begins
    yield store
    store.close()


def _ctx(store) -> context.Context:
    return context.Context(store, GROUP, Member("U1", lambda: False), at("2026-12-02 10:00"))


def say(store, line: str) -> str:
    return console_text(commands.run(_ctx(store), line).reply)


@pytest.mark.parametrize("line", LISTING)
def test_a_command_that_lists_papers_tells_an_empty_catalog_how_to_begin(empty, line):
    assert say(empty, line).strip() == HINT  # one line, the same everywhere


def test_the_schedule_of_an_empty_catalog_lists_its_weeks_and_how_to_begin(empty):
    lines = say(empty, "schedule").strip().splitlines()
    assert lines[0].startswith("Coming weeks") and lines[-1] == HINT  # the weeks, and no "Sign up" to nothing


@pytest.mark.parametrize("line", [*LISTING, "schedule"])
def test_a_catalog_with_papers_answers_as_before(store, line):
    assert "The catalog is empty" not in say(store, line)


def test_app_home_of_an_empty_catalog_says_it_where_papers_would_be_listed(empty, store):
    home = commands.home(_ctx(empty))
    assert home.waiting == [] and home.notice is not None and console_text(home.notice).strip() == HINT
    assert commands.home(_ctx(store)).notice is None


def test_a_notice_of_the_members_own_stays_on_app_home(empty):
    told = Notice(text("You're signed up."))  # what a button on App Home answered
    assert commands.home(_ctx(empty), told).notice == told
