"""Fair to every place: one place's flood of requests holds at most a share of the threads that answer.

    inflight = InFlight(share=4)
    with inflight.one(place) as admitted:
        if not admitted:
            ...  # one line: this workspace's requests are many just now; the others are answered
        ...

The HTTP server answers every place with one pool of threads (http_door.THREADS): without a share,
a workspace that sends a hundred commands at once would hold every thread, and another place's reply
would miss its platform's 3 seconds.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: One place's share of the answering threads (http_door.THREADS is 8): half of them.
SHARE = 4
#: The line for a request past its place's share (the platforms show it to the member who asked).
BUSY = "paperbot is answering many requests from here just now, so nothing was done: try again in a moment."


class InFlight:
    def __init__(self, share: int = SHARE):
        self.share = share
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    @contextmanager
    def one(self, place: str) -> Iterator[bool]:
        """Whether a request of `place` may be answered now (False: its share is taken), held to the block's end."""
        with self._lock:
            held = self._counts.get(place, 0)
            admitted = held < self.share
            if admitted:
                self._counts[place] = held + 1
        try:
            yield admitted
        finally:
            if admitted:
                with self._lock:
                    left = self._counts[place] - 1
                    if left:
                        self._counts[place] = left
                    else:
                        del self._counts[place]
