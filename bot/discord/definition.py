"""`/paper` as a Discord command: one subcommand per verb with its options, registered at start;
both drawn from the verbs' declarations (bot/chat/registry.py), and read back into the core's text.

Discord allows 25 subcommands a command: `group`, `manage` and `meeting` are subcommand groups holding
the verbs added later, and a definition over the limit raises TooManySubcommands (at start, and in tests).

definition()                         # the bulk-overwrite body: [{"name": "paper", ...}]
line_of(interaction["data"])         # "assign <@1300…> 7 next": the core's command text
invite_url(app_id)                   # the invite with the permissions the bot needs
"""

from __future__ import annotations

from dataclasses import replace

from bot.chat import commands
from bot.chat.registry import MEMBER, NUMBER, TEXT, Arg, Verb
from bot.rich_text import Code, text

STRING, INTEGER, USER = 3, 4, 6
#: Discord's option type of each kind of argument (registry.Kind's name); any other is a string.
OPTION_TYPES = {MEMBER.name: USER, NUMBER.name: INTEGER}
SUBCOMMAND, SUBCOMMAND_GROUP = 1, 2

#: Subcommand groups of verbs, each verb read back as itself (`manage archive paper:7` is `archive 7`);
#: a group stands where the first of its verbs is in VERBS. `manage`: the admins' verbs on one paper;
#: `meeting`: a member's part in a meeting.
GROUPS = {
    "manage": (("edit", "archive", "restore", "delete"), "admins: edit, archive, restore or delete a paper"),
    "meeting": (
        ("going", "cantgo", "ask", "questions", "swap", "due", "stats"),
        "going, can't go, questions, swaps, who is due, the history",
    ),
}
#: The group of each verb in one.
GROUP_OF = {name: group for group, (names, _) in GROUPS.items() for name in names}
#: Verbs that are subcommands of a subcommand group (of GROUPS, or a subcommand that is the verb under
#: another name: `group list` is `groups`), not subcommands of their own.
IN_GROUP = {*GROUP_OF, *(s.same_as for v in commands.VERBS.values() for s in v.subs if s.same_as)}

#: View Channel, Send Messages, Embed Links, Read Message History: what the weekly post, the
#: announcements and finding the post again after a crash need; Create Public Threads and Send
#: Messages in Threads: the meeting's questions, in a thread on its post. Nothing else.
PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 14) | (1 << 16) | (1 << 35) | (1 << 38)


class TooManySubcommands(ValueError):
    """The verbs of COMMANDS do not fit in `/paper`: a new verb must go into a subcommand group."""


#: Where every argument of a verb is typed only: one optional string with the words after the verb.
ARGS = Arg("args", TEXT, optional=True)


def options_of(verb: Verb) -> list[Arg]:
    """A verb's arguments that are Discord options, in the order the core reads them."""
    if verb.args and all(a.typed_only for a in verb.args):
        return [replace(ARGS, about=f"{verb.args_usage}, e.g. {verb.example}")]
    return [a for a in verb.args if not a.typed_only]


def _options(verb: Verb) -> list[dict]:
    options, grouped = [], False
    for arg in options_of(verb):
        grouped = grouped or arg.optional  # an argument after an optional one comes with it or not at all
        choices = [{"name": c, "value": c} for c in arg.choices]
        options.append(
            {
                "name": arg.name,
                "type": OPTION_TYPES.get(arg.kind.name, STRING),
                "description": (arg.about or arg.kind.about)[:100],
                "required": not grouped,
                **({"autocomplete": True} if arg.kind.autocomplete else {}),
                **({"choices": choices} if 0 < len(choices) <= 25 else {}),
            }
        )
    return options


def _about(verb: Verb) -> str:
    return (verb.summary + (" (admins)" if verb.rights.admins_only else ""))[:100]


def _verb_definition(verb: Verb) -> dict:
    if verb.subs:
        subs = [_verb_definition(s) for s in verb.subs]
        return {"name": verb.name, "type": SUBCOMMAND_GROUP, "description": verb.summary[:100], "options": subs}
    return {"name": verb.name, "type": SUBCOMMAND, "description": _about(verb), "options": _options(verb)}


def _group_definition(group: str) -> dict:
    names, about = GROUPS[group]
    subs = [_verb_definition(commands.VERBS[name]) for name in names if name in commands.VERBS]
    return {"name": group, "type": SUBCOMMAND_GROUP, "description": about, "options": subs}


