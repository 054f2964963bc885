"""The scheduler inside `run`: each group's weekly post at its schedule, reminders, and catch-up.

    scheduler = create(ticker, settings)    # BackgroundScheduler, same process as the bot
    scheduler.start()
    scheduler.shutdown()

APScheduler only says *when to look*. Whether to post is decided by
`weekly.post_week` and `bot.delivery.sending`, from the database, so a run that fires
twice, late, or in two processes at once still posts once. Besides the
crontab's own slots there is a check every 30 seconds (and one at start), which
catches up a slot missed while the bot was down, retries a failed post later
in the week, and sends reminders at their time. The post and the reminders are
looked at apart: a post waiting out the platform's rate limits holds no reminder back.

Every check looks at every group (bot/schedule/groups.py) as the database has them then, so a group
started, changed or stopped in chat counts from the next check, without a restart and without a
job of its own: one query reads the groups, one finds the posts that are due, one the reminders.
After each look at the posts, one job is set at the earliest next slot of any group, so that the
posts of groups on another schedule than the environment's begin at their slot too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Protocol
from zoneinfo import ZoneInfo

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot import platforms
from bot.calendar import MeetingCalendar
from bot.catalog import bilingual
from bot.delivery import sending as delivery
from bot.delivery.background import log_failure
from bot.delivery.sending import Transport
from bot.schedule import groups, notes, questions, reminders, weekly
from bot.settings import Settings
from bot.store.connection import Store

log = logging.getLogger(__name__)

CHECK_SECONDS = 30


class ScheduledChecks:
    """Looks at what is due: the week's post (`check_post`) and reminders (`check_reminders`)."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        transport: Transport,
        *,
        clock: Callable[[], datetime] | None = None,
        platform: str | None = None,
        tell_admins: Callable[[str], None] = lambda text: None,
        stop: threading.Event | None = None,
        outbox: Callable[[], None] = lambda: None,
        transports: Mapping[str, Transport] | None = None,
        home: str | None = None,
        admins_of: Mapping[str, Callable[[str], None]] | None = None,
    ):
        """`stop`, once set, cuts short any wait between delivery attempts (the process is stopping).

        With `transports` (a process serving several platforms: bot/runtime/both_platforms.py), each group is
        posted and reminded through its own platform's, by the name its group row keeps (`slack`,
        `discord`); group 1 through `home`'s. `admins_of`: each platform's tell_admins, by the same
        names: a group's failed post is told to its own platform's admins."""
        self.store = store
        self.settings = settings
        self.group = settings.group
        self.env = groups.from_settings(settings)
        if transports:
            self.routes = Routes(store, self.env, {n: _made(t) for n, t in transports.items()}, home or "")
        else:  # the platform this process serves: a group started on another is that platform's process's
            name = platform if platform is not None else _platform_of(settings)
            self.routes = Routes(store, self.env, {(name or "").lower(): _made(transport)}, (name or "").lower())
        self.home = home
        self.clock = clock or settings.now
        self.tell_admins = tell_admins
        self.admins_of = dict(admins_of or {})
        self._sleep = (stop or threading.Event()).wait
        self.outbox = outbox
        self._posting = threading.Lock()
        self._reminding = threading.Lock()
        self._discussing = threading.Lock()
        # The first look after a start tries at once what the platform refused before (the bot not
        # in the channel, a bad token): a restart is how an operator says it is fixed.
        self._post_looked: set[int] = set()  # the groups looked at since the start
        self._reminders_looked = False
        #: Told the next slot of any group after each look at the posts (`create` makes it a job then).
        self.on_next_slot: Callable[[datetime], None] = lambda slot: None

    def wait_idle(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the checks under way to end; True if none is running."""
        deadline = time.monotonic() + max(timeout, 0.0)
        for lock in (self._posting, self._reminding, self._discussing):
            if not lock.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
                return False
            lock.release()
        return True

    def check_post(self) -> None:
        """Post the week's paper if it is due. While a check is under way (waiting out a rate limit,
        say), another returns at once: that one is seeing to the post."""
        self._check(self._posting, self._post)

    def check_reminders(self) -> None:
        """Send the reminders that are due (as check_post, one check at a time)."""
        self._check(self._reminding, self._remind)

    def check_discussion(self) -> None:
        """Post the questions due in the meetings' threads, and the digests of meetings starting."""
        self._check(self._discussing, self._discuss)

    def _discuss(self, now: datetime) -> None:
        try:
            for posted in self.routes.discuss(self.routes.posting(), now, sleep=self._sleep):
                if posted.status == "failed":
                    log.error("could not post in a meeting's thread: %s", posted.detail)
        except Exception:
            log_failure(log, "discussion check failed")

    def _check(self, lock: threading.Lock, look: Callable[[datetime], None]) -> None:
        if not lock.acquire(blocking=False):
            return
        try:
            look(self.clock())
        finally:
            lock.release()
        try:
            self.outbox()  # what a crash, a restart or a rate limit left unsent
        except Exception:
            log_failure(log, "outbox check failed")

    def _post(self, now: datetime) -> None:
        try:
            posting = [g for g in self.routes.posting() if g.channel]
            due = self.routes.due(posting, lambda tz: now)
        except Exception:
            log_failure(log, "weekly post check failed")
            return
        for group in due:
            self._post_group(group, now)
        try:
            slot = next_slot([g.calendar for g in posting], now)
            if slot is not None:
                self.on_next_slot(slot)
        except Exception:
            log_failure(log, "planning the next post slot failed")

    def _post_group(self, group: groups.Group, now: datetime) -> None:
        channel = group.channel
        try:
            outcome = self.routes.post(
                group, now, retry_now=group.id not in self._post_looked, sleep=self._sleep, started=group.started_at
            )
        except Exception:
            log_failure(log, "weekly post check of %s failed", channel)
            return
        if outcome.status != "busy":  # another process was at it: the retry at once is still to come
            self._post_looked.add(group.id)
        if outcome.status == "sent" and outcome.post is not None:
            log.info("posted the paper of the week %s: #%s", outcome.week, outcome.post.paper.number)
        elif outcome.status == "found":
            log.info("the post of %s was already in the channel; recorded it", outcome.week)
        elif outcome.status == "failed":
            log.error("could not post the paper of the week %s to %s: %s", outcome.week, channel, outcome.detail)
            if outcome.result is not None and outcome.result.new_error:
                self.admins_of.get(group.platform or self.home or "", self.tell_admins)(
                    f"I couldn't post the paper of the week ({outcome.week}) to <#{channel}>: {outcome.detail}. "
                    "I'll keep trying this week."
                )

    def _remind(self, now: datetime) -> None:
        try:
            force = not self._reminders_looked
            due = self.routes.remind(self.routes.posting(), now, force=force, sleep=self._sleep)
            self._reminders_looked = True
            for sending in due:
                r, result = sending.reminder, sending.result
                if result.status == "sent":
                    log.info("reminded %s about %s (%s)", r.presenter, r.paper.id, r.week)
                elif result.status == "failed":
                    log.error("could not remind %s about %s: %s", r.presenter, r.week, result.detail)
        except Exception:
            log_failure(log, "reminder check failed")
        try:  # what a crash or a platform's refusal left of notes (swap offers, open slots' calls)
            self.routes.tell(self.routes.posting(), now, sleep=self._sleep)
        except Exception:
            log_failure(log, "notes check failed")


