"""The /paper commands: text in, a reply out, the same on every platform and in the console.

    answer = commands.run(ctx, "tag Parallelism_DP")
    answer.reply          # a bot.chat.replies value, for a renderer
    answer.change         # a schedule change to announce to the group, or None

`VERBS` is every verb, each declared once (bot/chat/registry.py) in the module of its theme:
help, README, the manifest's usage hint, Discord's subcommands and their tests all read it.
"""

from __future__ import annotations

import difflib
import re
import unicodedata

from bot.calendar import BadDate
from bot.catalog import queries as catalog
from bot.catalog import refs as paper_refs
from bot.chat import (
    attendance_commands,
    catalog_commands,
    group_commands,
    history_commands,
    paper_commands,
    question_commands,
    registry,
    schedule_commands,
    swap_commands,
)
from bot.chat.context import NOT_HERE, Answer, Context, calendars, in_group, notice
from bot.chat.lists import EMPTY_CATALOG, mark_archived
from bot.chat.registry import Verb, verb
from bot.chat.replies import Help, HelpLine, Home, Notice, PaperEntry
from bot.rich_text import COMMAND, Button, Code, Mention, Text, When, command_code, text
from bot.schedule import groups, slots, talks
from bot.schedule.rows import TalkWeek, talk_paper
from bot.schedule.signups import Change, Refusal
from bot.store.connection import Busy, DiskFull, Unavailable

_HELP: dict[str, Verb] = {}


@verb(_HELP, "help", "these commands", "help", ignores_words=True, reference="these commands")
def help_(ctx: Context) -> Answer:
    return Answer(_help())


#: Every verb, in help's order: help, then each theme's verbs in the order they are declared.
VERBS: dict[str, Verb] = {
    **_HELP,
    **catalog_commands.VERBS,
    **schedule_commands.VERBS,
    **attendance_commands.VERBS,
    **question_commands.VERBS,
    **history_commands.VERBS,
    **swap_commands.VERBS,
    **paper_commands.VERBS,
    **group_commands.VERBS,
}


def _help(intro: Text = ()) -> Help:
    return Help([HelpLine(v.usage, v.summary, v.example, v.rights.admins_only) for v in VERBS.values()], intro)


#: `# 13` (or `＃ 13`) as typed, for the paper number #13.
_LOOSE_NUMBER = re.compile(r"(?:(?<=\s)|^)[#＃]\s+(?=\d)")


#: Characters that show as nothing, pasted along with a paper's id or a date: never part of a command.
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def split(line: str) -> tuple[str, str]:
    """`'/paper tag x'` -> `('tag', 'x')`; the `/paper` prefix is optional. Full-width forms, as an
    input method in full-width mode types them (`ｓｈｏｗ ＃７`, `２０２７－０２－０４`), read as ASCII."""
    if not line.isascii():
        line = _INVISIBLE.sub("", unicodedata.normalize("NFKC", line))
    line = line.strip()
    if line.lower().startswith(COMMAND):
        rest = line[len(COMMAND) :]
        if not rest or rest[0].isspace():
            line = rest.strip()
    verb, *after = line.split(None, 1) or [""]  # any whitespace: a tab, a newline, a no-break space
    return verb.lower(), _LOOSE_NUMBER.sub("#", after[0]).strip() if after else ""


def acts_on_a_group(line: str) -> bool:
    """Does the command of `line` act on one group (the group of its channel, or the only one)?"""
    found = VERBS.get(split(line)[0])
    return found is not None and found.scope is registry.Scope.WHERE


#: A verb this close to one of ours (difflib's ratio) is taken for a typo of it: serach, shwo, sigup.
MEANT = 0.7

BUSY = "The catalog is busy just now, so nothing was changed. Try again in a moment."
#: The database server away (restarted, out of reach): said within the platform's 3 seconds, nothing changed.
AWAY = "The catalog cannot be reached just now, so nothing was changed. Try again in a moment."
DISK_FULL = "The disk that holds the catalog is full, so nothing was changed. Ask whoever runs the bot to free space."


def run(ctx: Context, line: str) -> Answer:
    """Answer one /paper command line. Never raises for anything a user typed."""
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a form's JSON (\ud800): no database or platform takes it
        return notice("That holds a character that is not valid Unicode, so nothing was done. Type it again.", ok=False)
    name, args = split(line)
    if not name:
        return Answer(_help())
    command = VERBS.get(name)
    if command is None:
        meant = difflib.get_close_matches(name, list(VERBS), n=1, cutoff=MEANT)
        if meant:  # serach, shwo: a typo of one verb gets that verb, not all of help
            found = VERBS[meant[0]]
            return notice(
                "I don't know ",
                Code(name[:30]),
                ". Did you mean ",
                Code(found.name),
                "? Usage: ",
                command_code(found.usage),
                ", for example ",
                command_code(found.example),
                ".",
                ok=False,
            )
        return Answer(_help(text("I don't know ", Code(name[:30]), ". Here is what I can do:")))
    if command.name != "help" and ctx.place.foreign:  # another server's members: this line, and nothing done
        return notice(NOT_HERE, ok=False)
    if command.name != "help" and not ctx.member.id.strip():  # a platform always names the user; without one, no one
        return notice("This request did not say who sent it, so nothing was done. Try the command again.", ok=False)
    try:
        return registry.answer(ctx, command, args, VERBS)
    except Refusal as refusal:
        return Answer(Notice(refusal.text, ok=False))
    except Busy:  # another writer (an import's batch, a second process) held the catalog too long
        return Answer(Notice(text(BUSY), ok=False))
    except DiskFull:
        return Answer(Notice(text(DISK_FULL), ok=False))
    except Unavailable:
        return Answer(Notice(text(AWAY), ok=False))


