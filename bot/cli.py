"""`paperbot VERB` / `python -m bot VERB`: each verb parses its arguments and makes one call.

    paperbot console                      # the /paper commands in a terminal
    paperbot run                          # serve the chat platform, with the scheduler
    paperbot post-week --at 2026-12-07T09:00 --dry-run
    paperbot remind
    paperbot import reading-list.csv more.yaml
    paperbot export --format csv > catalog.csv
    paperbot calendar > meetings.ics
    paperbot site public/

Expected failures (a bad setting, an unreadable file, the platform refusing) end with one line on
stderr and a non-zero exit, never a traceback. The platform is the one whose adapter the settings ask
for (bot/platforms.py): Slack, Discord, or both, each group reached through its own.
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import re
import signal
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

from bot import platforms
from bot.console.render import render as console_text
from bot.console.session import serve as console_serve
from bot.settings import PlatformSettings, SettingError, check_focus_tag
from bot.store.engine import shown

EXIT_FAILED, EXIT_USAGE = 1, 2


class Failure(Exception):
    """A verb could not do its job; str() is the one line to show."""


def _parse_at(text: str | None, settings: PlatformSettings, tz=None) -> datetime:
    """`--at` as a time in `tz` (default: group 1's, PAPERBOT_TIMEZONE); a bare time is that zone's wall time."""
    tz = tz or settings.timezone
    if not text:
        return datetime.now(tz)
    try:
        at = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise Failure(
            f"--at: {text!r} is not an ISO 8601 time such as 2026-12-07T09:00 or 2026-12-07T09:00+08:00"
        ) from None
    if not 1971 <= at.year <= 9998:  # weeks and the platforms' timestamps need room on either side
        raise Failure(f"--at: {text!r} is out of range: give a time between 1971 and 9998")
    if at.tzinfo is None:
        at = at.replace(tzinfo=tz)  # a bare time is the group's wall time
    return at.astimezone(tz)


def _store(settings: PlatformSettings, **how):
    from bot.catalog import opening

    try:
        return opening.open_database(settings.db_path, **how)
    except opening.CannotOpen as e:
        raise Failure(str(e)) from None


#: The one line for a write that found no room on the disk (store.DiskFull).
DISK_FULL = "the disk holding the database is full: nothing was changed. Free some space and try again."


def _disk_full(error: Exception) -> bool:
    import sqlite3  # not bot.store.connection: `run` handles signals before the slow imports

    return isinstance(error, sqlite3.Error) and getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL


#: Every platform's settings as load_settings last read them, group 1's first: `run` reads them once.
_loaded: list[PlatformSettings] = []


def load_settings(environ) -> PlatformSettings:
    """The settings of the platform this install serves (bot/platforms.py: the one its token names);
    with both platforms' tokens set, those of group 1's platform (PAPERBOT_CHANNEL's)."""
    _loaded[:] = platforms.served(environ)
    return _loaded[0]


def _served(settings: PlatformSettings) -> list[PlatformSettings]:
    """Each platform's settings, group 1's (`settings`) first: more than one when both tokens are set."""
    if _loaded and _loaded[0] is settings:  # load_settings read them all already
        return list(_loaded)
    if len(platforms.asked(os.environ)) < 2:
        return [settings]
    return platforms.served(os.environ)


def _place(args, settings: PlatformSettings, *, writes: bool = True, sending: bool = False):
    """The settings and store of the place `--place` names: without it (or `home`), the install's own,
    as before places; another's as `run` serves it, with its own token when `sending`."""
    from bot.places import operators, registry

    if args.place in (None, "home"):
        return settings, _store(settings, writes=writes)
    try:
        places = operators.opened(settings.db_path, args.place, writes=writes)
        place = operators.named(places, args.place)
        made = platforms.for_place(place, _served(settings), places, os.environ, sending=sending)
        return made, operators.store_of(places, place, writes=writes)
    except registry.UnknownPlace as e:
        raise Failure(str(e)) from None


# -- verbs ---------------------------------------------------------------------


def cmd_console(args, settings: PlatformSettings) -> int:
    from bot.chat.context import Context
    from bot.schedule import groups
    from bot.schedule.signups import Member

    if args.user is not None:
        args.user = args.user.removeprefix("@")  # as `assign @ada` reads it
    if args.user is not None and not re.fullmatch(r"[A-Za-z0-9._-]{1,40}", args.user):
        # It is shown as @user in the channel's announcements and is who reminders go to.
        raise Failure(f"--user: {args.user[:40]!r} is not a user ID such as U012ABCDEF")
    settings, store = _place(args, settings)
    user = args.user or "console"
    # The operator at the terminal owns the database: admin, unless they pose as a member of the chat.
    admin = args.user is None or args.user in settings.admins
    member = Member(user, lambda: admin)
    where = _channel_arg(args.channel)
    # A group started here is served by the platform its channel's form names, so that a process of
    # another platform never posts to it.
    home = platforms.of_channel(where) if where is not None else None
    if where is not None and home is None and where != settings.channel:
        raise Failure(f"--channel: {where[:40]!r} is no platform's channel ID ({platforms.id_forms('channel')})")
    env = groups.from_settings(settings)
    from bot.announcing import changes as announce

    def on_change(change):  # group 1's, in its channel (the outbox, which `run` sends); in_group: another's
        if settings.channel:
            announce.queue(store, settings.channel, change)

    return console_serve(
        lambda: Context(
            store,
            settings.group,
            member,
            settings.now(),
            settings.focus_tag,
            settings.channel,
            on_change,
            rotation=settings.rotation,
            lookups=settings.lookups,
            public_url=settings.public_url,
            where=where,
            env=env,
        ),
        sys.stdin,  # read now, not when console was imported: a caller may have replaced them
        sys.stdout,
        home.name.lower() if home is not None else None,
    )


def _stop_on_signals(stop, *, unwind: bool) -> None:
    """SIGTERM and SIGINT set `stop`; with `unwind` (HTTP), they also end waitress's loop in this,
    the main, thread. Installed first thing, so that a signal during start-up ends cleanly too."""

    def on_signal(signum, frame):
        stop.set()
        if unwind:
            # Restore the defaults first, so a second signal during shutdown is not swallowed.
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            raise SystemExit(0)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)


def cmd_run(args, settings: PlatformSettings) -> int:
    platforms.require_a_token(os.environ)
    served = _served(settings)
    stop = threading.Event()
    # One server on PORT holds the main thread when both platforms are served (bot/runtime/both_platforms.py).
    _stop_on_signals(stop, unwind=len(served) > 1 or not settings.socket_mode)  # before the slow imports below
    from bot.web.http_door import StartError

    adapters = [platforms.of(s) for s in served]
    serves = [a.serve() for a in adapters]
    try:
        for serve, each in zip(serves, served, strict=True):
            serve.require_settings(each)
        _server_logging(args, adapters)
        store = _store(served[0])  # group 1's settings: `settings`
        if len(served) == 1:
            code = serves[0].run(served[0], store, stop)
        else:  # each platform's part in one process
            from bot.runtime import both_platforms

            parts = [serve.Part(each, store, stop) for serve, each in zip(serves, served, strict=True)]
            code = both_platforms.run(parts, served[0], store, stop)
    except StartError as e:
        raise Failure(str(e)) from None
    _exit_past_hung_calls(code)
    return code


def _server_logging(args, adapters) -> None:
    """A server logs what it does, without its libraries' chatter (unless `--verbose` asks for all)."""
    logging.getLogger("apscheduler").setLevel(logging.WARNING)  # it logs every 30-second check
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)  # "task queue depth" on every burst
    if not args.verbose:
        logging.getLogger().setLevel(logging.INFO)
        for name in (n for a in adapters for n in a.quiet_loggers):  # every failed try; paperbot says failures itself
            logging.getLogger(name).setLevel(logging.CRITICAL)


