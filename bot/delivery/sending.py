"""Messages that must arrive exactly once: the weekly post, presenter reminders.

    result = delivery.deliver(store, Delivery("post", "C0PAPERS", "2026-W50"), build, transport)

A chat platform's "post a message" has no idempotency key, so "exactly once" is
built here, from a row per message in `deliveries` and the message's own metadata:

1. Claim the row (INSERT ... ON CONFLICT DO NOTHING, or take over a claim
   whose owner is dead or whose lease lapsed). Only the claimant goes on; any
   other process sees the claim and stops.
2. Before each attempt, mark the row 'sending' with the time it began
   (committed). A row found in 'sending' means that attempt may have reached
   the platform, so the channel's history since it began (less a margin for
   the platforms' clocks) is searched for a message carrying this delivery's
   metadata first; if it is there, it is recorded and nothing is sent. A look
   that finds nothing settles the attempt, so each look reads only the
   messages since the latest one began, a few pages (Slack lets apps outside
   its Marketplace read 15 messages a minute). A look answered with a rate
   limit waits as asked: that is no failure of the message.
3. Send; on success record 'sent' with the platform's message reference. A
   definite refusal (not in the channel, rate limited past our patience, the
   platform unreachable) puts the row back to 'claimed': nothing was posted, it
   is tried again later. An uncertain failure (timeout, 5xx, a dropped
   connection) leaves 'sending', so the next attempt looks before it sends. A
   process that stops while waiting between attempts lets go of the row as it
   stands, for the next start.

The transport (a platform adapter, or a test double of its server) renders and
sends; this module never sees a platform's payload.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from bot.store.connection import Store
from bot.store.liveness import OWNER, hold, owner_is_dead

log = logging.getLogger(__name__)

LEASE_SECONDS = 15 * 60
RETRY_AFTER_REFUSAL = 10 * 60
#: After every try of one attempt found the platform out of reach or failing.
RETRY_AFTER_OUTAGE = 60
MAX_ATTEMPTS = 5
BACKOFF = (1, 2, 4, 8, 16)
MAX_RATE_LIMIT_WAIT = 120
#: The look before a re-send reads from the attempt's start less this: the platform stamps the message
#: by its own clock, which may be behind ours.
CLOCK_MARGIN = 60
#: Waits for a rate-limited look (one a page, at Slack's once a minute) before letting go until later.
MAX_LOOK_WAITS = 10


class Rejected(Exception):
    """The platform refused the message; it was certainly not delivered. `code` is the platform's
    own name for the refusal (`not_in_channel`), when it gave one."""

    def __init__(self, message: str = "", code: str | None = None):
        super().__init__(message)
        self.code = code


class RateLimited(Rejected):
    def __init__(self, retry_after: float):
        super().__init__(f"rate limited (retry after {retry_after:g} s)")
        self.retry_after = retry_after


class Unreachable(Rejected):
    """The platform could not be reached (connection refused, no such host): certainly not delivered, and
    worth trying again soon, unlike a refusal."""


class Uncertain(Exception):
    """The attempt failed in a way that may or may not have delivered the message."""


class NothingToSend(Exception):
    """There is no message to send (e.g. the catalog is empty); str() says why."""


class NoLongerWanted(NothingToSend):
    """The message is no longer wanted (the week was skipped, the presenter withdrew while an
    attempt waited): not a failure, and nothing is left planned."""


#: What is delivered: the week's post to the channel, a presenter's reminder to them, a note to a
#: member (a swap's offer, an open slot's call: bot/schedule/notes.py), a member's question in the
#: meeting's discussion (the post's thread), or the questions' digest there.
Kind = Literal["post", "reminder", "note", "question", "digest"]
#: What became of one call of `deliver`: delivered ('sent' now; 'found', an earlier try had
#: arrived; 'done', sent before), or not ('busy': another process has it; 'waiting' after a
#: refusal; 'failed'; 'stopped' with the process; 'unreachable': no one to send it to; 'moot').
Status = Literal["sent", "found", "done", "busy", "waiting", "failed", "stopped", "unreachable", "moot"]
#: A delivery row: claimed by a process, an attempt under way (maybe arrived), or sent.
RowState = Literal["claimed", "sending", "sent"]


@dataclass(frozen=True)
class Delivery:
    kind: Kind
    dest: str  # channel ID, or user ID for a direct message
    key: str  # what makes it unique within kind and dest: the week
    #: The message whose thread it goes in (the weekly post's reference), or None: the channel itself.
    thread: str | None = None


@dataclass(frozen=True)
class Sent:
    """Where a message went, and the platform's reference to it (to find or edit it again)."""

    channel: str
    ref: str