def to_look_up(ctx: Context, line: str) -> str | None:
    """The link of a `suggest` line whose answer waits for a look-up (arXiv, Crossref): an adapter whose
    reply cannot wait that long acknowledges it at once, then answers `run(ctx, line)` afterwards.
    None for any other line, answered by `run` at once."""
    name, args = split(line)
    if name != "suggest" or not ctx.member.id.strip() or ctx.place.foreign:
        return None
    try:
        values = registry.read(ctx, VERBS[name], args)
        if isinstance(values, Answer):
            return None
        link = values["link"]
        assert isinstance(link, paper_refs.Ref)
        if paper_commands.suggestion_checked(ctx, link) is not None:
            return None
    except (Refusal, Busy, DiskFull, Unavailable):
        return None  # `run` says so
    return args.strip()


def post_button(ctx: Context, command: str) -> str:
    """What the weekly post's button does when pressed: sign up for its week while that meeting is
    ahead, else (the post went out before the meeting began, and nothing redraws it when it does)
    for the first open week, as the post of a meeting under way offers."""
    parts = command.split()
    if len(parts) == 3 and parts[0] == "signup":
        try:
            week = ctx.group.parse_week(parts[2], ctx.now)
        except BadDate:
            return command
        if ctx.group.meeting_of(week) <= ctx.now:
            return f"signup {parts[1]}"
    return command


def announcement(change: Change) -> Text:
    """The one line the group's channel gets about a schedule change."""
    if change.action == "note":
        return change.note
    line, before = change.line, change.before
    day = When(line.meeting)
    presenters = {w.presenter for w in (line, before) if isinstance(w, TalkWeek)}
    by = () if change.by in presenters else (" (by ", Mention(change.by), ")")
    if change.action in ("signup", "assign") and isinstance(line, TalkWeek):
        return text("📅 ", Mention(line.presenter), " will present ", talk_paper(line), " on ", day, ".", *by)
    if change.action == "skip":
        return text("🚫 No meeting in the week of ", When(line.meeting, with_time=False), ".", *by)
    was: tuple = ()
    if isinstance(before, TalkWeek):
        was = (" (", Mention(before.presenter), " was to present ", talk_paper(before), ")")
    if change.opening:  # late: little time is left to find someone, so the line asks for them
        return text("🆘 ", day, " is open again at short notice", *was, ": who steps in? ",
                    command_code(_stand_in(change)), *by)  # fmt: skip
    return text(
        "🔓 ", day, " is open again", *was, ": ", command_code(f"signup <paper> {line.meeting.date().isoformat()}"), *by
    )


def _stand_in(change: Change) -> str:
    """The command that signs up for a week left open late: its talk's paper, in its week."""
    day = change.line.meeting.date().isoformat()
    before = change.before
    paper = before.paper if isinstance(before, TalkWeek) else None
    return f"signup {paper.number} {day}" if paper is not None else f"signup <paper> {day}"


def announcement_buttons(change: Change) -> list[Button]:
    """The buttons under a change's line: a week left open late gets a sign-up button."""
    before = change.before
    if change.opening and isinstance(before, TalkWeek) and before.paper is not None:
        return [Button("Sign up to present", _stand_in(change), primary=True)]
    return []


#: What App Home lists: the coming weeks, and papers waiting for a presenter.
HOME_WEEKS = 12
HOME_WAITING = 20
#: The latest talks given that App Home looks at for links.
HOME_TALKS = 5


def home(ctx: Context, notice: Notice | None = None) -> Home:
    """A member's own page (a platform's home tab): the coming weeks, their own slots, papers nobody has
    presented with a sign-up button, and `notice` on top."""
    if ctx.place.foreign:
        return Home(ctx.member.id, [], [], [], Notice(text(NOT_HERE), ok=False))
    upcoming, _ = slots.mine_in(ctx.store, calendars(ctx), ctx.now, ctx.member.id)
    try:
        group = groups.where(ctx.store, ctx.env_group, None)
    except groups.NoGroupHere as e:  # the member's groups are in their slots; the weeks are each group's
        where = text("Several reading groups share this install (", *registry.channels(e.channels), "): ")
        notice = notice or Notice(text(*where, command_code("schedule"), " in a group's channel shows its weeks."))
        return Home(ctx.member.id, [], upcoming, [], notice)
    ctx = in_group(ctx, group)
    coming = slots.schedule(ctx.store, ctx.group, ctx.now)[:HOME_WEEKS]
    waiting = [
        PaperEntry(p, Button("Sign up", f"signup {p.number}"))
        for p in slots.waiting_papers(ctx.store, HOME_WAITING, ctx.focus_tag, group.id)
    ]
    given, _ = talks.past(ctx.store, ctx.group, ctx.now, 1, HOME_TALKS)
    recent = [t for t in given if t.links]
    if not waiting and notice is None and catalog.empty(ctx.store):
        notice = Notice(EMPTY_CATALOG)  # a new place: how its catalog begins, where papers would be listed
    return Home(ctx.member.id, mark_archived(ctx, coming), upcoming, waiting, notice, recent)