def _exit_past_hung_calls(code: int, grace: float = 1.0) -> None:
    """A platform call that hangs (up to its client's timeout) must not hold up a stop: what it
    carried is in the outbox, or the post's delivery row, and the next start takes it up.

    Python joins every thread of a thread pool at exit, daemon or not (a pool made from a
    waitress thread has daemon threads): those are waited for `grace` seconds, then left.
    """
    import os
    import threading
    import time

    def holding():
        return [
            t
            for t in threading.enumerate()
            if t is not threading.main_thread()
            and t.is_alive()
            and (not t.daemon or t.name.startswith(("paperbot-", "ThreadPoolExecutor-")))
        ]

    deadline = time.monotonic() + grace
    for thread in holding():
        thread.join(max(0.0, deadline - time.monotonic()))
    if holding():
        logging.getLogger("bot.cli").warning(
            "stopped with a call to the platform still under way; the next start sends what it carried"
        )
        logging.shutdown()
        sys.stdout.flush()
        os._exit(code)


def _routes(store, settings: PlatformSettings, args):
    """The groups `post-week` and `remind` reach and each one's transport, as `run` chooses them: with
    both tokens set, each group through the platform it was started on (group 1 through PAPERBOT_CHANNEL's);
    a hosted place's through its own platform with its own token (`settings` are the place's)."""
    from bot.runtime.scheduler import Routes
    from bot.schedule import groups

    served = _served(settings) if args.place in (None, "home") else [settings]
    made = {platforms.of(s).name.lower(): functools.partial(platforms.of(s).transport, s) for s in served}
    return Routes(store, groups.from_settings(settings), made, platforms.of(settings).name.lower())