class Transport(Protocol):
    def send(self, delivery: Delivery, message: Any) -> Sent: ...

    def reaches(self, user: str) -> bool:
        """Can `user` be sent a direct message at all (a reminder)?"""
        ...

    def find(self, delivery: Delivery, since: float) -> Sent | None:
        """The message of an earlier attempt, sent no earlier than unix time `since`: reading only the
        messages since then, a bounded number of pages (Rejected when they do not reach back to it).
        A RateLimited look asked again resumes where it stopped."""
        ...


@dataclass(frozen=True)
class Result:
    status: Status
    detail: str = ""
    sent: Sent | None = None
    new_error: bool = False  # a failure whose reason differs from the last one recorded

    @property
    def delivered(self) -> bool:
        return self.status in ("sent", "found", "done")


def _wall() -> float:
    return time.time()


def _stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class _Claim:
    state: RowState
    #: When the latest attempt began (the first claim for a row from before this was kept).
    attempt_began: float
    last_error: str | None


def _claim(store: Store, d: Delivery, *, force: bool) -> _Claim | Result:
    hold(store)
    wall = _wall()
    with store.write() as db:
        row = db.execute(
            "SELECT state, owner, lease_until, retry_at, claimed_at, attempt_at, channel, message_ref, last_error "
            "FROM deliveries WHERE kind = ? AND dest = ? AND key = ?",
            [d.kind, d.dest, d.key],
        ).fetchone()
        if row is None:
            db.execute(
                "INSERT INTO deliveries (kind, dest, key, state, owner, lease_until, claimed_at, updated_at) "
                "VALUES (?, ?, ?, 'claimed', ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [d.kind, d.dest, d.key, OWNER, wall + LEASE_SECONDS, wall, _stamp()],
            )
            return _Claim("claimed", wall, None)
        state, owner, lease_until, retry_at, claimed_at, attempt_at, channel, ref, last_error = row
        if state == "sent":
            return Result("done", "already sent", Sent(channel, ref))
        if owner != OWNER and lease_until > wall and not owner_is_dead(store, owner, lease_until - LEASE_SECONDS):
            return Result("busy", f"another process ({owner}) is sending it")
        if not force and retry_at > wall:
            return Result("waiting", f"waiting to retry after: {last_error}")
        db.execute(
            "UPDATE deliveries SET owner = ?, lease_until = ?, updated_at = ? WHERE kind = ? AND dest = ? AND key = ?",
            [OWNER, wall + LEASE_SECONDS, _stamp(), d.kind, d.dest, d.key],
        )
        return _Claim(state, max(attempt_at, claimed_at), last_error)


def _update(store: Store, d: Delivery, sets: str, params: list, *, owned: bool = True) -> bool:
    with store.write() as db:
        return _update_in(db, d, sets, params, owned=owned)


def _update_in(db, d: Delivery, sets: str, params: list, *, owned: bool = True) -> bool:
    """`_update` inside the caller's write transaction; False when the row is not (or no longer) ours."""
    cur = db.execute(
        f"UPDATE deliveries SET {sets}, updated_at = ? WHERE kind = ? AND dest = ? AND key = ?"
        + (" AND owner = ?" if owned else ""),
        [*params, _stamp(), d.kind, d.dest, d.key, *([OWNER] if owned else [])],
    )
    return cur.rowcount == 1


def _record_sent(store: Store, d: Delivery, sent: Sent) -> None:
    # Not conditional on still owning the claim: the message is out, and that fact wins.
    _update(
        store,
        d,
        "state = 'sent', channel = ?, message_ref = ?, owner = NULL, lease_until = 0, last_error = NULL",
        [sent.channel, sent.ref],
        owned=False,
    )


