"""Work a platform adapter does after its reply has gone: announcements, post updates, late answers.

    work = Background({"answer": 8, "channel": 2})
    work.later(send, item, lane="channel")   # failures logged, never shown as tracebacks
    work.drain(10)                           # tests, and a stop
    work.close(5, finish=("answer",))        # True when nothing is left running

Each lane is a thread pool of its own, so that a rate-limited channel never holds up an answer.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from bot.store.connection import Unavailable

log = logging.getLogger(__name__)


def log_failure(logger: logging.Logger, message: str, *args: object) -> None:
    """Log the exception being handled under `message`: the database away (restarted, out of reach) in
    one line, since the work is tried again once it is back; anything else with its traceback."""
    error = sys.exc_info()[1]
    if isinstance(error, Unavailable):
        logger.warning(message + ": the database does not answer (%s)", *args, " ".join(str(error).split())[:200])
    else:
        logger.exception(message, *args)


class Background:
    def __init__(self, lanes: dict[str, int]):
        self._pools = {
            lane: ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"paperbot-{lane}")
            for lane, workers in lanes.items()
        }
        self._pending: set[Future] = set()
        self._lock = threading.Lock()

    def later(self, fn: Callable, *args, lane: str) -> Future:
        """Run `fn(*args)` in `lane`; a failure is logged (log_failure), never raised."""

        def guarded():
            try:
                fn(*args)
            except Exception:
                log_failure(log, "background %s failed", getattr(fn, "__name__", fn))

        future = self._pools[lane].submit(guarded)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._forget)
        return future

    def submit(self, fn: Callable, *args, lane: str) -> Future:
        """Run `fn(*args)` in `lane` for its result: the caller waits on the future and sees what it raises."""
        return self._pools[lane].submit(fn, *args)

    def _forget(self, future: Future) -> None:
        with self._lock:
            self._pending.discard(future)

    def drain(self, timeout: float = 10) -> None:
        """Wait up to `timeout` seconds for the work under way, and for what it started meanwhile."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                pending = set(self._pending)
            if not pending or time.monotonic() > deadline:
                return
            wait(pending, timeout=max(0.0, deadline - time.monotonic()))

    def close(self, timeout: float = 5, finish: Iterable[str] = ()) -> bool:
        """Drain for `timeout` seconds, then take no more work: the lanes in `finish` still run what
        they were given (an answer a member waits for), the others drop it (it is in the outbox).
        True when nothing is left running."""
        self.drain(timeout)
        keep = set(finish)
        for lane, pool in self._pools.items():
            pool.shutdown(wait=False, cancel_futures=lane not in keep)
        with self._lock:
            return not self._pending
