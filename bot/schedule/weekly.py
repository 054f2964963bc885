"""The paper of the week: which paper, and posting it once per week.

    outcome = weekly.post_week(store, group, transport, "C0PAPERS", now)              # the scheduler's check
    outcome = weekly.post_week(store, group, transport, "C0PAPERS", at, force=True)  # `paperbot post-week`

The paper is the presenter's choice when the week has one. Otherwise it is the
next paper in the rotation: the one featured (posted or presented) the fewest
times, lowest number first, skipping papers that someone will present later,
and within the focus tag when one is set. So no paper repeats until every
paper has had its week, and then a new round starts in the same order.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from bot.calendar import MeetingCalendar, Week
from bot.catalog import queries as catalog
from bot.catalog.papers import Paper
from bot.delivery import sending as delivery
from bot.delivery.sending import Delivery, NoLongerWanted, NothingToSend, Result, Transport
from bot.schedule import attendance, slots, talks
from bot.schedule.rows import WeeklyPost
from bot.store.connection import Store

#: What became of a meeting's post: delivery's words for it ('sent', 'found', 'done', 'busy',
#: 'waiting', 'failed', 'stopped'), or no post wanted ('skipped'; 'no-slot': no slot of the schedule
#: has come; 'over': the meeting it announces is over; 'before-start': its slot passed before the group began).
PostStatus = Literal[
    "sent",
    "found",
    "done",
    "busy",
    "waiting",
    "failed",
    "stopped",
    "unreachable",
    "skipped",
    "no-slot",
    "over",
    "before-start",
]


@dataclass(frozen=True)
class Outcome:
    week: Week
    status: PostStatus
    detail: str = ""
    post: WeeklyPost | None = None
    result: Result | None = None

    @property
    def ok(self) -> bool:
        """The week has its post, or needs none."""
        return self.status in ("sent", "found", "done", "skipped", "no-slot", "over", "before-start")


#: A post planned but not sent counts as featured for this long after its first try (its week is
#: over by then, and a post is never made for a week that is over but on an operator's request).
PLANNED_POST_DAYS = 8


#: How the rotation picks among papers not yet featured (PAPERBOT_ROTATION): the lowest number, or the most votes.
ROTATIONS = ("catalog", "votes")


def own_posts(group_id: int) -> tuple[str, list]:
    """A condition on `deliveries.dest` for the posts of group `group_id`, and its arguments: a chat
    group's are in its channel; group 1's anywhere else, so that a PAPERBOT_CHANNEL changed by the
    operator keeps the group's history (a channel is one group's, so dest keeps groups apart)."""
    if group_id == 1:
        return "dest NOT IN (SELECT channel FROM groups WHERE id != 1)", []
    return "dest = (SELECT channel FROM groups WHERE id = ?)", [group_id]


def next_in_rotation(
    store: Store, week: Week, focus_tag: str | None, this_week: Week, rotation: str = "catalog", group_id: int = 1
) -> Paper | None:
    """The paper the rotation of group `group_id` features in `week` when nobody presents."""
    db = store.db
    own, own_args = own_posts(group_id)
    focus_join, focus_args = "", []
    if focus_tag:
        focus_join = "JOIN paper_tags ft ON ft.paper = p.number AND ft.tag = (SELECT id FROM tags WHERE name = ?)"
        focus_args = [focus_tag]
    # Featured: posted (to any channel: a group that moves to a new channel has still seen its papers),
    # planned for another week whose post is still to come (being sent, or waiting to be tried again
    # with that paper: two weeks posted at once, by `run` and an operator's `post-week`, must not
    # show one paper; not a week that is over, whose refused post will not be tried again), or
    # chosen by a presenter.
    planned = (
        "SELECT key AS week, paper FROM deliveries WHERE kind = 'post' AND state != 'sent' "
        "AND paper IS NOT NULL AND key != ? AND (key >= ? OR state = 'sending') "  # 'sending': it may be out
        f"AND claimed_at > ? AND {own}"  # a week's post is tried within about a week
    )
    planned_args = [week.key, this_week.key, time.time() - PLANNED_POST_DAYS * 86400, *own_args]
    featured = f"""
        SELECT key AS week, paper FROM deliveries
        WHERE kind = 'post' AND state = 'sent' AND paper IS NOT NULL AND {own}
        UNION {planned}
        UNION
        SELECT week, paper FROM slots WHERE kind = 'presenter' AND group_id = ? AND week != ?
    """
    args = [*own_args, *planned_args, group_id, week.key]
    # Never featured by this group, and not archived (an archived paper leaves the rotation).
    unfeatured = (
        "p.archived_at IS NULL "
        "AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.kind = 'post' AND d.paper = p.number "
        f"                AND d.state = 'sent' AND {own}) "
        f"AND p.number NOT IN (SELECT paper FROM ({planned}) AS planned) "
        "AND NOT EXISTS (SELECT 1 FROM slots s WHERE s.paper = p.number AND s.kind = 'presenter' "
        "                AND s.group_id = ? AND s.week != ?)"
    )
    unfeatured_args = [*own_args, *planned_args, group_id, week.key]
    row = None
    if rotation == "votes":
        # The most-voted paper never featured, among the few papers that have votes; when none
        # is left, every paper not featured has no votes, and the lowest number is next, as below.
        row = db.execute(
            "SELECT p.number FROM (SELECT paper, count(*) AS n FROM votes GROUP BY paper) v "
            f"JOIN papers p ON p.number = v.paper {focus_join} WHERE {unfeatured} ORDER BY v.n DESC, p.number LIMIT 1",
            [*focus_args, *unfeatured_args],
        ).fetchone()
    # Fast path: the lowest-numbered paper never featured at all, found by walking
    # papers in order with two index probes each (slots_by_paper, deliveries_by_paper),
    # past the few papers planned for posts still to come.
    if row is None:
        row = db.execute(
            f"SELECT p.number FROM papers p {focus_join} WHERE {unfeatured} ORDER BY p.number LIMIT 1",
            [*focus_args, *unfeatured_args],
        ).fetchone()
    if row is None:
        # A new round: the least featured first, but never one that someone will present later
        # (unless every paper is: a focus tag with few papers).
        by_votes = "(SELECT count(*) FROM votes v WHERE v.paper = p.number) DESC, " if rotation == "votes" else ""
        row = db.execute(
            f"WITH f AS ({featured}) "
            f"SELECT p.number, (SELECT count(*) FROM f WHERE f.paper = p.number) AS n, "
            "EXISTS (SELECT 1 FROM slots s WHERE s.paper = p.number AND s.kind = 'presenter' "
            "        AND s.group_id = ? AND s.week > ?) AS later "
            f"FROM papers p {focus_join} WHERE p.archived_at IS NULL ORDER BY later, n, {by_votes}p.number LIMIT 1",
            [*args, group_id, week.key, *focus_args],
        ).fetchone()
    return catalog.by_number(store, row[0]) if row else None


def plan(
    store: Store,
    group: MeetingCalendar,
    week: Week,
    focus_tag: str | None,
    channel: str | None,
    now: datetime,
    rotation: str = "catalog",
) -> WeeklyPost | None:
    """The post as it stands for `week` at `now`: presenter's paper, the paper already posted, or the next in rotation.

    Its sign-up button is for this week while the meeting is ahead of `now`, else for the first
    open week (with the default PAPERBOT_MEETING, the post's own time, the meeting is under way
    when the post goes out).
    """
    post = _plan(store, group, week, focus_tag, channel, now, rotation)
    if post is not None:
        post.archived = catalog.archived_at(store, post.paper) is not None
        post.last_week = talks.last_week(store, group, week)
        post.group_name = group.name
        post.going = attendance.count(store, group.group_id, [week]).get(week.key, 0)
        post.questions = attendance.questions(store, group.group_id, week)
    return post


def _plan(
    store: Store,
    group: MeetingCalendar,
    week: Week,
    focus_tag: str | None,
    channel: str | None,
    now: datetime,
    rotation: str,
) -> WeeklyPost | None:
    slot = slots.slot(store, week, group.group_id)
    meeting = group.meeting_of(week)
    ahead = meeting > now
    if slot is not None and slot.kind == "presenter":
        paper = catalog.by_number(store, slot.paper)
        if paper is not None:
            return WeeklyPost(week, paper, meeting, slot.presenter)
    # The week it is (not a later `--at`'s): posts planned for weeks before it will not be tried again.
    this_week = group.week_of(min(now, datetime.now(group.tz)))
    # The week's paper once its post is planned: this channel's (unless it was refused and its week
    # is over: the rotation has moved on, and may have shown that paper since), or the one another
    # channel was sent before PAPERBOT_CHANNEL changed (the group has one paper a week).
    own, own_args = own_posts(group.group_id)
    row = store.db.execute(
        "SELECT paper FROM deliveries WHERE kind = 'post' AND key = ? AND paper IS NOT NULL "
        f"AND {own} AND (state = 'sent' OR (dest = ? AND (state = 'sending' OR key >= ?))) "
        "ORDER BY dest = ? DESC LIMIT 1",
        [week.key, *own_args, channel or "", this_week.key, channel or ""],
    ).fetchone()
    posted = catalog.by_number(store, row[0]) if row else None
    paper = posted or next_in_rotation(store, week, focus_tag, this_week, rotation, group.group_id)
    if paper is None:
        return None
    skipped = slot is not None and slot.kind == "skipped"
    elsewhere = _presented_elsewhere(store, group, week, paper, now)
    return WeeklyPost(week, paper, meeting, None, skipped, ahead, elsewhere)


def _presented_elsewhere(
    store: Store, group: MeetingCalendar, week: Week, paper: Paper, now: datetime
) -> tuple[str | None, datetime] | None:
    """The paper's presenter (None once it was presented) and meeting in another week, the latest:
    the slot that a sign-up for it would be refused for (signups._check_not_presented)."""
    latest = slots.latest_presenter(store, paper, besides=week, group_id=group.group_id)
    if latest is None:
        return None
    meeting = group.meeting_of(latest[0])
    return (latest[1] if meeting > now else None), meeting


#: Posts of one paper brought up to date when its presenters change (it is seldom posted more often).
POSTS_OF_A_PAPER = 5


def posts_showing(store: Store, channel: str, papers: set[int]) -> list[Week]:
    """The latest weeks whose post shows (or will show, once it is out) one of `papers`."""
    if not papers:
        return []
    marks = ",".join("?" * len(papers))
    rows = store.db.execute(
        f"SELECT key FROM deliveries WHERE kind = 'post' AND dest = ? AND paper IN ({marks}) ORDER BY key DESC LIMIT ?",
        [channel, *papers, POSTS_OF_A_PAPER],
    ).fetchall()
    return [Week.from_key(r[0]) for r in rows]


def post_week(
    store: Store,
    group: MeetingCalendar,
    transport: Transport,
    channel: str,
    at: datetime,
    *,
    focus_tag: str | None = None,
    rotation: str = "catalog",
    force: bool = False,
    retry_now: bool = False,
    sleep=None,
    now: datetime | None = None,
    started: datetime | None = None,
) -> Outcome:
    """Post the paper for the meeting that the latest slot at or before `at` announces (the first
    meeting at or after that slot), unless that meeting has its post or is over at `at`.

    So a slot missed while the bot was down is posted when it is back, while its meeting is ahead,
    and nothing is ever posted for a meeting that is over. Posts are keyed by the meeting's week.
    `force` (an operator's `post-week`) and `retry_now` (the first check after a start: the operator
    may have fixed what the platform refused) skip the wait after a refusal; `force` also posts a
    slot that passed before the group started.
    `now` (default `at`) decides whether the meeting is still ahead, for the sign-up button.
    `started` (the group's start or resume, None for long ago): without `force`, a slot before it
    gets no post, since it went by before the group existed.
    """
    now = now or at
    slot = group.last_slot(at)
    if slot is None:
        return Outcome(group.week_of(at), "no-slot", f"the schedule ({group.schedule.expr}) has had no slot yet")
    week = group.announced_by(slot)
    if group.ends(week) <= at:
        return Outcome(week, "over", f"{week.key}'s meeting ({group.meeting_of(week):%a %d %b %Y %H:%M}) is over")
    if not force and started is not None and slot < started:
        return Outcome(week, "before-start", _before_start(group, week, started))
    existing = slots.slot(store, week, group.group_id)
    if existing is not None and existing.kind == "skipped":
        return Outcome(week, "skipped", f"{week.key} is skipped: no meeting, no post")

    built: list[WeeklyPost] = []

    def build():
        # Again at each attempt: an admin may skip it while one waits.
        now_slot = slots.slot(store, week, group.group_id)
        if now_slot is not None and now_slot.kind == "skipped":
            raise NoLongerWanted(f"{week.key} was skipped meanwhile: no meeting, no post")
        post = plan(store, group, week, focus_tag, channel, now, rotation)
        if post is None:
            where = f" tagged {focus_tag}" if focus_tag else ""
            raise NothingToSend(f"the catalog has no papers{where} to post")
        built.append(post)
        return post, post.paper.number

    d = Delivery("post", channel, week.key)
    kwargs = {"sleep": sleep} if sleep else {}
    result = delivery.deliver(store, d, build, transport, force=force or retry_now, **kwargs)
    post = built[-1] if built else plan(store, group, week, focus_tag, channel, now, rotation)
    return Outcome(week, "skipped" if result.status == "moot" else result.status, result.detail, post, result)


def _before_start(group: MeetingCalendar, week: Week, started: datetime) -> str:
    first = group.next_slot(started, inclusive=True)
    after = f"; its first post is due at {first.isoformat()}" if first else ""
    return f"{week.key}'s slot passed before the group started ({started.isoformat()}){after}"


def announcing(group: MeetingCalendar, now: datetime, started: datetime | None) -> Week | None:
    """The meeting week whose post is due at `now` (its slot has come, the meeting is ahead, the slot
    not before `started`), whether or not it is out yet; None when no post is due."""
    slot = group.last_slot(now)
    if slot is None or (started is not None and slot < started):
        return None
    week = group.announced_by(slot)
    return None if group.ends(week) <= now else week


def due(
    store: Store,
    channels: dict[str, MeetingCalendar],
    now: datetime,
    started: Mapping[str, datetime | None] | None = None,
) -> list[str]:
    """The channels (of `channels`, each with its group's calendar) whose post is due at `now` and not
    yet sent: one query for them all, so that a look at a thousand groups is cheap.
    `started` (by channel): when a group began; a slot before it is not due (see post_week)."""
    started = started or {}
    slotted: dict[str, Week] = {}
    for channel, calendar in channels.items():
        week = announcing(calendar, now, started.get(channel))
        if week is not None:
            slotted[channel] = week
    if not slotted:
        return []
    keys = sorted({w.key for w in slotted.values()})
    sent: set[tuple[str, str]] = set()
    dests = sorted(slotted)
    for i in range(0, len(dests), DUE_BATCH):  # each (dest, key) a look-up in the primary key
        batch = dests[i : i + DUE_BATCH]
        sent.update(
            store.db.execute(
                f"SELECT dest, key FROM deliveries WHERE kind = 'post' AND dest IN ({','.join('?' * len(batch))}) "
                f"AND key IN ({','.join('?' * len(keys))}) AND state = 'sent'",
                [*batch, *keys],
            ).fetchall()
        )
    return [c for c, week in slotted.items() if (c, week.key) not in sent]


#: Channels one query of `due` asks about (SQLite takes some thousands of parameters a statement).
DUE_BATCH = 500


def not_due(store: Store, channel: str, group: MeetingCalendar, now: datetime, started: datetime | None) -> str:
    """Why the group's post is not due at `now`, and when it is, in a few words (for `post-week --dry-run`)."""
    upcoming = group.next_slot(now)
    slot = group.last_slot(now)
    week = None if slot is None else group.announced_by(slot)
    if slot is None or week is None or group.ends(week) <= now:  # no meeting to announce until the next slot
        over = f"{week.key}'s meeting is over; " if week is not None else ""
        if upcoming is None:
            return f"{over}the schedule ({group.schedule.expr}) has no slot in the coming year"
        return f"{over}{group.announced_by(upcoming).key}'s post is due at {upcoming.isoformat()}"
    if started is not None and slot < started:
        return _before_start(group, week, started)
    if posted(store, channel, week) is not None:
        then = upcoming.isoformat() if upcoming else "no time in the coming year"
        return f"{week.key} has its post; the next is due at {then}"
    return f"{week.key}'s post is due (its slot was {slot.isoformat()})"


def posted(store: Store, channel: str, week: Week) -> delivery.Sent | None:
    return delivery.sent_message(store, "post", channel, week.key)


def features(store: Store, channel: str, week: Week, paper: Paper) -> None:
    """Record that the week's post now shows `paper` (a presenter's choice replaced the rotation's),
    so that the rotation counts that paper as featured, and not the one it first showed."""
    with store.write() as db:
        db.execute(
            "UPDATE deliveries SET paper = ? WHERE kind = 'post' AND dest = ? AND key = ? AND paper IS DISTINCT FROM ?",
            [paper.number, channel, week.key, paper.number],
        )


def post_begun(store: Store, channel: str, week: Week) -> bool:
    """Is the week's post out, on its way, or waiting to try again? If not, it will be planned
    from the database as it is when it is made: a change before then needs no update of it."""
    return delivery.begun(store, "post", channel, week.key)


def post_in_flight(store: Store, channel: str, week: Week) -> bool:
    """Is the week's post being sent right now (it may have been planned before the latest change)?"""
    return delivery.in_flight(store, "post", channel, week.key)