def deliver(  # noqa: C901 (exactly-once sending: every outcome read in one place)
    store: Store,
    d: Delivery,
    build: Callable[[], tuple[Any, int | None]],
    transport: Transport,
    *,
    force: bool = False,
    sleep: Callable[[float], bool | None] = time.sleep,
) -> Result:
    """Send the message that `build()` makes, once; `build` returns (message, paper number or None).

    `force` ignores the wait after an earlier refusal (an operator asked now).
    `sleep(seconds)` waits between tries. When it returns True (a stopping process's
    `Event.wait`), the delivery stops where it is, and the next start takes it up.
    """
    claim = _claim(store, d, force=force)
    if isinstance(claim, Result):
        return claim
    previous_error = claim.last_error
    state = claim.state
    began = claim.attempt_began
    reason = ""
    outage = False  # the last try found the platform out of reach or failing (not rate-limiting)
    for attempt in range(MAX_ATTEMPTS):
        last = attempt == MAX_ATTEMPTS - 1
        if state == "sending":
            try:
                # The platform's clock, not a simulated one, stamps the message: search from
                # the real time the attempt began, with a margin for clock skew.
                found = _look(d, transport, began - CLOCK_MARGIN, sleep)
            except _Stopping as e:
                return _stopped(store, d, str(e))
            except RateLimited as e:
                return _wait(store, d, f"could not check whether an earlier attempt arrived yet ({e})", e.retry_after)
            except (Rejected, Uncertain) as e:
                # Looking is safe to repeat: wait out a hiccup, as for sending.
                reason = f"could not check whether an earlier attempt arrived ({e})"
                if isinstance(e, Uncertain | Unreachable) and not last:
                    wait = BACKOFF[attempt]
                else:
                    outage = isinstance(e, Uncertain | Unreachable)  # the platform out of reach or failing
                    return _give_up(store, d, reason, previous_error, state, RETRY_AFTER_OUTAGE if outage else None)
                if sleep(wait):
                    return _stopped(store, d, reason)
                continue
            if found is not None:
                _record_sent(store, d, found)
                log.info("%s %s for %s was already there (%s); recorded", d.kind, d.key, d.dest, found.ref)
                return Result("found", "an earlier attempt had arrived", found)
        try:
            # Made and marked in one transaction: another process planning another week's post
            # meanwhile sees this paper as under way (weekly.next_in_rotation), not free.
            with store.write() as db:
                message, paper = build()
                began = _wall()
                marked = _update_in(
                    db,
                    d,
                    "state = 'sending', attempts = attempts + 1, paper = ?, lease_until = ?, attempt_at = ?",
                    [paper, began + LEASE_SECONDS, began],
                )
        except NoLongerWanted as e:
            # Made moot by a change while it waited: let go, with no paper planned and no wait, so
            # that it goes at once if it is wanted again (the presenter signs up again).
            _update(store, d, "owner = NULL, lease_until = 0, retry_at = 0, paper = NULL, last_error = ?", [str(e)])
            log.info("%s %s for %s is not sent after all: %s", d.kind, d.key, d.dest, e)
            return Result("moot", str(e))
        except NothingToSend as e:
            return _give_up(store, d, str(e), previous_error, state)
        if not marked:
            return Result("busy", "another process took over")
        state = "sending"
        try:
            sent = transport.send(d, message)
        except RateLimited as e:
            # 429: certainly not posted. Wait as asked (within reason), then try again.
            _update(store, d, "state = 'claimed', last_error = ?", [str(e)])
            state = "claimed"
            reason, outage = str(e), False
            if e.retry_after > MAX_RATE_LIMIT_WAIT or last:
                # Still limited: let go until the platform's time is up, as a refusal's ten minutes would not.
                return _wait(store, d, reason, max(e.retry_after, 0.5))
            if sleep(max(e.retry_after, 0.5)):
                return _stopped(store, d, reason)
            continue
        except Unreachable as e:
            # Certainly not posted: nothing to look for before the next try.
            _update(store, d, "state = 'claimed', last_error = ?", [str(e)])
            state = "claimed"
            reason, outage = str(e), True
            if last:
                break
            if sleep(BACKOFF[attempt]):
                return _stopped(store, d, reason)
            continue
        except Rejected as e:
            _update(store, d, "state = 'claimed', last_error = ?", [str(e)])
            return _give_up(store, d, str(e), previous_error, "claimed")
        except Uncertain as e:
            reason, outage = str(e), True
            log.warning("%s %s for %s: %s; will look before trying again", d.kind, d.key, d.dest, e)
            _update(store, d, "last_error = ?", [reason])
            if not last and sleep(BACKOFF[attempt]):
                return _stopped(store, d, reason)
            continue
        _record_sent(store, d, sent)
        return Result("sent", "", sent)
    # The platform out of reach, or failing, at the last try: the scheduler tries again within a minute or so.
    return _give_up(store, d, reason or "gave up", previous_error, state, RETRY_AFTER_OUTAGE if outage else None)


