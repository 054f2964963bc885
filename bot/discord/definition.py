"""`/paper` as a Discord command: one subcommand per verb with its options, registered at start.

Discord allows 25 subcommands a command: `group` and `manage` are subcommand groups holding the
verbs added later, and a definition over the limit raises TooManySubcommands (at start, and in tests).

definition()                         # the bulk-overwrite body: [{"name": "paper", ...}]
line_of(interaction["data"])         # "assign <@1300…> 7 next": the core's command text
invite_url(app_id)                   # the invite with the permissions the bot needs
"""

from __future__ import annotations

from bot.chat import commands
from bot.rich_text import Code, text

STRING, USER = 3, 6
SUBCOMMAND, SUBCOMMAND_GROUP = 1, 2

#: `group` is a subcommand group (Discord allows 25 entries a command): its subcommands, each the
#: core's text after `/paper`, with their options; `group list` is `groups`.
GROUP_SUBCOMMANDS: dict[str, tuple[str, str, list[tuple[str, int, str, bool, bool]]]] = {
    "show": ("group", "this channel's reading group and its settings", []),
    "start": ("group start", "admins: make this channel a reading group", []),
    "set": (
        "group set",
        "admins: change one of the group's settings",
        [
            ("setting", STRING, "timezone, schedule, meeting, remind-days, focus-tag, admins, …", True, False),
            ("value", STRING, "its new value, e.g. Europe/Berlin or thu 16:00", True, False),
        ],
    ),
    "stop": ("group stop", "admins: no more posts or reminders in this channel", []),
    "list": ("groups", "every reading group of the install", []),
}
#: `manage` is a subcommand group of the admins' verbs on one paper, each read back as the verb itself
#: (`manage archive paper:7` is `archive 7`); it stands where the first of them is in COMMANDS.
MANAGE = ("edit", "archive", "restore", "delete")
#: Verbs that are subcommands of a subcommand group (`group`, `manage`), not subcommands of their own.
IN_GROUP = {"groups", *MANAGE}

#: Each verb's options, in the order the core reads them: (name, type, description, required, autocomplete).
OPTIONS: dict[str, list[tuple[str, int, str, bool, bool]]] = {
    "help": [],
    "tags": [],
    "tag": [("tag", STRING, "a tag, such as parallelism-dp", True, True)],
    "search": [("words", STRING, "words of a title, summary or tag", True, False)],
    "show": [("paper", STRING, "a paper: its number, id or title", True, True)],
    "week": [],
    "schedule": [],
    "signup": [
        ("paper", STRING, "the paper you present", True, True),
        ("date", STRING, "YYYY-MM-DD or next (default: the first open week)", False, False),
    ],
    "withdraw": [("slot", STRING, "the paper or the date of your slot", True, False)],
    "mine": [],
    "assign": [
        ("user", USER, "who presents", True, False),
        ("paper", STRING, "the paper they present", True, True),
        ("date", STRING, "YYYY-MM-DD or next (default: the first open week)", False, False),
    ],
    "unassign": [("date", STRING, "the week's date: YYYY-MM-DD or next", True, False)],
    "skip": [("date", STRING, "the week's date: YYYY-MM-DD or next", True, False)],
    "vote": [("paper", STRING, "the paper you want read (again: take your vote back)", True, True)],
    "archive": [("paper", STRING, "the paper to take out of lists, search and the rotation", True, True)],
    "restore": [("paper", STRING, "the archived paper to bring back", True, True)],
    "edit": [("paper", STRING, "the paper to edit (or: <paper> <field> <value>, e.g. 7 year 2024)", True, True)],
    "delete": [("paper", STRING, "the paper to delete: only one nothing refers to", True, True)],
    "slides": [
        ("talk", STRING, "the paper (its latest talk) or the talk's date", True, False),
        ("url", STRING, "a link to the slides, a recording or notes (or: remove <link>)", True, False),
    ],
    "past": [],
    "add": [
        ("link", STRING, "an arXiv id, DOI or link, to fill the form in (none: the empty form)", False, False),
        ("tags", STRING, "tags for it, separated by commas (default: proposed from the catalog's)", False, False),
    ],
    "suggest": [("link", STRING, "the paper's arXiv id, DOI or link", True, False)],
}

#: View Channel, Send Messages, Embed Links, Read Message History: what the weekly post, the
#: announcements and finding the post again after a crash need; nothing else.
PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 14) | (1 << 16)


