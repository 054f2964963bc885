"""Questions members bring to a meeting: ask, and the meeting's questions listed or removed."""

from __future__ import annotations

from bot.announcing import sender
from bot.calendar import Week
from bot.chat.context import Answer, Context, notice
from bot.chat.registry import CHOICE, DATE, TEXT, WORD, Arg, Scope, Verb, date_shaped, usage_error, verb
from bot.chat.replies import Notice
from bot.rich_text import Mention, Segment, When, command_code, text
from bot.schedule import questions
from bot.schedule.rows import Question

VERBS: dict[str, Verb] = {}

#: Questions one `questions` reply lists, and how much of each it shows: within every platform's message.
LISTED = 15
SHOWN = 110


@verb(
    VERBS,
    "ask",
    "a question for the coming meeting's talk",
    "ask Why does it need 4 bits?",
    Arg("date", DATE, "the meeting's date, YYYY-MM-DD (default: the coming meeting)", optional=True, when=date_shaped),
    Arg("question", TEXT, "your question", rest=True, may_be_empty=True, shown="<question>"),
    scope=Scope.WHERE,
    reference="any member: a question for the coming meeting's talk (`ask <date> <question>` for another)",
)
def ask(ctx: Context, date: str | None, question: str) -> Answer:
    platform = ctx.platform.name or "console"
    asked = questions.ask(ctx.store, ctx.group, ctx.now, ctx.member.id, platform, question, date, _post_update(ctx))
    meeting = ctx.group.meeting_of(asked.week)
    out = ctx.channel is not None and questions.thread_of(ctx.store, ctx.channel, asked.week) is not None
    return Answer(
        Notice(
            text(
                f"Saved: question {asked.number} for the meeting of ",
                When(meeting),
                ": it goes in the thread of the week's post"
                + ("" if out else ", once that is out")
                + ". All of them: ",
                command_code("questions" if date is None else f"questions {meeting.date().isoformat()}"),
                ".",
            )
        ),
        queued=True,
        discussion=True,
    )


@verb(
    VERBS,
    "questions",
    "the questions for a meeting, oldest first",
    "questions",
    Arg("remove", CHOICE, choices=("remove",), optional=True, hidden=True, typed_only=True),
    Arg(
        "which",
        WORD,
        "a meeting's date (default: the coming one), or remove <n>",
        optional=True,
        typed_only=True,
        shown="<date>",
    ),  # fmt: skip
    scope=Scope.WHERE,
    usage_note=(" Remove one of yours: ", command_code("questions remove <n>"), "."),
    reference="the questions for a meeting, oldest first, with who asked; "
    "the asker or an admin removes one with `questions remove <n>`",
)
def questions_(ctx: Context, remove: str | None, which: str | None) -> Answer:
    if remove:
        # Rights: the question's asker or an admin, which only the question tells (questions.remove checks).
        if which is None or not which.lstrip("#").isdigit():
            return usage_error(VERBS["questions"])
        n = int(which.lstrip("#"))
        gone = questions.remove(ctx.store, ctx.group, ctx.now, ctx.member, None, n, _post_update(ctx))
        return Answer(Notice(text("Removed question ", str(gone.number), ": ", _clip(gone.text))), queued=True)
    week = questions.week_of(ctx.group, ctx.now, which) if which else ctx.group.coming(ctx.now)
    meeting = ctx.group.meeting_of(week)
    found = questions.of_meeting(ctx.store, ctx.group.group_id, week)
    if not found:
        return notice(
            "No questions for the meeting of ", When(meeting), " yet. Ask one: ", command_code("ask <question>"), "."
        )
    return Answer(Notice(text(*listed(found, text("Questions for the meeting of ", When(meeting), ":")))))


def _post_update(ctx: Context) -> questions.Then:
    """The week's post shows how many questions its meeting has: its update, queued with the change."""

    def update(week: Week) -> None:
        sender.hold_post_update(ctx.store, ctx.channel, week)

    return update


def listed(found: list[Question], heading: tuple) -> list[Segment]:
    """The questions one to a line under `heading`, numbered, with who asked."""
    out: list[Segment] = [*heading]
    for q in found[:LISTED]:
        out += [f"\n{q.number}. {_clip(q.text)} (", Mention(q.asked_by), ")"]
    if len(found) > LISTED:
        out.append(f"\n…and {len(found) - LISTED} more.")
    return out


def _clip(said: str) -> str:
    return said if len(said) <= SHOWN else said[: SHOWN - 1] + "…"
