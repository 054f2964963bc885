"""`paperbot run` with both platforms' tokens set: one process serves the groups of each.

    code = both_platforms.run(parts, settings, store, stop)   # parts: each platform's serve.Part

Each platform brings its part (its bot, and its HTTP route or its connection: Slack's Socket
Mode, Discord's Gateway); the process has one of everything else. One scheduler looks at every
group and posts each through its own platform's transport (group 1 through the platform of
PAPERBOT_CHANNEL, the first part); one outbox sender sends each announcement through the platform
of its channel; one waitress server on PORT serves every route: `/slack/events`,
`/discord/interactions`, the calendars and pages, and `/healthz`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from bot.announcing.changes import Announcement
from bot.announcing.sender import OutboxSender
from bot.calendar import Week
from bot.delivery import outbox
from bot.runtime import scheduler
from bot.schedule import groups
from bot.settings import PlatformSettings
from bot.store.connection import Store
from bot.store.engine import shown
from bot.web import feeds, http_door
from bot.web.http_door import Refused, refuse

log = logging.getLogger(__name__)

#: A stop sends what is due for this long, then leaves what hangs to the next start.
STOP_SECONDS = 5.0


class ChannelPoster:
    """bot.announcing.sender.Poster that hands each announcement and post update to the poster of its
    channel's platform: the platform its group was started on, group 1's that of the first part."""

    def __init__(self, store: Store, env: groups.Group, posters: dict[str, Any], home: str):
        self.store, self.env, self.posters, self.home = store, env, posters, home

    def of(self, channel: str | None) -> Any:
        group = groups.of_channel(self.store, self.env, channel) if channel else None
        platform = (group.platform if group is not None else None) or self.home
        return self.posters.get(platform, self.posters[self.home])

    def announce(self, announcement: Announcement) -> None:
        self.of(announcement.channel).announce(announcement)

    def announced(self, announcement: Announcement) -> bool:
        return self.of(announcement.channel).announced(announcement)

    def refresh_post(self, week: Week, channel: str | None = None) -> bool:
        return self.of(channel).refresh_post(week, channel)

    def channel_refused(self, channel: str, error) -> None:
        self.of(channel).channel_refused(channel, error)


def application(parts: Sequence[Any], calendars, store: Store | None = None) -> Callable:
    """One WSGI application for every part's routes, /healthz (whether `store` answers), and the calendars
    and pages."""
    routes = {path: app for part in parts for path, app in part.routes.items()}

    def platforms_app(environ, start_response):
        path = environ.get("PATH_INFO") or ""
        if path == "/healthz":
            return http_door.healthz(start_response, store)
        if path in routes:
            return routes[path](environ, start_response)
        return refuse(environ, start_response, Refused(404, "no such route"))

    return platforms_app if calendars is None else feeds.around(platforms_app, calendars)


def calendars(parts: Sequence[Any], settings: PlatformSettings, store: Store) -> feeds.Feeds | None:
    """The groups' calendars and pages, each member named by their own platform's look-up."""
    if not settings.public_url:
        return None
    return feeds.serve(settings, store, ask=feeds.names_of(*(part.settings for part in parts)))


def run(parts: Sequence[Any], settings: PlatformSettings, store: Store, stop: threading.Event) -> int:
    """Serve every part until SystemExit unwinds waitress (cli.cmd_run's signals).

    `settings` are group 1's platform's (the first part's). Each part's start (its token checked,
    `/paper` registered) and connection come before the port is taken and the scheduler starts:
    a `run` that cannot start ends without having posted anything."""
    http_door.warn_of_schedule(settings, store, log)
    home = parts[0]
    env = groups.from_settings(settings)
    # One sender for the install's outbox, each line through its channel's platform; either bot wakes it.
    sender = OutboxSender(
        store,
        ChannelPoster(store, env, {p.name: p.poster for p in parts}, home.name),
        lambda fn, *a: home.bot.later(fn, *a, lane="channel"),
        home.bot.replies,
        home.bot._stopping,
    )
    for part in parts:
        part.bot.outbox = sender
    jobs = checks = server = None
    try:
        for part in parts:
            if not part.start():
                log.info("stopped before starting")
                return 0
        outbox.due_now(store)
        checks = scheduler.ScheduledChecks(
            store,
            settings,
            home.transport,
            transports={p.name: p.transport for p in parts},
            home=home.name,
            tell_admins=home.bot.tell_admins,
            admins_of={p.name: p.bot.tell_admins for p in parts},
            stop=stop,
            outbox=sender.wake,
        )
        jobs = scheduler.create(checks, settings)
        for part in parts:
            part.add_jobs(jobs, home=part is home)
        server = http_door.listen(application(parts, calendars(parts, settings, store), store), settings.port)
        for part in parts:
            if not part.connect():
                log.info("stopped before connecting")
                return 0
        if stop.is_set():
            return 0
        jobs.start()
        for part in parts:
            part.started(part is home)
        log.info(
            "serving %s on http://0.0.0.0:%s; database %s, group 1's weekly post to %s at %r in %s",
            ", ".join(p.serving() for p in parts),
            settings.port,
            shown(settings.db_path),
            settings.channel,
            settings.schedule.expr,
            settings.timezone.key,
        )
        server.run()
    finally:
        stop.set()  # a post waiting out a rate limit lets go now; the next start takes it up
        if server is not None:
            server.close()
        if jobs is not None and jobs.running:
            log.info("stopping")
            jobs.shutdown(wait=False)
        deadline = time.monotonic() + STOP_SECONDS
        idle = True
        for part in parts:
            idle = part.close(max(deadline - time.monotonic(), 0.5)) and idle
        idle = (checks is None or checks.wait_idle(deadline - time.monotonic())) and idle
        if idle:
            store.close()
            for part in parts:
                part.closed()
    log.info("stopped")
    return 0
