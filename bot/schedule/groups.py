"""Reading groups of one install: each a channel with its own calendar, focus tag and admins.

    env = groups.from_settings(settings)               # group 1: PAPERBOT_CHANNEL and the rest
    group = groups.of_channel(store, env, "C0PAPERS")  # the group of a channel, or None
    group = groups.change(store, group, "timezone", "Europe/Berlin", read_member)

Group 1 is always the environment's: its settings come from the environment and are changed
there, and a database made before groups existed keeps its history as group 1's. The others are
started in chat (`group start`) and keep their settings in the `groups` table, each checked as
the environment's setting of the same name is. The catalog is the install's; the slots, the
rotation, the posts and the reminders are each group's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from bot import platforms
from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.catalog import queries as catalog
from bot.settings import (
    MEETING_MINUTES,
    SettingError,
    Settings,
    integer,
    parse_focus_tag,
    parse_group_name,
    parse_meeting,
    parse_rotation,
    parse_schedule,
    parse_timezone,
)
from bot.store.connection import Store

#: The environment's group: PAPERBOT_CHANNEL, PAPERBOT_SCHEDULE, …
ENV = 1

#: What `group set` changes, and the environment's setting each one stands for.
SETTINGS: dict[str, str] = {
    "timezone": "PAPERBOT_TIMEZONE",
    "schedule": "PAPERBOT_SCHEDULE",
    "meeting": "PAPERBOT_MEETING",
    "remind-days": "PAPERBOT_REMIND_DAYS",
    "focus-tag": "PAPERBOT_FOCUS_TAG",
    "admins": "PAPERBOT_ADMINS",
    "rotation": "PAPERBOT_ROTATION",
    "meeting-minutes": "PAPERBOT_MEETING_MINUTES",
    "name": "PAPERBOT_GROUP_NAME",
}

#: What `group set focus-tag`, `meeting`, `admins` and `name` take to clear the setting.
NONE = "none"

DEFAULT_SCHEDULE = "0 9 * * mon"


@dataclass(frozen=True)
class Group:
    """One reading group: where it posts, when, and who runs it."""

    id: int
    channel: str | None
    calendar: MeetingCalendar
    focus_tag: str | None = None
    #: The group's own admins (group 1: PAPERBOT_ADMINS, who are the install's).
    admins: frozenset[str] = frozenset()
    rotation: str = "catalog"
    meeting_minutes: int = 60
    stopped: bool = False
    #: The adapter that serves it (None for group 1: the install's platform).
    platform: str | None = None
    #: Set with `meeting` (or PAPERBOT_MEETING); else the post's day and time.
    meeting_set: bool = True
    #: When it was started or last resumed (None: long ago, as group 1): no post for a slot before it.
    started_at: datetime | None = None
    #: The name set (PAPERBOT_GROUP_NAME, `group set name`); None: none, and it goes by its channel's.
    own_name: str | None = None

    @property
    def name(self) -> str | None:
        """What the group is called: its own name, else `#<its channel's name>` once the platform told
        it, else None."""
        return self.calendar.name

    @property
    def from_env(self) -> bool:
        return self.id == ENV

    @property
    def posts(self) -> bool:
        """Does it get weekly posts and reminders (a channel, not stopped)?"""
        return bool(self.channel) and not self.stopped


def from_settings(settings: Settings) -> Group:
    """Group 1, as the environment defines it."""
    meeting_set = settings.meeting != settings.schedule.default_meeting()
    return Group(
        ENV,
        settings.channel,
        replace(settings.group, group_id=ENV),
        settings.focus_tag,
        settings.admins,
        settings.rotation,
        settings.meeting_minutes,
        meeting_set=meeting_set,
        own_name=settings.group.name,
    )


def called(own_name: str | None, channel_name: str | None) -> str | None:
    """What a group is called: its own name, else its channel's as the platform writes one."""
    return own_name or (f"#{channel_name}" if channel_name else None)


COLUMNS = (
    "id, platform, channel, timezone, schedule, meeting, remind_days, focus_tag, admins, rotation, "
    "meeting_minutes, stopped, started_at, name, channel_name"
)


