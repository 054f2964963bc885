"""The /paper commands: text in, a reply out, the same on every platform and in the console.

    answer = commands.run(ctx, "tag Parallelism_DP")
    answer.reply          # a bot.chat.replies value, for a renderer
    answer.change         # a schedule change to announce to the group, or None

`COMMANDS` is the one list of commands: help, README, the manifest's usage hint
and their tests all read it.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from bot.announcing import changes as announce
from bot.calendar import BadDate, MeetingCalendar
from bot.catalog import queries as catalog
from bot.catalog import refs as paper_refs
from bot.catalog import search_terms, votes
from bot.catalog.queries import PAGE_SIZE
from bot.chat import addresses
from bot.chat.replies import (
    AddForm,
    EditForm,
    Help,
    HelpLine,
    Home,
    Mine,
    Notice,
    PaperCard,
    PaperEntry,
    PaperList,
    PastTalks,
    Reply,
    Schedule,
    SuggestionLine,
    SuggestionList,
    TagCounts,
    WeekCard,
)
from bot.intake import links as paper_links
from bot.intake import lookup, suggestions
from bot.intake.lookup import LookupFailed, Lookups
from bot.rich_text import COMMAND, Bold, Button, ChannelRef, Code, Mention, PaperRef, Text, When, command_code, text
from bot.schedule import groups, signups, slots, talks, weekly
from bot.schedule.signups import Change, Member, Refusal
from bot.settings import SettingError
from bot.store.connection import Busy, DiskFull, Store


@dataclass(frozen=True)
class Platform:
    """What the commands need to know of the platform they answer on: how it writes a member in a
    command, and how much one reply may hold. Each adapter makes its own."""

    #: The member a word names (`@ada`, a pasted mention): their id, or None when it names none.
    read_member: Callable[[str], str | None]
    #: A member's id as the platform shows one, for the hint when no member was named.
    member_example: str = "ada"
    #: Tags one reply lists.
    tags_page: int = 500
    #: Papers one list reply holds (`tag`, `search`).
    papers_page: int = PAGE_SIZE
    #: Has the platform forms (the add form)? Without them (the console) `add <link>` saves at once.
    forms: bool = True
    #: The adapter's name (`slack`, `discord`), kept with the groups started on it.
    name: str | None = None
    #: How to type commands in a channel, `{channel}` its id, where it is not the chat's own channel
    #: (the console's `paperbot console --channel {channel}`); None: typed in the channel itself.
    in_channel: str | None = None


def _member_id(word: str) -> str | None:
    """A member's id typed as it is: where no adapter said how its platform writes a member."""
    return word if re.fullmatch(r"[A-Za-z0-9._-]{1,80}", word) else None


#: Members named by their ids alone: the reading of a context no adapter made.
IDS_ONLY = Platform(_member_id)


@dataclass
class Context:
    """Everything a command may use: the catalog, the group's calendar, who asks, and when."""

    store: Store
    group: MeetingCalendar
    member: Member
    now: datetime
    focus_tag: str | None = None
    channel: str | None = None
    #: Called with a change to the schedule inside its transaction (signups.OnChange).
    on_change: Callable[[Change], None] | None = None
    #: Raises Refusal for a user who cannot present (a bot); the console has no such users.
    vet_presenter: Callable[[str], None] | None = None
    platform: Platform = IDS_ONLY
    #: How the paper of the week is picked when nobody chose one (PAPERBOT_ROTATION).
    rotation: str = "catalog"
    #: Where papers are looked up by link (arXiv, Crossref), and how long a look-up may hold the reply.
    lookups: Lookups | None = None
    lookup_wait: float = lookup.REPLY_WAIT
    #: Tells a member something later (a suggestion's outcome): a direct message where the platform has them.
    tell: Callable[[str, Text], None] | None = None
    #: PAPERBOT_PUBLIC_URL: where the calendars and the group's page are served (None: not served).
    public_url: str | None = None
    #: The channel the command was typed in (None: a direct message, App Home, the console).
    where: str | None = None
    #: The environment's group (group 1); None: the one `group`, `focus_tag` and `channel` make.
    env: groups.Group | None = None

    @property
    def env_group(self) -> groups.Group:
        if self.env is not None:
            return self.env
        return groups.Group(groups.ENV, self.channel, replace(self.group, group_id=groups.ENV), self.focus_tag)


@dataclass
class Answer:
    reply: Reply
    change: Change | None = None


@dataclass(frozen=True)
class Command:
    name: str
    args: str
    summary: str
    example: str
    run: Callable[[Context, str], Answer]
    admin: bool = False

    @property
    def usage(self) -> str:
        return f"{self.name} {self.args}".strip()


_PAGE = re.compile(r"\s+--page\s+(\d{1,6})\s*$")


def _paged(args: str) -> tuple[str, int]:
    m = _PAGE.search(" " + args)
    if not m:
        return args, 1
    return (" " + args)[: m.start()].strip(), max(1, int(m[1]))


def _notice(*segments, ok: bool = True, buttons=None) -> Answer:
    return Answer(Notice(text(*segments), ok=ok, buttons=buttons or []))


def _usage(name: str) -> Answer:
    cmd = BY_NAME[name]
    return _notice(
        "Usage: ", command_code(f"{cmd.usage}"), ", for example ", command_code(f"{cmd.example}"), ".", ok=False
    )


#: Lists are compact, two lines a paper; the sign-up button is on `show`, the weekly post and App Home.
LIST_FOOTER = text(
    "Sign up: ", command_code("signup <number> [<date>]"), "  ·  a paper in full: ", command_code("show <number>")
)


def _pager(command: str, page: int, has_more: bool, size: int) -> list[Button]:
    buttons = []
    if page > 1:
        buttons.append(Button(f"◀ Previous {size}", f"{command} --page {page - 1}"))
    if has_more:
        buttons.append(Button(f"Next {size} ▶", f"{command} --page {page + 1}"))
    return buttons


def _range(page: catalog.Page, size: int) -> str:
    first = (page.page - 1) * size + 1
    return f"{first}–{first + len(page.papers) - 1}"


# -- the commands --------------------------------------------------------------


def cmd_help(ctx: Context, args: str) -> Answer:
    return Answer(_help())


def _help(intro: Text = ()) -> Help:
    return Help([HelpLine(c.usage, c.summary, c.example, c.admin) for c in COMMANDS], intro)


