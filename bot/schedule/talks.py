"""Talks and their materials: links to slides, a recording or notes, and the talks given.

    talks.attach(store, group, now, member, "29", "https://example.org/slides.pdf")   # the paper's latest talk
    talks.attach(store, group, now, member, "2026-12-10", url)                       # that week's talk
    talks.detach(store, group, now, member, "29", url)
    talks.past(store, group, now, page=1)                                            # talks given, newest first

A talk is a week with a presenter (a row of `slots`); its links are rows of
`talk_links`, several a talk, each kept once, and go with the talk: the store deletes
them when it is withdrawn, cleared or replaced (migration m013's triggers), so they never
show on the next presenter's talk of that week. Only the talk's presenter or an admin
adds or removes them. A paper names its latest talk given (the coming one when it
has none given yet).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

from bot.calendar import BadDate, MeetingCalendar, Week
from bot.catalog import queries as catalog
from bot.catalog.papers import Paper
from bot.rich_text import Code, PaperRef, When, command_code
from bot.schedule import attendance, questions, signups, slots
from bot.schedule.rows import TalkLinks, TalkWeek
from bot.schedule.signups import Member, Refusal
from bot.store.connection import Store

#: A link is at most this long, and a talk has at most this many.
MAX_LINK = 1000
MAX_LINKS = 10
#: Talks one `past` reply lists.
PAST_PAGE = 20

_URL = re.compile(r"^https?://[^\s<>|\"'`]+$", re.IGNORECASE)


def check_url(url: str) -> str:
    """The link as stored, or Refusal: http or https only, no spaces or <>|"'`, at most MAX_LINK long."""
    url = url.strip().strip("<>")  # a link written between angle brackets, as in mail
    if len(url) > MAX_LINK:
        raise Refusal(f"That link is {len(url)} characters long; a link may have at most {MAX_LINK}.")
    if not _URL.match(url):
        raise Refusal("A link must start with ", Code("https://"), " or ", Code("http://"), " and have no spaces.")
    scheme, rest = url.split(":", 1)
    return scheme.lower() + ":" + rest


def links(store: Store, weeks: Iterable[Week], group_id: int) -> dict[str, tuple[str, ...]]:
    """The links of each of `weeks` that has any, by week key, in the order they were added."""
    keys = [w.key for w in weeks]
    if not keys:
        return {}
    marks = ",".join("?" * len(keys))
    found: dict[str, list[str]] = {}
    for week, url in store.db.execute(
        f"SELECT week, url FROM talk_links WHERE group_id = ? AND week IN ({marks}) ORDER BY id", [group_id, *keys]
    ):
        found.setdefault(week, []).append(url)
    return {k: tuple(v) for k, v in found.items()}


def _talk_of(store: Store, group: MeetingCalendar, now: datetime, ref: str) -> TalkWeek:
    """The talk that `ref` names: a date's week (which must have a presenter), or a paper's latest talk."""
    ref = ref.strip()
    week: Week | None = None
    if re.match(r"^\d{4}-\d{2}-\d{2}$|^\d{4}-W\d{2}$|^next$|^this$", ref, re.IGNORECASE):
        try:
            week = group.parse_week(ref, now)
        except BadDate as e:
            raise Refusal(str(e)) from None
        line = slots.line_for(store, group, week)
        if not isinstance(line, TalkWeek):
            raise Refusal(
                "Nobody presents in the week of ", When(line.meeting, with_time=False), ": there is no talk there."
            )
        return line
    paper = signups.find_paper(store, ref)
    history = slots.history(store, group, paper)
    given = [s for s in history if s.meeting <= now]
    talk = given[-1] if given else (history[0] if history else None)
    if talk is None:
        raise Refusal(
            PaperRef(paper), " has no talk yet. Once someone signs up: ", command_code(f"slides {paper.number} <link>")
        )
    return talk


def _may_change(member: Member, talk: TalkWeek) -> None:
    if member.id != talk.presenter and not member.is_admin():
        raise Refusal("Only the presenter of that talk or an admin can change its links.")


