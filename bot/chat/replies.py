"""What commands answer, before any platform renders it.

    Notice(text("Signed up: ", Mention("U1"), " presents ", PaperRef(paper), " on ", When(t)))

A command returns one of these; each platform's adapter draws it (a chat message, or
plain text in the console). Text is a tuple of segments, so a renderer can
escape what a user wrote (titles, summaries, tags) and still draw mentions,
dates in each reader's own zone, and code spans of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from bot.calendar import Week
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
    text: str


@dataclass(frozen=True)
class PaperRef:
    """`#7 Title`, linked when the paper has a url."""

    paper: Paper


@dataclass(frozen=True)
class ChannelRef:
    """A group's channel, by the platform's id: drawn as a link to it where the platform can."""

    channel: str


def command_code(words: str) -> Code:
    """`/paper <words>` as a code span: a command to type."""
    return Code(f"{COMMAND} {words}")


Segment = str | Mention | When | Code | Bold | PaperRef | ChannelRef
Text = tuple[Segment, ...]


def text(*segments: Segment) -> Text:
    return tuple(s for s in segments if s != "")


@dataclass(frozen=True)
class Button:
    """A button runs a /paper command as the person who clicks it."""

    label: str
    command: str
    primary: bool = False


@dataclass
class Notice:
    """A short answer: a confirmation, or why nothing changed and what to do instead."""

    text: Text
    ok: bool = True
    buttons: list[Button] = field(default_factory=list)


@dataclass
class PaperEntry:
    paper: Paper
    button: Button | None = None


@dataclass
class PaperList:
    """A page of papers, each shown as its number, title, id and summary line."""

    heading: Text
    papers: list[Paper]
    footer: Text = ()
    pager: list[Button] = field(default_factory=list)
    #: Votes of the papers that have any, by number (shown beside them only then: lists stay compact).
    votes: dict[int, int] = field(default_factory=dict)


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


@dataclass
class PaperCard:
    paper: Paper
    presented: list[SlotLine]  # meetings that are over
    coming: list[SlotLine]  # meetings still ahead
    button: Button | None
    note: Text = ()
    votes: int = 0
    archived: bool = False
    #: The links (slides, recordings, notes) of the paper's talks, by (group id, week key).
    links: dict[tuple[int, str], tuple[str, ...]] = field(default_factory=dict)

    def links_of(self, line: SlotLine) -> tuple[str, ...]:
        """The links of the talk of `line` (one of `presented` or `coming`)."""
        return self.links.get((line.group_id, line.week.key), ()) if line.group_id is not None else ()


@dataclass(frozen=True)
class TalkLinks:
    """A talk (a week with a presenter) and its links."""

    line: SlotLine
    links: tuple[str, ...] = ()


@dataclass
class PastTalks:
    """Talks given, newest first: date, paper, presenter, links."""

    talks: list[TalkLinks]
    pager: list[Button] = field(default_factory=list)
    footer: Text = ()


@dataclass
class WeekCard:
    line: SlotLine
    featured: bool  # paper comes from the rotation (nobody chose it)
    posted: bool
    button: Button | None = None
    note: Text = ()


@dataclass
class Schedule:
    heading: Text
    lines: list[SlotLine]
    footer: Text = ()


@dataclass
class Mine:
    member: str
    upcoming: list[SlotLine]
    past: list[SlotLine]


@dataclass
class TagCounts:
    counts: list[tuple[str, int]]  # this page's
    total: int = 0  # tags in all
    first: int = 0  # index of the page's first tag
    pager: list[Button] = field(default_factory=list)


@dataclass
class HelpLine:
    usage: str
    summary: str
    example: str
    admin: bool


@dataclass
class Help:
    lines: list[HelpLine]
    intro: Text = ()


@dataclass
class AddForm:
    """Ask for a new paper's fields (a form, where the platform has them), filled in with `fields`
    when a look-up gave them (title, authors, year, url, summary, tags).

    `lookup`: a link still to be looked up; the adapter opens or answers at once and fills the form in
    when the look-up returns (commands.fill_add_form). `again`: the command that opens this form
    again (a button, where a form cannot be the answer). `note`: one line above the form.
    """

    fields: dict | None = None
    lookup: str | None = None
    tags: tuple[str, ...] = ()
    again: str = "add"
    note: Text = ()


@dataclass
class EditForm:
    """The add form, filled in with a paper as it is, to change it (admins)."""

    paper: Paper


@dataclass
class SuggestionLine:
    number: int
    title: str
    byline: str
    url: str
    by: str  # the member who suggested it
    buttons: list[Button] = field(default_factory=list)


@dataclass
class SuggestionList:
    """The open suggestions, each with Accept and Decline buttons."""

    heading: Text
    lines: list[SuggestionLine]
    footer: Text = ()


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


@dataclass
class Home:
    """The App Home tab: coming weeks, your slots, papers waiting for a presenter."""

    member: str
    coming: list[SlotLine]
    mine: list[SlotLine]
    waiting: list[PaperEntry]
    notice: Notice | None = None
    #: The latest talks given that have links.
    recent: list[TalkLinks] = field(default_factory=list)


Reply = (
    Notice
    | PaperList
    | PaperCard
    | WeekCard
    | Schedule
    | Mine
    | TagCounts
    | Help
    | AddForm
    | EditForm
    | SuggestionList
    | PastTalks
)
