"""The scheduler inside `run`: the weekly post at PAPERBOT_SCHEDULE, reminders, and catch-up.

    scheduler = create(ticker, settings)    # BackgroundScheduler, same process as the bot
    scheduler.start()
    scheduler.shutdown()

APScheduler only says *when to look*. Whether to post is decided by
`weekly.post_week` and `bot.delivery`, from the database, so a run that fires
twice, late, or in two processes at once still posts once. Besides the
crontab's own slots there is a check every 30 seconds (and one at start), which
catches up a slot missed while the bot was down, retries a failed post later
in the week, and sends reminders at their time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from bot import reminders, weekly
from bot.delivery import Transport
from bot.settings import Settings
from bot.store import Store

log = logging.getLogger(__name__)

CHECK_SECONDS = 30


class Ticker:
    """One look at what is due: the week's post, then reminders."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        transport: Transport,
        *,
        clock: Callable[[], datetime] | None = None,
        tell_admins: Callable[[str], None] = lambda text: None,
        stop: threading.Event | None = None,
        outbox: Callable[[], None] = lambda: None,
    ):
        """`stop`, once set, cuts short any wait between delivery attempts (the process is stopping)."""
        self.store = store
        self.settings = settings
        self.group = settings.group
        self.transport = transport
        self.clock = clock or settings.now
        self.tell_admins = tell_admins
        self._sleep = (stop or threading.Event()).wait
        self.outbox = outbox
        self._lock = threading.Lock()

    def wait_idle(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for a check under way to end; True if none is running."""
        if not self._lock.acquire(timeout=max(timeout, 0.0)):
            return False
        self._lock.release()
        return True

    def tick(self) -> None:
        with self._lock:
            now = self.clock()
            self._post(now)
            self._remind(now)
        try:
            self.outbox()  # what a crash, a restart or a rate limit left unsent
        except Exception:
            log.exception("outbox check failed")

    def _post(self, now: datetime) -> None:
        s = self.settings
        try:
            outcome = weekly.post_week(
                self.store, self.group, self.transport, s.channel, now, focus_tag=s.focus_tag, sleep=self._sleep
            )
        except Exception:
            log.exception("weekly post check failed")
            return
        if outcome.status == "sent":
            log.info("posted the paper of the week %s: #%s", outcome.week, outcome.post.paper.number)
        elif outcome.status == "found":
            log.info("the post of %s was already in the channel; recorded it", outcome.week)
        elif outcome.status == "failed":
            log.error("could not post the paper of the week %s to %s: %s", outcome.week, s.channel, outcome.detail)
            if outcome.result is not None and outcome.result.new_error:
                self.tell_admins(
                    f"I couldn't post the paper of the week ({outcome.week}) to <#{s.channel}>: {outcome.detail}. "
                    "I'll keep trying this week."
                )

    def _remind(self, now: datetime) -> None:
        try:
            for sending in reminders.send_due(self.store, self.group, self.transport, now, sleep=self._sleep):
                r, result = sending.reminder, sending.result
                if result.status == "sent":
                    log.info("reminded %s about %s (%s)", r.presenter, r.paper.id, r.week)
                elif result.status == "failed":
                    log.error("could not remind %s about %s: %s", r.presenter, r.week, result.detail)
        except Exception:
            log.exception("reminder check failed")


def create(ticker: Ticker, settings: Settings) -> BackgroundScheduler:
    """The scheduler with its jobs, not started yet (`.start()`; `.shutdown()` once it `.running`)."""
    scheduler = BackgroundScheduler(
        timezone=settings.timezone,
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
    )
    scheduler.add_job(ticker.tick, settings.schedule.trigger, id="weekly-post", name="weekly post slot")
    scheduler.add_job(
        ticker.tick,
        IntervalTrigger(seconds=CHECK_SECONDS, timezone=settings.timezone),
        id="check",
        name="catch-up, retries and reminders",
        next_run_time=datetime.now(settings.timezone),
    )
    return scheduler
