"""Reading groups: each channel's group, its settings, and the addresses of its calendar."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from bot.announcing import changes as announce
from bot.chat import addresses
from bot.chat.context import Answer, Context, notice
from bot.chat.registry import (
    CHOICE,
    GROUPS_SHOWN,
    TEXT,
    Arg,
    Scope,
    Verb,
    group_admins,
    install_admins,
    no_group_here,
    sub,
    verb,
)
from bot.chat.replies import Notice
from bot.rich_text import ChannelRef, Code, Mention, Text, When, command_code, text
from bot.schedule import groups
from bot.schedule.signups import Change, Refusal
from bot.settings import SettingError
from bot.web import feeds

VERBS: dict[str, Verb] = {}


@verb(
    VERBS,
    "calendar",
    "your addresses of the group's calendar and page, privately",
    "calendar",
    Arg("renew", CHOICE, optional=True, choices=("renew",), typed_only=True),
    scope=Scope.WHERE,
    reference=(
        "your addresses of the group's calendar feed, page and your own talks ([docs/calendar.md](docs/calendar.md))"
    ),
)
def calendar(ctx: Context, renew: str | None) -> Answer:
    # A platform without forms is the console, whose user runs paperbot and can write the files.
    operator = not ctx.platform.forms
    group_id = ctx.group.group_id
    return Answer(
        addresses.calendar_reply(ctx.store, ctx.public_url, group_id, ctx.member.id, bool(renew), operator=operator)
    )


def next_dates(group: groups.Group, now: datetime) -> tuple:
    """`Next post: …; next meeting: …`, or that the group is stopped."""
    if group.stopped:
        return ("Stopped: no posts or reminders until ", command_code("group start"), ".")
    post = groups.next_post(group.calendar, now)
    return (
        "Next post: ",
        *((When(post),) if post else ("none in the coming year",)),
        "; next meeting: ",
        When(groups.next_meeting(group.calendar, now)),
        ".",
    )


def _group_card(ctx: Context, group: groups.Group) -> Text:
    called = (group.name, " — reading group") if group.name else ("Reading group",)
    where: tuple = (*called, " in ", ChannelRef(group.channel)) if group.channel else called
    origin = "settings from the environment" if group.from_env else "settings from chat"
    if not group.channel:  # group 1 before PAPERBOT_CHANNEL is set: no posts, but commands work
        origin += "; no channel yet, so no posts: PAPERBOT_CHANNEL sets it"
    settings: list = []
    for i, (name, value) in enumerate(groups.stored_text(group).items()):
        if name == "admins" and group.admins:
            settings += [" · " if i else "", f"{name}: "]
            for j, admin in enumerate(sorted(group.admins)):
                settings += [", " if j else "", Mention(admin)]
            continue
        settings += [" · " if i else "", f"{name} ", Code(value)]
    change = (
        "Change them in the environment (PAPERBOT_…) and restart paperbot."
        if group.from_env
        else text("Change one: ", command_code("group set <setting> <value>"), ".")
    )
    return text(
        *where,
        f" ({origin}). ",
        *next_dates(group, ctx.now),
        "\n",
        *settings,
        "\n",
        *((change,) if isinstance(change, str) else change),
    )


def _show(ctx: Context) -> Answer:
    env = ctx.env_group
    here = groups.of_channel(ctx.store, env, ctx.where)
    if here is None and ctx.where is not None:
        return notice(
            "This channel has no reading group. An admin starts one here with ",
            command_code("group start"),
            "; every group: ",
            command_code("groups"),
            ".",
        )
    if here is None:
        try:
            here = groups.where(ctx.store, env, None)
        except groups.NoGroupHere as e:
            return no_group_here("group", e.channels, ctx.platform)
    return Answer(Notice(_group_card(ctx, here)))


class _Announcing:
    """groups.Then: tell the group's channel (through the outbox, as schedule changes are) what an
    admin changed; `what(group)` is the line's text, of the group as the change leaves it. `change`
    is the note queued, for the Answer (an adapter sends the outbox soon after an answer with one)."""

    def __init__(self, ctx: Context, what: Callable[[groups.Group], tuple]):
        self.ctx, self.what = ctx, what
        self.change: Change | None = None

    def __call__(self, group: groups.Group) -> None:
        ctx = self.ctx
        if group.channel and ctx.on_change is not None:
            meeting = groups.next_meeting(group.calendar, ctx.now)
            said = text(*self.what(group), " (by ", Mention(ctx.member.id), ")")
            week = group.calendar.week_of(meeting)
            self.change = announce.queue_note(ctx.store, group.channel, said, week, meeting, ctx.member.id)


def _start(ctx: Context) -> Answer:
    if ctx.where is None:
        return notice("Type ", command_code("group start"), " in the channel that the group meets in.", ok=False)
    # The channel's announcement is queued inside groups.start's write, before it says how it went.
    stopped = groups.of_channel(ctx.store, ctx.env_group, ctx.where) is not None
    said = "Resumed the reading group" if stopped else "Started a reading group"
    then = _Announcing(ctx, lambda g: (f"📚 {said} in this channel. ", *next_dates(g, ctx.now)))
    group, how = groups.start(ctx.store, ctx.env_group, ctx.where, ctx.platform.name, ctx.member.id, then, at=ctx.now)
    if how == "running":
        return notice("This channel is a reading group already: ", command_code("group"), " shows its settings.")
    reply = notice(
        f"{said} in ",
        ChannelRef(group.channel or ""),
        ". ",
        *next_dates(group, ctx.now),
        " Settings: ",
        command_code("group"),
    )
    return Answer(reply.reply, then.change)


def _unquoted(value: str) -> str:
    value = value.strip()
    for left, right in (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’")):
        if len(value) >= 2 and value.startswith(left) and value.endswith(right):
            return value[1:-1].strip()
    return value


#: `group set calendar-secret new`: not a setting with a value, but set in the same words.
CALENDAR_SECRET = "calendar-secret"


def _renew_calendar_secret(ctx: Context, here: groups.Group, value: str) -> Answer:
    """`group set calendar-secret new`: the group's page and feed get new addresses (any group's,
    the environment's too: its secret lives in the database)."""
    if value.strip().lower() != "new":
        return notice("Usage: ", command_code(f"group set {CALENDAR_SECRET} new"), ".", ok=False)
    then = _Announcing(
        ctx,
        lambda g: ("🔑 The group's calendar and page have new addresses: ", command_code("calendar"), " gives them."),
    )
    feeds.renew_group_secret(ctx.store, here.id, lambda: then(here))
    return Answer(addresses.renewed_reply(ctx.store, ctx.public_url, here.id, ctx.member.id), then.change)