def cmd_tags(ctx: Context, args: str) -> Answer:
    rest, page_no = _paged(args)
    if rest:
        return _takes_nothing(
            "tags", ": it lists every tag. The papers of one: ", command_code(f"tag {rest[:50]}"), "."
        )
    counts = catalog.tag_counts(ctx.store)
    size = ctx.platform.tags_page
    pages = max(1, -(-len(counts) // size))
    if page_no > pages:
        return _notice(f"There are {len(counts)} tags; there is no page {page_no}.", ok=False)
    first = (page_no - 1) * size
    pager = _pager("tags", page_no, page_no < pages, size)
    return Answer(TagCounts(counts[first : first + size], len(counts), first, pager))


def cmd_tag(ctx: Context, args: str) -> Answer:
    wanted, page_no = _paged(args)
    if not catalog.fold_tag(wanted):
        return _usage("tag")
    size = ctx.platform.papers_page
    name, page = catalog.tagged(ctx.store, wanted, page_no, size)
    if page.total == 0:
        close = catalog.closest_tags(ctx.store, name)
        hint: list = []
        if close:
            hint = [" Did you mean "]
            for i, tag in enumerate(close):
                hint += [" or " if i else "", Code(tag)]
            hint.append("?")
        return _notice("No paper is tagged ", Code(name), ".", *hint, " All tags: ", command_code("tags"), ok=False)
    if not page.papers:
        return _notice("Tag ", Code(name), f" has {page.total} papers; there is no page {page_no}.", ok=False)
    many = page.total > size
    heading = text(
        f"{page.total} paper{'s' if page.total != 1 else ''} tagged ",
        Bold(name),
        f" ({_range(page, size)})" if many else "",
    )
    pager = _pager(f"tag {name}", page.page, page.has_more, size)
    return Answer(PaperList(heading, page.papers, LIST_FOOTER, pager, _votes_of(ctx, page.papers)))


def cmd_search(ctx: Context, args: str) -> Answer:
    words, page_no = _paged(args)
    size = ctx.platform.papers_page
    page = catalog.search(ctx.store, words, page_no, size)
    shown = words.strip()[:100]
    if page is None:
        example = (command_code("search diloco"), " or ", command_code("search 数据并行"), ".")
        if shown:  # only symbols, emoji, punctuation: nothing a paper could match
            return _notice("No paper matches “", shown, "”: search looks for words, for example ", *example, ok=False)
        return _notice("Give me a word to look for, for example ", *example, ok=False)
    if not page.papers:
        if page_no > 1:
            return _notice(f"There is no page {page_no} of results for “", shown, "”.", ok=False)
        return _notice(
            "No paper matches “",
            shown,
            "”. Try fewer or shorter words, or browse ",
            command_code("tags"),
            ".",
            ok=False,
        )
    more = page.has_more or page_no > 1
    heading = text("Papers matching “", Bold(shown), "”, best first", f" ({_range(page, size)})" if more else "")
    # The pager repeats the query as typed, so that the next page reads the same; a long one only as
    # far as it was searched: the whole text would not fit in a button.
    again = " ".join(words.split())
    pager = _pager(
        f"search {again if len(again) <= 200 else search_terms.searched_words(words)}", page.page, page.has_more, size
    )
    return Answer(PaperList(heading, page.papers, LIST_FOOTER, pager, _votes_of(ctx, page.papers)))


def _votes_of(ctx: Context, papers: list[catalog.Paper]) -> dict[int, int]:
    return votes.counts(ctx.store, [p.number for p in papers])


def _mark_archived(ctx: Context, lines: list) -> list:
    """Mark the lines whose paper was archived after its talk was booked: the talk stands, and says so."""
    archived = catalog.archived_among(ctx.store, {line.paper.number for line in lines if line.paper is not None})
    for line in lines:
        line.archived = line.paper is not None and line.paper.number in archived
    return lines


def cmd_show(ctx: Context, args: str) -> Answer:
    if not args.strip():
        return _usage("show")
    paper = signups.find_paper(ctx.store, args.strip(), with_tags=True)
    history = slots.history_in(ctx.store, _calendars(ctx), paper)
    presented = [s for s in history if s.meeting <= ctx.now]
    coming = [s for s in history if s.meeting > ctx.now]
    archived = catalog.archived_at(ctx.store, paper) is not None
    button = None if history or archived else Button("Sign up to present", f"signup {paper.number}", primary=True)
    note = text("Archived: it is left out of lists, search and the rotation. ", command_code(f"restore {paper.number}"))
    return Answer(
        PaperCard(
            paper,
            presented,
            coming,
            button,
            note if archived else (),
            votes.count(ctx.store, paper),
            archived,
            talks.of_paper(ctx.store, paper),
        )
    )


def _takes_nothing(name: str, *instead) -> Answer:
    """The answer to words after a command that takes none: they would be ignored without a word."""
    return _notice(command_code(f"{name}"), " takes nothing after it", *instead, ok=False)


def cmd_week(ctx: Context, args: str) -> Answer:
    if args:
        return _takes_nothing("week", ": it shows this week. The weeks after it: ", command_code("schedule"), ".")
    week = ctx.group.week_of(ctx.now)
    line = slots.line_for(ctx.store, ctx.group, week)
    _mark_archived(ctx, [line])
    if line.state == "skipped":
        return Answer(WeekCard(line, featured=False, posted=False, note=text("No meeting this week.")))
    posted = ctx.channel is not None and weekly.posted(ctx.store, ctx.channel, week) is not None
    if line.state == "presenter":
        return Answer(WeekCard(line, featured=False, posted=posted))
    post = weekly.plan(ctx.store, ctx.group, week, ctx.focus_tag, ctx.channel, ctx.now, ctx.rotation)
    if post is None:
        if ctx.focus_tag:  # PAPERBOT_FOCUS_TAG names a tag that no paper has any more
            return _notice("No paper is tagged ", Code(ctx.focus_tag), ": there is no paper of the week yet.", ok=False)
        return _notice("The catalog is empty: there is no paper of the week yet.", ok=False)
    line.paper = post.paper
    line.archived = post.archived  # posted before it was archived: the week's paper still
    button = post.signup_button  # the post's own
    note: Text = text(post.nobody) if button else post.elsewhere_note()
    return Answer(WeekCard(line, featured=True, posted=posted, button=button, note=note))


def post_button(ctx: Context, command: str) -> str:
    """What the weekly post's button does when pressed: sign up for its week while that meeting is
    ahead, else (the post went out before the meeting began, and nothing redraws it when it does)
    for the first open week, as the post of a meeting under way offers."""
    parts = command.split()
    if len(parts) == 3 and parts[0] == "signup":
        try:
            week = ctx.group.parse_week(parts[2], ctx.now)
        except BadDate:
            return command
        if ctx.group.meeting_of(week) <= ctx.now:
            return f"signup {parts[1]}"
    return command


def cmd_schedule(ctx: Context, args: str) -> Answer:
    if args:
        return _takes_nothing("schedule", ": it lists the coming weeks, from this one.")
    lines = _mark_archived(ctx, slots.schedule(ctx.store, ctx.group, ctx.now))
    return Answer(Schedule(text("Coming weeks"), lines, text("Sign up: ", command_code("signup <paper> [<date>]"))))


def cmd_signup(ctx: Context, args: str) -> Answer:
    parts = args.split()
    if not 1 <= len(parts) <= 2:
        return _usage("signup")
    change = signups.signup(
        ctx.store, ctx.group, ctx.now, ctx.member, parts[0], parts[1] if len(parts) > 1 else None, then=ctx.on_change
    )
    line = change.line
    return Answer(
        Notice(
            text(
                "You're signed up: you present ",
                PaperRef(line.paper),
                " on ",
                When(line.meeting),
                ". Changed your mind? ",
                command_code(f"withdraw {line.meeting.date().isoformat()}"),
            )
        ),
        change,
    )


def cmd_withdraw(ctx: Context, args: str) -> Answer:
    if len(args.split()) != 1:
        return _usage("withdraw")
    change = signups.withdraw(ctx.store, ctx.group, ctx.now, ctx.member, args.strip(), then=ctx.on_change)
    before = change.before
    return Answer(
        Notice(text("You gave up ", When(before.meeting), " (", PaperRef(before.paper), "). The week is open again.")),
        change,
    )


def cmd_mine(ctx: Context, args: str) -> Answer:
    if args:
        return _takes_nothing("mine", ": it shows your own slots. Everyone's: ", command_code("schedule"), ".")
    upcoming, past = slots.mine_in(ctx.store, _calendars(ctx), ctx.now, ctx.member.id)
    return Answer(Mine(ctx.member.id, upcoming, past))


def cmd_assign(ctx: Context, args: str) -> Answer:
    signups.require_admin(ctx.member, "assign weeks")  # a member learns that first, not the syntax
    parts = args.split()
    if not 2 <= len(parts) <= 3:
        return _usage("assign")
    presenter = ctx.platform.read_member(parts[0])
    if presenter is None:
        return _notice(
            "Name the presenter first, with a mention (",
            Code("@someone"),
            ") or a user ID such as ",
            Code(ctx.platform.member_example),
            ": ",
            command_code(BY_NAME["assign"].example),
            ok=False,
        )
    if ctx.vet_presenter is not None:
        ctx.vet_presenter(presenter)
    change = signups.assign(
        ctx.store,
        ctx.group,
        ctx.now,
        ctx.member,
        presenter,
        parts[1],
        parts[2] if len(parts) > 2 else None,
        then=ctx.on_change,
    )
    line = change.line
    # Papers may repeat, but an admin who books one that is coming up already should know.
    also = [s for s in slots.history(ctx.store, ctx.group, line.paper) if s.meeting > ctx.now and s.week != line.week]
    note: list = []
    if also:
        more_weeks = f" and {len(also) - 1} more week{'s' if len(also) > 2 else ''}" if len(also) > 1 else ""
        note = [
            " It is also coming up on ",
            When(also[0].meeting),
            " (",
            Mention(also[0].presenter),
            ")",
            more_weeks,
            ".",
        ]
    return Answer(
        Notice(
            text(Mention(line.presenter), " presents ", PaperRef(line.paper), " on ", When(line.meeting), ".", *note)
        ),
        change,
    )


def cmd_unassign(ctx: Context, args: str) -> Answer:
    signups.require_admin(ctx.member, "clear weeks")
    if len(args.split()) != 1:
        return _usage("unassign")
    change = signups.unassign(ctx.store, ctx.group, ctx.now, ctx.member, args.strip(), then=ctx.on_change)
    return Answer(
        Notice(text("Cleared the week of ", When(change.line.meeting, with_time=False), ": it is open again.")), change
    )


def cmd_skip(ctx: Context, args: str) -> Answer:
    signups.require_admin(ctx.member, "skip weeks")
    if len(args.split()) != 1:
        return _usage("skip")
    change = signups.skip(ctx.store, ctx.group, ctx.now, ctx.member, args.strip(), then=ctx.on_change)
    return Answer(
        Notice(
            text("No meeting in the week of ", When(change.line.meeting, with_time=False), ": no post, no presenter.")
        ),
        change,
    )


def _require_adder(ctx: Context) -> None:
    signups.require_admin(ctx.member, "add papers", catalog=True)


def cmd_add(ctx: Context, args: str) -> Answer:
    _require_adder(ctx)
    if not args.strip():
        return Answer(AddForm())
    link, _, tag_text = args.strip().partition(" ")
    ref = paper_refs.parse(link)
    if ref is None:
        return _not_a_link("add", link, forms=ctx.platform.forms)
    try:
        tags = catalog.validate({"title": "-", "tags": tag_text}, new=True).tags or ()
    except catalog.InvalidPaper as e:
        return _notice(str(e), ". Nothing was added.", ok=False)
    already = paper_links.known(ctx.store, ref)
    if already is not None:
        return _already(already)
    again = f"add {ref.url} {','.join(tags)}".strip()
    if ctx.platform.forms:  # the adapter opens the form now and fills it in when the look-up returns
        return Answer(AddForm(lookup=ref.url, tags=tags, again=again))
    try:
        found = _lookups(ctx).fetch(ref, ctx.lookup_wait)
    except LookupFailed as failed:
        return _lookup_failed(failed, forms=False)
    fields = paper_links.fields(found, tags or paper_links.propose_tags(ctx.store, found))
    try:
        paper = add_paper(ctx, fields)
    except catalog.InvalidPaper as e:
        return _notice(str(e), ". Nothing was added.", ok=False)
    by = f", {paper.byline}" if paper.byline else ""
    tagged = f"; tags: {', '.join(paper.tags)}" if paper.tags else "; no tags"
    return _notice("Added ", PaperRef(paper), " (", Code(paper.id), f"{by}{tagged}).")


def _lookups(ctx: Context) -> Lookups:
    if ctx.lookups is None:
        ctx.lookups = Lookups()
    return ctx.lookups


#: How to add a paper by hand where there is no add form (the console, whose user runs paperbot).
BY_HAND = ("put it in a file (.bib, .csv, .yaml or .json) and run ", Code("paperbot import FILE"), ".")


def _not_a_link(verb: str, link: str, *, forms: bool = True) -> Answer:
    if verb != "add":
        then: tuple = (".",)
    elif forms:
        then = (", or the empty form: ", command_code("add"), ".")
    else:
        then = (", or ", *BY_HAND)
    why = paper_refs.problem(link)
    if why is not None:  # shaped as a DOI, but none: say what is wrong with it
        return _notice(Code(link[:80]), f" {why}", *then, ok=False)
    return _notice(
        Code(link[:80]),
        " is not an arXiv id (2501.18512), an arXiv link, a DOI (10.1145/…) or a doi.org link. For example ",
        command_code(f"{verb} 2501.18512"),
        *then,
        ok=False,
    )


def _already(paper: catalog.Paper) -> Answer:
    return _notice(
        "Already in the catalog: ",
        PaperRef(paper),
        " (",
        Code(paper.id),
        "). Nothing was added.",
        buttons=[Button("Show it", f"show {paper.number}")],
    )


def _lookup_failed(failed: LookupFailed, *, forms: bool = True) -> Answer:
    """The look-up's failure, with the empty add form to fill in by hand, or where there are no forms how else."""
    if not forms:
        return _notice(str(failed), " To add it by hand, ", *BY_HAND, ok=False)
    return _notice(str(failed), ok=False, buttons=[Button("Open the empty form", "add")])


def fill_add_form(ctx: Context, form: AddForm, wait: float = lookup.LATER_WAIT) -> AddForm | Notice:
    """The add form of `add <link>` filled in from the look-up (adapters call this once the form is
    open or the answer deferred), or a one-line Notice: the look-up failed (with the empty form on a
    button), or the catalog has the paper already."""
    assert form.lookup is not None
    ref = paper_refs.parse(form.lookup)
    assert ref is not None
    try:
        found = _lookups(ctx).fetch(ref, wait)
    except LookupFailed as failed:
        return _lookup_failed(failed).reply
    already = paper_links.known(ctx.store, ref, url=found.url, doi=found.doi)
    if already is not None:
        return _already(already).reply
    fields = paper_links.fields(found, form.tags or paper_links.propose_tags(ctx.store, found))
    note = text(f"Looked up at {found.source}: check it, then add it.")
    return AddForm(fields=fields, again=form.again, note=note)


def add_paper(ctx: Context, fields: dict) -> catalog.Paper:
    """The add form, filled in: admins only. Raises Refusal, or InvalidPaper naming the bad field."""
    _require_adder(ctx)
    paper = catalog.validate(fields, new=True)
    already = paper_links.known(ctx.store, url=paper.url or "", doi=paper.doi)
    if already is not None:
        raise catalog.InvalidPaper("url", f"#{already.number} {already.title[:80]} is this paper already")
    return catalog.add(ctx.store, paper)


def _suggestion_checked(ctx: Context, args: str) -> Answer | paper_refs.Ref:
    """What `suggest` answers without a look-up (usage, not a link, known already), else the paper's reference."""
    link = args.strip()
    if not link or " " in link:
        return _usage("suggest")
    ref = paper_refs.parse(link)
    if ref is None:
        return _not_a_link("suggest", link)
    already = paper_links.known(ctx.store, ref)
    if already is not None:
        return _notice("The catalog has it already: ", PaperRef(already), ". Nothing was suggested.")
    keys = (ref.key, None) if ref.kind == "arxiv" else (None, ref.key)
    waiting = suggestions.same(ctx.store, arxiv_id=keys[0], doi=keys[1])
    if waiting is not None:
        return _already_suggested(waiting)
    return ref


def to_look_up(ctx: Context, line: str) -> str | None:
    """The link of a `suggest` line whose answer waits for a look-up (arXiv, Crossref): an adapter whose
    reply cannot wait that long acknowledges it at once, then answers `run(ctx, line)` afterwards.
    None for any other line, answered by `run` at once."""
    verb, args = split(line)
    command = BY_NAME.get(verb)
    if command is None or command.name != "suggest" or not ctx.member.id.strip():
        return None
    try:
        checked = _suggestion_checked(ctx, args)
    except (Refusal, Busy, DiskFull):
        return None  # `run` says so
    return None if isinstance(checked, Answer) else args.strip()


def cmd_suggest(ctx: Context, args: str) -> Answer:
    checked = _suggestion_checked(ctx, args)
    if isinstance(checked, Answer):
        return checked
    ref = checked
    try:
        found = _lookups(ctx).fetch(ref, ctx.lookup_wait)
    except LookupFailed as failed:
        return _notice(str(failed), ok=False)
    already = paper_links.known(ctx.store, url=found.url, doi=found.doi)
    if already is not None:
        return _notice("The catalog has it already: ", PaperRef(already), ". Nothing was suggested.")
    made, new = suggestions.add(ctx.store, ctx.member.id, found)
    if not new:
        return _already_suggested(made)
    return _notice(
        f"Thanks: you suggested “{made.title}” (suggestion {made.id}). An admin will accept or decline it, "
        "and you will hear which."
    )


def _already_suggested(s: suggestions.Suggestion) -> Answer:
    return _notice(
        f"“{s.title}” is suggested already (suggestion {s.id}, by ",
        Mention(s.suggested_by),
        "): it waits for an admin.",
    )


def cmd_suggestions(ctx: Context, args: str) -> Answer:
    signups.require_admin(ctx.member, "see and decide suggestions", catalog=True)
    parts = args.split()
    if not parts:
        shown, total = suggestions.waiting(ctx.store)
        if not shown:
            return _notice("No suggestions are waiting. Members suggest with ", command_code("suggest <link>"), ".")
        lines = [
            SuggestionLine(
                s.id,
                s.title,
                s.byline,
                s.url,
                s.suggested_by,
                [
                    Button("Accept", f"suggestions accept {s.id}", primary=True),
                    Button("Decline", f"suggestions decline {s.id}"),
                ],
            )
            for s in shown
        ]
        more = f" (the oldest {len(shown)})" if total > len(shown) else ""
        heading = text(f"{total} suggestion{'s' if total != 1 else ''} waiting{more}")
        footer = text("Or: ", command_code("suggestions accept <n>"), " / ", command_code("suggestions decline <n>"))
        return Answer(SuggestionList(heading, lines, footer))
    if len(parts) != 2 or parts[0].lower() not in ("accept", "decline") or not parts[1].lstrip("#").isdigit():
        return _usage("suggestions")
    verb, number = parts[0].lower(), int(parts[1].lstrip("#"))
    try:
        if verb == "accept":
            paper, s = suggestions.accept(ctx.store, number, ctx.member.id)
        else:
            s = suggestions.decline(ctx.store, number, ctx.member.id)
    except suggestions.NotOpen as e:
        return _notice(str(e), ok=False)
    if verb == "accept":
        told = text("Your suggestion “", s.title, "” was accepted: it is ", PaperRef(paper), " in the catalog.")
        said = text("Accepted suggestion ", str(number), ": ", PaperRef(paper), " is in the catalog. ")
    else:
        told = text("Your suggestion “", s.title, "” was declined by the admins.")
        said = text(f"Declined suggestion {number} (“", s.title, "”). ")
    if ctx.tell is not None:
        ctx.tell(s.suggested_by, told)
    return Answer(Notice(text(*said, Mention(s.suggested_by), " is told.")))


def cmd_delete(ctx: Context, args: str) -> Answer:
    signups.require_admin(ctx.member, "delete papers", catalog=True)
    if not args.strip():
        return _usage("delete")
    paper = signups.find_paper(ctx.store, args.strip())
    try:
        catalog.delete(ctx.store, paper)
    except catalog.PaperInUse as use:
        in_use = f" stays: {use} refers to it. Only a paper nothing refers to can be deleted."
        raise Refusal(PaperRef(paper), in_use) from None
    return _notice("Deleted ", PaperRef(paper), " (", Code(paper.id), "). Its number is not given to another paper.")


def cmd_calendar(ctx: Context, args: str) -> Answer:

    # A platform without forms is the console, whose user runs paperbot and can write the files.
    operator = not ctx.platform.forms
    return Answer(
        addresses.calendar_reply(ctx.store, ctx.public_url, ctx.group.group_id, ctx.member.id, args, operator=operator)
    )


def cmd_vote(ctx: Context, args: str) -> Answer:
    if not args.strip() or len(args.split()) != 1:
        return _usage("vote")
    paper = signups.find_paper(ctx.store, args.strip())
    if catalog.archived_at(ctx.store, paper) is not None:
        raise Refusal(
            PaperRef(paper),
            " is archived: it takes no votes. An admin can bring it back with ",
            command_code(f"restore {paper.number}"),
            ".",
        )
    counted = votes.toggle(ctx.store, paper, ctx.member.id)
    n = votes.count(ctx.store, paper)
    tally = f" It has {n} vote{'s' if n != 1 else ''}."
    if counted:
        return _notice("You voted for ", PaperRef(paper), ".", tally, " Again takes it back.")
    return _notice("You took back your vote for ", PaperRef(paper), ".", tally)


def cmd_archive(ctx: Context, args: str) -> Answer:
    return _archive(ctx, args, True)


def cmd_restore(ctx: Context, args: str) -> Answer:
    return _archive(ctx, args, False)


def _archive(ctx: Context, args: str, archive: bool) -> Answer:
    signups.require_admin(ctx.member, "archive papers" if archive else "restore papers", catalog=True)
    if not args.strip() or len(args.split()) != 1:
        return _usage("archive" if archive else "restore")
    paper = signups.find_paper(ctx.store, args.strip())
    changed = catalog.set_archived(ctx.store, paper, archive)
    # Asked for what already is: said so, and not as a failure (the paper is as the admin wants it).
    if archive and not changed:
        return _notice(
            PaperRef(paper), " is archived already. Back in the lists: ", command_code(f"restore {paper.number}")
        )
    if not archive and not changed:
        return _notice(PaperRef(paper), " is not archived: it is in the lists already.")
    if archive:
        booked = [s for s in slots.history_in(ctx.store, _calendars(ctx), paper) if s.meeting > ctx.now]
        kept = f" Its {len(booked)} booked talk{'s stay' if len(booked) != 1 else ' stays'} booked." if booked else ""
        return _notice(
            "Archived ",
            PaperRef(paper),
            ": it leaves lists, search and the rotation; its history stays.",
            kept,
            " Undo: ",
            command_code(f"restore {paper.number}"),
        )
    return _notice("Restored ", PaperRef(paper), ": it is back in lists, search and the rotation.")


def cmd_slides(ctx: Context, args: str) -> Answer:
    parts = args.split()
    if len(parts) == 3 and parts[1].lower() == "remove":
        talk = talks.detach(ctx.store, ctx.group, ctx.now, ctx.member, parts[0], parts[2])
        return _notice(
            "Removed the link from the talk of ", When(talk.meeting, with_time=False), " (", PaperRef(talk.paper), ")."
        )
    if len(parts) != 2:
        return _usage("slides")
    talk, added = talks.attach(ctx.store, ctx.group, ctx.now, ctx.member, parts[0], parts[1])
    if not added:
        return _notice("The talk of ", When(talk.meeting, with_time=False), " has that link already.", ok=False)
    return _notice(
        "Added the link to the talk of ",
        When(talk.meeting, with_time=False),
        " (",
        PaperRef(talk.paper),
        "). ",
        *(
            ("Talks given: ", command_code("past"))
            if talk.meeting <= ctx.now
            else (
                "It shows in ",
                command_code(f"show {talk.paper.number}" if talk.paper else "schedule"),
                " until the talk is given, then in ",
                command_code("past"),
                ".",
            )
        ),
    )


#: What `edit <paper> <field> <value>` may change, by the names a member types.
EDIT_FIELDS = {
    "title": "title",
    "link": "url",
    "url": "url",
    "summary": "summary",
    "tags": "tags",
    "authors": "authors",
    "year": "year",
}


def cmd_edit(ctx: Context, args: str) -> Answer:
    signups.require_admin(ctx.member, "edit papers", catalog=True)
    ref, _, rest = args.strip().partition(" ")
    if not ref:
        return _usage("edit")
    paper = signups.find_paper(ctx.store, ref, with_tags=True)
    if not rest.strip():
        return Answer(EditForm(paper))
    name, _, value = rest.strip().partition(" ")
    field = EDIT_FIELDS.get(name.lower().rstrip(":="))
    if field is None:
        return _notice(
            "A paper has no field ",
            Code(name[:30]),
            ": change one of ",
            ", ".join(f"`{f}`" for f in EDIT_FIELDS),
            ", for example ",
            command_code(f"edit {paper.number} tags moe, parallelism-dp"),
            ".",
            ok=False,
        )
    try:
        edited = edit_paper(ctx, paper.number, {field: value.strip()}, whole_form=False)
    except catalog.InvalidPaper as e:
        return _notice(str(e)[:300], ". Nothing was changed.", ok=False)
    return _notice(
        "Saved ",
        PaperRef(edited),
        f": {name.lower().rstrip(':=')} changed. ",
        command_code(f"show {edited.number}"),
    )


def edit_paper(ctx: Context, number: int, fields: dict, *, whole_form: bool = True) -> catalog.Paper:
    """Save an edit of paper `number` (the edit form, or one field): admins only. Raises Refusal, or
    InvalidPaper naming the bad field. `whole_form`: a field left empty is cleared (the form shows them all)."""
    signups.require_admin(ctx.member, "edit papers", catalog=True)
    paper = catalog.by_number(ctx.store, number)
    if paper is None:
        raise Refusal(f"There is no paper #{number} any more: nothing was saved.")
    fields = {k: v for k, v in fields.items() if k in ("title", "url", "summary", "tags", "authors", "year")}
    if whole_form:  # an input left empty clears that field; the title cannot be empty
        fields = {k: ("" if v is None and k != "title" else v) for k, v in fields.items()}
    clear_year = "year" in fields and not str(fields["year"] or "").strip()
    if clear_year:
        del fields["year"]
    if "title" in fields and not (fields["title"] or "").strip():
        raise catalog.InvalidPaper("title", "title cannot be empty")
    changes = catalog.validate({**fields, "id": paper.id}, new=False)
    return catalog.edit(ctx.store, paper, changes, clear_year=clear_year)


def cmd_past(ctx: Context, args: str) -> Answer:
    rest, page_no = _paged(args)
    if rest:
        return _takes_nothing("past", ": it lists the talks given, newest first.")
    given, more = talks.past(ctx.store, ctx.group, ctx.now, page_no)
    if not given:
        if page_no > 1:
            return _notice(f"There is no page {page_no} of past talks.", ok=False)
        return _notice("No talk has been given yet. The coming ones: ", command_code("schedule"), ".")
    _mark_archived(ctx, [t.line for t in given])
    footer = text("Add slides or a recording: ", command_code("slides <paper or date> <link>"))
    return Answer(PastTalks(given, _pager("past", page_no, more, talks.PAST_PAGE), footer))


# -- groups ----------------------------------------------------------------------

#: The commands that act on one group (the group of the channel they are typed in); the rest are the install's.
NEEDS_GROUP = frozenset(
    {"week", "schedule", "signup", "withdraw", "assign", "unassign", "skip", "past", "slides", "calendar"}
)

#: Groups one reply lists (`groups`, and the channels named where a command needs a group).
GROUPS_SHOWN = 25


class _Calendars(Mapping):
    """Groups' calendars by id, each with its channel when there are several groups to tell apart;
    a group is read when a line asks for it: a member's slots name a few groups of an install's many."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self._read: dict[int, groups.Group | None] = {}
        self._several: bool | None = None

    def _group(self, gid: int) -> groups.Group | None:
        if gid not in self._read:
            self._read[gid] = groups.by_id(self.ctx.store, self.ctx.env_group, gid)
        return self._read[gid]

    def __getitem__(self, gid: int) -> tuple[MeetingCalendar, str | None]:
        group = self._group(gid)
        if group is None:
            raise KeyError(gid)
        if self._several is None:
            self._several = groups.several(self.ctx.store)
        return group.calendar, group.channel if self._several else None

    def __iter__(self):
        return (g.id for g in groups.every(self.ctx.store, self.ctx.env_group))

    def __len__(self) -> int:
        return len(groups.every(self.ctx.store, self.ctx.env_group))


def _calendars(ctx: Context) -> slots.Calendars:
    """Every group's calendar, and its channel when there are several groups to tell apart."""
    return _Calendars(ctx)


def in_group(ctx: Context, group: groups.Group) -> Context:
    """`ctx` for a command in `group`: its calendar, channel and focus tag; its own admins are admins
    there; its changes are announced in its channel."""
    if group.id == groups.ENV:
        return replace(ctx, group=group.calendar)
    member = ctx.member
    if member.id in group.admins:
        member = Member(member.id, lambda: True)
    on_change = ctx.on_change
    if on_change is not None:
        channel = group.channel

        def on_change(change: Change) -> None:
            announce.queue(ctx.store, channel, change)

    return replace(
        ctx,
        group=group.calendar,
        channel=group.channel,
        focus_tag=group.focus_tag,
        rotation=group.rotation,
        member=member,
        on_change=on_change,
    )


def _channels(channels: list[str]) -> list:
    shown: list = []
    for i, channel in enumerate(channels[:GROUPS_SHOWN]):
        shown += [", " if i else "", ChannelRef(channel)]
    if len(channels) > GROUPS_SHOWN:
        shown.append(f" and {len(channels) - GROUPS_SHOWN} more")
    return shown


def _no_group_here(verb: str, channels: list[str], platform: Platform = IDS_ONLY) -> Answer:
    if platform.in_channel and channels:
        return _notice(
            "This install has several reading groups, so nothing was done: type ",
            command_code(verb),
            " in your group's channel, with ",
            Code(platform.in_channel.format(channel=channels[0])),
            " (channels: ",
            *_channels(channels),
            ").",
            ok=False,
        )
    return _notice(
        "This install has several reading groups, so nothing was done: type ",
        command_code(verb),
        " in your group's channel (",
        *_channels(channels),
        ").",
        ok=False,
    )


def _group_admin(ctx: Context, group: groups.Group, what: str) -> None:
    """The install's admins, and the group's own."""
    if ctx.member.id not in group.admins and not ctx.member.is_admin():
        raise signups.AdminOnly(f"Only admins can {what}. Ask one of the group's admins.")


def _next(group: groups.Group, now: datetime) -> tuple:
    """`Next post: …; next meeting: …`, or that the group is stopped."""
    if group.stopped:
        return ("Stopped: no posts or reminders until ", command_code("group start"), ".")
    post = groups.next_post(group.calendar, now)
    return (
        "Next post: ",
        *((When(post),) if post else ("none in the coming year",)),
        "; next meeting: ",
        When(groups.next_meeting(group.calendar, now)),
        ".",
    )


def _group_card(ctx: Context, group: groups.Group) -> Text:
    where: tuple = ("Reading group in ", ChannelRef(group.channel)) if group.channel else ("Reading group",)
    origin = "settings from the environment" if group.from_env else "settings from chat"
    if not group.channel:  # group 1 before PAPERBOT_CHANNEL is set: no posts, but commands work
        origin += "; no channel yet, so no posts: PAPERBOT_CHANNEL sets it"
    settings: list = []
    for i, (name, value) in enumerate(groups.stored_text(group).items()):
        if name == "admins" and group.admins:
            settings += [" · " if i else "", f"{name}: "]
            for j, admin in enumerate(sorted(group.admins)):
                settings += [", " if j else "", Mention(admin)]
            continue
        settings += [" · " if i else "", f"{name} ", Code(value)]
    change = (
        "Change them in the environment (PAPERBOT_…) and restart paperbot."
        if group.from_env
        else text("Change one: ", command_code("group set <setting> <value>"), ".")
    )
    return text(
        *where,
        f" ({origin}). ",
        *_next(group, ctx.now),
        "\n",
        *settings,
        "\n",
        *((change,) if isinstance(change, str) else change),
    )


def _group_show(ctx: Context) -> Answer:
    env = ctx.env_group
    here = groups.of_channel(ctx.store, env, ctx.where)
    if here is None and ctx.where is not None:
        return _notice(
            "This channel has no reading group. An admin starts one here with ",
            command_code("group start"),
            "; every group: ",
            command_code("groups"),
            ".",
        )
    if here is None:
        try:
            here = groups.where(ctx.store, env, None)
        except groups.NoGroupHere as e:
            return _no_group_here("group", e.channels, ctx.platform)
    return Answer(Notice(_group_card(ctx, here)))


class _Announcing:
    """groups.Then: tell the group's channel (through the outbox, as schedule changes are) what an
    admin changed; `what(group)` is the line's text, of the group as the change leaves it. `change`
    is the note queued, for the Answer (an adapter sends the outbox soon after an answer with one)."""

    def __init__(self, ctx: Context, what: Callable[[groups.Group], tuple]):
        self.ctx, self.what = ctx, what
        self.change: Change | None = None

    def __call__(self, group: groups.Group) -> None:
        ctx = self.ctx
        if group.channel and ctx.on_change is not None:
            meeting = groups.next_meeting(group.calendar, ctx.now)
            said = text(*self.what(group), " (by ", Mention(ctx.member.id), ")")
            week = group.calendar.week_of(meeting)
            self.change = announce.queue_note(ctx.store, group.channel, said, week, meeting, ctx.member.id)


def _group_start(ctx: Context) -> Answer:
    if not ctx.member.is_admin():
        raise signups.AdminOnly("Only the install's admins can start a group. Ask one of them.")
    if ctx.where is None:
        return _notice("Type ", command_code("group start"), " in the channel that the group meets in.", ok=False)
    # The channel's announcement is queued inside groups.start's write, before it says how it went.
    stopped = groups.of_channel(ctx.store, ctx.env_group, ctx.where) is not None
    said = "Resumed the reading group" if stopped else "Started a reading group"
    then = _Announcing(ctx, lambda g: (f"📚 {said} in this channel. ", *_next(g, ctx.now)))
    group, how = groups.start(ctx.store, ctx.env_group, ctx.where, ctx.platform.name, ctx.member.id, then, at=ctx.now)
    if how == "running":
        return _notice("This channel is a reading group already: ", command_code("group"), " shows its settings.")
    reply = _notice(
        f"{said} in ",
        ChannelRef(group.channel or ""),
        ". ",
        *_next(group, ctx.now),
        " Settings: ",
        command_code("group"),
    )
    return Answer(reply.reply, then.change)


def _unquoted(value: str) -> str:
    value = value.strip()
    for left, right in (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’")):
        if len(value) >= 2 and value.startswith(left) and value.endswith(right):
            return value[1:-1].strip()
    return value


def _here(ctx: Context, verb: str) -> groups.Group:
    """The group of the channel `verb` is typed in."""
    if ctx.where is None:
        raise Refusal("Type ", command_code(verb), " in the group's channel.")
    here = groups.of_channel(ctx.store, ctx.env_group, ctx.where)
    if here is None:
        raise Refusal("This channel has no reading group: an admin starts one with ", command_code("group start"), ".")
    return here


#: `group set calendar-secret new`: not a setting with a value, but set in the same words.
CALENDAR_SECRET = "calendar-secret"


def _renew_calendar_secret(ctx: Context, value: str) -> Answer:
    """`group set calendar-secret new`: the group's page and feed get new addresses (any group's,
    the environment's too: its secret lives in the database)."""
    from bot.web import feeds

    if value.strip().lower() != "new":
        return _notice("Usage: ", command_code(f"group set {CALENDAR_SECRET} new"), ".", ok=False)
    here = _here(ctx, f"group set {CALENDAR_SECRET} new")
    _group_admin(ctx, here, "renew the group's calendar addresses")
    then = _Announcing(
        ctx,
        lambda g: ("🔑 The group's calendar and page have new addresses: ", command_code("calendar"), " gives them."),
    )
    feeds.renew_group_secret(ctx.store, here.id, lambda: then(here))
    return Answer(addresses.renewed_reply(ctx.store, ctx.public_url, here.id, ctx.member.id), then.change)


def _group_set(ctx: Context, args: str) -> Answer:
    parts = args.split(None, 1)
    if parts and parts[0].lower() == CALENDAR_SECRET:
        return _renew_calendar_secret(ctx, parts[1] if len(parts) > 1 else "")
    if len(parts) != 2 or parts[0].lower() not in groups.SETTINGS:
        return _notice(
            "Usage: ",
            command_code("group set <setting> <value>"),
            ", for example ",
            command_code('group set meeting "thu 16:00"'),
            ". Settings: ",
            ", ".join(groups.SETTINGS),
            "; ",
            command_code(f"group set {CALENDAR_SECRET} new"),
            " renews the group's calendar addresses.",
            ok=False,
        )
    setting, value = parts[0].lower(), _unquoted(parts[1])
    here = _here(ctx, "group set")
    _group_admin(ctx, here, "change the group's settings")
    if here.from_env:
        raise Refusal(
            "This group's settings come from the environment: set ",
            Code(groups.SETTINGS[setting]),
            " where paperbot runs and restart it. Nothing was changed.",
        )
    try:
        then = _Announcing(
            ctx,
            lambda g: (
                f"⚙️ The group's {setting} is now ",
                Code(groups.stored_text(g)[setting]),
                ". ",
                *_next(g, ctx.now),
            ),
        )
        group = groups.change(ctx.store, here, setting, value, ctx.platform.read_member, then)
    except SettingError as e:
        raise Refusal(f"{e}. Nothing was changed.") from None
    shown = groups.stored_text(group)[setting]
    warning = group.calendar.meeting_before_post(ctx.now)
    reply = _notice(
        f"Set {setting} to ",
        Code(shown),
        ". ",
        *_next(group, ctx.now),
        *(
            (" Note: the meeting comes before the post in the week, so a post announces a meeting that is over.",)
            if warning
            else ()
        ),
        *(
            (" Note: this schedule fires more than once a week; the group posts once a week, at the first of them.",)
            if setting == "schedule" and group.calendar.schedule.several_a_week(group.calendar.week_of(ctx.now))
            else ()
        ),
    )
    return Answer(reply.reply, then.change)


def _group_stop(ctx: Context) -> Answer:
    here = _here(ctx, "group stop")
    _group_admin(ctx, here, "stop the group")
    if here.from_env:
        raise Refusal("This group comes from the environment: unset PAPERBOT_CHANNEL to stop its posts.")
    if here.stopped:
        return _notice("This group is stopped already: ", command_code("group start"), " resumes it.")
    then = _Announcing(ctx, lambda g: ("⏸️ The reading group in this channel is stopped: no posts or reminders.",))
    group = groups.stop(ctx.store, here, then)
    reply = _notice(
        "Stopped the group in ",
        ChannelRef(group.channel or ""),
        ": no more posts or reminders; its history stays. ",
        command_code("group start"),
        " resumes it.",
    )
    return Answer(reply.reply, then.change)


def cmd_group(ctx: Context, args: str) -> Answer:
    sub, _, rest = args.strip().partition(" ")
    sub = sub.lower()
    if sub in ("", "show") and not rest.strip():
        return _group_show(ctx)
    if sub == "start" and not rest.strip():
        return _group_start(ctx)
    if sub == "set":
        return _group_set(ctx, rest)
    if sub == "stop" and not rest.strip():
        return _group_stop(ctx)
    if sub == "list" and not rest.strip():
        return cmd_groups(ctx, "")
    return _usage("group")


def cmd_groups(ctx: Context, args: str) -> Answer:
    if args:
        return _takes_nothing("groups", ": it lists every group. One group's settings: ", command_code("group"), ".")
    every = groups.every(ctx.store, ctx.env_group)
    booked = groups.booked(ctx.store, ctx.group.week_of(ctx.now).plus(-1).key)
    lines: list = [f"{len(every)} reading group{'s' if len(every) != 1 else ''}:"]
    for group in every[:GROUPS_SHOWN]:
        where = (ChannelRef(group.channel),) if group.channel else ("(no channel)",)
        n = booked.get(group.id, 0)
        lines += [
            "\n• ",
            *where,
            " · meets ",
            Code(str(group.calendar.meeting)),
            f" ({group.calendar.tz.key}) · ",
            *_next(group, ctx.now),
            f" {n} presenter{'s' if n != 1 else ''} booked.",
        ]
    if len(every) > GROUPS_SHOWN:
        lines.append(f"\n… and {len(every) - GROUPS_SHOWN} more.")
    return Answer(Notice(text(*lines)))


COMMANDS: list[Command] = [
    Command("help", "", "these commands", "help", cmd_help),
    Command("tags", "", "every tag with its paper count", "tags", cmd_tags),
    Command("tag", "<tag>", "the papers with a tag", "tag parallelism-dp", cmd_tag),
    Command("search", "<words>", "papers whose title, summary or tags match, best first", "search diloco", cmd_search),
    Command("show", "<paper>", "one paper in full, who presented it or will", "show streaming-diloco", cmd_show),
    Command("week", "", "this week's paper, presenter and meeting", "week", cmd_week),
    Command("schedule", "", "the coming weeks and their presenters", "schedule", cmd_schedule),
    Command(
        "signup",
        "<paper> [<date>]",
        "present a paper (default: the first open week)",
        "signup streaming-diloco next",
        cmd_signup,
    ),
    Command("withdraw", "<paper or date>", "give up one of your slots", "withdraw 7", cmd_withdraw),
    Command("mine", "", "your coming and past slots", "mine", cmd_mine),
    Command(
        "assign", "<@user> <paper> [<date>]", "put someone in a week", "assign @ada 7 next", cmd_assign, admin=True
    ),
    Command("unassign", "<date>", "clear a week", "unassign next", cmd_unassign, admin=True),
    Command("skip", "<date>", "no meeting that week", "skip next", cmd_skip, admin=True),
    Command(
        "add",
        "[<link> [<tags>]]",
        "add a paper: the form, filled in from an arXiv id, DOI or link",
        "add 2310.01889 long-context",
        cmd_add,
        admin=True,
    ),
    Command("delete", "<paper>", "delete a paper nothing refers to", "delete 32", cmd_delete, admin=True),
    Command("vote", "<paper>", "vote for a paper to read (again: take it back)", "vote 7", cmd_vote),
    Command(
        "archive", "<paper>", "take a paper out of lists, search and the rotation", "archive 7", cmd_archive, admin=True
    ),
    Command("restore", "<paper>", "bring an archived paper back", "restore 7", cmd_restore, admin=True),
    Command(
        "slides",
        "<paper or date> <link>",
        "attach slides, a recording or notes to a talk (presenter or admins)",
        "slides 29 https://example.org/slides.pdf",
        cmd_slides,
    ),
    Command("past", "", "talks given, newest first, with their links", "past", cmd_past),
    Command(
        "edit",
        "<paper> [<field> <value>]",
        "change a paper: the form filled in with it, or one field",
        "edit 7 tags moe, parallelism-dp",
        cmd_edit,
        admin=True,
    ),
    Command("suggest", "<link>", "suggest a paper by arXiv id, DOI or link", "suggest 2501.18512", cmd_suggest),
    Command(
        "suggestions",
        "[accept/decline <n>]",
        "the suggested papers, to accept or decline",
        "suggestions",
        cmd_suggestions,
        admin=True,
    ),
    Command(
        "calendar", "[renew]", "your addresses of the group's calendar and page, privately", "calendar", cmd_calendar
    ),
    Command(
        "group",
        "[start / set <setting> <value> / stop]",
        "this channel's reading group; admins start, change or stop it",
        "group",
        cmd_group,
    ),
    Command("groups", "", "every reading group of the install", "groups", cmd_groups),
]
BY_NAME = {c.name: c for c in COMMANDS}


def announcement(change: Change) -> Text:
    """The one line the group's channel gets about a schedule change."""
    if change.action == "note":
        return change.note
    line, before = change.line, change.before
    day = When(line.meeting)
    by = () if change.by in (line.presenter, before and before.presenter) else (" (by ", Mention(change.by), ")")
    if change.action in ("signup", "assign"):
        return text("📅 ", Mention(line.presenter), " will present ", PaperRef(line.paper), " on ", day, ".", *by)
    if change.action == "skip":
        return text("🚫 No meeting in the week of ", When(line.meeting, with_time=False), ".", *by)
    was: tuple = ()
    if before is not None and before.state == "presenter":
        was = (" (", Mention(before.presenter), " was to present ", PaperRef(before.paper), ")")
    return text(
        "🔓 ", day, " is open again", *was, ": ", command_code(f"signup <paper> {line.meeting.date().isoformat()}"), *by
    )


#: `# 13` (or `＃ 13`) as typed, for the paper number #13.
_LOOSE_NUMBER = re.compile(r"(?:(?<=\s)|^)[#＃]\s+(?=\d)")


#: Characters that show as nothing, pasted along with a paper's id or a date: never part of a command.
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def split(line: str) -> tuple[str, str]:
    """`'/paper tag x'` -> `('tag', 'x')`; the `/paper` prefix is optional. Full-width forms, as an
    input method in full-width mode types them (`ｓｈｏｗ ＃７`, `２０２７－０２－０４`), read as ASCII."""
    if not line.isascii():
        line = _INVISIBLE.sub("", unicodedata.normalize("NFKC", line))
    line = line.strip()
    if line.lower().startswith(COMMAND):
        rest = line[len(COMMAND) :]
        if not rest or rest[0].isspace():
            line = rest.strip()
    verb, *rest = line.split(None, 1) or [""]  # any whitespace: a tab, a newline, a no-break space
    return verb.lower(), _LOOSE_NUMBER.sub("#", rest[0]).strip() if rest else ""


#: A verb this close to one of ours (difflib's ratio) is taken for a typo of it: serach, shwo, sigup.
MEANT = 0.7

BUSY = "The catalog is busy just now, so nothing was changed. Try again in a moment."
DISK_FULL = "The disk that holds the catalog is full, so nothing was changed. Ask whoever runs the bot to free space."


def run(ctx: Context, line: str) -> Answer:
    """Answer one /paper command line. Never raises for anything a user typed."""
    verb, args = split(line)
    if not verb:
        return Answer(_help())
    command = BY_NAME.get(verb)
    if command is None:
        meant = difflib.get_close_matches(verb, list(BY_NAME), n=1, cutoff=MEANT)
        if meant:  # serach, shwo: a typo of one verb gets that verb, not all of help
            cmd = BY_NAME[meant[0]]
            return _notice(
                "I don't know ",
                Code(verb[:30]),
                ". Did you mean ",
                Code(cmd.name),
                "? Usage: ",
                command_code(cmd.usage),
                ", for example ",
                command_code(cmd.example),
                ".",
                ok=False,
            )
        return Answer(_help(text("I don't know ", Code(verb[:30]), ". Here is what I can do:")))
    if command.name != "help" and not ctx.member.id.strip():  # a platform always names the user; without one, no one
        return _notice("This request did not say who sent it, so nothing was done. Try the command again.", ok=False)
    try:
        if command.name in NEEDS_GROUP:
            try:
                ctx = in_group(ctx, groups.where(ctx.store, ctx.env_group, ctx.where))
            except groups.NoGroupHere as e:
                return _no_group_here(command.name, e.channels, ctx.platform)
        return command.run(ctx, args)
    except Refusal as refusal:
        return Answer(Notice(refusal.text, ok=False))
    except Busy:  # another writer (an import's batch, a second process) held the catalog too long
        return Answer(Notice(text(BUSY), ok=False))
    except DiskFull:
        return Answer(Notice(text(DISK_FULL), ok=False))


#: What App Home lists: the coming weeks, and papers waiting for a presenter.
HOME_WEEKS = 12
HOME_WAITING = 20
#: The latest talks given that App Home looks at for links.
HOME_TALKS = 5


def home(ctx: Context, notice: Notice | None = None) -> Home:
    """A member's own page (a platform's home tab): the coming weeks, their own slots, papers nobody has
    presented with a sign-up button, and `notice` on top."""
    calendars = _calendars(ctx)
    upcoming, _ = slots.mine_in(ctx.store, calendars, ctx.now, ctx.member.id)
    try:
        group = groups.where(ctx.store, ctx.env_group, None)
    except groups.NoGroupHere as e:  # the member's groups are in their slots; the weeks are each group's
        where = text("Several reading groups share this install (", *_channels(e.channels), "): ")
        notice = notice or Notice(text(*where, command_code("schedule"), " in a group's channel shows its weeks."))
        return Home(ctx.member.id, [], upcoming, [], notice)
    ctx = in_group(ctx, group)
    coming = slots.schedule(ctx.store, ctx.group, ctx.now)[:HOME_WEEKS]
    waiting = [
        PaperEntry(p, Button("Sign up", f"signup {p.number}"))
        for p in slots.waiting_papers(ctx.store, HOME_WAITING, ctx.focus_tag, group.id)
    ]
    given, _ = talks.past(ctx.store, ctx.group, ctx.now, 1, HOME_TALKS)
    recent = [t for t in given if t.links]
    return Home(ctx.member.id, _mark_archived(ctx, coming), upcoming, waiting, notice, recent)
