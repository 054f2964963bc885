"""`/paper` as a Discord command: one subcommand per verb with its options, registered at start.

definition()                         # the bulk-overwrite body: [{"name": "paper", ...}]
line_of(interaction["data"])         # "assign <@1300…> 7 next": the core's command text
invite_url(app_id)                   # the invite with the permissions the bot needs
"""

from __future__ import annotations

from bot import commands

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
#: Verbs that are subcommands of the `group` subcommand group, not subcommands of their own.
IN_GROUP = {"groups"}

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
    "add": [],
}

#: View Channel, Send Messages, Embed Links, Read Message History: what the weekly post, the
#: announcements and finding the post again after a crash need; nothing else.
PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 14) | (1 << 16)


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


def definition() -> list[dict]:
    subs = []
    for c in [c for c in commands.COMMANDS if c.name not in IN_GROUP][:MAX_SUBCOMMANDS]:
        if c.name == "group":
            subs.append(_group_definition())
            continue
        options = [
            {
                "name": name,
                "type": kind,
                "description": about,
                "required": required,
                **({"autocomplete": True} if auto else {}),
            }
            for name, kind, about, required, auto in options_of(c)
        ]
        about = c.summary + (" (admins)" if c.admin else "")
        subs.append({"name": c.name, "type": SUBCOMMAND, "description": about[:100], "options": options})
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


def line_of(data: dict) -> str:
    """The core's command text for a `/paper` interaction's data."""
    subs = data.get("options") or []
    if not subs or not isinstance(subs[0], dict):
        return "help"
    sub = subs[0]
    verb = str(sub.get("name", "help"))
    if sub.get("type") == SUBCOMMAND_GROUP:
        inner = (sub.get("options") or [{}])[0]
        name = str(inner.get("name", "show")) if isinstance(inner, dict) else "show"
        text, _, options = GROUP_SUBCOMMANDS.get(name, GROUP_SUBCOMMANDS["show"])
        given = {o.get("name"): o.get("value") for o in inner.get("options") or [] if isinstance(o, dict)}
        values = [" ".join(str(given[o[0]]).split()) for o in options if given.get(o[0]) not in (None, "")]
        return " ".join([text, *values])
    given = {o.get("name"): o.get("value") for o in sub.get("options") or [] if isinstance(o, dict)}
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
    """(verb, option, what was typed) of an autocomplete interaction."""
    for sub in data.get("options") or []:
        for o in sub.get("options") or []:
            if isinstance(o, dict) and o.get("focused"):
                return str(sub.get("name")), str(o.get("name")), str(o.get("value") or "")
    return None


def invite_url(app_id: str) -> str:
    return (
        f"https://discord.com/oauth2/authorize?client_id={app_id}"
        f"&scope=bot+applications.commands&permissions={PERMISSIONS}"
    )