class _Stopping(Exception):
    """The process stopped while a look waited out a rate limit."""


def _look(d: Delivery, transport: Transport, since: float, sleep: Callable[[float], bool | None]) -> Sent | None:
    """`transport.find`, waiting out its rate limits (Slack reads history once a minute for apps
    outside its Marketplace: one page a minute) as long as they are short and few; else RateLimited."""
    waited = 0
    while True:
        try:
            return transport.find(d, since=since)
        except RateLimited as e:
            if e.retry_after > MAX_RATE_LIMIT_WAIT or waited == MAX_LOOK_WAITS:
                raise
            waited += 1
            if sleep(max(e.retry_after, 0.5)):
                raise _Stopping(f"waiting to read the channel's history ({e})") from None


def _wait(store: Store, d: Delivery, reason: str, retry_after: float) -> Result:
    """Rate limited for longer than we wait here: let go until the platform's time is up, as it stands.
    Not a failure: nothing was refused, so no one is told."""
    _update(store, d, "owner = NULL, lease_until = 0, retry_at = ?, last_error = ?", [_wall() + retry_after, reason])
    log.info("%s %s for %s: %s", d.kind, d.key, d.dest, reason)
    return Result("waiting", reason)


def _stopped(store: Store, d: Delivery, reason: str) -> Result:
    """The process is stopping: let go of the claim, as it stands, for the next start to take up at once."""
    _update(store, d, "owner = NULL, lease_until = 0, last_error = ?", [reason])
    log.info("%s %s for %s: stopping before it was delivered (%s)", d.kind, d.key, d.dest, reason)
    return Result("stopped", f"stopped before it was delivered ({reason})")


def _give_up(
    store: Store, d: Delivery, reason: str, previous_error: str | None, state: str, retry_in: float | None = None
) -> Result:
    _update(
        store,
        d,
        "owner = NULL, lease_until = 0, retry_at = ?, last_error = ?",
        [_wall() + (RETRY_AFTER_REFUSAL if retry_in is None else retry_in), reason],
    )
    log.warning("%s %s for %s not delivered: %s", d.kind, d.key, d.dest, reason)
    return Result("failed", reason, new_error=reason != previous_error)


def begun(store: Store, kind: str, dest: str, key: str) -> bool:
    """Has a delivery been claimed (sent, being sent, or waiting to try again)?"""
    return (
        store.db.execute(
            "SELECT 1 FROM deliveries WHERE kind = ? AND dest = ? AND key = ?", [kind, dest, key]
        ).fetchone()
        is not None
    )


def in_flight(store: Store, kind: str, dest: str, key: str) -> bool:
    """Is an attempt under way (its message may be built already), not yet recorded as sent?"""
    row = store.db.execute(
        "SELECT lease_until, owner FROM deliveries WHERE kind = ? AND dest = ? AND key = ? AND state != 'sent'",
        [kind, dest, key],
    ).fetchone()
    return row is not None and row[0] > _wall() and not owner_is_dead(store, row[1], row[0] - LEASE_SECONDS)


def sent_message(store: Store, kind: str, dest: str, key: str) -> Sent | None:
    """Where the delivery's message went, once it is sent."""
    row = store.db.execute(
        "SELECT channel, message_ref FROM deliveries WHERE kind = ? AND dest = ? AND key = ? AND state = 'sent'",
        [kind, dest, key],
    ).fetchone()
    return Sent(row[0], row[1]) if row else None
