"""Work for the group's channel that must survive a crash: announcements, post updates.

    outbox.queue(db, [(ItemKind.ANNOUNCE, {"channel": "C0PAPERS", …})])   # inside the change's transaction
    for item in outbox.take(store, now):                                   # the sender (outbox_sender)
        ...; outbox.done(store, item)          # or outbox.retry(store, item, at=…, error="rate limited")

A change to the schedule and its outbox rows are committed together, so a crash or a
restart loses no announcement (and announces no change that was not saved):
whichever process starts next sends what is due. A taken row is leased, so two
processes never send the same row at once; a row whose sender died is taken again
when its lease runs out. An announcement is posted marked with its row, so that a
row tried before (a timeout, a sender that died mid-send) is first looked for in
the channel and not posted twice when the platform had it; when the channel cannot
be read, it is posted again: a rare second line beats a lost one. Several announcement rows may go
as one message (`Item.unit`, chosen by the sender's policy: see outbox_sender.plan); they are taken,
retried and done together.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from bot.store import engine
from bot.store.connection import Store
from bot.store.liveness import OWNER, hold, owner_is_dead

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
    #: The announcement rows sent as one message with this one (its own id among them), in order.
    unit: tuple[int, ...] = ()


@dataclass(frozen=True)
class Waiting:
    """An announcement row as the sending policy sees it (outbox_sender.plan): whose change, of
    which week, in which channel (see announce.record), read without reading the whole row."""

    id: int
    created_at: float
    tried: bool
    unit: tuple[int, ...]  # as Item.unit
    channel: str | None
    by: str | None  # None: a row an older paperbot queued, its message as kept
    week: str | None


@dataclass(frozen=True)
class Plan:
    """Which announcement rows go now, and as which messages: the sender's policy (outbox_sender.plan)."""

    #: Each a message's rows, in order; the messages in the order of their first rows.
    units: list[tuple[int, ...]] = field(default_factory=list)
    #: Unix time when a row held back now is due, if any.
    ready_at: float | None = None


#: Given the announcement rows that may go (due, free, none waiting before them) and the time: a Plan.
Planner = Callable[[list[Waiting], float], Plan]


def each_alone(rows: list[Waiting], now: float) -> Plan:
    """Every announcement its own message, at once (a sender without a policy of its own)."""
    return Plan([r.unit or (r.id,) for r in rows])


def queue(db, items: list[tuple[ItemKind, dict]]) -> None:
    """Queue (kind, payload) items, inside the caller's write transaction (`Store.write`)."""
    if not db.conn.in_transaction:
        raise RuntimeError("outbox.queue belongs inside the change's write transaction")
    now = time.time()
    db.conn.executemany(
        "INSERT INTO outbox (kind, payload, created_at, next_try) VALUES (?, ?, ?, 0)",
        [(str(kind), json.dumps(payload, ensure_ascii=False), now) for kind, payload in items],
    )


def hold_refresh(db, payload: dict, quiet: float, longest: float) -> None:
    """Queue an update of a post (REFRESH's `payload`) due once nothing has changed it for `quiet`
    seconds, and at the latest `longest` after the first change: inside the caller's write transaction.
    A post has one such update waiting: a later change moves it on rather than adding one, so that
    clicks in a row make one edit (an update is planned afresh when sent, so it shows them all)."""
    if not db.conn.in_transaction:
        raise RuntimeError("outbox.hold_refresh belongs inside the change's write transaction")
    now = time.time()
    body = json.dumps(payload, ensure_ascii=False)
    row = db.execute(
        "SELECT id, next_try, created_at FROM outbox WHERE kind = ? AND payload = ? AND owner IS NULL AND attempts = 0 "
        "AND last_error IS NULL ORDER BY id LIMIT 1",  # never tried nor put off (a rate limit): only held
        [str(ItemKind.REFRESH), body],
    ).fetchone()
    if row is None:  # none waiting (one being sent may have planned before this change: a new one)
        db.execute(
            "INSERT INTO outbox (kind, payload, created_at, next_try) VALUES (?, ?, ?, ?)",
            [str(ItemKind.REFRESH), body, now, now + quiet],
        )
    elif row[1] > now:  # held: held on, within its longest hold (one due now shows this change anyway)
        db.execute(
            "UPDATE outbox SET next_try = ? WHERE id = ?", [max(row[1], min(now + quiet, row[2] + longest)), row[0]]
        )


