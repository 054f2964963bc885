"""Rich text, before any platform draws it: a tuple of segments, so that a renderer can escape
what a member wrote (titles, summaries, tags) and still draw mentions, dates in each reader's own
zone, code spans and buttons of its own.

    text("Signed up: ", Mention("U1"), " presents ", PaperRef(paper), " on ", When(t))
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.catalog.papers import Paper

#: The command people type, in every platform's help, hint and reply.
COMMAND = "/paper"


@dataclass(frozen=True)
class Mention:
    user: str


@dataclass(frozen=True)
class When:
    """A moment, shown in the reader's own zone where the platform can."""

    moment: datetime
    with_time: bool = True


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Bold:
    """Words, or a moment (a schedule line's date), in bold where the platform can."""

    text: str | When


@dataclass(frozen=True)
class Italic:
    """Words about a line rather than of it (open, archived), in italics where the platform can."""

    text: str


@dataclass(frozen=True)
class Sep:
    """Between the parts of one line (a date, a paper, a presenter): each platform's own mark."""


SEP = Sep()


@dataclass(frozen=True)
class PaperRef:
    """`#7 Title`, linked when the paper has a url; `brief` in a line of a list, where a platform
    that cuts titles cuts them shorter."""

    paper: Paper
    brief: bool = False


@dataclass(frozen=True)
class ChannelRef:
    """A group's channel, by the platform's id: drawn as a link to it where the platform can."""

    channel: str


def command_code(words: str) -> Code:
    """`/paper <words>` as a code span: a command to type."""
    return Code(f"{COMMAND} {words}")


Segment = str | Mention | When | Code | Bold | Italic | Sep | PaperRef | ChannelRef


Text = tuple[Segment, ...]


def text(*segments: Segment) -> Text:
    return tuple(s for s in segments if s != "")


@dataclass(frozen=True)
class Button:
    """A button runs a /paper command as the person who clicks it."""

    label: str
    command: str
    primary: bool = False
