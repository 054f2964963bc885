"""Each /paper verb declared once: its arguments, the group it acts on, and who may run it.

    VERBS: dict[str, Verb] = {}

    @verb(VERBS, "vote", "vote for a paper to read (again: take it back)", "vote 7", Arg("paper", PAPER))
    def vote(ctx: Context, paper: str) -> Answer: ...

From the declaration come the parsing of the words after the verb and its one-line usage error,
the group the command acts on and the rights check (both before the body runs), `help`, README's
table and the Slack manifest's usage hint (tests/unit/test_docs.py compares them), and Discord's
subcommands, options and autocomplete (bot/discord/definition.py). A body gets the values by the
arguments' names, never the text.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.calendar import BadDate
from bot.catalog import queries as catalog
from bot.catalog import refs as paper_refs
from bot.chat.context import IDS_ONLY, NOT_HERE, Answer, Context, Platform, in_group, notice
from bot.rich_text import ChannelRef, Code, command_code
from bot.schedule import groups
from bot.schedule.signups import AdminOnly, Refusal

#: A verb's body: the context, then each argument's value by its name.
Body = Callable[..., Answer]


class Unusable(Exception):
    """The words do not fit the verb's arguments: its usage line says how they go."""


@dataclass(frozen=True)
class Kind:
    """What an argument is: how it shows in a usage line, whether it completes from the catalog, and
    how a word of it is read (`read(ctx, verb, arg, word)`: the value, or Unusable, or a Refusal)."""

    name: str
    shown: str
    about: str
    read: Callable[[Context, Verb, Arg, str], object] = lambda ctx, verb, arg, word: word
    #: Offered from the catalog as it is typed, where a platform completes (Discord's autocomplete).
    autocomplete: bool = False


def _member(ctx: Context, verb: Verb, arg: Arg, word: str) -> str:
    member = ctx.platform.read_member(word)
    if member is None:
        raise Refusal(
            "Name the presenter first, with a mention (",
            Code("@someone"),
            ") or a user ID such as ",
            Code(ctx.platform.member_example),
            ": ",
            command_code(verb.example),
        )
    return member


def _tag(ctx: Context, verb: Verb, arg: Arg, words: str) -> str:
    if not catalog.fold_tag(words):
        raise Unusable
    return words


#: How to add a paper by hand where there is no add form (the console, whose user runs paperbot).
BY_HAND = ("put it in a file (.bib, .csv, .yaml or .json) and run ", Code("paperbot import FILE"), ".")


def _link(ctx: Context, verb: Verb, arg: Arg, word: str) -> paper_refs.Ref:
    ref = paper_refs.parse(word)
    if ref is None:
        if verb.name != "add":
            then: tuple = (".",)
        elif ctx.platform.forms:
            then = (", or the empty form: ", command_code("add"), ".")
        else:
            then = (", or ", *BY_HAND)
        why = paper_refs.problem(word)
        if why is not None:  # shaped as a DOI, but none: say what is wrong with it
            raise Refusal(Code(word[:80]), f" {why}", *then)
        raise Refusal(
            Code(word[:80]),
            " is not an arXiv id (2501.18512), an arXiv link, a DOI (10.1145/…) or a doi.org link. For example ",
            command_code(f"{verb.name} 2501.18512"),
            *then,
        )
    return ref


def _number(ctx: Context, verb: Verb, arg: Arg, word: str) -> int:
    digits = word.lstrip("#")
    if not digits.isdigit():
        raise Unusable
    return int(digits)


def _choice(ctx: Context, verb: Verb, arg: Arg, word: str) -> str:
    if word.lower() not in arg.choices:
        raise Unusable
    return word.lower()


#: Words a person means as a date: digits in a date's shape (`2026-13-01`, `2026/12/10`, `2026-W60`).
_DATE_SHAPED = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{4}-[wW]\d{1,2}")


def date_shaped(word: str) -> bool:
    """Does `word` look like a date (a real one or not)?"""
    return _DATE_SHAPED.fullmatch(word.strip()) is not None


def _slot(ctx: Context, verb: Verb, arg: Arg, word: str) -> str:
    """A paper or a date, as typed; a word shaped as a date is a date, and one that is no real date says so."""
    if _DATE_SHAPED.fullmatch(word.strip()):
        try:
            ctx.group.parse_week(word, ctx.now)
        except BadDate as e:
            raise Refusal(str(e)) from None
    return word


