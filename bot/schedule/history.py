"""A group's history in numbers: talks per month, per presenter and per tag, and who came.

    past = history.of_group(store, group, now)
    past.months        # [("2026-10", 3), ("2026-11", 0), ("2026-12", 2)]: every month from the first talk
    past.presenters    # [("U1", 4), ("U2", 1)]: most talks first
    past.tags          # [("llm", 3), ...]: the tags of the papers presented, most talks first
    past.attendance    # [Turnout(week, meeting, going), ...]: each meeting that is over, oldest first

A talk counts once its meeting is over (its start plus its length); attendance is the members who said
they were going (`attendance.going = 1`) to a meeting that is over. Read from the group's own rows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from bot.calendar import MeetingCalendar, Week
from bot.store.connection import Store

#: Months, presenters, tags and meetings a history keeps (the latest months and meetings; the most
#: frequent presenters and tags): what one chart or one reply can show.
MONTHS = 24
PRESENTERS = 12
TAGS = 12
MEETINGS = 26


@dataclass(frozen=True)
class Turnout:
    week: Week
    meeting: datetime
    going: int


@dataclass(frozen=True)
class History:
    talks: int
    months: list[tuple[str, int]]
    presenters: list[tuple[str, int]]
    tags: list[tuple[str, int]]
    attendance: list[Turnout]
    #: How many presenters and tags there are in all (the lists keep the first PRESENTERS and TAGS).
    all_presenters: int = 0
    all_tags: int = 0


def _month(moment: datetime) -> str:
    return f"{moment.year:04d}-{moment.month:02d}"


def _months_between(first: str, last: str) -> list[str]:
    """Every month from `first` to `last` ("YYYY-MM"), both included."""
    year, month = int(first[:4]), int(first[5:])
    out = []
    while (key := f"{year:04d}-{month:02d}") <= last:
        out.append(key)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def _ranked(counts: Counter, keep: int) -> list[tuple[str, int]]:
    """Most first; ties by name, so that the same history always reads the same."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:keep]


def of_group(store: Store, group: MeetingCalendar, now: datetime) -> History:
    """The history of `group` up to `now`: its talks given and the turnout of its meetings that are over."""
    rows = store.db.execute(
        "SELECT week, presenter, paper FROM slots WHERE group_id = ? AND kind = 'presenter' ORDER BY week",
        [group.group_id],
    ).fetchall()
    given = [(Week.from_key(w), p, n) for w, p, n in rows if group.ends(Week.from_key(w)) <= now]
    months: Counter = Counter()
    presenters: Counter = Counter()
    for week, presenter, _ in given:
        months[_month(group.meeting_of(week).astimezone(group.tz))] += 1
        presenters[presenter] += 1
    tags: Counter = Counter()
    papers = Counter(n for _, _, n in given)
    if papers:
        numbers = list(papers)
        marks = ",".join("?" * len(numbers))
        for number, tag in store.db.execute(
            f"SELECT pt.paper, t.name FROM paper_tags pt JOIN tags t ON t.id = pt.tag WHERE pt.paper IN ({marks})",
            numbers,
        ):
            tags[tag] += papers[number]  # a paper presented twice counts its tags twice
    span = _months_between(min(months), max(months))[-MONTHS:] if months else []
    going = dict(
        store.db.execute(
            "SELECT week, count(*) FROM attendance WHERE group_id = ? AND going = 1 GROUP BY week", [group.group_id]
        ).fetchall()
    )
    weeks = sorted({w for w, _, _ in given} | {Week.from_key(k) for k in going})
    turnout = [Turnout(w, group.meeting_of(w), going.get(w.key, 0)) for w in weeks if group.ends(w) <= now][-MEETINGS:]
    return History(
        talks=len(given),
        months=[(m, months[m]) for m in span],
        presenters=_ranked(presenters, PRESENTERS),
        tags=_ranked(tags, TAGS),
        attendance=turnout,
        all_presenters=len(presenters),
        all_tags=len(tags),
    )
