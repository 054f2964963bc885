"""The group's weeks: who presents what and when, and the talks given."""

from __future__ import annotations

from dataclasses import replace

from bot.catalog import queries as catalog
from bot.chat.context import Answer, Context, calendars, notice
from bot.chat.lists import EMPTY_CATALOG, if_empty, mark_archived, pager
from bot.chat.registry import CHOICE, DATE, MEMBER, PAPER, SLOT, WORD, Arg, Scope, Verb, group_admins, verb
from bot.chat.replies import Mine, Notice, PastTalks, Schedule, WeekCard
from bot.rich_text import Code, Mention, Text, When, command_code, text
from bot.schedule import signups, slots, talks, weekly
from bot.schedule.rows import SkippedWeek, TalkWeek, talk_paper

VERBS: dict[str, Verb] = {}

#: When a week is named: as the usage line and Discord's options say it.
WEEK_ABOUT = "YYYY-MM-DD or next (default: the first open week)"


@verb(
    VERBS,
    "week",
    "this week's paper, presenter and meeting",
    "week",
    scope=Scope.WHERE,
    nothing_after=lambda typed: (": it shows this week. The weeks after it: ", command_code("schedule"), "."),
    reference="this week's paper, presenter and meeting",
)
def week(ctx: Context) -> Answer:
    this = ctx.group.coming(ctx.now)
    line = mark_archived(ctx, [slots.line_for(ctx.store, ctx.group, this)])[0]
    if isinstance(line, SkippedWeek):
        return Answer(WeekCard(line, featured=False, posted=False, note=text("No meeting this week.")))
    posted = ctx.channel is not None and weekly.posted(ctx.store, ctx.channel, this) is not None
    if isinstance(line, TalkWeek):
        return Answer(WeekCard(line, featured=False, posted=posted))
    post = weekly.plan(ctx.store, ctx.group, this, ctx.focus_tag, ctx.channel, ctx.now, ctx.rotation)
    if post is None:
        if hint := if_empty(ctx):
            return hint
        if ctx.focus_tag:  # PAPERBOT_FOCUS_TAG names a tag that no paper has any more
            return notice("No paper is tagged ", Code(ctx.focus_tag), ": there is no paper of the week yet.", ok=False)
        return notice("Every paper of the catalog is archived: there is no paper of the week yet.", ok=False)
    button = post.signup_button  # the post's own
    note: Text = text(post.nobody) if button else post.elsewhere_note()
    # Posted before it was archived: the week's paper still, and says so.
    card = WeekCard(line, True, posted, button, note, rotation=post.paper, rotation_archived=post.archived)
    return Answer(card)


@verb(
    VERBS,
    "schedule",
    "the coming weeks and their presenters",
    "schedule",
    scope=Scope.WHERE,
    nothing_after=lambda typed: (": it lists the coming weeks, from this one.",),
    reference="the coming weeks and their presenters",
)
def schedule(ctx: Context) -> Answer:
    lines = mark_archived(ctx, slots.schedule(ctx.store, ctx.group, ctx.now))
    # With no paper at all to sign up for, the footer says how the catalog begins.
    footer = EMPTY_CATALOG if catalog.empty(ctx.store) else text("Sign up: ", command_code("signup <paper> [<date>]"))
    return Answer(Schedule(text("Coming weeks"), lines, footer))


@verb(
    VERBS,
    "signup",
    "present a paper (default: the first open week)",
    "signup streaming-diloco next",
    Arg("paper", PAPER, "the paper you present"),
    Arg("date", DATE, WEEK_ABOUT, optional=True),
    scope=Scope.WHERE,
    reference="present a paper (default: the first open week)",
)
def signup(ctx: Context, paper: str, date: str | None) -> Answer:
    change = signups.signup(ctx.store, ctx.group, ctx.now, ctx.member, paper, date, then=ctx.on_change)
    line = change.talk
    return Answer(
        Notice(
            text(
                "You're signed up: you present ",
                talk_paper(line),
                " on ",
                When(line.meeting),
                ". Changed your mind? ",
                command_code(f"withdraw {line.meeting.date().isoformat()}"),
            )
        ),
        change,
    )


@verb(
    VERBS,
    "withdraw",
    "give up one of your slots",
    "withdraw 7",
    Arg("slot", SLOT, "the paper or the date of your slot"),
    scope=Scope.WHERE,
    reference="give up one of your slots",
)
def withdraw(ctx: Context, slot: str) -> Answer:
    change = signups.withdraw(ctx.store, ctx.group, ctx.now, ctx.member, slot, then=ctx.on_change)
    before = change.talk  # the talk given up
    late: tuple = ()
    if change.opening:  # late: the channel is asked for a stand-in, and the members due first are told
        late = (" The meeting is close, so the channel and the members due to present are asked to step in.",)
        if ctx.notify is not None:
            ctx.notify()
    return Answer(
        Notice(
            text("You gave up ", When(before.meeting), " (", talk_paper(before), "). The week is open again.", *late)
        ),
        change,
    )


@verb(
    VERBS,
    "mine",
    "your coming and past slots",
    "mine",
    nothing_after=lambda typed: (": it shows your own slots. Everyone's: ", command_code("schedule"), "."),
    reference="your coming and past slots",
)
def mine(ctx: Context) -> Answer:
    upcoming, past = slots.mine_in(ctx.store, calendars(ctx), ctx.now, ctx.member.id)
    return Answer(Mine(ctx.member.id, upcoming, past))