def _channel_arg(text: str | None) -> str | None:
    if text is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", text.strip().lstrip("#")):
        raise Failure(f"--channel: {text[:40]!r} is not a channel ID such as C012ABCDEF")
    return text.strip().lstrip("#") if text is not None else None


def _the_group(store, settings: PlatformSettings, channel: str):
    """The group of `channel` (`--channel`), or a Failure naming the groups' channels."""
    from bot.schedule import groups

    env = groups.from_settings(settings)
    group = groups.of_channel(store, env, channel)
    if group is None:
        known = [g.channel for g in groups.every(store, env) if g.channel]
        raise Failure(f"--channel {channel}: no group has that channel (groups: {', '.join(known) or 'none'})")
    return group


def cmd_post_week(args, settings: PlatformSettings) -> int:
    from bot.schedule import weekly

    channel = _channel_arg(args.channel)
    settings, store = _place(args, settings, writes=not args.dry_run, sending=not args.dry_run)  # a dry run reads
    if not args.dry_run:
        settings.require(platforms.of(settings).token)
    routes = _routes(store, settings, args)
    env, posting = routes.env, routes.posting()
    _parse_at(args.at, settings)  # a bad --at is refused before anything is read or posted

    def at_of(tz) -> datetime:  # a bare --at is each group's own wall time
        return _parse_at(args.at, settings, tz)

    if channel is not None:
        picked = [_the_group(store, settings, channel)]
    elif not posting and args.place not in (None, "home"):  # a place's groups are started in chat
        print(f"No group's post is due: place {args.place} has no group that posts.")
        return 0
    elif all(g.from_env for g in posting):
        picked = [env]  # one group: as before groups, the environment's, posted when asked
    else:
        picked = routes.due(posting, at_of)
        if not picked:
            print("No group's post is due: each has its post this week, or its slot has not come.")
        if args.dry_run:  # and, one line each, why the others are not, and when they are
            for g in posting:
                if g not in picked:
                    why = weekly.not_due(store, g.channel, g.calendar, at_of(g.calendar.tz), g.started_at)
                    print(f"{g.channel}: not due: {why}.")
        if not picked:
            return 0
    if not args.dry_run and picked == [env]:
        settings.require("PAPERBOT_CHANNEL")
    failed = []
    for group in picked:
        try:
            several = len(picked) > 1
            print(_post_group(args, settings, routes, group, at_of(group.calendar.tz), several=several))
        except Failure as e:
            if len(picked) == 1:
                raise
            failed.append(group)
            print(f"paperbot: {e}", file=sys.stderr)
    return EXIT_FAILED if failed else 0


