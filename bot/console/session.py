"""The /paper commands in a terminal: one command a line, each reply as readable text.

    $ printf 'tag parallelism-dp\\nshow 7\\n' | paperbot console

The console is a platform of its own: the same database and command layer as the chat
adapters, its own way of naming a member (`@ada` or `ada`), and its own rendering.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import sys
from collections.abc import Callable
from typing import TextIO

from bot.chat import commands
from bot.chat.context import Context, Platform
from bot.console.render import inline, render
from bot.intake import lookup
from bot.rich_text import COMMAND, Text
from bot.schedule import groups

log = logging.getLogger(__name__)


#: A chat's mention pasted into the terminal (`<@U0ADA123|ada>`, `<@U0ADA123>`): its member's id.
_PASTED_MENTION = re.compile(r"<@([A-Za-z0-9._-]{1,80})(?:\|[^>]*)?>")


def read_member(word: str) -> str | None:
    """`@ada`, `ada`, or a mention pasted from the chat: the member's id (a terminal has no mentions
    of its own, and an operator books members by the id the chat knows them by)."""
    pasted = _PASTED_MENTION.fullmatch(word)
    name = pasted[1] if pasted else word.removeprefix("@")
    return name if re.fullmatch(r"[A-Za-z0-9._-]{1,80}", name) else None


PLATFORM = Platform(read_member, member_example="ada", forms=False, in_channel="paperbot console --channel {channel}")


def _acted_on(context: Context, line: str) -> groups.Group | None:
    """The group a command typed here acted on: its channel's (`--channel`), or for a command of a
    group typed elsewhere the only group that posts; None when no one group is it."""
    here = groups.of_channel(context.store, context.env_group, context.where)
    if here is not None or context.where is not None:
        return here
    if not commands.acts_on_a_group(line):
        return None
    try:
        return groups.where(context.store, context.env_group, None)
    except groups.NoGroupHere:
        return None


def _keeping_in(told: list[str]) -> Callable[[str, Text], None]:
    """The context's `tell`: what a member is told later (a suggestion's outcome) kept in `told`."""

    def tell(member: str, said: Text) -> None:
        told.append(f"  (to @{member}: {inline(said)})")

    return tell


def serve(
    make_context: Callable[[], Context],
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
    platform: str | None = None,
) -> int:
    """Read commands until EOF; print each reply, and what the channel would be told.

    `platform` (`slack`, `discord`) is kept with a group started here: the one its channel's id
    is of. A command that fails says so in one line and the session goes on, as in a chat.
    """
    console = dataclasses.replace(PLATFORM, name=platform)
    if hasattr(stdin, "reconfigure"):
        stdin.reconfigure(errors="replace")  # bytes that are not UTF-8 become U+FFFD, not a crash
    interactive = stdin.isatty()
    if interactive:
        print(f"paperbot console: type {COMMAND} commands (help lists them), Ctrl-D to quit.", file=stdout)
    while True:
        if interactive:
            stdout.write(f"{COMMAND}> ")
            stdout.flush()
        line = stdin.readline()
        if not line:
            if interactive:
                stdout.write("\n")  # Ctrl-D: the shell's prompt on a line of its own
            break
        if not line.strip():
            continue
        told: list[str] = []  # what a member is told later (a suggestion's outcome): printed after the reply
        try:
            context = dataclasses.replace(
                make_context(),
                platform=console,
                lookup_wait=lookup.CONSOLE_WAIT,
                tell=_keeping_in(told),
            )
            answer = commands.run(context, line)
            shown = render(answer.reply)
        except Exception as e:
            log.exception("console command %r failed", line.strip())
            stdout.write(f"Something went wrong on my side ({e.__class__.__name__}: {e}). Other commands still work.")
            stdout.write("\n\n")
            stdout.flush()
            continue
        group = _acted_on(context, line)
        if group is not None and group.channel and context.where is None and groups.several(context.store):
            shown = f"in #{group.channel}:\n{shown}"  # several groups: say whose this was
        stdout.write(shown + "\n")
        for line_told in told:
            stdout.write(line_told + "\n")
        if answer.change is not None:
            said = inline(commands.announcement(answer.change))
            where = (
                "to the channel, sent by paperbot run"
                if group is not None and group.channel
                else "with PAPERBOT_CHANNEL set, the channel reads"
            )
            stdout.write(f"  ({where}: {said})\n")
        stdout.write("\n")
        stdout.flush()
    return 0
