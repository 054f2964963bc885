"""How long a reply may take, and replies under way: the background waits for a quiet moment.

    with arrived_at(moment), replies.one():   # answering a request that came in at `moment`
        ... answer_deadline() ...             # what the reply waits for ends by then

A chat platform gives a reply a few seconds (3, counted from when the request came in), so
whatever a reply waits for (asking the platform about a member, the database's write lock)
ends by one deadline. Work for the group's channel lets replies go first.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

#: All that a reply waits for ends this long after its request came in: within the platforms' 3 seconds.
ANSWER_SECONDS = 2.5
#: The channel's work (announcements, post updates) lets replies go first: it waits until no reply
#: has been under way for QUIET_GAP seconds, but an item waits no longer than QUIET_LONGEST.
QUIET_GAP = 0.02
QUIET_LONGEST = 1.0
_arrival = threading.local()


class Replies:
    """Replies under way, so that background work can wait for a quiet moment.

    Under CPython's GIL a thread posting an announcement (its HTTP call and JSON, about a
    millisecond of CPU) slows every reply made meanwhile; a reply has 3 seconds and the
    channel's line can come a moment later.
    """

    def __init__(self, gap: float = QUIET_GAP, longest: float = QUIET_LONGEST):
        self.gap, self.longest = gap, longest
        self._lock = threading.Lock()
        self._under_way = 0
        self._last_end = 0.0  # monotonic

    @contextmanager
    def one(self) -> Iterator[None]:
        with self._lock:
            self._under_way += 1
        try:
            yield
        finally:
            with self._lock:
                self._under_way -= 1
                self._last_end = time.monotonic()

    def wait_for_quiet(self, since: float, stop: threading.Event) -> None:
        """Wait until no reply has been under way for `gap` seconds, or until `longest` seconds after
        `since` (monotonic), or until `stop`: a bot that is never quiet still sends, a moment later."""
        while True:
            now = time.monotonic()
            with self._lock:
                quiet_for = None if self._under_way else now - self._last_end
            if quiet_for is not None and quiet_for >= self.gap:
                return
            left = since + self.longest - now
            if left <= 0 or stop.wait(min(left, self.gap - (quiet_for or 0.0))):
                return


@contextmanager
def arrived_at(moment: float | None) -> Iterator[None]:
    """The request this thread answers meanwhile came in at `moment` (monotonic), perhaps well
    before a thread was free to take it: see answer_deadline."""
    before = getattr(_arrival, "at", None)
    _arrival.at = moment
    try:
        yield
    finally:
        _arrival.at = before


def answer_deadline() -> float:
    """When what the reply to this thread's request waits for must end: the platform's seconds run
    from when the request came in (the adapter's server says when), not from when a thread took it."""
    return (getattr(_arrival, "at", None) or time.monotonic()) + ANSWER_SECONDS