_COLUMNS = "id, kind, payload, attempts, owner, lease_until, next_try, created_at"


def _item(r) -> Item:
    payload = json.loads(r[2])
    # A row with an owner still (its lease ran out, its sender died) was being sent: maybe it was.
    tried = r[3] > 0 or r[4] is not None
    unit = tuple(payload.pop("unit", ()))  # kept in the payload, no column of its own
    return Item(r[0], ItemKind(r[1]), payload, r[3], r[7], tried, unit)


_LOOK_SQLITE = (
    "SELECT id, kind, attempts, owner, lease_until, next_try, created_at, json_extract(payload, '$.unit'), "
    "json_extract(payload, '$.channel'), json_extract(payload, '$.change.by'), "
    "json_extract(payload, '$.change.week') FROM outbox ORDER BY id"
)
_LOOK_PG = (
    "SELECT id, kind, attempts, owner, lease_until, next_try, created_at, (payload::json -> 'unit')::text, "
    "payload::json ->> 'channel', payload::json #>> '{change,by}', payload::json #>> '{change,week}' "
    "FROM outbox ORDER BY id"
)


def _look(store: Store, now: float, plan: Planner) -> tuple[list[int], list[tuple[int, ...]], float | None]:
    """The post updates due, the announcement messages to send now (by `plan`), and when the next
    row that waits is due. Reads every row, but none whole: it runs at every wake of the sender."""
    refreshes: list[int] = []
    waiting: list[Waiting] = []
    later: list[float] = []
    blocked: set[str | None] = set()  # channels where an announcement waits or is being sent
    rows = store.db.execute(_LOOK_PG if engine.is_postgres(store) else _LOOK_SQLITE).fetchall()
    for id_, kind, attempts, owner, lease_until, next_try, created_at, unit, *change in rows:
        # Free, or leased by a process that is gone (killed mid-send): no need to wait out its lease.
        free = lease_until < now or (owner != OWNER and owner_is_dead(store, owner, lease_until - LEASE_SECONDS))
        ready = free and next_try <= now
        if not ready:
            later.append(next_try if free else lease_until)
        if kind == ItemKind.ANNOUNCE:
            # In order in each channel: none is taken while an earlier one of its channel waits (held
            # off by the platform, refused) or is being sent; another channel's go on.
            if not ready:
                blocked.add(change[0])
            if change[0] not in blocked:
                # A row with an owner still (its lease ran out, its sender died) was being sent: maybe it was.
                tried = attempts > 0 or owner is not None
                waiting.append(Waiting(id_, created_at, tried, tuple(json.loads(unit)) if unit else (), *change))
        elif ready:
            refreshes.append(id_)
    planned = plan(waiting, now)
    if planned.ready_at is not None:
        later.append(planned.ready_at)
    present = {w.id for w in waiting}
    units = [u for u in planned.units if all(row in present for row in u)]
    return refreshes, units, min(later) if later else None