def definition() -> list[dict]:
    subs: list[dict] = []
    for verb in commands.VERBS.values():
        if (group := GROUP_OF.get(verb.name)) is not None:
            if not any(s["name"] == group for s in subs):
                subs.append(_group_definition(group))
        elif verb.name not in IN_GROUP:
            subs.append(_verb_definition(verb))
    # Cut at 25, the verbs past the limit would be missing from Discord without a word: refuse instead.
    if len(subs) > MAX_SUBCOMMANDS:
        over = ", ".join(s["name"] for s in subs[MAX_SUBCOMMANDS:])
        raise TooManySubcommands(
            f"/paper would have {len(subs)} subcommands, Discord allows {MAX_SUBCOMMANDS}: "
            f"put {over} into a subcommand group (bot/discord/definition.py, GROUPS)"
        )
    return [
        {
            "name": "paper",
            "type": 1,
            "description": "the reading group's papers, weeks and presenters",
            "options": subs,
            "contexts": [0],
            "integration_types": [0],
        }
    ]


#: Discord's most options (here subcommands) a command.
MAX_SUBCOMMANDS = 25


def _given(sub: dict) -> dict:
    return {o.get("name"): o.get("value") for o in sub.get("options") or [] if isinstance(o, dict)}


def _first(options) -> dict:
    return options[0] if isinstance(options, list) and options and isinstance(options[0], dict) else {}


class UnknownSubcommand(ValueError):
    """`/paper group nuke`: a subcommand its group does not have (a stale or forged command); the text
    names the ones it has."""

    def __init__(self, group: str, name: str, known):
        super().__init__(f"/paper {group} has no subcommand {name[:30]}; it has {', '.join(known)}")
        listed: list = []
        for i, k in enumerate(known):
            listed += [", " if i else "", Code(k)]
        #: What the member is told, in one line.
        self.said = text(Code(f"/paper {group}"), " has no ", Code(name[:30]), "; its subcommands are ", *listed, ".")


def _words(verb: Verb, sub: dict) -> list[str]:
    """The values of a subcommand's options, as the core reads them after the verb."""
    given = _given(sub)
    words = []
    for arg in options_of(verb):
        value = given.get(arg.name)
        if value is None or value == "":
            continue
        value = " ".join(str(value).split())
        words.append(f"<@{value}>" if arg.kind is MEMBER else value)
    return words


def line_of(data: dict) -> str:
    """The core's command text for a `/paper` interaction's data; UnknownSubcommand for a subcommand
    group's subcommand that it does not have."""
    sub = _first(data.get("options"))
    if not sub:
        return "help"
    name = str(sub.get("name", "help"))
    verb = commands.VERBS.get(name)
    if sub.get("type") == SUBCOMMAND_GROUP and name in GROUPS:
        group, grouped = name, [n for n in GROUPS[name][0] if n in commands.VERBS]
        inner = _first(sub.get("options"))
        name = str(inner.get("name", ""))
        if not name:
            return "help"
        if name not in grouped:
            raise UnknownSubcommand(group, name, grouped)
        sub, verb = inner, commands.VERBS.get(name)
    elif sub.get("type") == SUBCOMMAND_GROUP and verb is not None and verb.subs:
        inner = _first(sub.get("options"))
        names = [s.name for s in verb.subs]
        picked = str(inner.get("name") or names[0])
        if picked not in names:
            raise UnknownSubcommand(name, picked, names)
        chosen = verb.subs[names.index(picked)]
        typed = chosen.same_as or (name if chosen is verb.subs[0] else chosen.words)
        return " ".join([typed, *_words(chosen, inner)])
    return " ".join([name, *(_words(verb, sub) if verb is not None else [])])


def focused(data: dict) -> tuple[str, str, str] | None:
    """(verb, option, what was typed) of an autocomplete interaction, in a subcommand group or not."""

    def within(sub: dict, depth: int) -> tuple[str, str, str] | None:
        for o in sub.get("options") or []:
            if not isinstance(o, dict):
                continue
            if o.get("focused"):
                return str(sub.get("name")), str(o.get("name")), str(o.get("value") or "")
            if depth and o.get("type") in (SUBCOMMAND, SUBCOMMAND_GROUP):
                found = within(o, depth - 1)
                if found is not None:
                    return found
        return None

    for sub in data.get("options") or []:
        if isinstance(sub, dict):
            found = within(sub, 1)
            if found is not None:
                return found
    return None


def as_shown(words: str) -> str:
    """A command as typed after `/paper` (`archive 7`), as Discord shows it (`manage archive 7`)."""
    verb, space, rest = words.partition(" ")
    if (group := GROUP_OF.get(verb)) is not None:
        return f"{group} {words}"
    for other in commands.VERBS.values():
        for s in other.subs:
            if s.same_as == verb:
                return s.words + space + rest
    return words


def invite_url(app_id: str) -> str:
    return (
        f"https://discord.com/oauth2/authorize?client_id={app_id}"
        f"&scope=bot+applications.commands&permissions={PERMISSIONS}"
    )
