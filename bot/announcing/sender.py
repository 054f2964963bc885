"""Sending the outbox: in order, waiting out the platform, giving up by the outbox's rules.

    sender = OutboxSender(store, poster, later, replies, stopping)
    sender.wake()            # after a change's reply has gone, and at each scheduler check

The policy is the same on every platform; the `Poster` is the adapter's part: it renders an
announcement for its platform, posts it marked so that it can be found again, looks for an
earlier try's line, and brings a week's post up to date.

A member's announcements are held until they have been quiet a moment (`plan`), and go as one
message of what stands: one member cannot flood the channel, and a sign-up withdrawn at once is
never announced.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Protocol

from bot.announcing.changes import Announcement
from bot.calendar import Week
from bot.delivery import outbox
from bot.delivery.answer_time import Replies
from bot.delivery.outbox import ItemKind
from bot.delivery.sending import RETRY_AFTER_REFUSAL, RateLimited, Rejected, Uncertain, Unreachable
from bot.schedule import weekly

log = logging.getLogger(__name__)

#: An outbox item the platform asks us to hold off for at most this long is tried again by a short
#: wait in the background; a longer hold is left to the scheduler's next check (30 s).
OUTBOX_SOON = 30
#: While the platform cannot be reached, the outbox tries again this often.
UNREACHABLE_WAIT = 10.0
#: A round of the sender that failed on our side (the database) is tried again after this long,
#: doubled for each further failure in a row.
OUTBOX_AFTER_FAILURE = 1.0
#: An announcement the channel refused (the bot not invited yet) is tried again after this long,
#: doubled for each further refusal, up to RETRY_AFTER_REFUSAL: once someone invites the bot, the
#: line and those after it (which wait their turn) follow within a minute or two.
REFUSED_ANNOUNCEMENT_WAIT = 60.0
#: Rejected's code for a channel whose id is another platform's (a Discord process and a Slack `C…`):
#: that platform's process sends it, so this one leaves it alone for FOREIGN_CHANNEL_WAIT.
FOREIGN_CHANNEL = "foreign_channel"
FOREIGN_CHANNEL_WAIT = 3600.0
#: A post update waits this long (and again) while the post itself is being sent.
POST_IN_FLIGHT_WAIT = 2.0
#: A member's announcements go once they have made no change in the channel for this long, and at
#: the latest this long after the first of them: one message a minute at most, however fast they
#: click, of what stands (changes undone within the minute say nothing). Read at each round (tests
#: shorten them).
ANNOUNCE_QUIET = 5.0
ANNOUNCE_LONGEST_HOLD = 60.0


def hold_post_update(store, channel: str | None, week: Week) -> None:
    """Queue an update of the week's post in `channel` (its counts changed), if it is out or on its
    way, held until the channel has been quiet a moment as announcements are: one edit for many
    clicks. Inside the change's write transaction."""
    if channel and weekly.post_begun(store, channel, week):
        payload = {"week": week.key, "channel": channel}
        outbox.hold_refresh(store.db, payload, ANNOUNCE_QUIET, ANNOUNCE_LONGEST_HOLD)


def plan(rows: list[outbox.Waiting], now: float, quiet: float, longest: float) -> outbox.Plan:
    """Which announcement rows go now, as which messages (see outbox.take for `rows`).

    A member's rows in a channel go together, as one message, once the member has been `quiet`
    that long, or `longest` after the first of them; rows queued later than that go in a later
    message. Different members' rows never share a message, and a member held back holds no one
    else back, except that a week's changes are announced in their order: a row waits while an
    earlier row of its week does. A message planned before (and perhaps sent) goes again as it was.
    """
    present = {r.id for r in rows}
    first: dict[tuple, float] = {}
    last: dict[tuple, float] = {}

    def mergeable(row: outbox.Waiting) -> bool:  # not planned before, not queued by an older paperbot
        return not row.unit and not row.tried and row.by is not None

    for row in rows:
        if mergeable(row):
            first.setdefault((row.channel, row.by), row.created_at)
            last[row.channel, row.by] = row.created_at
    units: list[tuple[int, ...]] = []
    going: dict[tuple, list[int]] = {}
    waiting: set[tuple] = set()  # (channel, week) of rows that wait: later rows of the week wait too
    complete: dict[tuple[int, ...], bool] = {}  # a message planned before: are all its rows here?
    ready_at = None
    for row in rows:
        week = (row.channel, row.week)
        if row.unit:
            if row.unit not in complete:
                complete[row.unit] = set(row.unit) <= present
                if complete[row.unit]:
                    units.append(row.unit)
            if not complete[row.unit] and row.week is not None:
                waiting.add(week)
            continue
        if not mergeable(row):
            units.append((row.id,))
            continue
        who = (row.channel, row.by)
        held = min(last[who] + quiet, first[who] + longest)
        if now < held:
            ready_at = held if ready_at is None else min(ready_at, held)
        if now < held or week in waiting or row.created_at > first[who] + longest:
            waiting.add(week)
            continue
        going.setdefault(who, []).append(row.id)
    units += [tuple(ids) for ids in going.values()]
    return outbox.Plan(sorted(units), ready_at)