def _post_group(args, settings: PlatformSettings, routes, group, at: datetime, *, several: bool) -> str:  # noqa: C901 (a branch per way the verb is asked)
    """Post (or with --dry-run, print) `group`'s paper of the week; the line that says what became of it."""
    from bot.delivery import sending as delivery
    from bot.schedule import slots, weekly

    store = routes.store
    if group.focus_tag and group.from_env:
        check_focus_tag(settings, store)
    cal = group.calendar
    at = at.astimezone(cal.tz)
    now = max(at, datetime.now(cal.tz))  # a week posted late offers a meeting still ahead, not one that is over
    where = f"{group.channel}: " if several else ""
    slot_time = cal.last_slot(at)  # the meeting it announces: the first at or after it
    week = cal.announced_by(slot_time) if slot_time else cal.week_of(at)
    if slot_time is None or cal.ends(week) <= at:
        return f"{where}No post is due: {weekly.not_due(store, '', cal, at, None)}."
    if group.started_at is not None and slot_time < group.started_at:  # asked for by its channel: the operator's call
        late = f"{week.key}'s slot passed before the group started ({group.started_at.isoformat()})"
        print(f"paperbot: warning: {group.channel}: {late}; posting it as asked", file=sys.stderr)
    if args.dry_run:
        slot = slots.slot(store, week, cal.group_id)
        if slot is not None and slot.kind == "skipped":
            return f"{where}{week.key} is skipped: no meeting, no post."
        if group.channel and weekly.posted(store, group.channel, week):
            return f"{where}{week.key} already has its post in {group.channel}; nothing would be posted."
        post = weekly.plan(store, cal, week, group.focus_tag, group.channel, now, group.rotation)
        if post is None:
            raise Failure(
                f"{where}cannot post: the catalog has no papers"
                + (f" tagged {group.focus_tag}" if group.focus_tag else "")
            )
        print(console_text(post))
        return f"(dry run: nothing was posted{' to ' + group.channel if group.channel else ''})"

    def waiting(seconds: float) -> bool:  # a post the platform did not take is tried again: say so, to a person
        if sys.stderr.isatty():  # a script or cron gets the outcome alone, in one line
            print(f"paperbot: the platform did not take the post yet; trying again in {seconds:g} s", file=sys.stderr)
        time.sleep(seconds)
        return False

    # Another process posting this week (the scheduler in `run`) may wait out rate limits and
    # timeouts for minutes: wait for its outcome as long as its claim holds (then this one takes over).
    deadline = time.monotonic() + delivery.LEASE_SECONDS
    told = False
    channel = group.channel
    while True:
        outcome = routes.post(group, at, force=True, now=now, sleep=waiting)
        if outcome.status != "busy" or time.monotonic() > deadline:
            break
        if not told and sys.stderr.isatty():
            print(f"paperbot: another process is posting {week.key}; waiting for it", file=sys.stderr)
            told = True
        time.sleep(1)  # another process is posting this week right now: wait for its result
    title = f"#{outcome.post.paper.number} {outcome.post.paper.title}" if outcome.post else ""
    messages = {
        "sent": f"Posted the paper of the week {week.key} ({title}) to {channel}.",
        "found": f"{week.key} already had its post in {channel} (an earlier attempt arrived); recorded it.",
        "done": f"{week.key} already has its post in {channel}.",
        "skipped": f"{where}{week.key} is skipped: no meeting, no post.",
        "no-slot": f"{where}{week.key} needs no post: {outcome.detail}.",
        "over": f"{where}{week.key} needs no post: {outcome.detail}.",
    }
    if outcome.status in messages:
        return messages[outcome.status]
    if outcome.status == "busy":
        raise Failure(f"cannot post {week.key} to {channel}: another process is still posting it ({outcome.detail})")
    raise Failure(f"cannot post {week.key} to {channel}: {outcome.detail}")


