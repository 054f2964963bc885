"""Presenters trading weeks (`swap`), and who is due to present next (`due`)."""

from __future__ import annotations

from bot.catalog import queries as catalog
from bot.chat.context import Answer, Context, in_group, notice
from bot.chat.registry import CHOICE, DATE, MEMBER, Arg, Scope, Verb, no_group_here, verb
from bot.chat.replies import Notice
from bot.rich_text import Mention, PaperRef, When, command_code, text
from bot.schedule import groups, openings, swaps

VERBS: dict[str, Verb] = {}

#: How many members `due` lists.
DUE_SHOWN = 25


@verb(
    VERBS,
    "swap",
    "offer to trade weeks with another presenter",
    "swap next @ada",
    # The member asked answers with the offer's buttons, which type `swap accept <date> <offerer>`.
    Arg("decision", CHOICE, choices=("accept", "decline"), hidden=True, typed_only=True),
    Arg("date", DATE, "the date of the other member's talk"),
    Arg("user", MEMBER, "who presents that week", shown="<@member>"),
    # The group is found in the body: an answer comes from a direct message, and its offer knows its group.
    scope=Scope.INSTALL,
    reference="a presenter: offer to trade weeks with whoever presents on `<date>`; they get Accept and Decline "
    "buttons, and on Accept both weeks change at once",
)
def swap(ctx: Context, decision: str | None, date: str, user: str) -> Answer:
    gid = swaps.group_of(ctx.store, user, date) if decision is not None else None
    group = groups.by_id(ctx.store, ctx.env_group, gid) if gid is not None else None
    if group is None:
        try:
            group = groups.where(ctx.store, ctx.env_group, ctx.where)
        except groups.NoGroupHere as e:
            return no_group_here("swap", e.channels, ctx.platform)
    ctx = in_group(ctx, group)
    if decision is not None:
        return _answer(ctx, decision, date, user)
    offer = swaps.offer(ctx.store, ctx.group, ctx.now, ctx.member, date, user)
    if ctx.notify is not None:
        ctx.notify()
    day = ctx.group.day_of(offer.to_week).isoformat()
    return notice(
        "You offered ",
        Mention(user),
        " your week of ",
        When(ctx.group.meeting_of(offer.by_week)),
        " for theirs of ",
        When(ctx.group.meeting_of(offer.to_week)),
        ". They get Accept and Decline buttons (or type ",
        command_code(f"swap accept {day} {ctx.member.id}"),
        "); you hear their answer.",
    )


def _answer(ctx: Context, decision: str, date: str, offerer: str) -> Answer:
    offer, change = swaps.answer(ctx.store, ctx.group, ctx.now, ctx.member, decision, date, offerer, then=ctx.on_change)
    by_meeting, to_meeting = ctx.group.meeting_of(offer.by_week), ctx.group.meeting_of(offer.to_week)
    if change is None:
        if ctx.tell is not None:
            ctx.tell(offerer, text(Mention(ctx.member.id), " declined to swap weeks: you still present on ",
                                   When(by_meeting), "."))  # fmt: skip
        return notice("You declined ", Mention(offerer), "'s swap: you still present on ", When(to_meeting), ".")
    if ctx.tell is not None:
        ctx.tell(offerer, text(Mention(ctx.member.id), " accepted your swap: you present on ", When(to_meeting),
                               " now. Your slots: ", command_code("mine")))  # fmt: skip
    mine = catalog.by_number(ctx.store, offer.to_paper)
    return Answer(
        Notice(
            text(
                "Swapped: you present ",
                *((PaperRef(mine),) if mine else ("your paper",)),
                " on ",
                When(by_meeting),
                " now, and ",
                Mention(offerer),
                " on ",
                When(to_meeting),
                ".",
            )
        ),
        change,
    )


@verb(
    VERBS,
    "due",
    "who is due to present: longest since their last talk first",
    "due",
    scope=Scope.WHERE,
    nothing_after=lambda typed: (": it lists the group's members, longest since their last talk first.",),
    reference="who is due to present: the members who took part, never presented first, then longest since their "
    "last talk",
)
def due(ctx: Context) -> Answer:
    found = openings.due(ctx.store, ctx.group, ctx.now)
    if not found:
        return notice("Nobody has taken part yet: once members sign up, ask, vote or say going, they are listed.")
    lines: list = ["Due to present, longest since their last talk first:"]
    for i, d in enumerate(found[:DUE_SHOWN], 1):
        lines += ["\n", f"{i}. ", Mention(d.member), ": "]
        if d.last is None:
            lines.append("never presented")
        else:
            weeks = (ctx.now - d.last).days // 7
            ago = f" ({weeks} week{'s' if weeks != 1 else ''} ago)"
            lines += ["last presented ", When(d.last, with_time=False), ago]
        if d.coming is not None:
            lines += ["; presents ", When(d.coming, with_time=False)]
    if len(found) > DUE_SHOWN:
        lines.append(f"\n…and {len(found) - DUE_SHOWN} more.")
    return Answer(Notice(text(*lines)))
