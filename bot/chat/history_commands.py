"""The group's history: `stats`, in words, with a picture where the platform shows one."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from bot.chat.context import Answer, Context, notice
from bot.chat.registry import Scope, Verb, verb
from bot.chat.replies import Stats
from bot.rich_text import Mention, Segment, Text, command_code, text
from bot.schedule import history
from bot.schedule.history import History
from bot.web import feeds

VERBS: dict[str, Verb] = {}

#: Months, presenters, tags and meetings the words name (the picture shows more).
IN_WORDS = 6


def _counts(pairs: Sequence[tuple[Segment, int]]) -> tuple[Segment, ...]:
    out: list[Segment] = []
    for i, (what, n) in enumerate(pairs):
        out += [" · " if i else "", what, f" {n}"]
    return tuple(out)


def summary(past: History) -> Text:
    """The history in a few lines: the talks, the latest months, the first presenters and tags, the turnout."""
    months = [m for m in past.months if m[1]]
    lines: list[Segment] = [
        f"📊 {past.talks} talk{'' if past.talks == 1 else 's'} given",
        f", {months[0][0]} to {months[-1][0]}" if months else "",
        f", by {past.all_presenters} presenter{'' if past.all_presenters == 1 else 's'}.",
    ]
    if past.months:
        lines += ["\nPer month: ", *_counts([(m, n) for m, n in past.months[-IN_WORDS:]])]
    if past.presenters:
        lines += ["\nPresenters: ", *_counts([(Mention(p), n) for p, n in past.presenters[:IN_WORDS]])]
    if past.tags:
        lines += ["\nTags: ", *_counts(past.tags[:IN_WORDS])]
    if past.attendance:
        latest = past.attendance[-IN_WORDS:]
        average = sum(t.going for t in past.attendance) / len(past.attendance)
        lines += [
            "\nGoing: ",
            *_counts([(t.meeting.strftime("%Y-%m-%d"), t.going) for t in latest]),
            f" ({average:.1f} a meeting)",
        ]
    return text(*lines)


def picture_url(ctx: Context, past: History) -> str | None:
    """Where the bot serves the history's picture (a PNG behind the group's secret), when it serves pages;
    its `v` changes with the history, so that a platform keeping pictures by address shows the new one."""
    if not ctx.public_url:
        return None
    version = hashlib.sha256(repr(past).encode()).hexdigest()[:12]
    secret = feeds.group_secret(ctx.store, ctx.group.group_id)
    return f"{ctx.public_url.rstrip('/')}/g/{secret}/stats.png?v={version}"


@verb(
    VERBS,
    "stats",
    "the group's history: talks per month, presenter and tag, and attendance",
    "stats",
    scope=Scope.WHERE,
    nothing_after=lambda typed: (": it shows the whole history of the group.",),
    reference="the group's history: talks per month, per presenter and per tag, and attendance, "
    "with a picture where the platform shows one",
)
def stats(ctx: Context) -> Answer:
    past = history.of_group(ctx.store, ctx.group, ctx.now)
    if not past.talks and not past.attendance:
        return notice(
            "No talk has been given yet: the history starts with the first. The coming ones: ",
            command_code("schedule"),
            ".",
        )
    return Answer(Stats(summary(past), past, picture_url(ctx, past)))
