"""What a /paper command is given and gives back: the Context it runs in, the Answer it makes.

Each adapter makes a Platform (how it writes a member, how much one reply holds) and a Context
per request; `in_group` narrows a Context to the group a command acts on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from bot.announcing import changes as announce
from bot.calendar import MeetingCalendar
from bot.catalog.queries import PAGE_SIZE
from bot.chat.replies import Notice, Reply
from bot.intake import lookup
from bot.intake.lookup import Lookups
from bot.rich_text import Button, Text, text
from bot.schedule import groups, slots
from bot.schedule.signups import Change, Member
from bot.store.connection import Store


@dataclass(frozen=True)
class Platform:
    """What the commands need to know of the platform they answer on: how it writes a member in a
    command, and how much one reply may hold. Each adapter makes its own."""

    #: The member a word names (`@ada`, a pasted mention): their id, or None when it names none.
    read_member: Callable[[str], str | None]
    #: A member's id as the platform shows one, for the hint when no member was named.
    member_example: str = "ada"
    #: Tags one reply lists.
    tags_page: int = 500
    #: Papers one list reply holds (`tag`, `search`).
    papers_page: int = PAGE_SIZE
    #: Has the platform forms (the add form)? Without them (the console) `add <link>` saves at once.
    forms: bool = True
    #: The adapter's name (`slack`, `discord`), kept with the groups started on it.
    name: str | None = None
    #: How to type commands in a channel, `{channel}` its id, where it is not the chat's own channel
    #: (the console's `paperbot console --channel {channel}`); None: typed in the channel itself.
    in_channel: str | None = None


def _member_id(word: str) -> str | None:
    """A member's id typed as it is: where no adapter said how its platform writes a member."""
    return word if re.fullmatch(r"[A-Za-z0-9._-]{1,80}", word) else None


#: Members named by their ids alone: the reading of a context no adapter made.
IDS_ONLY = Platform(_member_id)


#: The one line for a request from a server or workspace that is not the install's.
NOT_HERE = "paperbot is not set up in this server or workspace, so nothing was done."


@dataclass(frozen=True)
class Place:
    """The Discord server or Slack workspace a request comes from, beside the install's own. Rights come
    from that place only: until an install serves several, a request from another gets NOT_HERE."""

    #: The server or workspace of the request; None: none (a direct message, the console).
    where: str | None = None
    #: The install's own (its server, its workspace); None with `where`: not known, so not trusted.
    home: str | None = None
    #: A request with no server (a direct message) from someone the adapter could not place in its
    #: own server or workspace: taken as foreign.
    stranger: bool = False

    @property
    def foreign(self) -> bool:
        if self.where is None:
            return self.stranger
        return self.where != self.home


#: The console, and tests that make a Context by hand: the install's own place.
HOME = Place()


@dataclass
class Context:
    """Everything a command may use: the catalog, the group's calendar, who asks, and when."""

    store: Store
    group: MeetingCalendar
    member: Member
    now: datetime
    focus_tag: str | None = None
    channel: str | None = None
    #: Called with a change to the schedule inside its transaction (signups.OnChange).
    on_change: Callable[[Change], None] | None = None
    #: Raises Refusal for a user who cannot present (a bot); the console has no such users.
    vet_presenter: Callable[[str], None] | None = None
    platform: Platform = IDS_ONLY
    #: How the paper of the week is picked when nobody chose one (PAPERBOT_ROTATION).
    rotation: str = "catalog"
    #: Where papers are looked up by link (arXiv, Crossref), and how long a look-up may hold the reply.
    lookups: Lookups | None = None
    lookup_wait: float = lookup.REPLY_WAIT
    #: Tells a member something later (a suggestion's outcome): a direct message where the platform has them.
    tell: Callable[[str, Text], None] | None = None
    #: Sends, in the background, the direct messages a command left to send once (a swap's offer, an
    #: open slot's call: bot/schedule/notes.py); None where nobody gets direct messages (the console).
    notify: Callable[[], None] | None = None
    #: PAPERBOT_PUBLIC_URL: where the calendars and the group's page are served (None: not served).
    public_url: str | None = None
    #: The channel the command was typed in (None: a direct message, App Home, the console).
    where: str | None = None
    #: The environment's group (group 1); None: the one `group`, `focus_tag` and `channel` make.
    env: groups.Group | None = None
    #: Where the request comes from (commands.run refuses any other server's or workspace's).
    place: Place = HOME

    @property
    def env_group(self) -> groups.Group:
        if self.env is not None:
            return self.env
        return groups.Group(groups.ENV, self.channel, replace(self.group, group_id=groups.ENV), self.focus_tag)


@dataclass
class Answer:
    reply: Reply
    change: Change | None = None
    #: Work for the channel was queued in the outbox (a post's update) with no change to announce:
    #: the adapter wakes the outbox once the reply has gone, as it does for a change.
    queued: bool = False

    #: Something was saved for a meeting's discussion (a question): the adapter has it posted after the reply.
    discussion: bool = False

    @property
    def wakes_outbox(self) -> bool:
        return self.change is not None or self.queued


def notice(*segments, ok: bool = True, buttons: list[Button] | None = None) -> Answer:
    """A one-line answer: done (`ok`), or why not."""
    return Answer(Notice(text(*segments), ok=ok, buttons=buttons or []))


def in_group(ctx: Context, group: groups.Group) -> Context:
    """`ctx` for a command in `group`: its calendar, channel and focus tag; its own admins are admins
    there; its changes are announced in its channel."""
    if group.id == groups.ENV:
        return replace(ctx, group=group.calendar)
    member = ctx.member
    if member.id in group.admins:
        member = Member(member.id, lambda: True)
    on_change = ctx.on_change
    if on_change is not None and group.channel is not None:  # a group started in chat has its channel
        channel = group.channel

        def on_change(change: Change) -> None:
            announce.queue(ctx.store, channel, change)

    return replace(
        ctx,
        group=group.calendar,
        channel=group.channel,
        focus_tag=group.focus_tag,
        rotation=group.rotation,
        member=member,
        on_change=on_change,
    )


class _Calendars(Mapping):
    """Groups' calendars by id, each with its channel when there are several groups to tell apart;
    a group is read when a line asks for it: a member's slots name a few groups of an install's many."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self._read: dict[int, groups.Group | None] = {}
        self._several: bool | None = None

    def _group(self, gid: int) -> groups.Group | None:
        if gid not in self._read:
            self._read[gid] = groups.by_id(self.ctx.store, self.ctx.env_group, gid)
        return self._read[gid]

    def __getitem__(self, gid: int) -> tuple[MeetingCalendar, str | None]:
        group = self._group(gid)
        if group is None:
            raise KeyError(gid)
        if self._several is None:
            self._several = groups.several(self.ctx.store)
        return group.calendar, group.channel if self._several else None

    def __iter__(self) -> Iterator[int]:
        return (g.id for g in groups.every(self.ctx.store, self.ctx.env_group))

    def __len__(self) -> int:
        return len(groups.every(self.ctx.store, self.ctx.env_group))


def calendars(ctx: Context) -> slots.Calendars:
    """Every group's calendar, and its channel when there are several groups to tell apart."""
    return _Calendars(ctx)