class Routes:
    """The groups one process posts and reminds, and the transport each goes through: the scheduler's
    choice, and `post-week`'s and `remind`'s, so that a verb run by hand reaches the groups `run` would.

    `transports` makes each served platform's transport when first wanted, by the name a group row
    keeps (`slack`, `discord`); `home` is the platform of group 1 and of a group that keeps none
    ('' for the core's own Settings, which serve any). With several, each group goes through its own."""

    def __init__(self, store: Store, env: groups.Group, transports: Mapping[str, Callable[[], Transport]], home: str):
        self.store, self.env, self.home = store, env, home
        self._make = dict(transports)
        self._made: dict[str, Transport] = {}
        #: The platform `groups.posting` asks for: None when this process posts for every one.
        self.platform = (home or None) if len(self._make) == 1 else None

    def posting(self) -> list[groups.Group]:
        """The groups that get posts and reminders now: a channel, not stopped, on a platform served here."""
        found = groups.posting(self.store, self.env, self.platform)
        if len(self._make) > 1:
            found = [g for g in found if (g.platform or self.home) in self._make]
        return found

    def transport_of(self, group: groups.Group) -> Transport:
        """The transport of the group's platform (group 1's: `home`'s)."""
        name = group.platform if group.platform in self._make else self.home
        if name not in self._made:
            self._made[name] = self._make[name]()
        return self._made[name]

    def due(self, posting: list[groups.Group], at: Callable[[ZoneInfo], datetime]) -> list[groups.Group]:
        """The groups of `posting` whose post is due, each at `at` of its zone (a bare `--at` is each
        group's wall time): groups at one moment share one query for what is due."""
        moments: dict[str, datetime] = {}
        by_moment: dict[datetime, dict[str, groups.Group]] = {}
        for g in posting:
            zone = g.calendar.tz
            if zone.key not in moments:
                moments[zone.key] = at(zone)
            by_moment.setdefault(moments[zone.key], {})[g.channel or ""] = g
        due: set[str] = set()
        for moment, chosen in by_moment.items():
            calendars = {c: g.calendar for c, g in chosen.items()}
            due.update(weekly.due(self.store, calendars, moment, {c: g.started_at for c, g in chosen.items()}))
        return [g for g in posting if g.channel in due]

    def post(self, group: groups.Group, at: datetime, **how) -> weekly.Outcome:
        """`weekly.post_week` of `group`, through its platform (`how`: post_week's keywords)."""
        if group.channel is None:  # a group that posts has a channel: group 1 without one is refused before
            raise ValueError("a group without a channel has no post")
        outcome = weekly.post_week(
            self.store,
            group.calendar,
            self.transport_of(group),
            group.channel,
            at,
            focus_tag=group.focus_tag,
            rotation=group.rotation,
            **how,
        )
        if outcome.ok and outcome.result is not None:  # the post is out: the questions that waited for it
            self.discuss([group], at, **({"sleep": how["sleep"]} if how.get("sleep") else {}))
        return outcome

    def due_reminders(
        self, chosen: list[groups.Group], at: datetime
    ) -> list[tuple[MeetingCalendar, reminders.Reminder]]:
        """The reminders due at `at` in `chosen`'s groups and not sent yet (`remind --dry-run`)."""
        return reminders.due_in(self.store, [g.calendar for g in chosen], at)

    def remind(self, chosen: list[groups.Group], at: datetime, **how) -> list[reminders.Sending]:
        """Send the reminders due at `at` in `chosen`'s groups, each platform's through its transport,
        one query per platform (`how`: send_due_in's keywords)."""
        by_transport: dict[int, tuple[Transport, list[MeetingCalendar]]] = {}
        for g in chosen:
            transport = self.transport_of(g)
            by_transport.setdefault(id(transport), (transport, []))[1].append(g.calendar)
        return [
            sending
            for transport, calendars in by_transport.values()
            for sending in reminders.send_due_in(self.store, calendars, transport, at, **how)
        ]

    def discuss(self, chosen: list[groups.Group], at: datetime, **how) -> list[delivery.Result]:
        """Post in the meetings' threads of `chosen`'s groups what is due (see questions.discuss)."""
        return questions.discuss(self.store, chosen, self.transport_of, at, **how)

    def tell(self, chosen: list[groups.Group], at: datetime, **how) -> int:
        """Send the notes not yet told in `chosen`'s groups, each platform's through its transport
        (`how`: notes.send_due_in's keywords); how many were sent."""
        by_transport: dict[int, tuple[Transport, list[MeetingCalendar]]] = {}
        for g in chosen:
            transport = self.transport_of(g)
            by_transport.setdefault(id(transport), (transport, []))[1].append(g.calendar)
        return sum(notes.send_due_in(self.store, c, transport, at, **how) for transport, c in by_transport.values())