def take(store: Store, now: float | None = None, limit: int = 20, plan: Planner = each_alone) -> list[Item]:
    """Lease the items that are due, oldest first: post updates, and the announcements that `plan`
    sends now, each with the rows of its message (`Item.unit`, kept in the rows: a message tried
    before is tried again as it was, so that its mark finds it).

    Announcements keep the order of their changes in each channel, in every process and across
    restarts: none is taken while an earlier one of its channel waits (held off by the platform,
    refused) or is being sent, and a channel's waiting holds no other channel's back; `plan` may hold
    some back (see outbox_sender.plan). Post updates are planned afresh from the database when sent, so
    they need no order. `limit` counts post updates and messages.
    """
    now = now or time.time()
    hold(store)
    with store.write() as db:
        refreshes, units, _ = _look(store, now, plan)
        batches = sorted([(i,) for i in refreshes] + units)[:limit]
        unit_of = {row: batch for batch in batches for row in batch}
        if not unit_of:
            return []
        rows = db.execute(
            f"SELECT {_COLUMNS} FROM outbox WHERE id IN ({','.join('?' * len(unit_of))}) ORDER BY id", list(unit_of)
        ).fetchall()
        items = []
        for r in rows:
            item = _item(r)
            if item.kind == ItemKind.ANNOUNCE and item.unit != unit_of[item.id]:  # kept: a retry sends the same
                payload = json.dumps({**item.payload, "unit": list(unit_of[item.id])}, ensure_ascii=False)
                db.execute("UPDATE outbox SET payload = ? WHERE id = ?", [payload, item.id])
                item = dataclasses.replace(item, unit=unit_of[item.id])
            items.append(item)
        db.conn.executemany(
            "UPDATE outbox SET owner = ?, lease_until = ? WHERE id = ?",
            [(OWNER, now + LEASE_SECONDS, i.id) for i in items],
        )
    return items


def _ids(items: tuple[Item, ...]) -> tuple[str, list[int]]:
    return ",".join("?" * len(items)), [i.id for i in items]


def done(store: Store, *items: Item) -> None:
    """The items are sent (a message's rows together)."""
    marks, ids = _ids(items)
    with store.write() as db:
        db.execute(f"DELETE FROM outbox WHERE id IN ({marks})", ids)


def retry(store: Store, *items: Item, at: float, error: str) -> bool:
    """Put the items (a message's rows) back, due at unix time `at`; False (and dropped) once they
    have had MAX_ATTEMPTS tries over GIVE_UP_AFTER seconds."""
    marks, ids = _ids(items)
    with store.write() as db:
        first = min(items, key=lambda i: i.created_at)
        if max(i.attempts for i in items) + 1 >= MAX_ATTEMPTS and time.time() - first.created_at >= GIVE_UP_AFTER:
            db.execute(f"DELETE FROM outbox WHERE id IN ({marks})", ids)
            return False
        db.execute(
            "UPDATE outbox SET owner = NULL, lease_until = 0, next_try = ?, attempts = attempts + 1, last_error = ? "
            f"WHERE id IN ({marks})",
            [at, error, *ids],
        )
    return True


def postpone(store: Store, *items: Item, at: float, why: str) -> None:
    """Put the items back until unix time `at` without counting a try: they were not tried (see outbox_sender)."""
    marks, ids = _ids(items)
    with store.write() as db:
        db.execute(
            f"UPDATE outbox SET owner = NULL, lease_until = 0, next_try = ?, last_error = ? WHERE id IN ({marks})",
            [at, why, *ids],
        )


def due_now(store: Store) -> None:
    """Make every waiting item due (`run` starting): what the platform refused before (the bot not in
    the channel) is tried at once, since a restart is how an operator says it is fixed."""
    now = time.time()
    with store.write() as db:
        db.execute("UPDATE outbox SET next_try = ? WHERE next_try > ?", [now, now])


def next_due(store: Store, plan: Planner = each_alone) -> float | None:
    """Unix time when the next item is due (now or later; an announcement that `plan` holds back, when
    it is no longer held), or None when nothing waits."""
    now = time.time()
    refreshes, units, later = _look(store, now, plan)
    return now if refreshes or units else later


def release(store: Store, *items: Item) -> None:
    """Let go of leased items untouched (the process is stopping): the next start takes them up."""
    marks, ids = _ids(items)
    with store.write() as db:
        db.execute(f"UPDATE outbox SET owner = NULL, lease_until = 0 WHERE id IN ({marks})", ids)