def _set(ctx: Context, here: groups.Group, setting: str, value: str) -> Answer:
    if setting == CALENDAR_SECRET:
        return _renew_calendar_secret(ctx, here, value)
    value = _unquoted(value)
    if here.from_env:
        raise Refusal(
            "This group's settings come from the environment: set ",
            Code(groups.SETTINGS[setting]),
            " where paperbot runs and restart it. Nothing was changed.",
        )
    try:
        then = _Announcing(
            ctx,
            lambda g: (
                f"⚙️ The group's {setting} is now ",
                Code(groups.stored_text(g)[setting]),
                ". ",
                *next_dates(g, ctx.now),
            ),
        )
        group = groups.change(ctx.store, here, setting, value, ctx.platform.read_member, then)
    except SettingError as e:
        raise Refusal(f"{e}. Nothing was changed.") from None
    shown = groups.stored_text(group)[setting]
    reply = notice(
        f"Set {setting} to ",
        Code(shown),
        ". ",
        *next_dates(group, ctx.now),
        *(
            (" Note: this schedule fires more than once a week; the group posts once a week, at the first of them.",)
            if setting == "schedule" and group.calendar.schedule.several_a_week(group.calendar.week_of(ctx.now))
            else ()
        ),
    )
    return Answer(reply.reply, then.change)