def _made(transport: Transport) -> Callable[[], Transport]:
    return lambda: transport


def next_slot(calendars: list[MeetingCalendar], now: datetime) -> datetime | None:
    """The earliest post slot after `now` of any of `calendars`, worked out once per schedule and zone."""
    slots = {}
    for calendar in calendars:
        key = (calendar.schedule.expr, calendar.tz.key)
        if key not in slots:
            slots[key] = groups.next_post(calendar, now)
    return min((s for s in slots.values() if s is not None), default=None)


def _platform_of(settings: Settings) -> str | None:
    try:
        return platforms.of(settings).name
    except StopIteration:  # the core's own Settings (tests, the console): no platform's in particular
        return None


class Checks(Protocol):
    """What the jobs call: one place's ScheduledChecks, or every place's (bot/runtime/hosting.py)."""

    on_next_slot: Callable[[datetime], None]

    def check_post(self) -> None: ...
    def check_reminders(self) -> None: ...
    def check_discussion(self) -> None: ...


def create(ticker: Checks, settings: Settings) -> BackgroundScheduler:
    """The scheduler with its jobs, not started yet (`.start()`; `.shutdown()` once it `.running`)."""
    # Two instances of a job may run: one waiting on the platform, and the next, which returns at once (the
    # checks see to that), rather than APScheduler skipping it with a warning every 30 seconds.
    scheduler = BackgroundScheduler(
        timezone=settings.timezone,
        job_defaults={"coalesce": True, "max_instances": 2, "misfire_grace_time": None},
    )
    scheduler.add_job(ticker.check_post, settings.schedule.trigger, id="weekly-post", name="weekly post slot")
    every = IntervalTrigger(seconds=CHECK_SECONDS, timezone=settings.timezone)
    start = datetime.now(settings.timezone)
    scheduler.add_job(ticker.check_post, every, id="post-check", name="catch-up and retries", next_run_time=start)
    scheduler.add_job(ticker.check_reminders, every, id="reminders", name="reminders", next_run_time=start)
    # Search across languages reads its dictionary (about a second) once: now, not in a member's first search.
    scheduler.add_job(bilingual.load, id="dictionary", name="read the dictionary of search across languages")
    scheduler.add_job(ticker.check_discussion, every, id="discussion", name="questions", next_run_time=start)

    # Each group's slot, not only the environment's crontab: at a slot that the groups started in chat
    # have, their posts begin then, not up to CHECK_SECONDS later, which a thousand posts under the
    # platform's rate limit cannot make up.
    def plan(slot: datetime) -> None:
        scheduler.add_job(
            ticker.check_post, DateTrigger(slot), id="group-slot", name="next group slot", replace_existing=True
        )

    ticker.on_next_slot = plan
    return scheduler