def cmd_remind(args, settings: PlatformSettings) -> int:
    settings, store = _place(args, settings, writes=not args.dry_run, sending=not args.dry_run)  # a dry run reads
    if not args.dry_run:
        settings.require(platforms.of(settings).token)
    channel = _channel_arg(args.channel)
    at = _parse_at(args.at, settings)
    routes = _routes(store, settings, args)
    if channel is not None:
        picked = [_the_group(store, settings, channel)]
    else:  # the environment's group (its reminders need no channel, as before groups) and every posting group
        picked = [routes.env, *(g for g in routes.posting() if not g.from_env)]
    if args.dry_run:  # what would be sent at --at, and nothing sent
        due = routes.due_reminders(picked, at)
        for _, r in due:
            print(f"Would remind {r.presenter} about #{r.paper.number} {r.paper.title} ({r.week.key}).")
        print("(dry run: nothing was sent)" if due else "No reminders are due.")
        return 0
    sendings = routes.remind(picked, at, force=True)
    failed = 0
    for s in sendings:
        r = s.reminder
        if s.result.delivered:
            print(f"Reminded {r.presenter} about #{r.paper.number} {r.paper.title} ({r.week.key}).")
        elif s.result.status == "unreachable":  # signed up from the console, as its operator
            print(f"No reminder for {r.presenter} about {r.week.key}: not a {platforms.of(settings).name} user.")
        elif s.result.status == "busy":  # the scheduler in `run`, or another `remind`: not a failure of ours
            print(f"Not reminding {r.presenter} about {r.week.key} from here: {s.result.detail}.")
        elif s.result.status == "moot":  # the week changed while it waited: nothing to send, not a failure
            print(f"No reminder for {r.presenter} about {r.week.key} after all: {s.result.detail}.")
        else:
            failed += 1
            print(f"Could not remind {r.presenter} about {r.week.key}: {s.result.detail}", file=sys.stderr)
    if not sendings:
        print("No reminders are due.")
    return EXIT_FAILED if failed else 0


def cmd_import(args, settings: PlatformSettings) -> int:
    from bot.catalog import import_files

    _, store = _place(args, settings)
    try:
        unreadable = import_files.read_in(store, args.files)
    except import_files.Stopped as e:
        raise Failure(str(e)) from None
    return EXIT_FAILED if unreadable else 0


def cmd_init(args, settings: PlatformSettings) -> int:
    """Make the database, with the first list or none (--empty: also empties an untouched starter list)."""
    from bot.catalog import queries as catalog
    from bot.catalog import starting
    from bot.store.connection import NotADatabase, check_file

    if isinstance(path := settings.db_path, Path) and os.path.lexists(path):
        try:
            check_file(path)
            if args.empty:
                print(starting.empty(_store(settings, seed=False), path.resolve()))
                return 0
        except NotADatabase as e:
            raise Failure(f"PAPERBOT_DB: {path} {e}; init makes only new databases and left it as it is") from None
        except starting.Used as e:  # it says what it kept
            raise Failure(f"PAPERBOT_DB: {path} {e}") from None
        raise Failure(
            f"PAPERBOT_DB: {path} exists already; init makes only a new database and leaves it as it is "
            "(to start afresh, stop paperbot and remove the file, with its -wal and -shm beside it, "
            "or set PAPERBOT_DB to a new path)"
        )
    store = _store(settings, seed=not args.empty, quiet_when_new=True)  # init says it in its own line
    where = path.resolve() if isinstance(path, Path) else shown(path)
    if not store.created:  # another process made it first (PostgreSQL: or it was there)
        raise Failure(f"PAPERBOT_DB: {where} holds a paperbot database already; it was left as it is")
    print(f"Made a new database at {where} with {(n := catalog.count(store))} paper{'' if n == 1 else 's'}.")
    return 0


def cmd_export(args, settings: PlatformSettings) -> int:
    from bot.catalog import files as papers_file
    from bot.catalog import queries as catalog

    _, store = _place(args, settings, writes=False)  # a read-only backup exports too
    papers_file.write(catalog.all_papers(store), args.format, sys.stdout)
    return 0


def cmd_copy(args, settings: PlatformSettings) -> int:
    from bot.places import operators, registry

    try:
        lines, note = operators.copy(args.source, args.target, args.place, show=shown)
    except registry.UnknownPlace as e:
        raise Failure(f"copy: {e}") from None
    print("\n".join(lines))
    if note:  # a hosted install's own tables list its places, whose tables are elsewhere
        print(f"paperbot: note: {note}", file=sys.stderr)
    return 0


