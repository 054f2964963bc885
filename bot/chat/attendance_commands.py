"""Who comes to a meeting: `going` and `cantgo`, typed or pressed on the weekly post."""

from __future__ import annotations

from bot.announcing import sender
from bot.calendar import Week
from bot.chat.context import Answer, Context
from bot.chat.registry import DATE, Arg, Scope, Verb, verb
from bot.chat.replies import Notice
from bot.rich_text import When, command_code, text
from bot.schedule import attendance

VERBS: dict[str, Verb] = {}

#: Which meeting: as the usage line and Discord's options say it.
MEETING_ABOUT = "YYYY-MM-DD (default: the coming meeting)"


def _answer(ctx: Context, going: bool, date: str | None) -> Answer:
    def update_post(week: Week) -> None:  # with the answer, in its transaction: the post's count follows
        sender.hold_post_update(ctx.store, ctx.channel, week)

    said = attendance.say(ctx.store, ctx.group, ctx.now, ctx.member.id, going, date, then=update_post)
    day = said.meeting.date().isoformat()
    meeting = When(said.meeting)
    n = attendance.count(ctx.store, ctx.group.group_id, [said.week]).get(said.week.key, 0)
    if said.outcome == "took back":
        what = "that you're going" if going else "that you can't go"
        line = text("You took back ", what, " to the meeting on ", meeting, f" ({n} going).")
    elif going:
        line = text("You're going to the meeting on ", meeting, f" ({n} going). Can't make it after all? ")
        line += text(command_code(f"cantgo {day}"))
    else:
        line = text("Noted: you can't go to the meeting on ", meeting, f" ({n} going). Again takes it back: ")
        line += text(command_code(f"cantgo {day}"))
    return Answer(Notice(line), queued=True)


@verb(
    VERBS,
    "going",
    "you will come to the coming meeting (again: take it back)",
    "going",
    Arg("date", DATE, MEETING_ABOUT, optional=True),
    scope=Scope.WHERE,
    reference="you will come to a meeting (again: take it back)",
)
def going(ctx: Context, date: str | None) -> Answer:
    return _answer(ctx, True, date)


@verb(
    VERBS,
    "cantgo",
    "you will not come to the coming meeting (again: take it back)",
    "cantgo next",
    Arg("date", DATE, MEETING_ABOUT, optional=True),
    scope=Scope.WHERE,
    reference="you will not come to a meeting (again: take it back)",
)
def cantgo(ctx: Context, date: str | None) -> Answer:
    return _answer(ctx, False, date)
