"""The scheduler's checks of every place a hosted install serves (bot/places/).

    checks = EveryPlace(lambda: [checks_of(p) for p in places])   # each place's ScheduledChecks
    jobs = scheduler.create(checks, settings)                      # the same jobs as one place's

Each place's checks run on a pool of threads, each place's one at a time (ScheduledChecks' own locks),
so that a place waiting out its platform's rate limit, or whose channel refuses, holds a thread of
the pool and no other place: the others' posts go out at their slot.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import datetime

from bot.runtime.scheduler import Checks

log = logging.getLogger(__name__)

#: Threads for the places' checks: a place waiting out a Retry-After holds one (threads hold no database
#: connection: bot/store/postgres.py lends them per statement), so a Monday of many places waits in parallel.
WORKERS = 64


class EveryPlace:
    """ScheduledChecks' face (check_post, check_reminders, check_discussion, wait_idle, on_next_slot)
    over every place's ScheduledChecks, as `each()` lists them at each check."""

    def __init__(self, each: Callable[[], Sequence[Checks]], workers: int = WORKERS):
        self.each = each
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="paperbot-places")
        self._running: set[Future] = set()
        self._lock = threading.Lock()
        self._planned: datetime | None = None
        #: Told the earliest next slot of any place's groups (scheduler.create makes it a job).
        self.on_next_slot: Callable[[datetime], None] = lambda slot: None

    def check_post(self) -> None:
        self._fan_out(lambda c: c.check_post)

    def check_reminders(self) -> None:
        self._fan_out(lambda c: c.check_reminders)

    def check_discussion(self) -> None:
        self._fan_out(lambda c: c.check_discussion)

    def _fan_out(self, which: Callable[[Checks], Callable[[], None]]) -> None:
        try:
            every = self.each()
        except Exception:
            log.exception("could not list the places to check")
            return
        for checks in every:
            checks.on_next_slot = self._next_slot
            future = self._pool.submit(which(checks))
            with self._lock:
                self._running.add(future)
            future.add_done_callback(self._done)

    def _done(self, future: Future) -> None:
        with self._lock:
            self._running.discard(future)
        if future.exception() is not None:
            log.error("a place's check failed: %s", future.exception())

    def _next_slot(self, slot: datetime) -> None:
        """The earliest slot any place told since the last planned one passed."""
        with self._lock:
            planned = self._planned
            if planned is not None and planned > datetime.now(planned.tzinfo) and planned <= slot:
                return
            self._planned = slot
        self.on_next_slot(slot)

    def wait_idle(self, timeout: float) -> bool:
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            with self._lock:
                running = list(self._running)
            if not running:
                return True
            if time.monotonic() >= deadline:
                return False
            wait(running, timeout=max(deadline - time.monotonic(), 0.0))

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