PAPER = Kind("paper", "<paper>", "a paper: its number, id or title", autocomplete=True)
DATE = Kind("date", "<date>", "YYYY-MM-DD or next")
#: A paper or a date: the slot or talk it names.
SLOT = Kind("slot", "<paper or date>", "the paper or the date", _slot)
MEMBER = Kind("member", "<@user>", "a member", _member)
TAG = Kind("tag", "<tag>", "a tag, such as parallelism-dp", _tag, autocomplete=True)
TEXT = Kind("text", "<words>", "words")
#: One word, read as typed (a field's name, a web link).
WORD = Kind("word", "<word>", "a word")
#: A paper's arXiv id, DOI or link, read as a paper_refs.Ref.
LINK = Kind("link", "<link>", "an arXiv id, DOI or link", _link)
NUMBER = Kind("number", "<n>", "a number", _number)
CHOICE = Kind("choice", "", "one of them", _choice)


@dataclass(frozen=True)
class Arg:
    """One argument: `name` is the body's parameter and Discord's option. An optional argument
    opens a group that lasts to the end of the line: `[<link> [<tags>]]`, `[accept/decline <n>]`."""

    name: str
    kind: Kind
    about: str = ""
    optional: bool = False
    #: Takes the rest of the line, spaces and all.
    rest: bool = False
    #: Required, but may be left out: the body gets "" (`search` with no words says what to type).
    may_be_empty: bool = False
    #: The words a CHOICE takes (lower case).
    choices: tuple[str, ...] = ()
    #: How the usage line writes it, where the kind's way does not read well.
    shown: str = ""
    #: A keyword typed between others, taken where it is (`slides 29 remove <link>`): not in the usage line.
    hidden: bool = False
    #: Not a Discord option of its own: typed after the option before it (`manage edit paper:7 year 2024`),
    #: or where every argument is, in one optional `args` (`suggestions args:accept 3`).
    typed_only: bool = False
    #: An optional word taken only when it reads as one (`ask [<date>] <question>`: a date, else the
    #: question's first word); its brackets close at once.
    when: Callable[[str], bool] | None = None

    @property
    def usage(self) -> str:
        return self.shown or self.kind.shown or "/".join(self.choices)


class Scope(enum.Enum):
    """The group a verb acts on."""

    #: None: the install's (the catalog, every group), or a body that finds its own.
    INSTALL = "install"
    #: The group of the channel it is typed in; typed elsewhere, the only group, or it names the channels.
    WHERE = "where"
    #: The group of the channel it is typed in, and no other; the body gets it as `here`.
    CHANNEL = "channel"


@dataclass(frozen=True)
class Rights:
    """Who may run a verb: anyone (who = ""), the admins of the group it acts on, or the install's;
    `refusal` tells anyone else, in one line, whom to ask."""

    who: str = ""
    refusal: str = ""

    @property
    def admins_only(self) -> bool:
        return bool(self.who)


ANYONE = Rights()


def group_admins(what: str) -> Rights:
    """The group's own admins, and the install's."""
    return Rights("group", f"Only admins can {what}. Ask one of the group's admins.")


def catalog_admins(what: str) -> Rights:
    """The install's admins: the catalog is every group's, so a group's admins do not change it."""
    return Rights("install", f"Only admins can {what}. Ask one of the install's admins, who keep the catalog.")


def install_admins(what: str) -> Rights:
    return Rights("install", f"Only the install's admins can {what}. Ask one of them.")


@dataclass(frozen=True)
class Verb:
    name: str
    summary: str
    example: str
    run: Body
    args: tuple[Arg, ...] = ()
    rights: Rights = ANYONE
    scope: Scope = Scope.INSTALL
    #: Takes `--page N` at the end; the body gets `page`.
    paged: bool = False
    #: For a verb of no arguments, what follows "`verb` takes nothing after it", given the words typed.
    nothing_after: Callable[[str], tuple] | None = None
    #: Words after a verb of no arguments are let be (`help me`).
    ignores_words: bool = False
    #: Said after its usage line, in a usage error.
    usage_note: tuple = ()
    #: Subcommands (`group set …`): the first is the one run with no words.
    subs: tuple[Verb, ...] = ()
    #: A subcommand that is another verb under a second name (`group list` is `groups`).
    same_as: str | None = None
    #: The verb's words as typed (`group set`), where it is a subcommand.
    path: str = field(default="", compare=False)
    #: Its row in README's command table, where a line can say more than help's summary (links, forms).
    reference: str = ""

    @property
    def words(self) -> str:
        return self.path or self.name

    @property
    def usage(self) -> str:
        if self.subs:
            shown = [f"{s.name} {s.args_usage}".strip() for s in self.subs[1:] if s.same_as is None]
            return f"{self.words} [{' / '.join(shown)}]"
        return f"{self.words} {self.args_usage}".strip()

    @property
    def args_usage(self) -> str:
        words, opened = [], 0
        for arg in self.args:
            if arg.hidden:
                continue
            if arg.when is not None:
                words.append(f"[{arg.usage}]")
            elif arg.optional:
                words.append("[" + arg.usage)
                opened += 1
            else:
                words.append(arg.usage)
        return " ".join(words) + "]" * opened