def _of_row(row) -> Group:
    return _group_of(tuple(row))


@functools.lru_cache(maxsize=4096)
def _group_of(row: tuple) -> Group:
    """A group from its row; remembered by the row's values, since every scheduler check reads every
    group and making a crontab's trigger is the dearest part of it."""
    gid, platform, channel, tz_name, schedule_text, meeting_text, remind_days, focus, admins, rotation = row[:10]
    minutes, stop, started, name, channel_name = row[10:]
    tz = ZoneInfo(tz_name)
    schedule = PostSchedule(schedule_text, tz)
    meeting = Meeting.parse(meeting_text) if meeting_text else schedule.default_meeting()
    calendar = MeetingCalendar(tz, meeting, schedule, remind_days, gid, minutes, called(name, channel_name))
    admin_ids = frozenset(a for a in admins.split(",") if a)
    started_at = datetime.fromisoformat(started) if started else None
    return Group(
        gid,
        channel,
        calendar,
        focus,
        admin_ids,
        rotation,
        minutes,
        bool(stop),
        platform,
        bool(meeting_text),
        started_at,
        name,
    )


def chat_groups(store: Store) -> list[Group]:
    """The groups started in chat, oldest first, stopped ones too."""
    return [_of_row(r) for r in store.db.execute(f"SELECT {COLUMNS} FROM groups WHERE id != ? ORDER BY id", [ENV])]


def every(store: Store, env: Group) -> list[Group]:
    """Every group of the install: the environment's first."""
    return [_env(store, env), *chat_groups(store)]


def _env(store: Store, env: Group) -> Group:
    """Group 1 with the name of its channel that its row keeps, when the environment names it not."""
    if env.own_name is not None:
        return env
    row = store.db.execute("SELECT channel_name FROM groups WHERE id = ?", [ENV]).fetchone()
    shown = called(None, row[0] if row else None)
    return replace(env, calendar=replace(env.calendar, name=shown)) if shown != env.calendar.name else env


#: What Slack calls a direct message's channel: no channel's name.
NO_CHANNEL_NAMES = frozenset({"directmessage", "privategroup", "mpdm"})


def saw_channel_name(store: Store, env: Group, channel: str | None, name: str | None) -> None:
    """Keep `name`, the platform's name of `channel` in a request, when `channel` is a group's and
    the name changed: read first, so that a request of a known name writes nothing. Adapters call it
    after their reply: a write held up by an import must never hold up the answer."""
    name = " ".join((name or "").split())[:CHANNEL_NAME_CHARS]
    if not channel or not name or name in NO_CHANNEL_NAMES:
        return
    gid = ENV if channel == env.channel else None
    if gid is None:
        row = store.db.execute("SELECT id FROM groups WHERE channel = ?", [channel]).fetchone()
        if row is None:
            return
        gid = row[0]
    known = store.db.execute("SELECT channel_name FROM groups WHERE id = ?", [gid]).fetchone()
    if known is None or known[0] == name:
        return
    with store.write() as db:
        db.execute("UPDATE groups SET channel_name = ? WHERE id = ?", [name, gid])


#: The longest channel name kept (Slack's are at most 80 characters, Discord's 100).
CHANNEL_NAME_CHARS = 100


def posting(store: Store, env: Group, platform: str | None) -> list[Group]:
    """The groups that get posts and reminders from a process serving `platform` (None: any): a
    channel, not stopped, and started on that platform (the environment's group is the process's)."""
    wanted = platform.lower() if platform else None
    return [g for g in every(store, env) if g.posts and (wanted is None or _platform(g) in (None, wanted))]


def _platform(group: Group) -> str | None:
    """The platform a chat group was started on; one started from the console before groups kept it
    is its channel id's (`C…` Slack's, digits Discord's), so that no process posts to another's channel."""
    if group.platform or group.from_env or not group.channel:
        return group.platform

    home = platforms.of_channel(group.channel)
    return home.name.lower() if home is not None else None


