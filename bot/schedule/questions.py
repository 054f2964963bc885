"""Questions members bring to a meeting, and the meeting's discussion where they are posted.

    q = questions.ask(store, group, now, "U1", "slack", "Why 4 bits?", None)   # the coming meeting
    questions.of_meeting(store, group_id, week)                                 # oldest first, numbered
    questions.discuss(store, groups, transport_of, now)     # the scheduler's check, and after an ask

A question belongs to a meeting (its ISO week, as slots are), not to a talk: a presenter who
changes hands keeps the room's questions. Each is posted once in the meeting's discussion (the
weekly post's thread on Slack, a thread on the post on Discord) as a `delivery` keyed by the
question's id, so that a replay, a crash or a second process never posts it twice; one asked
before the post is out waits for it. When the meeting starts, a digest of them goes in the thread,
once (a delivery keyed by the week).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.calendar import BadDate, MeetingCalendar, Week
from bot.delivery import sending as delivery
from bot.delivery.sending import Delivery, NoLongerWanted, NothingToSend, Result, Transport
from bot.rich_text import When, command_code
from bot.schedule import attendance, groups
from bot.schedule.rows import Question, TalkWeek
from bot.schedule.signups import Member, Refusal
from bot.store.connection import Store

#: The longest question kept: a discussion point, not an essay (and it fits every platform's message).
MAX_LENGTH = 500
#: Questions one meeting takes: a flood (or a script) stops here.
MAX_A_MEETING = 100


@dataclass(frozen=True)
class InThread:
    """A question as it is posted in the meeting's discussion."""

    question: Question


@dataclass(frozen=True)
class Digest:
    """The meeting's questions, posted in its discussion when it starts."""

    week: Week
    questions: tuple[Question, ...]


def meeting_for(store: Store, group: MeetingCalendar, now: datetime, date: str | None) -> Week:
    """The meeting a question is for: the coming one, or the one of `date`; Refusal when there is none to ask about."""
    return attendance.meeting_week(store, group, now, date, ": ask about a coming one")


def _read(rows: Iterable) -> list[Question]:
    out: list[Question] = []
    number: dict[str, int] = {}
    for id_, week, by, said, asked_at in rows:
        number[week] = number.get(week, 0) + 1
        out.append(Question(id_, Week.from_key(week), by, said, datetime.fromisoformat(asked_at), number[week]))
    return out


_COLUMNS = "id, week, asked_by, text, asked_at"


def of_meeting(store: Store, group_id: int, week: Week) -> list[Question]:
    """The meeting's questions, oldest first, numbered from 1."""
    rows = store.db.execute(
        f"SELECT {_COLUMNS} FROM questions WHERE group_id = ? AND week = ? ORDER BY id", [group_id, week.key]
    ).fetchall()
    return _read(rows)


def of_meetings(store: Store, group_id: int, weeks: Iterable[Week]) -> dict[str, list[Question]]:
    """The questions of several meetings of a group, by week key."""
    keys = sorted({w.key for w in weeks})
    if not keys:
        return {}
    rows = store.db.execute(
        f"SELECT {_COLUMNS} FROM questions WHERE group_id = ? AND week IN ({','.join('?' * len(keys))}) "
        "ORDER BY week, id",
        [group_id, *keys],
    ).fetchall()
    found: dict[str, list[Question]] = {}
    for q in _read(rows):
        found.setdefault(q.week.key, []).append(q)
    return found


def of_talks(store: Store, lines: Iterable[TalkWeek]) -> dict[tuple[int, str], tuple[Question, ...]]:
    """The questions of the meetings of talks in any group, by (group id, week key)."""
    found: dict[tuple[int, str], tuple[Question, ...]] = {}
    for line in lines:
        if line.group_id is not None:
            asked = of_meeting(store, line.group_id, line.week)
            if asked:
                found[(line.group_id, line.week.key)] = tuple(asked)
    return found


#: Run inside a question's write with its meeting's week: the post's update is queued with it.
Then = Callable[[Week], None] | None