def _stop(ctx: Context, here: groups.Group) -> Answer:
    if here.from_env:
        raise Refusal("This group comes from the environment: unset PAPERBOT_CHANNEL to stop its posts.")
    if here.stopped:
        return notice("This group is stopped already: ", command_code("group start"), " resumes it.")
    then = _Announcing(ctx, lambda g: ("⏸️ The reading group in this channel is stopped: no posts or reminders.",))
    group = groups.stop(ctx.store, here, then)
    reply = notice(
        "Stopped the group in ",
        ChannelRef(group.channel or ""),
        ": no more posts or reminders; its history stays. ",
        command_code("group start"),
        " resumes it.",
    )
    return Answer(reply.reply, then.change)


def _group(ctx: Context) -> Answer:
    raise AssertionError("`group` runs its subcommands")  # pragma: no cover


VERBS["group"] = Verb(
    "group",
    "this channel's reading group; admins start, change or stop it",
    "group",
    _group,
    reference='this channel\'s reading group; admins start, change (`group set meeting "thu 16:00"`) or stop it',
    subs=(
        sub("group", "show", "this channel's reading group and its settings", "group", _show),
        sub(
            "group",
            "start",
            "make this channel a reading group",
            "group start",
            _start,
            rights=install_admins("start a group"),
        ),
        sub(
            "group",
            "set",
            "change one of the group's settings",
            'group set meeting "thu 16:00"',
            _set,
            Arg(
                "setting",
                CHOICE,
                "timezone, schedule, meeting, remind-days, focus-tag, admins, …",
                choices=(*groups.SETTINGS, CALENDAR_SECRET),
                shown="<setting>",
            ),
            Arg("value", TEXT, "its new value, e.g. Europe/Berlin or thu 16:00", rest=True, shown="<value>"),
            scope=Scope.CHANNEL,
            rights=group_admins("change the group's settings"),
            usage_note=(
                " Settings: ",
                ", ".join(groups.SETTINGS),
                "; ",
                command_code(f"group set {CALENDAR_SECRET} new"),
                " renews the group's calendar addresses.",
            ),
        ),
        sub(
            "group",
            "stop",
            "no more posts or reminders in this channel",
            "group stop",
            _stop,
            scope=Scope.CHANNEL,
            rights=group_admins("stop the group"),
        ),
        sub("group", "list", "every reading group of the install", "groups", _group, same_as="groups"),
    ),
)


@verb(
    VERBS,
    "groups",
    "every reading group of the install",
    "groups",
    nothing_after=lambda typed: (": it lists every group. One group's settings: ", command_code("group"), "."),
    reference="every reading group of the install",
)
def every_group(ctx: Context) -> Answer:
    every = groups.every(ctx.store, ctx.env_group)
    booked = groups.booked(ctx.store, ctx.group.week_of(ctx.now).plus(-1).key)
    lines: list = [f"{len(every)} reading group{'s' if len(every) != 1 else ''}:"]
    for group in every[:GROUPS_SHOWN]:
        where = (ChannelRef(group.channel),) if group.channel else ("(no channel)",)
        if group.name:  # a member's own text: a plain segment, which each platform escapes
            where = (group.name, " in ", *where) if group.channel else (group.name, " ", *where)
        n = booked.get(group.id, 0)
        lines += [
            "\n• ",
            *where,
            " · meets ",
            Code(str(group.calendar.meeting)),
            f" ({group.calendar.tz.key}) · ",
            *next_dates(group, ctx.now),
            f" {n} presenter{'s' if n != 1 else ''} booked.",
        ]
    if len(every) > GROUPS_SHOWN:
        lines.append(f"\n… and {len(every) - GROUPS_SHOWN} more.")
    return Answer(Notice(text(*lines)))