def several(store: Store) -> bool:
    """Are there groups besides the environment's (started in chat, stopped ones too)?"""
    return store.db.execute("SELECT 1 FROM groups WHERE id != ? LIMIT 1", [ENV]).fetchone() is not None


def of_channel(store: Store, env: Group, channel: str | None) -> Group | None:
    """The group whose channel `channel` is, or None."""
    if not channel:
        return None
    if channel == env.channel:
        return _env(store, env)
    row = store.db.execute(f"SELECT {COLUMNS} FROM groups WHERE channel = ?", [channel]).fetchone()
    return _of_row(row) if row else None


def by_id(store: Store, env: Group, gid: int) -> Group | None:
    if gid == ENV:
        return _env(store, env)
    row = store.db.execute(f"SELECT {COLUMNS} FROM groups WHERE id = ?", [gid]).fetchone()
    return _of_row(row) if row else None


class NoGroupHere(Exception):
    """A command that needs a group was typed where no single group applies; `.channels` are the
    groups' channels to type it in instead."""

    def __init__(self, channels: list[str]):
        super().__init__(", ".join(channels))
        self.channels = channels


def where(store: Store, env: Group, channel: str | None) -> Group:
    """The group a command typed in `channel` acts on: that channel's group; elsewhere (a direct
    message, App Home, another channel) the only group that posts, or group 1 when none does.
    Raises NoGroupHere when several groups post."""
    here = of_channel(store, env, channel)
    if here is not None:
        return here
    posting = [g for g in every(store, env) if g.posts]
    if len(posting) == 1:
        return posting[0]
    if not posting:
        return _env(store, env)
    raise NoGroupHere([g.channel for g in posting if g.channel])


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


#: Called with a group as a change leaves it, inside the change's write transaction: what it writes
#: (the change's announcement in the outbox) is saved with the change or not at all.
Then = Callable[[Group], None] | None


def _made(group: Group, then: Then) -> Group:
    if then is not None:
        then(group)
    return group


