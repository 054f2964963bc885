"""The outbox keeps announcements in order in each channel, and no channel holds another's back."""

from __future__ import annotations

from bot.delivery import outbox
from bot.delivery.outbox import ItemKind


def _announce(channel: str, n: int) -> tuple[ItemKind, dict]:
    return ItemKind.ANNOUNCE, {"channel": channel, "n": n}


def test_a_channel_that_refuses_holds_back_only_its_own_announcements(store):
    with store.write() as db:
        outbox.queue(db, [_announce("C0REFUSING", 1), _announce("C0OTHER", 2), _announce("C0REFUSING", 3)])
    taken = outbox.take(store, now=1000.0)
    assert [i.payload["n"] for i in taken] == [1, 2, 3]
    refused, other, later = taken
    outbox.retry(store, refused, at=5000.0, error="not_in_channel")  # the bot was removed from that channel
    outbox.release(store, later)
    outbox.done(store, other)
    with store.write() as db:
        outbox.queue(db, [_announce("C0OTHER", 4)])
    # Any process, after a restart too: the other channel's next line goes; the refusing one's wait in order.
    [fourth] = outbox.take(store, now=1001.0)
    assert fourth.payload["n"] == 4
    outbox.done(store, fourth)
    assert outbox.take(store, now=1002.0) == []
    assert [i.payload["n"] for i in outbox.take(store, now=5001.0)] == [1, 3]


def test_a_line_being_sent_in_one_channel_holds_back_only_that_channels_next(store):
    with store.write() as db:
        outbox.queue(db, [_announce("C0A", 1)])
    [sending] = outbox.take(store, now=1000.0)  # leased by a sender, another process looks meanwhile
    with store.write() as db:
        outbox.queue(db, [_announce("C0A", 2), _announce("C0B", 3)])
    assert [i.payload["n"] for i in outbox.take(store, now=1001.0)] == [3]
    outbox.done(store, sending)
    assert [i.payload["n"] for i in outbox.take(store, now=1002.0)] == [2]