def cmd_places(args, settings: PlatformSettings) -> int:
    from bot.places import operators, registry

    own = ",".join(platforms.of(s).name.lower() for s in _served(settings))
    try:
        places = operators.opened(settings.db_path, writes=False)
        print("\n".join(operators.table(operators.rows(places, settings.channel, own))))
    except registry.UnknownPlace as e:
        raise Failure(str(e)) from None
    return 0


def cmd_forget(args, settings: PlatformSettings) -> int:
    from bot.places import operators, registry

    try:
        places = operators.opened(settings.db_path, operators.not_home(args.place), said="forget")
        place = operators.named(places, args.place, said="forget")
        if not args.yes and not operators.confirmed(places, place):
            raise Failure(f"forget: {place.id} is kept: nothing was deleted")
        held = operators.forget(places, place)
    except registry.UnknownPlace as e:
        raise Failure(str(e)) from None
    print(f"Forgot {place.id}: deleted {held}, and everything else of its own.")
    return 0


def _group_of(settings: PlatformSettings, store, channel: str | None):
    """The group a verb's --channel names (without it, the environment's group, id 1)."""
    from bot.web import feeds

    group = feeds.of_channel(settings, store, channel)
    if group is None:
        known = feeds.channels(settings, store)
        raise Failure(
            f"--channel: {(channel or '')[:40]!r} is not a group's channel "
            f"(the groups' channels: {', '.join(known) if known else 'none'})"
        )
    return group


def cmd_calendar(args, settings: PlatformSettings) -> int:
    from bot.web import feeds, ical

    store = _store(settings)
    group = _group_of(settings, store, args.channel)
    ask = feeds.names_of(settings)
    member = args.member.removeprefix("@") if args.member else None
    if member and args.channel is None:  # a member's own talks, in every group
        meetings, tz = feeds.member_meetings(store, feeds.install_groups(settings, store), settings.now(), ask, member)
        sys.stdout.buffer.write(ical.feed(store, meetings, tz, f"Talks of {member}"))
    else:
        meetings = feeds.group_meetings(store, group, settings.now(), ask, member=member)
        name = f"{group.title}: talks of {member}" if member else group.title
        sys.stdout.buffer.write(ical.feed(store, meetings, group.calendar.tz, name))
    sys.stdout.flush()
    return 0


def cmd_site(args, settings: PlatformSettings) -> int:
    from bot.web import feeds, site

    store = _store(settings)
    group = _group_of(settings, store, args.channel)
    try:
        written = site.write_static(store, group, settings.now(), Path(args.dir), ask=feeds.names_of(settings))
    except OSError as e:
        raise Failure(f"{args.dir}: cannot write the page there ({e.strerror or e})") from None
    print(f"Wrote {written[0]}." + (f" And {len(written) - 1} more files beside it." if len(written) > 1 else ""))
    return 0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("paperbot")
    except PackageNotFoundError:  # run from a folder that was never installed
        return "(not installed)"