def start(
    store: Store,
    env: Group,
    channel: str,
    platform: str | None,
    by: str,
    then: Then = None,
    at: datetime | None = None,
) -> tuple[Group, str]:
    """Make `channel` a group (or resume a stopped one) at `at` (default: now): the group, and
    'started', 'resumed' or 'running'. Its posts begin with the first slot at or after `at`."""
    started = (at or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds")
    with store.write() as db:
        found = of_channel(store, env, channel)
        if found is not None and not found.stopped:
            return found, "running"
        if found is not None:
            db.execute(
                "UPDATE groups SET stopped = 0, started_at = ?, updated_at = ? WHERE id = ?",
                [started, _now(), found.id],
            )
            return _made(by_id(store, env, found.id), then), "resumed"  # type: ignore[arg-type]
        db.execute(
            "INSERT INTO groups (platform, channel, started_by, updated_at, started_at) VALUES (?, ?, ?, ?, ?)",
            [platform, channel, by, _now(), started],
        )
        return _made(of_channel(store, env, channel), then), "started"  # type: ignore[arg-type]


def stop(store: Store, group: Group, then: Then = None) -> Group:
    """No more posts or reminders for `group`; its history stays, and `start` resumes it."""
    with store.write() as db:
        db.execute("UPDATE groups SET stopped = 1, updated_at = ? WHERE id = ?", [_now(), group.id])
        return _made(replace(group, stopped=True), then)


#: The longest value `group set` reads (a crontab, a meeting, a zone are under 100); admins: 100 mentions.
MAX_VALUE_CHARS = 200
MAX_ADMINS_CHARS = 4000


def check(store: Store, group: Group, setting: str, value: str, read_member) -> tuple[str, object]:  # noqa: C901 (a branch per setting)
    """The column and value that `group set <setting> <value>` writes, checked as the environment's
    setting is. Raises SettingError (named by `setting`) and changes nothing."""
    raw = value.strip()
    longest = MAX_ADMINS_CHARS if setting == "admins" else MAX_VALUE_CHARS
    if len(raw) > longest:  # before any parsing, and never echoed whole
        raise SettingError(
            setting, f"{raw[:40]!r}… is {len(raw):,} characters long; a value here is at most {longest:,}"
        )
    tz = group.calendar.tz
    if setting == "timezone":
        tz = parse_timezone(setting, raw)
        parse_schedule("schedule", group.calendar.schedule.expr, tz)
        return "timezone", tz.key
    if setting == "schedule":
        schedule = parse_schedule(setting, raw, tz)
        meeting = group.calendar.meeting if group.meeting_set else schedule.default_meeting()
        if problem := replace(group.calendar, schedule=schedule, meeting=meeting).never_pairs(datetime.now(tz)):
            raise SettingError(setting, problem)  # a post announces a meeting within 7 days: none would be
        return "schedule", schedule.expr
    if setting == "meeting":
        if raw.lower() == NONE:
            return "meeting", None
        return "meeting", str(parse_meeting(setting, raw))
    if setting == "remind-days":
        return "remind_days", integer(setting, raw, 1, 14)
    if setting == "meeting-minutes":
        return "meeting_minutes", integer(setting, raw, *MEETING_MINUTES)
    if setting == "rotation":
        return "rotation", parse_rotation(setting, raw)
    if setting == "name":
        return "name", None if raw.lower() == NONE else parse_group_name(setting, raw)
    if setting == "focus-tag":
        if raw.lower() == NONE:
            return "focus_tag", None

        tag = parse_focus_tag(setting, raw)
        if tag not in catalog.tag_names(store):
            close = catalog.closest_tags(store, tag)
            hint = f" (closest: {', '.join(close)})" if close else ""
            raise SettingError(setting, f"no paper has the tag {tag!r}{hint}")
        return "focus_tag", tag
    if setting == "admins":
        if raw.lower() == NONE:
            return "admins", ""
        ids = []
        for word in raw.replace(",", " ").split():
            member = read_member(word) or read_member(word.lstrip("@"))  # `@U1` typed where ids are read
            if member is None:
                raise SettingError(setting, f"{word[:40]!r} is not a member: name each admin with a mention")
            if member not in ids:
                ids.append(member)
        if not ids:
            raise SettingError(setting, "name the admins with mentions, or none")
        return "admins", ",".join(ids)
    raise SettingError(setting, f"is not a group setting (settings: {', '.join(SETTINGS)})")


def change(store: Store, group: Group, setting: str, value: str, read_member, then: Then = None) -> Group:
    """Set one of a chat group's settings (see `check`); the group as it is now."""
    column, checked = check(store, group, setting, value, read_member)
    with store.write() as db:
        db.execute(f"UPDATE groups SET {column} = ?, updated_at = ? WHERE id = ?", [checked, _now(), group.id])
        found = by_id(store, group, group.id)
        assert found is not None
        return _made(found, then)


def stored_text(group: Group) -> dict[str, str]:
    """Each setting as `group` shows it."""
    cal = group.calendar
    return {
        "timezone": cal.tz.key,
        "schedule": cal.schedule.expr,
        "meeting": str(cal.meeting) + ("" if group.meeting_set else " (the post's time)"),
        "remind-days": str(cal.remind_days),
        "focus-tag": group.focus_tag or NONE,
        "admins": ", ".join(sorted(group.admins)) or NONE,
        "rotation": group.rotation,
        "meeting-minutes": str(group.meeting_minutes),
        "name": group.own_name or NONE,
    }


def next_post(calendar: MeetingCalendar, now: datetime) -> datetime | None:
    """The group's next post slot after `now` (within a year and a bit)."""
    return calendar.next_slot(now)


def next_meeting(calendar: MeetingCalendar, now: datetime) -> datetime:
    """The group's next meeting that is still ahead."""
    week = calendar.week_of(now)
    meeting = calendar.meeting_of(week)
    return meeting if meeting > now else calendar.meeting_of(week.plus(1))


def booked(store: Store, since_week: str) -> dict[int, int]:
    """Presenters booked from `since_week` on, by group: one query for every group."""
    rows = store.db.execute(
        "SELECT group_id, count(*) FROM slots WHERE kind = 'presenter' AND week >= ? GROUP BY group_id", [since_week]
    )
    return dict(rows.fetchall())
