"""Work for the group's channel that must survive a crash: announcements, post updates.

    outbox.queue(db, [(ItemKind.ANNOUNCE, {"channel": "C0PAPERS", …})])   # inside the change's transaction
    for item in outbox.take(store, now):                                   # the sender (outbox_sender)
        ...; outbox.done(store, item)          # or outbox.retry(store, item, at, "rate limited")

A change to the schedule and its outbox rows are committed together, so a crash or a
restart loses no announcement (and announces no change that was not saved):
whichever process starts next sends what is due. A taken row is leased, so two
processes never send the same row at once; a row whose sender died is taken again
when its lease runs out. An announcement is posted marked with its row, so that a
row tried before (a timeout, a sender that died mid-send) is first looked for in
the channel and not posted twice when the platform had it; when the channel cannot
be read, it is posted again: a rare second line beats a lost one.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from enum import StrEnum

from bot.liveness import OWNER, hold, owner_is_dead
from bot.store import Store

LEASE_SECONDS = 120
#: After this many tries, and this long, an item is dropped (and logged by its sender): by tries
#: alone, restarts (each of which tries everything at once) would use a refused line's tries up.
MAX_ATTEMPTS = 12
GIVE_UP_AFTER = 90 * 60


class ItemKind(StrEnum):
    #: A line about a change to the schedule (its payload: the change, see announce.py).
    ANNOUNCE = "announce"
    #: An update of a week's post, planned afresh from the database when sent.
    REFRESH = "refresh"


@dataclass(frozen=True)
class Item:
    id: int
    kind: ItemKind
    payload: dict
    attempts: int
    created_at: float = 0.0  # unix time
    #: Tried before (a failure, or a sender that died with it): it may be in the channel already.
    tried: bool = False


def queue(db, items: list[tuple[ItemKind, dict]]) -> None:
    """Queue (kind, payload) items, inside the caller's write transaction (`Store.write`)."""
    if not db.conn.in_transaction:
        raise RuntimeError("outbox.queue belongs inside the change's write transaction")
    now = time.time()
    db.conn.executemany(
        "INSERT INTO outbox (kind, payload, created_at, next_try) VALUES (?, ?, ?, 0)",
        [(str(kind), json.dumps(payload, ensure_ascii=False), now) for kind, payload in items],
    )


def take(store: Store, now: float | None = None, limit: int = 20) -> list[Item]:
    """Lease the items that are due, oldest first.

    Announcements keep the order of their changes, in every process and across restarts: none
    is taken while an earlier one waits (held off by the platform) or is being sent. Post updates are
    planned afresh from the database when sent, so they need no order.
    """
    now = now or time.time()
    hold(store)
    with store.write() as db:
        rows = db.execute(
            "SELECT id, kind, payload, attempts, owner, lease_until, next_try, created_at FROM outbox ORDER BY id"
        ).fetchall()
        taken, blocked = [], False
        for r in rows:
            # Free, or leased by a process of this host that is gone (killed mid-send): no need to wait out its lease.
            free = r[5] < now or (r[4] != OWNER and owner_is_dead(store, r[4]))
            ready = free and r[6] <= now
            if r[1] == ItemKind.ANNOUNCE:
                if blocked or not ready:
                    blocked = True
                    continue
            elif not ready:
                continue
            taken.append(r)
            if len(taken) == limit:
                break
        rows = taken
        if rows:
            db.conn.executemany(
                "UPDATE outbox SET owner = ?, lease_until = ? WHERE id = ?",
                [(OWNER, now + LEASE_SECONDS, r[0]) for r in rows],
            )
    # A row with an owner still (its lease ran out, its sender died) was being sent: maybe it was.
    return [Item(r[0], ItemKind(r[1]), json.loads(r[2]), r[3], r[7], r[3] > 0 or r[4] is not None) for r in rows]


def done(store: Store, item: Item) -> None:
    with store.write() as db:
        db.execute("DELETE FROM outbox WHERE id = ?", [item.id])


def retry(store: Store, item: Item, at: float, error: str) -> bool:
    """Put `item` back, due at unix time `at`; False (and dropped) once it has had MAX_ATTEMPTS tries
    over GIVE_UP_AFTER seconds."""
    with store.write() as db:
        if item.attempts + 1 >= MAX_ATTEMPTS and time.time() - item.created_at >= GIVE_UP_AFTER:
            db.execute("DELETE FROM outbox WHERE id = ?", [item.id])
            return False
        db.execute(
            "UPDATE outbox SET owner = NULL, lease_until = 0, next_try = ?, attempts = attempts + 1, last_error = ? "
            "WHERE id = ?",
            [at, error, item.id],
        )
    return True


def postpone(store: Store, item: Item, at: float, why: str) -> None:
    """Put `item` back until unix time `at` without counting a try: it was not tried (see outbox_sender)."""
    with store.write() as db:
        db.execute(
            "UPDATE outbox SET owner = NULL, lease_until = 0, next_try = ?, last_error = ? WHERE id = ?",
            [at, why, item.id],
        )


def due_now(store: Store) -> None:
    """Make every waiting item due (`run` starting): what the platform refused before (the bot not in
    the channel) is tried at once, since a restart is how an operator says it is fixed."""
    now = time.time()
    with store.write() as db:
        db.execute("UPDATE outbox SET next_try = ? WHERE next_try > ?", [now, now])


def next_due(store: Store) -> float | None:
    """Unix time when the next item is due (now or later), or None when the outbox is empty."""
    return store.db.execute("SELECT min(next_try) FROM outbox").fetchone()[0]


def release(store: Store, item: Item) -> None:
    """Let go of a leased item untouched (the process is stopping): the next start takes it up."""
    with store.write() as db:
        db.execute("UPDATE outbox SET owner = NULL, lease_until = 0 WHERE id = ?", [item.id])