def verb(table: dict[str, Verb], name: str, summary: str, example: str, *args: Arg, **how) -> Callable[[Body], Body]:
    """Declare the function below as the body of verb `name` in `table`."""

    def declare(body: Body) -> Body:
        table[name] = Verb(name, summary, example, body, args, **how)
        return body

    return declare


def sub(parent: str, name: str, summary: str, example: str, run: Body, *args: Arg, **how) -> Verb:
    """Subcommand `name` of verb `parent`, for its `subs`."""
    return Verb(name, summary, example, run, args, path=f"{parent} {name}", **how)


# -- reading a line ---------------------------------------------------------------

_PAGE = re.compile(r"\s+--page\s+(\d{1,6})\s*$")
_WORD = re.compile(r"\S+")


def paged(args: str) -> tuple[str, int]:
    """`'ml --page 2'` -> `('ml', 2)`."""
    m = _PAGE.search(" " + args)
    if not m:
        return args, 1
    return (" " + args)[: m.start()].strip(), max(1, int(m[1]))


def _words(verb: Verb, args: str) -> dict[str, str | None]:
    """The words of `args` by argument name, as typed; Unusable when they do not fit."""
    tokens = list(_WORD.finditer(args))
    taken: dict[str, str | None] = {a.name: None for a in verb.args}
    i = 0
    for k, arg in enumerate(verb.args):
        left = len(tokens) - i
        if arg.hidden:
            needed = sum(1 for a in verb.args[k + 1 :] if not a.optional and not a.hidden)
            if left > needed and tokens[i][0].lower() in arg.choices:
                taken[arg.name], i = tokens[i][0].lower(), i + 1
            continue
        if arg.when is not None:
            needed = sum(1 for a in verb.args[k + 1 :] if not (a.optional or a.hidden or a.may_be_empty))
            if left > needed and arg.when(tokens[i][0]):
                taken[arg.name], i = tokens[i][0], i + 1
            continue
        if not left:
            if arg.optional:
                break  # it and the rest of its group are left out
            if not arg.may_be_empty:
                raise Unusable
            taken[arg.name] = ""
        elif arg.rest:
            end = len(tokens)
            after = verb.args[k + 1 : k + 2]
            if after and after[0].choices and left > 1 and tokens[-1][0].lower() in after[0].choices:
                end -= 1  # a last word the next argument takes (`delete <paper> confirm`)
            taken[arg.name], i = args[tokens[i].start() : tokens[end - 1].end()].strip(), end
        else:
            taken[arg.name], i = tokens[i][0], i + 1
    if i < len(tokens):
        raise Unusable
    return taken


def usage_error(verb: Verb) -> Answer:
    return notice(
        "Usage: ",
        command_code(verb.usage),
        ", for example ",
        command_code(verb.example),
        ".",
        *verb.usage_note,
        ok=False,
    )


def takes_nothing(words: str, *instead) -> Answer:
    """The answer to words after a command that takes none: they would be ignored without a word."""
    return notice(command_code(words), " takes nothing after it", *instead, ok=False)


def _values(ctx: Context, verb: Verb, args: str, usage: Verb) -> dict[str, object] | Answer:
    """The body's arguments, read from `args`; or the one-line answer why they do not fit (with
    `usage`'s usage line)."""
    values: dict[str, object] = {}
    if verb.paged:
        args, values["page"] = paged(args)
    if not verb.args and args and not verb.ignores_words:
        if verb.nothing_after is not None:
            return takes_nothing(verb.words, *verb.nothing_after(args))
        return usage_error(usage)
    try:
        typed = _words(verb, args)
        for arg in verb.args:
            word = typed[arg.name]
            values[arg.name] = arg.kind.read(ctx, verb, arg, word) if word else word
    except Unusable:
        return usage_error(usage)
    return values


def read(ctx: Context, verb: Verb, args: str) -> dict[str, object] | Answer:
    """The values of `verb`'s arguments in `args`, or the one-line answer why they do not fit."""
    return _values(ctx, verb, args, verb)