def attach(
    store: Store, group: MeetingCalendar, now: datetime, member: Member, ref: str, url: str
) -> tuple[TalkWeek, bool]:
    """Add a link to the talk `ref` names; (the talk, False when it had that link already). Raises Refusal."""
    url, group_id = check_url(url), group.group_id
    talk = _talk_of(store, group, now, ref)
    _may_change(member, talk)
    with store.write() as db:
        now_there = slots.read_slot(db, talk.week, group_id)
        asked = (talk.presenter, talk.paper.number if talk.paper else None)
        if not isinstance(now_there, slots.Booked) or (now_there.presenter, now_there.paper) != asked:
            raise Refusal("That talk changed just now (withdrawn or given to someone else): nothing was added.")
        row = db.execute(
            "SELECT count(*), coalesce(sum(CASE WHEN url = ? THEN 1 ELSE 0 END), 0) FROM talk_links "
            "WHERE group_id = ? AND week = ?",
            [url, group_id, talk.week.key],
        ).fetchone()
        if row[1]:
            return talk, False
        if row[0] >= MAX_LINKS:
            raise Refusal(f"That talk has {MAX_LINKS} links already; remove one first.")
        db.execute(
            "INSERT INTO talk_links (group_id, week, url, added_by, added_at) VALUES (?, ?, ?, ?, ?)",
            [group_id, talk.week.key, url, member.id, datetime.now(UTC).isoformat(timespec="seconds")],
        )
    return talk, True


def detach(store: Store, group: MeetingCalendar, now: datetime, member: Member, ref: str, url: str) -> TalkWeek:
    """Remove a link from the talk `ref` names. Raises Refusal (not its presenter, no such link)."""
    talk = _talk_of(store, group, now, ref)
    _may_change(member, talk)
    url, group_id = url.strip().strip("<>"), group.group_id
    with store.write() as db:
        gone = db.execute(
            "DELETE FROM talk_links WHERE group_id = ? AND week = ? AND url = ?", [group_id, talk.week.key, url]
        ).rowcount
    if not gone:
        where = (" Its links: ", command_code(f"show {talk.paper.number}")) if talk.paper else ()
        raise Refusal("That talk has no such link.", *where)
    return talk


def past(
    store: Store, group: MeetingCalendar, now: datetime, page: int = 1, size: int = PAST_PAGE
) -> tuple[list[TalkLinks], bool]:
    """Talks given (weeks before this one with a presenter, and this week's once its meeting is over),
    newest first, a page at a time; and whether more follow."""
    this_week = group.week_of(now)
    before = this_week.plus(1) if group.meeting_of(this_week) <= now else this_week
    rows = slots.read_slots(
        store.db,
        f"SELECT {slots.SLOT_COLUMNS} FROM slots WHERE group_id = ? AND kind = 'presenter' AND week < ? "
        "ORDER BY week DESC LIMIT ? OFFSET ?",
        [group.group_id, before.key, size + 1, (page - 1) * size],
    )
    more = len(rows) > size
    rows = rows[:size]
    papers = catalog.many(store, {s.paper for s in rows if s.kind == "presenter"})
    lines = [line for s in rows if isinstance(line := slots.line_for(store, group, s.week, s, papers), TalkWeek)]
    found = links(store, [s.week for s in rows], group.group_id)
    asked = questions.of_meetings(store, group.group_id, [s.week for s in rows])
    went = attendance.count(store, group.group_id, [s.week for s in rows])
    return [
        TalkLinks(line, found.get(line.week.key, ()), tuple(asked.get(line.week.key, ())), went.get(line.week.key, 0))
        for line in lines
    ], more


def of_paper(store: Store, paper: Paper) -> dict[tuple[int, str], tuple[str, ...]]:
    """The links of every talk of `paper`, in every group, by (group id, week key): each link is its
    own group's talk's, though two groups presented the paper in the same week."""
    found: dict[tuple[int, str], tuple[str, ...]] = {}
    for group_id, week, url in store.db.execute(
        "SELECT l.group_id, l.week, l.url FROM talk_links l JOIN slots s ON s.group_id = l.group_id "
        "AND s.week = l.week WHERE s.paper = ? AND s.kind = 'presenter' ORDER BY l.id",
        [paper.number],
    ):
        found[(group_id, week)] = found.get((group_id, week), ()) + (url,)
    return found


def last_week(store: Store, group: MeetingCalendar, week: Week) -> TalkLinks | None:
    """The talk of the week before `week`, when it has links (the weekly post mentions them)."""
    before = week.plus(-1)
    found = links(store, [before], group.group_id).get(before.key)
    if not found:
        return None
    line = slots.line_for(store, group, before)
    return TalkLinks(line, found) if isinstance(line, TalkWeek) else None
