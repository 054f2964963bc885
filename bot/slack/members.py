"""How a member is written in a Slack command, and how much one Slack reply holds."""

from __future__ import annotations

import re

from bot.chat.context import Platform
from bot.slack import blocks

#: A member in a command, as listeners.commands.from_slack leaves a mention: `@U012AB`, or
#: U012AB or <@U012AB> as typed.
_MEMBER = re.compile(r"^<?@?([UW][A-Z0-9]+)(?:\|[^>]*)?>?$")


def read_member(word: str) -> str | None:
    """The user ID a word of a command names, or None."""
    m = _MEMBER.match(word)
    return m[1] if m else None


#: How commands read a member on Slack, and how much one of its messages holds.
PLATFORM = Platform(
    read_member, member_example="U012ABCDEF", tags_page=blocks.TAGS_PAGE, papers_page=blocks.PAPERS_PAGE, name="slack"
)