def _batches(items: list[outbox.Item]) -> list[list[outbox.Item]]:
    """The taken items as what is sent: an announcement message's rows together, in order of their first."""
    batches: dict[int, list[outbox.Item]] = {}
    for item in items:
        batches.setdefault(item.unit[0] if item.unit else item.id, []).append(item)
    return list(batches.values())


class Poster(Protocol):
    """A platform's part in sending the outbox; each method raises delivery's errors."""

    def announce(self, announcement: Announcement) -> None:
        """Post the announcement (its changes, one line each) in its channel, marked with its rows so
        that `announced` finds it."""
        ...

    def announced(self, announcement: Announcement) -> bool:
        """Is the announcement in its channel already (an earlier try)?"""
        ...

    def refresh_post(self, week: Week, channel: str | None = None) -> bool:
        """Bring the week's post in `channel` (a group's; None: the environment's group's), if it is
        out, up to date; False while it is being sent."""
        ...

    def channel_refused(self, channel: str, error: Rejected) -> None:
        """Tell the admins that `channel` refused an announcement (once until a line gets through)."""
        ...


class OutboxSender:
    """One sender a process: what the outbox has due, oldest first, once replies have gone."""

    def __init__(
        self,
        store,
        poster: Poster,
        later: Callable[..., Future],
        replies: Replies,
        stopping: threading.Event,
    ):
        self.store, self.poster, self.replies, self._stopping = store, poster, replies, stopping
        self._later = later  # later(fn, *args): run in the background, failures logged
        self._lock = threading.Lock()
        self._state = threading.Lock()
        self._wanted = False
        self._sending = False  # a sender holds _lock and will look at _wanted again
        self._failures = 0  # rounds of the sender that failed in a row
        self.held_until = 0.0  # monotonic: the platform asked to hold off until then, for every item
        self._refusing: set[str] = set()  # channels that refused an announcement, admins told, none posted since
        self._foreign: set[str | None] = set()  # other platforms' channels, said once in the log
        self._wake_at: float | None = None  # monotonic: when the sender is to go round again

    def wake(self) -> None:
        """Have the outbox sent soon, in the background."""
        if self._stopping.is_set():  # stopping: what is left waits for the next start
            return
        with self._state:
            self._wanted = True
            if self._sending:  # the sender goes round again before it stops: no second thread
                return
        self._later(self.send)

    def send(self) -> None:
        """Send what the outbox has due, oldest first, once replies under way have gone (see
        Replies); one sender in a process at a time."""
        woken = time.monotonic()
        with self._state:
            self._wanted = True
        if not self._lock.acquire(blocking=False):
            return  # the sender that holds it sees the wish and goes round again
        try:
            while True:
                with self._state:
                    self._sending = self._wanted
                    if not self._wanted:
                        break
                    self._wanted = False
                self.replies.wait_for_quiet(woken, self._stopping)
                # While the platform holds the channel off, every line waits its turn, in order.
                while time.monotonic() >= self.held_until and (items := outbox.take(self.store, plan=self._plan)):
                    batches = _batches(items)
                    for i, batch in enumerate(batches):
                        self.replies.wait_for_quiet(woken, self._stopping)
                        self._send(batch)
                        if time.monotonic() < self.held_until:
                            for rest in batches[i + 1 :]:
                                outbox.release(self.store, *rest)
                            break
        except Exception:
            # A round that failed (the database held past its busy timeout, say) leaves its lines in
            # the outbox, and wakes that came meanwhile found this sender running: go round again soon,
            # and less often while it keeps failing (up to the scheduler's check).
            self._failures += 1
            if not self._stopping.is_set():
                wait = min(OUTBOX_AFTER_FAILURE * 2 ** min(self._failures - 1, 5), OUTBOX_SOON)
                self._later(self._send_after, wait)
            raise
        else:
            self._failures = 0
        finally:
            with self._state:
                self._sending = False
            self._lock.release()
        self._wake_for_next()

    def _wake_for_next(self) -> None:
        """Have the sender go round again when the next item is due, if that is soon; one such wait
        at a time. Later ones are left to the scheduler's 30-second check."""
        if self._stopping.is_set():
            return
        due = outbox.next_due(self.store, self._plan)
        if due is None:
            return
        seconds = max(due - time.time(), self.held_until - time.monotonic(), 0.0)
        if seconds > OUTBOX_SOON:
            return
        wake_at = time.monotonic() + seconds
        with self._state:
            if self._wake_at is not None and self._wake_at <= wake_at + 0.01:
                return  # an earlier (or the same) wake is coming
            self._wake_at = wake_at
        self._later(self._send_after, seconds)

    @staticmethod
    def _plan(rows: list[outbox.Waiting], now: float) -> outbox.Plan:
        return plan(rows, now, ANNOUNCE_QUIET, ANNOUNCE_LONGEST_HOLD)

    def _send_after(self, seconds: float) -> None:
        if self._stopping.wait(seconds):
            return
        with self._state:
            self._wake_at = None
        self.send()

    def _send(self, batch: list[outbox.Item]) -> None:  # noqa: C901 (each way a send can end, kept in one place)
        """Send one post update, or one announcement (its rows together); on failure put it back for
        later. A rate limit or a failing platform holds every item off (`held_until`); a refusal only this one."""
        item = batch[0]
        week, channel = item.payload.get("week"), item.payload.get("channel")
        announcement = None
        error: Uncertain | Rejected
        if item.kind == ItemKind.REFRESH:
            what = f"update the post of {week}"
        else:
            announcement = Announcement.of(batch)
            what = f"announce {announcement.about} in {channel}"
        try:
            if announcement is None:
                # Rows queued before groups name no channel: the environment's group's post.
                where = {"channel": channel} if channel else {}
                if not self.poster.refresh_post(Week.from_key(item.payload["week"]), **where):
                    # Being sent now, perhaps planned before the change: updated once it is out (not a try).
                    at = time.time() + POST_IN_FLIGHT_WAIT
                    outbox.postpone(self.store, item, at=at, why="the post is being sent")
                    return
            elif not announcement.changes and announcement.message is None:
                log.info("nothing to announce of %s: the changes undid each other", announcement.about)
                outbox.done(self.store, *batch)
                return
            else:
                if announcement.tried and self._announced(announcement):
                    log.info("the announcement of %s was in %s already", announcement.about, channel)
                    outbox.done(self.store, *batch)
                    return
                self.poster.announce(announcement)
        except RateLimited as e:  # not a failure of the line: it waits as long as asked, never dropped
            wait = max(e.retry_after, 1.0)
            self.held_until = time.monotonic() + wait
            outbox.postpone(self.store, *batch, at=time.time() + wait, why=str(e))
            log.warning("could not %s yet: %s", what, e)
            return
        except Unreachable as e:  # certainly not sent, and the platform will be back: none is dropped
            self.held_until = time.monotonic() + UNREACHABLE_WAIT
            outbox.postpone(self.store, *batch, at=time.time() + UNREACHABLE_WAIT, why=str(e))
            log.warning("could not %s yet: %s", what, e)
            return
        except Uncertain as e:  # it may have been posted: the next try looks in the channel first
            error, wait = e, float(min(2**item.attempts, 300))
            self.held_until = time.monotonic() + wait
        except Rejected as e:
            if e.code == FOREIGN_CHANNEL:  # never this process's to send: one line, no admins told, no retry
                outbox.postpone(self.store, *batch, at=time.time() + FOREIGN_CHANNEL_WAIT, why=str(e))
                if channel not in self._foreign:
                    self._foreign.add(channel)
                    log.warning("could not %s: %s", what, e)
                return
            if announcement is None:  # the post is gone or cannot be edited: trying again will not help
                log.warning("could not %s: %s", what, e)
                outbox.done(self.store, item)
                return
            # Not in the channel and the like: it is tried again later, the lines after it waiting their
            # turn (not each refused in turn), and the admins are told, once until a line gets through.
            error, wait = e, min(REFUSED_ANNOUNCEMENT_WAIT * 2**item.attempts, float(RETRY_AFTER_REFUSAL))
            self.held_until = time.monotonic() + wait
            if announcement.channel not in self._refusing:
                self._refusing.add(announcement.channel)
                self.poster.channel_refused(announcement.channel, e)
        else:
            outbox.done(self.store, *batch)
            self._refusing.discard(channel)
            return
        if outbox.retry(self.store, *batch, at=time.time() + wait, error=str(error)):
            log.warning("could not %s yet: %s", what, error)
        else:
            log.error("could not %s, and gave up after %d tries: %s", what, outbox.MAX_ATTEMPTS, error)

    def _announced(self, announcement: Announcement) -> bool:
        """Is the announcement already in its channel (an earlier try that the platform took, then no
        answer)? When the channel cannot be read at all, no: it is posted (again); when the platform
        fails to answer for now, that is raised, and the line waits."""
        try:
            return self.poster.announced(announcement)
        except (RateLimited, Unreachable):
            raise  # the line waits its turn, as a post held off is
        except Rejected as e:  # the channel cannot be read at all: post, rather than lose it
            log.warning("could not look for an earlier announcement in %s: %s", announcement.channel, e)
            return False
        # Uncertain (a 500, a timeout) passes: raised, so the line is tried again later, looking first.