def parser() -> argparse.ArgumentParser:
    names = " and ".join(a.name for a in platforms.adapters())
    p = argparse.ArgumentParser(prog="paperbot", description=f"A {names} bot for research reading groups.")
    p.add_argument("-v", "--verbose", action="store_true", help="log more, and show tracebacks")
    p.add_argument("--version", action="version", version=f"paperbot {_version()}")
    # -v after the verb too (paperbot run -v); SUPPRESS keeps a -v given before it.
    verbose = argparse.ArgumentParser(add_help=False)
    verbose.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    # --place on the verbs that read or write one place; without it, the install's own (home), as before places.
    placed = argparse.ArgumentParser(add_help=False)
    placed.add_argument("--place", metavar="ID", help="a hosted install's place (default: home, the install's own)")
    one = [verbose, placed]
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)

    run = verbs.add_parser(
        "run",
        parents=[verbose],
        help=f"connect to the chat platform ({names}) and serve, with the scheduler",
    )
    run.set_defaults(fn=cmd_run)

    con = verbs.add_parser("console", parents=one, help="the /paper commands in a terminal, one a line from stdin")
    con.add_argument("--user", metavar="USER_ID", help="act as this member, by their user ID (default: the operator)")
    con.add_argument("--channel", metavar="ID", help="type commands as in this channel (its group's)")
    con.set_defaults(fn=cmd_console)

    post = verbs.add_parser(
        "post-week", parents=one, help="post the paper for the next meeting, unless it has its post"
    )
    post.add_argument("--at", metavar="ISO8601", help="the moment to post at, as the scheduler would (default: now)")
    post.add_argument("--dry-run", action="store_true", help="print the post instead of posting it")
    post.add_argument("--channel", metavar="ID", help="the group of this channel (default: every group that is due)")
    post.set_defaults(fn=cmd_post_week)

    remind = verbs.add_parser("remind", parents=one, help="send the presenter reminders that are due")
    remind.add_argument("--at", metavar="ISO8601", help="the moment to check (default: now)")
    remind.add_argument("--channel", metavar="ID", help="the group of this channel (default: every group)")
    remind.add_argument("--dry-run", action="store_true", help="print the reminders that are due; send nothing")
    remind.set_defaults(fn=cmd_remind)

    imp = verbs.add_parser(
        "import", parents=one, help="add or update papers from .yaml/.yml, .json, .jsonl, .csv or .bib files"
    )
    imp.add_argument("files", nargs="+", metavar="FILE")
    imp.set_defaults(fn=cmd_import)

    init = verbs.add_parser("init", parents=[verbose], help="make a new database (PAPERBOT_DB), seeded or empty")
    init.add_argument("--empty", action="store_true", help="no papers: also empties an untouched starter list")
    init.set_defaults(fn=cmd_init)

    exp = verbs.add_parser("export", parents=one, help="write the whole catalog to stdout")
    exp.add_argument("--format", choices=["json", "csv", "yaml", "bibtex"], default="json")
    exp.set_defaults(fn=cmd_export)

    cp = verbs.add_parser(
        "copy", parents=one, help="copy an install's whole history into a new database (SQLite or PostgreSQL)"
    )
    cp.add_argument("source", metavar="FROM", help="a SQLite file's path or a postgresql:// URL, only read")
    cp.add_argument("target", metavar="TO", help="a new SQLite file, or an empty PostgreSQL database")
    cp.set_defaults(fn=cmd_copy)

    cal = verbs.add_parser(
        "calendar", parents=[verbose], help="write the group's meetings as an iCalendar file (RFC 5545) to stdout"
    )
    cal.add_argument("--channel", metavar="ID", help="the group of this channel (default: the install's group)")
    cal.add_argument("--member", metavar="ID", help="only this member's own talks (in every group, without --channel)")
    cal.set_defaults(fn=cmd_calendar)

    page = verbs.add_parser("site", parents=[verbose], help="write the group's page as static files into DIR")
    page.add_argument("dir", metavar="DIR")
    page.add_argument("--channel", metavar="ID", help="the group of this channel (default: the install's group)")
    page.set_defaults(fn=cmd_site)

    where = verbs.add_parser(
        "places", parents=[verbose], help="list the places (workspaces, servers) this install serves, one a line"
    )
    where.set_defaults(fn=cmd_places)

    forget = verbs.add_parser("forget", parents=[verbose], help="delete a place's data (not home's) for good")
    forget.add_argument("place", metavar="ID", help="the place's id, as `places` lists it")
    forget.add_argument("--yes", action="store_true", help="do not ask first")
    forget.set_defaults(fn=cmd_forget)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    # Verbs other than `run` speak in their own words: one line per outcome, nothing from loggers.
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.CRITICAL,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        settings = load_settings(os.environ)
        return args.fn(args, settings)
    except (SettingError, Failure) as e:
        for line in str(e).splitlines():  # several bad settings: one line each
            print(f"paperbot: {line}", file=sys.stderr)
        return EXIT_USAGE if isinstance(e, SettingError) else EXIT_FAILED
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:
        if _disk_full(e):  # whichever write found no room: one line, as for the other expected failures
            print(f"paperbot: {DISK_FULL}", file=sys.stderr)
            return EXIT_FAILED
        if args.verbose:
            raise
        logging.getLogger("bot").debug("unexpected failure", exc_info=True)
        print(f"paperbot: {args.verb} failed: {e.__class__.__name__}: {e} (run with -v for details)", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