def ask(
    store: Store,
    group: MeetingCalendar,
    now: datetime,
    member: str,
    platform: str,
    said: str,
    date: str | None,
    then: Then = None,
) -> Question:
    """Save a question for the coming meeting (or `date`'s); Refusal, changing nothing, when it cannot be."""
    said = said.strip()
    if not said:
        raise Refusal("What is your question? For example ", command_code("ask Why does it need 4 bits?"), ".")
    if len(said) > MAX_LENGTH:
        raise Refusal(f"That question is {len(said)} characters long: keep it under {MAX_LENGTH}.")
    week = meeting_for(store, group, now, date)
    with store.write() as db:
        count = db.execute(
            "SELECT count(*) FROM questions WHERE group_id = ? AND week = ?", [group.group_id, week.key]
        ).fetchone()[0]
        if count >= MAX_A_MEETING:
            raise Refusal(f"That meeting has {count} questions already: bring yours to the discussion.")
        stamp = now.astimezone(UTC).isoformat(timespec="seconds")
        id_ = db.execute(
            "INSERT INTO questions (group_id, week, asked_by, platform, text, asked_at) VALUES (?, ?, ?, ?, ?, ?) "
            "RETURNING id",
            [group.group_id, week.key, member, platform, said, stamp],
        ).fetchone()[0]
        if then is not None:
            then(week)
    return Question(id_, week, member, said, datetime.fromisoformat(stamp), count + 1)


def remove(
    store: Store, group: MeetingCalendar, now: datetime, member: Member, date: str | None, n: int, then: Then = None
) -> Question:
    """Remove question `n` of the coming meeting (or `date`'s): its asker or an admin."""
    week = group.coming(now) if date is None else week_of(group, now, date)
    with store.write() as db:
        found = _read(
            db.execute(
                f"SELECT {_COLUMNS} FROM questions WHERE group_id = ? AND week = ? ORDER BY id",
                [group.group_id, week.key],
            ).fetchall()
        )
        if not 1 <= n <= len(found):
            held = f"has {len(found)}" if found else "has none"
            raise Refusal(
                "The meeting of ", When(group.meeting_of(week)), f" has no question {n} (it {held}): ",
                command_code("questions"), ".",
            )  # fmt: skip
        question = found[n - 1]
        if question.asked_by != member.id and not member.is_admin():
            raise Refusal("Only its asker or an admin can remove a question.")
        db.execute("DELETE FROM questions WHERE id = ?", [question.id])
        if then is not None:
            then(week)
    return question


def week_of(group: MeetingCalendar, now: datetime, date: str) -> Week:
    """The meeting's week that `date` names, over or not (its questions are kept); Refusal for no date."""
    try:
        return group.parse_week(date, now)
    except BadDate as e:
        raise Refusal(str(e)) from None


# -- the discussion ------------------------------------------------------------------


def thread_of(store: Store, channel: str, week: Week) -> delivery.Sent | None:
    """The weekly post that opens the meeting's discussion, once it is out."""
    return delivery.sent_message(store, "post", channel, week.key)


def _as_it_stands(store: Store, question: Question) -> tuple[InThread, None]:
    """The question as it is at this attempt: one removed while an attempt waited is not posted."""
    if store.db.execute("SELECT 1 FROM questions WHERE id = ?", [question.id]).fetchone() is None:
        raise NoLongerWanted(f"question {question.id} was removed")
    return InThread(question), None


#: Weeks back whose questions still go to their thread (a bot down over a meeting posts them after).
WEEKS_BACK = 1


@dataclass(frozen=True)
class Posted:
    question: Question
    result: Result