@verb(
    VERBS,
    "assign",
    "put someone in a week",
    "assign @ada 7 next",
    Arg("user", MEMBER, "who presents"),
    Arg("paper", PAPER, "the paper they present"),
    Arg("date", DATE, WEEK_ABOUT, optional=True),
    scope=Scope.WHERE,
    rights=group_admins("assign weeks"),
    reference="admins: put someone in a week",
)
def assign(ctx: Context, user: str, paper: str, date: str | None) -> Answer:
    if ctx.vet_presenter is not None:
        ctx.vet_presenter(user)
    change = signups.assign(ctx.store, ctx.group, ctx.now, ctx.member, user, paper, date, then=ctx.on_change)
    line = change.talk
    # Papers may repeat, but an admin who books one that is coming up already should know.
    history = slots.history(ctx.store, ctx.group, line.paper) if line.paper else []
    also = [s for s in history if s.meeting > ctx.now and s.week != line.week]
    note: list = []
    if also:
        more_weeks = f" and {len(also) - 1} more week{'s' if len(also) > 2 else ''}" if len(also) > 1 else ""
        note = [
            " It is also coming up on ",
            When(also[0].meeting),
            " (",
            Mention(also[0].presenter),
            ")",
            more_weeks,
            ".",
        ]
    return Answer(
        Notice(text(Mention(line.presenter), " presents ", talk_paper(line), " on ", When(line.meeting), ".", *note)),
        change,
    )


def _undo(cleared: signups.Change) -> tuple:
    """The command that books the cleared week as it was (a talk with a paper, or a skip)."""
    before, day = cleared.before, cleared.line.meeting.date().isoformat()
    if isinstance(before, TalkWeek) and before.paper is not None:
        return (" Undo: ", command_code(f"assign {before.presenter} {before.paper.number} {day}"))
    if isinstance(before, SkippedWeek):
        return (" Undo: ", command_code(f"skip {day}"))
    return ()


#: A week's date, for the admins' verbs on one week.
THE_WEEK = Arg("date", DATE, "the week's date: YYYY-MM-DD or next")


@verb(
    VERBS,
    "unassign",
    "clear a week",
    "unassign next",
    THE_WEEK,
    scope=Scope.WHERE,
    rights=group_admins("clear weeks"),
    reference="admins: clear a week",
)
def unassign(ctx: Context, date: str) -> Answer:
    change = signups.unassign(ctx.store, ctx.group, ctx.now, ctx.member, date, then=ctx.on_change)
    return Answer(
        Notice(
            text(
                "Cleared the week of ",
                When(change.line.meeting, with_time=False),
                ": it is open again.",
                *_undo(change),
            )
        ),
        change,
    )


@verb(
    VERBS,
    "skip",
    "no meeting that week",
    "skip next",
    THE_WEEK,
    scope=Scope.WHERE,
    rights=group_admins("skip weeks"),
    reference="admins: no meeting that week",
)
def skip(ctx: Context, date: str) -> Answer:
    change = signups.skip(ctx.store, ctx.group, ctx.now, ctx.member, date, then=ctx.on_change)
    return Answer(
        Notice(
            text("No meeting in the week of ", When(change.line.meeting, with_time=False), ": no post, no presenter.")
        ),
        change,
    )


@verb(
    VERBS,
    "slides",
    "attach slides, a recording or notes to a talk (presenter or admins)",
    "slides 29 https://example.org/slides.pdf",
    Arg("talk", SLOT, "the paper (its latest talk) or the talk's date"),
    Arg("remove", CHOICE, choices=("remove",), optional=True, hidden=True, typed_only=True),
    Arg("url", WORD, "a link to the slides, a recording or notes (or: remove <link>)", shown="<link>"),
    scope=Scope.WHERE,
    reference="the presenter or an admin: slides, a recording or notes for a talk (`… remove <link>`)",
)
def slides(ctx: Context, talk: str, remove: str | None, url: str) -> Answer:
    # Rights: the talk's presenter or an admin, which only the talk tells (talks.attach checks).
    if remove:
        line = talks.detach(ctx.store, ctx.group, ctx.now, ctx.member, talk, url)
        return notice(
            "Removed the link from the talk of ", When(line.meeting, with_time=False), " (", talk_paper(line), ")."
        )
    line, added = talks.attach(ctx.store, ctx.group, ctx.now, ctx.member, talk, url)
    if not added:
        return notice("The talk of ", When(line.meeting, with_time=False), " has that link already.", ok=False)
    return notice(
        "Added the link to the talk of ",
        When(line.meeting, with_time=False),
        " (",
        talk_paper(line),
        "). ",
        *(
            ("Talks given: ", command_code("past"))
            if line.meeting <= ctx.now
            else (
                "It shows in ",
                command_code(f"show {line.paper.number}" if line.paper else "schedule"),
                " until the talk is given, then in ",
                command_code("past"),
                ".",
            )
        ),
    )


@verb(
    VERBS,
    "past",
    "talks given, newest first, with their links",
    "past",
    scope=Scope.WHERE,
    paged=True,
    nothing_after=lambda typed: (": it lists the talks given, newest first.",),
    reference="talks given, newest first, with their links",
)
def past(ctx: Context, page: int) -> Answer:
    given, more = talks.past(ctx.store, ctx.group, ctx.now, page)
    if not given:
        if page > 1:
            return notice(f"There is no page {page} of past talks.", ok=False)
        return notice("No talk has been given yet. The coming ones: ", command_code("schedule"), ".")
    given = [replace(t, line=line) for t, line in zip(given, mark_archived(ctx, [t.line for t in given]), strict=True)]
    footer = text("Add slides or a recording: ", command_code("slides <paper or date> <link>"))
    return Answer(PastTalks(given, pager("past", page, more, talks.PAST_PAGE), footer))