class TooManySubcommands(ValueError):
    """The verbs of COMMANDS do not fit in `/paper`: a new verb must go into a subcommand group."""


def _option(name: str, kind: int, about: str, required: bool, auto: bool) -> dict:
    return {
        "name": name,
        "type": kind,
        "description": about,
        "required": required,
        **({"autocomplete": True} if auto else {}),
    }


def _group_definition() -> dict:
    subs = [
        {"name": name, "type": SUBCOMMAND, "description": about, "options": [_option(*o) for o in options]}
        for name, (_, about, options) in GROUP_SUBCOMMANDS.items()
    ]
    return {"name": "group", "type": SUBCOMMAND_GROUP, "description": "this channel's reading group", "options": subs}


def _verb_definition(c: commands.Command) -> dict:
    about = c.summary + (" (admins)" if c.admin else "")
    return {
        "name": c.name,
        "type": SUBCOMMAND,
        "description": about[:100],
        "options": [_option(*o) for o in options_of(c)],
    }


def _manage_definition() -> dict:
    subs = [_verb_definition(commands.BY_NAME[name]) for name in MANAGE if name in commands.BY_NAME]
    return {
        "name": "manage",
        "type": SUBCOMMAND_GROUP,
        "description": "admins: edit, archive, restore or delete a paper",
        "options": subs,
    }


def definition() -> list[dict]:
    subs = []
    for c in commands.COMMANDS:
        if c.name == "group":
            subs.append(_group_definition())
        elif c.name in MANAGE:
            if not any(s["name"] == "manage" for s in subs):
                subs.append(_manage_definition())
        elif c.name not in IN_GROUP:
            subs.append(_verb_definition(c))
    # Cut at 25, the verbs past the limit would be missing from Discord without a word: refuse instead.
    if len(subs) > MAX_SUBCOMMANDS:
        over = ", ".join(s["name"] for s in subs[MAX_SUBCOMMANDS:])
        raise TooManySubcommands(
            f"/paper would have {len(subs)} subcommands, Discord allows {MAX_SUBCOMMANDS}: "
            f"put {over} into a subcommand group (bot/discord/definition.py, MANAGE)"
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


def options_of(command: commands.Command) -> list[tuple[str, int, str, bool, bool]]:
    """A verb's options: as OPTIONS says, or for a verb of the core not described there yet, one
    optional string with the rest of the command line, so that every verb can be run."""
    if command.name in OPTIONS:
        return OPTIONS[command.name]
    if not command.args:
        return []
    return [("args", STRING, f"{command.args}, e.g. {command.example}"[:100], False, False)]


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


def line_of(data: dict) -> str:
    """The core's command text for a `/paper` interaction's data; UnknownSubcommand for a subcommand
    group's subcommand that it does not have."""
    sub = _first(data.get("options"))
    if not sub:
        return "help"
    verb = str(sub.get("name", "help"))
    if sub.get("type") == SUBCOMMAND_GROUP and verb == "manage":
        inner = _first(sub.get("options"))
        verb = str(inner.get("name", ""))
        if not verb:
            return "help"
        if verb not in MANAGE:
            raise UnknownSubcommand("manage", verb, MANAGE)
        sub = inner
    elif sub.get("type") == SUBCOMMAND_GROUP:
        inner = _first(sub.get("options"))
        name = str(inner.get("name") or "show")
        if name not in GROUP_SUBCOMMANDS:
            raise UnknownSubcommand(verb, name, GROUP_SUBCOMMANDS)
        text, _, options = GROUP_SUBCOMMANDS[name]
        given = _given(inner)
        values = [" ".join(str(given[o[0]]).split()) for o in options if given.get(o[0]) not in (None, "")]
        return " ".join([text, *values])
    given = _given(sub)
    words = [verb]
    command = commands.BY_NAME.get(verb)
    for name, kind, *_ in options_of(command) if command is not None else []:
        value = given.get(name)
        if value is None or value == "":
            continue
        value = " ".join(str(value).split())
        words.append(f"<@{value}>" if kind == USER else value)
    return " ".join(words)


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
    if verb in MANAGE:
        return f"manage {words}"
    if verb == "groups":
        return "group list" + space + rest
    return words


def invite_url(app_id: str) -> str:
    return (
        f"https://discord.com/oauth2/authorize?client_id={app_id}"
        f"&scope=bot+applications.commands&permissions={PERMISSIONS}"
    )
