"""The schedule's rows, as the core hands them to every renderer: a week of the schedule
(`SlotLine`: a talk, an open week, a skipped week or a run of booked ones) and its wording,
a talk and its links, the weekly post and a presenter's reminder."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar, Literal

from bot.calendar import Week
from bot.catalog.papers import Paper
from bot.rich_text import (
    SEP,
    Bold,
    Button,
    ChannelRef,
    Italic,
    Mention,
    PaperRef,
    Segment,
    Text,
    When,
    command_code,
    text,
)

#: What a week of the schedule holds: each line's `state`, as announcements keep it.
SlotState = Literal["presenter", "open", "skipped", "booked"]


@dataclass(frozen=True)
class TalkWeek:
    """A week with its presenter and their paper (None: the paper was deleted since)."""

    week: Week
    meeting: datetime
    paper: Paper | None
    presenter: str
    #: The paper was archived after the talk was booked: the talk stands, and says so.
    archived: bool = False
    #: The group's channel, when the line is one of several groups' (`mine`, `show`).
    channel: str | None = None
    #: The group's id, when the line is one of several groups' (`mine`, `show`).
    group_id: int | None = None
    state: ClassVar[SlotState] = "presenter"


@dataclass(frozen=True)
class OpenWeek:
    """A week with a meeting and nobody presenting yet."""

    week: Week
    meeting: datetime
    state: ClassVar[SlotState] = "open"


@dataclass(frozen=True)
class SkippedWeek:
    """A week without a meeting."""

    week: Week
    meeting: datetime
    state: ClassVar[SlotState] = "skipped"


@dataclass(frozen=True)
class BookedWeeks:
    """`weeks` weeks with presenters, from this one, not listed one by one."""

    week: Week
    meeting: datetime
    weeks: int
    state: ClassVar[SlotState] = "booked"


#: One week of the schedule (or a run of booked ones): what happens, and who presents.
SlotLine = TalkWeek | OpenWeek | SkippedWeek | BookedWeeks


def slot_text(line: SlotLine) -> Text:
    """A line of the schedule as every platform words it: its date, then what happens that week."""
    day = Bold(When(line.meeting))
    if isinstance(line, SkippedWeek):
        return text(day, SEP, Italic("no meeting"))
    if isinstance(line, OpenWeek):
        return text(day, SEP, Italic("open"))
    if isinstance(line, BookedWeeks):
        return text(day, SEP, Italic(f"{line.weeks} more week{'s' if line.weeks != 1 else ''} booked"))
    archived = (" ", Italic("(archived)")) if line.archived else ()
    return text(day, SEP, talk_paper(line, brief=True), *archived, SEP, Mention(line.presenter), *_where(line))


def talk_paper(line: TalkWeek, *, brief: bool = False) -> Segment:
    """The paper of a talk, or what stands for one deleted since."""
    return PaperRef(line.paper, brief) if line.paper else Italic("a removed paper")


def talk_text(line: TalkWeek) -> Text:
    """A talk on its paper's own card: when, who, and where when the card spans several groups."""
    return text(Bold(When(line.meeting)), SEP, Mention(line.presenter), *_where(line))


def _where(line: TalkWeek) -> Text:
    return (SEP, "in ", ChannelRef(line.channel)) if line.channel else ()


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


@dataclass(frozen=True)
class Question:
    """A question a member brings to a meeting (bot/schedule/questions.py)."""

    id: int
    week: Week
    asked_by: str
    text: str
    asked_at: datetime  # UTC
    #: Its place among its meeting's questions, from 1 (`questions remove <n>`).
    number: int


@dataclass(frozen=True)
class TalkLinks:
    """A talk (a week with a presenter) and its links, and the questions brought to its meeting."""

    line: TalkWeek
    links: tuple[str, ...] = ()
    questions: tuple[Question, ...] = ()
    #: How many went (said going, or were Interested on Discord); None where it is not told.
    going: int | None = None


def asked(talk: TalkLinks, shown: int = 3, limit: int = 80) -> Text:
    """The questions brought to a talk's meeting, for a line under it: how many, and the first few."""
    n = len(talk.questions)
    if not n:
        return ()
    out: list[Segment] = [f"❓ {n} question{'s' if n != 1 else ''}: "]
    for i, q in enumerate(talk.questions[:shown]):
        said = q.text if len(q.text) <= limit else q.text[: limit - 1] + "…"
        out += ["; " if i else "", said, " (", Mention(q.asked_by), ")"]
    if n > shown:
        out.append(f"; and {n - shown} more")
    return text(*out)


def given_text(talk: TalkLinks) -> Text:
    """A talk given, as `past` lists it: its line of the schedule, and how many went when any did."""
    went = (SEP, f"{talk.going} going") if talk.going else ()
    return text(*slot_text(talk.line), *went)


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
    #: The group's name (None: it has none, and the post names no group).
    group_name: str | None = None
    #: How many go to the meeting (see attendance.count), and how many questions it has.
    going: int = 0
    questions: int = 0

    @property
    def attendance_buttons(self) -> list[Button]:
        """Going and Can't go, for the post's meeting (none once it is skipped)."""
        if self.skipped:
            return []
        day = self.meeting.date().isoformat()
        return [Button("Going", f"going {day}"), Button("Can't go", f"cantgo {day}")]

    def counts(self) -> Text:
        """The post's line of how many go and how many questions the meeting has."""
        asked = f"{self.questions} question{'s' if self.questions != 1 else ''}"
        return text("👥 ", Bold(str(self.going)), " going · ", asked)

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
    #: The group's name (None: it has none): a member of several groups knows which one.
    group_name: str | None = None
    #: The questions members brought to the meeting so far, oldest first.
    questions: tuple[Question, ...] = ()