def post_due(
    store: Store,
    calendars: dict[str, MeetingCalendar],
    transport_of: Callable[[str], Transport],
    now: datetime,
    *,
    sleep=None,
) -> list[Posted]:
    """Post, in each group's meeting's discussion (`calendars` by channel), the questions not posted
    yet whose weekly post is out; oldest first. One query finds them for every group."""
    if not calendars:
        return []
    by_group = {c.group_id: (channel, c) for channel, c in calendars.items()}
    first = min(c.week_of(now).plus(-WEEKS_BACK) for c in calendars.values())
    rows = store.db.execute(
        "SELECT q.group_id, q.id, q.week FROM questions q WHERE q.week >= ? AND NOT EXISTS "
        "(SELECT 1 FROM deliveries d WHERE d.kind = 'question' AND d.key = CAST(q.id AS TEXT) AND d.state = 'sent') "
        "ORDER BY q.id",
        [first.key],
    ).fetchall()
    wanted: dict[tuple[int, str], set[int]] = {}
    for group_id, id_, week in rows:
        if group_id in by_group:
            wanted.setdefault((group_id, week), set()).add(id_)
    out: list[Posted] = []
    for (group_id, week_key), ids in sorted(wanted.items()):
        channel, _ = by_group[group_id]
        week = Week.from_key(week_key)
        post = thread_of(store, channel, week)
        if post is None:  # asked before the post: it waits for it
            continue
        transport = transport_of(channel)
        for question in of_meeting(store, group_id, week):
            if question.id not in ids:
                continue
            d = Delivery("question", channel, str(question.id), thread=post.ref)
            build = functools.partial(_as_it_stands, store, question)
            kwargs = {"sleep": sleep} if sleep else {}
            result = delivery.deliver(store, d, build, transport, **kwargs)
            out.append(Posted(question, result))
            if not result.delivered and result.status != "moot":
                break  # the thread refuses, or waits: the later questions keep their order
    return out


def post_digests(
    store: Store,
    calendars: dict[str, MeetingCalendar],
    transport_of: Callable[[str], Transport],
    now: datetime,
    *,
    force: bool = False,
    sleep=None,
) -> list[tuple[Week, Result]]:
    """Post the digest of each meeting under way at `now` that has questions and its post out, once."""
    out: list[tuple[Week, Result]] = []
    for channel, calendar in calendars.items():
        week = calendar.week_of(now)
        if not calendar.meeting_of(week) <= now < calendar.ends(week):
            continue
        post = thread_of(store, channel, week)
        if post is None or not of_meeting(store, calendar.group_id, week):
            continue
        if delivery.sent_message(store, "digest", channel, week.key) is not None:
            continue
        d = Delivery("digest", channel, week.key, thread=post.ref)
        build = functools.partial(_digest, store, calendar, week)
        kwargs = {"sleep": sleep} if sleep else {}
        out.append((week, delivery.deliver(store, d, build, transport_of(channel), force=force, **kwargs)))
    return out


def _digest(store: Store, calendar: MeetingCalendar, week: Week) -> tuple[Digest, None]:
    found = of_meeting(store, calendar.group_id, week)
    if not found:
        raise NothingToSend(f"the meeting of {week} has no questions left")
    return Digest(week, tuple(found)), None


def discuss(
    store: Store, chosen: list[groups.Group], transport_of: Callable[[groups.Group], Transport], at: datetime, **how
) -> list[Result]:
    """Post in the meetings' threads of `chosen`'s groups the questions not posted yet (their post
    out), and at a meeting's start its digest, each once (`how`: the sleep between tries): the
    scheduler's check, and an adapter's after an `ask`'s reply."""
    by_channel = {g.channel: g for g in chosen if g.channel}
    calendars = {channel: g.calendar for channel, g in by_channel.items()}

    def by(channel: str) -> Transport:
        return transport_of(by_channel[channel])

    # One at a time in a process: a second caller (a question asked while the first posts) would find
    # the first's question busy and stop, leaving its own for the next check; waiting, it posts it.
    with _DISCUSSING:
        posted = post_due(store, calendars, by, at, **how)
        digests = post_digests(store, calendars, by, at, **how)
    return [p.result for p in posted] + [result for _, result in digests]


_DISCUSSING = threading.Lock()
