"""What commands answer, before any platform renders it.

    Notice(text("Signed up: ", Mention("U1"), " presents ", PaperRef(paper), " on ", When(t)))

A command returns one of these; each platform's adapter draws it (a chat message, or
plain text in the console). Their text is `bot.rich_text`; the schedule's rows are
`bot.schedule.rows`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.catalog.papers import Paper
from bot.rich_text import Button, Text
from bot.schedule.history import History
from bot.schedule.rows import Question, SlotLine, TalkLinks, TalkWeek, asked


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


@dataclass
class PaperCard:
    paper: Paper
    presented: list[TalkWeek]  # meetings that are over
    coming: list[TalkWeek]  # meetings still ahead
    button: Button | None
    note: Text = ()
    votes: int = 0
    archived: bool = False
    #: The links (slides, recordings, notes) of the paper's talks, by (group id, week key).
    links: dict[tuple[int, str], tuple[str, ...]] = field(default_factory=dict)
    #: The catalog's papers closest to it, best first.
    related: list[Paper] = field(default_factory=list)

    #: The questions brought to the meetings of the paper's talks, by (group id, week key).
    questions: dict[tuple[int, str], tuple[Question, ...]] = field(default_factory=dict)

    def links_of(self, line: TalkWeek) -> tuple[str, ...]:
        """The links of the talk of `line` (one of `presented` or `coming`)."""
        return self.links.get((line.group_id, line.week.key), ()) if line.group_id is not None else ()

    def asked_of(self, line: TalkWeek) -> Text:
        """A line on the questions brought to the talk of `line`, after a line break; () when none."""
        found = self.questions.get((line.group_id, line.week.key), ()) if line.group_id is not None else ()
        return ("\n", *asked(TalkLinks(line, (), found))) if found else ()


@dataclass
class PastTalks:
    """Talks given, newest first: date, paper, presenter, links."""

    talks: list[TalkLinks]
    pager: list[Button] = field(default_factory=list)
    footer: Text = ()


@dataclass
class Stats:
    """The group's history: in words (`summary`), and as numbers for a platform that draws the picture."""

    summary: Text
    history: History
    #: Where the bot serves the picture (PAPERBOT_PUBLIC_URL), for a platform that shows one by address.
    image_url: str | None = None


@dataclass
class WeekCard:
    line: SlotLine
    featured: bool  # paper comes from the rotation (nobody chose it)
    posted: bool
    button: Button | None = None
    note: Text = ()
    #: While nobody presents: the rotation's paper of the week, and whether it was archived since.
    rotation: Paper | None = None
    rotation_archived: bool = False

    @property
    def paper(self) -> Paper | None:
        """The week's paper: its talk's, or while nobody presents, the rotation's."""
        return self.line.paper if isinstance(self.line, TalkWeek) else self.rotation

    @property
    def archived(self) -> bool:
        return self.line.archived if isinstance(self.line, TalkWeek) else self.rotation_archived

    @property
    def presenter(self) -> str | None:
        return self.line.presenter if isinstance(self.line, TalkWeek) else None


@dataclass
class Schedule:
    heading: Text
    lines: list[SlotLine]
    footer: Text = ()


@dataclass
class Mine:
    member: str
    upcoming: list[TalkWeek]
    past: list[TalkWeek]


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
    when the look-up returns (paper_commands.fill_add_form). `again`: the command that opens this form
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
class Home:
    """The App Home tab: coming weeks, your slots, papers waiting for a presenter."""

    member: str
    coming: list[SlotLine]
    mine: list[TalkWeek]
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
    | Stats
)
