"""The schedule's rows, as the core hands them to every renderer: a week of the schedule
(`SlotLine`), a talk and its links, the weekly post and a presenter's reminder."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from bot.calendar import Week
from bot.catalog.papers import Paper
from bot.rich_text import Button, Mention, Text, When, command_code, text

#: What a week of the schedule holds.
SlotState = Literal["presenter", "open", "skipped", "booked"]


@dataclass
class SlotLine:
    """One week of the schedule: what happens and who presents."""

    week: Week
    meeting: datetime
    #: 'booked': `weeks` weeks with presenters, from this one, not listed one by one.
    state: SlotState
    paper: Paper | None = None
    presenter: str | None = None
    weeks: int = 1
    #: The paper was archived after the talk was booked: the talk stands, and says so.
    archived: bool = False
    #: The group's channel, when the line is one of several groups' (`mine`, `show`).
    channel: str | None = None
    #: The group's id, when the line is one of several groups' (`mine`, `show`).
    group_id: int | None = None


def by_month(lines: list[SlotLine]) -> Iterator[tuple[str | None, SlotLine]]:
    """Each line, with its month's name ("January 2027") where a new month begins: a schedule that
    leaves weeks out still shows where each month starts."""
    last = None
    for line in lines:
        month = f"{MONTHS[line.meeting.month - 1]} {line.meeting.year}"
        yield (month if month != last else None), line
        last = month


MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


def booked(line: SlotLine) -> str:
    """What a 'booked' line says after its date."""
    return f"{line.weeks} more week{'s' if line.weeks != 1 else ''} booked"


@dataclass(frozen=True)
class TalkLinks:
    """A talk (a week with a presenter) and its links."""

    line: SlotLine
    links: tuple[str, ...] = ()


@dataclass
class WeeklyPost:
    """The paper of the week as it is posted to the group's channel."""

    week: Week
    paper: Paper
    meeting: datetime
    presenter: str | None
    skipped: bool = False
    ahead: bool = True  # the meeting was still ahead when the post was planned
    #: (presenter, meeting) of the paper in another week, the latest: a sign-up for it could only be
    #: refused. The presenter is None when that meeting was over when the post was planned.
    elsewhere: tuple[str | None, datetime] | None = None
    #: The paper was archived after its talk was booked.
    archived: bool = False
    #: Last week's talk, when it has links: the post mentions them.
    last_week: TalkLinks | None = None

    @property
    def signup_button(self) -> Button | None:
        """While nobody presents: sign up for this week's meeting, or once it has begun (with the
        default PAPERBOT_MEETING, the post's own time) for the first open meeting still ahead. None
        when the paper has its presenter in another week."""
        if self.presenter or self.skipped or self.elsewhere:
            return None
        week = f" {self.week.monday.isoformat()}" if self.ahead else ""
        return Button("Sign up to present", f"signup {self.paper.number}{week}", primary=True)

    @property
    def nobody(self) -> str:
        """What the post says while nobody presents."""
        return (
            "Nobody presents yet: want to?"
            if self.ahead
            else "Nobody presents it this week: present it at a coming meeting?"
        )

    def elsewhere_note(self) -> Text:
        """What a post that nobody presents says instead of a sign-up button when its paper has its
        presenter in another week."""
        if self.elsewhere is None:
            return ()
        presenter, meeting = self.elsewhere
        if presenter is not None:
            return text(Mention(presenter), " presents it on ", When(meeting), ".")
        # No mention: a new post would ping the past presenter about a talk long given.
        show = command_code(f"show {self.paper.number}")
        return text("Presented on ", When(meeting, with_time=False), " (", show, ").")


@dataclass
class Reminder:
    week: Week
    paper: Paper
    meeting: datetime
    presenter: str
