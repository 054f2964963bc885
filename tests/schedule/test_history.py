"""A group's history from its own rows: talks per month, presenter and tag, and who went."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from bot.schedule import history
from tests.support.history import seed_history
from tests.support.slack_group import settings_for

#: A Friday: this week's Thursday meeting is over, the one two weeks on is ahead.
NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def test_the_history_counts_talks_given_by_month_presenter_and_tag_and_who_went(tmp_path, store):
    calendar = settings_for(tmp_path).group
    seed_history(store, calendar, NOW)
    past = history.of_group(store, calendar, NOW)
    assert past.talks == 7, "the coming talk is not history yet"
    assert past.months == [("2026-09", 2), ("2026-10", 2), ("2026-11", 2), ("2026-12", 1)]
    assert past.presenters == [("U1", 3), ("U2", 2), ("U3", 2)]
    assert past.tags == [("parallelism-dp", 7), ("llm", 4), ("moe", 3)]
    going = [(t.meeting.date().isoformat(), t.going) for t in past.attendance]
    assert going[-4:] == [("2026-10-22", 4), ("2026-11-05", 2), ("2026-11-19", 3), ("2026-12-03", 0)]
    assert len(going) == 7, "every meeting with a talk given, whether or not anyone said they would come"


def test_a_month_without_talks_shows_as_none_and_another_group_is_apart(tmp_path, store):
    calendar = settings_for(tmp_path).group
    this = calendar.week_of(NOW)
    with store.write() as db:
        for ahead, paper in [(-1, 1), (-14, 2)]:  # late November, late August: none between
            db.execute(
                "INSERT INTO slots (group_id, week, kind, presenter, paper, booked_by, booked_at) "
                "VALUES (1, ?, 'presenter', 'U1', ?, 'U1', 'then')",
                [this.plus(ahead).key, paper],
            )
    past = history.of_group(store, calendar, NOW)
    assert past.months == [("2026-08", 1), ("2026-09", 0), ("2026-10", 0), ("2026-11", 1)]
    other = history.of_group(store, replace(calendar, group_id=2), NOW)
    assert other.talks == 0 and other.months == [] and other.attendance == []