# -- running a verb -------------------------------------------------------------

#: Groups one reply lists (`groups`, and the channels named where a command needs a group).
GROUPS_SHOWN = 25


def channels(shown_channels: list[str]) -> list:
    shown: list = []
    for i, channel in enumerate(shown_channels[:GROUPS_SHOWN]):
        shown += [", " if i else "", ChannelRef(channel)]
    if len(shown_channels) > GROUPS_SHOWN:
        shown.append(f" and {len(shown_channels) - GROUPS_SHOWN} more")
    return shown


def no_group_here(words: str, found: list[str], platform: Platform = IDS_ONLY) -> Answer:
    """Typed where no one group is meant, by a verb that acts on one: which channels the groups are in."""
    if platform.in_channel and found:
        return notice(
            "This install has several reading groups, so nothing was done: type ",
            command_code(words),
            " in your group's channel, with ",
            Code(platform.in_channel.format(channel=found[0])),
            " (channels: ",
            *channels(found),
            ").",
            ok=False,
        )
    return notice(
        "This install has several reading groups, so nothing was done: type ",
        command_code(words),
        " in your group's channel (",
        *channels(found),
        ").",
        ok=False,
    )


def here(ctx: Context, words: str) -> groups.Group:
    """The group of the channel `words` is typed in."""
    if ctx.where is None:
        raise Refusal("Type ", command_code(words), " in the group's channel.")
    found = groups.of_channel(ctx.store, ctx.env_group, ctx.where)
    if found is None:
        raise Refusal("This channel has no reading group: an admin starts one with ", command_code("group start"), ".")
    return found


def check_place(ctx: Context) -> None:
    """Raise Refusal for a request from a server or workspace that is not the install's: nobody there
    has any rights here."""
    if ctx.place.foreign:
        raise Refusal(NOT_HERE)


def check_rights(ctx: Context, rights: Rights, group: groups.Group | None = None) -> None:
    """Raise AdminOnly unless `ctx.member` may act with `rights` (in `group`, for a group's admins);
    Refusal for anyone of another server or workspace (the forms come here without a verb)."""
    if not rights.admins_only:
        return
    check_place(ctx)
    if ctx.member.is_admin():
        return
    if rights.who == "group" and group is not None and ctx.member.id in group.admins:
        return
    raise AdminOnly(rights.refusal)


def pick(verb: Verb, args: str) -> tuple[Verb, str] | None:
    """The subcommand that `args` names and the words after it; None when it names none."""
    if not verb.subs:
        return verb, args
    first, _, rest = args.strip().partition(" ")
    if not first:
        return verb.subs[0], ""
    for s in verb.subs:
        if s.name == first.lower():
            return s, rest.strip()
    return None


def answer(ctx: Context, top: Verb, args: str, verbs: dict[str, Verb]) -> Answer:
    """Run `top` on the words after it: its subcommand, its group, its rights, its arguments, then
    its body. Raises Refusal (and Busy, DiskFull) for the caller to answer in one line."""
    picked = pick(top, args)
    if picked is None:
        return usage_error(top)
    verb, args = picked
    if verb.same_as is not None:
        return answer(ctx, verbs[verb.same_as], args, verbs)
    group: groups.Group | None = None
    asked = ctx
    if verb.scope is Scope.WHERE:
        try:
            group = groups.where(ctx.store, ctx.env_group, ctx.where)
        except groups.NoGroupHere as e:
            return no_group_here(verb.words, e.channels, ctx.platform)
        ctx = in_group(ctx, group)
    elif verb.scope is Scope.CHANNEL:
        group = here(ctx, verb.words)
    check_rights(asked, verb.rights, group)
    # A subcommand of no arguments given some gets its verb's usage line: `group [start / …]`.
    values = _values(ctx, verb, args, verb if verb.args or verb is top else top)
    if isinstance(values, Answer):
        return values
    if verb.scope is Scope.CHANNEL:
        values["here"] = group
    return verb.run(ctx, **values)


def kinds_of(verbs: dict[str, Verb]) -> dict[str, Kind]:
    """Each Discord option's kind by its name, for completion."""
    found: dict[str, Kind] = {}
    for v in verbs.values():
        for s in (v, *v.subs):
            for a in s.args:
                found.setdefault(a.name, a.kind)
    return found


def usages(verbs: dict[str, Verb]) -> list[str]:
    """Each verb's usage, in order: help's lines, README's table, the manifest's usage hint."""
    return [v.usage for v in verbs.values()]
