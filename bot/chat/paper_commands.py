"""Papers into and out of the catalog: adding by link, suggestions, votes, edits, archiving, deleting.

The catalog is every group's, so its changes are the install's admins' (registry.catalog_admins).
`add_paper` and `edit_paper` also save the add and edit forms, which adapters submit without a command.
"""

from __future__ import annotations

import hashlib

from bot.catalog import queries as catalog
from bot.catalog import refs as paper_refs
from bot.catalog import votes
from bot.catalog.papers import read_byline
from bot.chat.context import Answer, Context, calendars, notice
from bot.chat.registry import (
    BY_HAND,
    CHOICE,
    LINK,
    NUMBER,
    PAPER,
    TEXT,
    WORD,
    Arg,
    Verb,
    catalog_admins,
    check_rights,
    verb,
)
from bot.chat.replies import AddForm, EditForm, Notice, SuggestionLine, SuggestionList
from bot.intake import links as paper_links
from bot.intake import lookup, suggestions
from bot.intake.lookup import LookupFailed, Lookups
from bot.rich_text import Button, Code, Mention, PaperRef, command_code, text
from bot.schedule import signups, slots
from bot.schedule.signups import Refusal

VERBS: dict[str, Verb] = {}

ADDING = catalog_admins("add papers")
EDITING = catalog_admins("edit papers")


@verb(
    VERBS,
    "add",
    "add a paper: the form, filled in from an arXiv id, DOI or link",
    "add 2310.01889 long-context",
    Arg("link", LINK, "an arXiv id, DOI or link, to fill the form in (none: the empty form)", optional=True),
    Arg(
        "tags",
        TEXT,
        "tags for it, separated by commas (default: proposed from the catalog's)",
        optional=True,
        rest=True,
        shown="<tags>",
    ),
    rights=ADDING,
    reference=(
        "admins: add a paper: the form, filled in from an arXiv id, DOI or link ([more](docs/papers-from-chat.md))"
    ),
)
def add(ctx: Context, link: paper_refs.Ref | None, tags: str | None) -> Answer:
    if link is None:
        return Answer(AddForm())
    try:
        chosen = catalog.validate({"title": "-", "tags": tags or ""}, new=True).tags or ()
    except catalog.InvalidPaper as e:
        return notice(str(e), ". Nothing was added.", ok=False)
    already = paper_links.known(ctx.store, link)
    if already is not None:
        return _already(already)
    again = f"add {link.url} {','.join(chosen)}".strip()
    if ctx.platform.forms:  # the adapter opens the form now and fills it in when the look-up returns
        return Answer(AddForm(lookup=link.url, tags=chosen, again=again))
    try:
        found = _lookups(ctx).fetch(link, ctx.lookup_wait)
    except LookupFailed as failed:
        return _lookup_failed(failed, forms=False)
    fields = paper_links.fields(found, chosen or paper_links.propose_tags(ctx.store, found))
    try:
        paper = add_paper(ctx, fields)
    except catalog.InvalidPaper as e:
        return notice(str(e), ". Nothing was added.", ok=False)
    by = f", {paper.byline}" if paper.byline else ""
    tagged = f"; tags: {', '.join(paper.tags)}" if paper.tags else "; no tags"
    return notice("Added ", PaperRef(paper), " (", Code(paper.id), f"{by}{tagged}).")


def _lookups(ctx: Context) -> Lookups:
    if ctx.lookups is None:
        ctx.lookups = Lookups()
    return ctx.lookups


def _already(paper: catalog.Paper) -> Answer:
    return notice(
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
        return notice(str(failed), " To add it by hand, ", *BY_HAND, ok=False)
    return notice(str(failed), ok=False, buttons=[Button("Open the empty form", "add")])


def _reply(answer: Answer) -> Notice:
    assert isinstance(answer.reply, Notice)
    return answer.reply


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
        return _reply(_lookup_failed(failed))
    already = paper_links.known(ctx.store, ref, url=found.url, doi=found.doi)
    if already is not None:
        return _reply(_already(already))
    fields = paper_links.fields(found, form.tags or paper_links.propose_tags(ctx.store, found))
    note = text(f"Looked up at {found.source}: check it, then add it.")
    return AddForm(fields=fields, again=form.again, note=note)


def add_paper(ctx: Context, fields: dict) -> catalog.Paper:
    """The add form, filled in: admins only. Raises Refusal, or InvalidPaper naming the bad field."""
    check_rights(ctx, ADDING)
    paper = catalog.validate(fields, new=True)
    already = paper_links.known(ctx.store, url=paper.url or "", doi=paper.doi)
    if already is not None:
        raise catalog.InvalidPaper("url", f"#{already.number} {already.title[:80]} is this paper already")
    return catalog.add(ctx.store, paper)


@verb(
    VERBS,
    "delete",
    "delete a paper nothing refers to: asks first",
    "delete 32",
    Arg("paper", PAPER, "the paper to delete: only one nothing refers to", rest=True),
    Arg(
        "confirm",
        CHOICE,
        "deletes it (without: says what would go, with a button)",
        optional=True,
        choices=("confirm",),
    ),
    rights=catalog_admins("delete papers"),
    reference="admins: delete a paper that no talk or post refers to; without `confirm`, asks first (a button)",
)
def delete(ctx: Context, paper: str, confirm: str | None) -> Answer:
    found = signups.find_paper(ctx.store, paper, with_tags=True)
    in_use = catalog.in_use(ctx.store, found)
    if in_use is not None:
        raise Refusal(PaperRef(found), f" stays: {in_use} refers to it. Only a paper nothing refers to can be deleted.")
    if confirm is None:  # one word never destroys: the button (or `confirm` typed) does
        tags = f", tagged {', '.join(found.tags)}" if found.tags else ""
        return notice(
            "Delete ",
            PaperRef(found),
            f" ({found.id}{tags})? It goes for good: its number is not given to another paper.",
            " Nothing was deleted yet.",
            buttons=[Button(f"Delete #{found.number}", f"delete {found.number} confirm")],
        )
    try:
        catalog.delete(ctx.store, found)
    except catalog.PaperInUse as use:  # referred to meanwhile
        raise Refusal(PaperRef(found), f" stays: {use} refers to it.") from None
    return notice(
        "Deleted ", PaperRef(found), " (", Code(found.id), "). Its number is not given to another paper.", *_undo(found)
    )


def _undo(paper: catalog.Paper) -> tuple:
    """How to bring a deleted paper back: added again from its link (under a new number), where it has one."""
    if paper_refs.parse(paper.url) is None:
        return ()
    return (" To add it back: ", command_code(f"add {paper.url} {', '.join(paper.tags)}".strip()), ".")


@verb(
    VERBS,
    "vote",
    "vote for a paper to read (again: take it back)",
    "vote 7",
    Arg("paper", PAPER, "the paper you want read (again: take your vote back)"),
    reference="one vote for a paper to read, again takes it back; lists show the votes",
)
def vote(ctx: Context, paper: str) -> Answer:
    found = signups.find_paper(ctx.store, paper)
    if catalog.archived_at(ctx.store, found) is not None:
        raise Refusal(
            PaperRef(found),
            " is archived: it takes no votes. An admin can bring it back with ",
            command_code(f"restore {found.number}"),
            ".",
        )
    counted = votes.toggle(ctx.store, found, ctx.member.id)
    n = votes.count(ctx.store, found)
    tally = f" It has {n} vote{'s' if n != 1 else ''}."
    if counted:
        return notice("You voted for ", PaperRef(found), ".", tally, " Again takes it back.")
    return notice("You took back your vote for ", PaperRef(found), ".", tally)


@verb(
    VERBS,
    "archive",
    "take a paper out of lists, search and the rotation",
    "archive 7",
    Arg("paper", PAPER, "the paper to take out of lists, search and the rotation"),
    rights=catalog_admins("archive papers"),
    reference="admins: out of lists, search and the rotation; its history and booked talks stay",
)
def archive(ctx: Context, paper: str) -> Answer:
    found = signups.find_paper(ctx.store, paper)
    # Asked for what already is: said so, and not as a failure (the paper is as the admin wants it).
    if not catalog.set_archived(ctx.store, found, True):
        return notice(
            PaperRef(found), " is archived already. Back in the lists: ", command_code(f"restore {found.number}")
        )
    booked = [s for s in slots.history_in(ctx.store, calendars(ctx), found) if s.meeting > ctx.now]
    kept = f" Its {len(booked)} booked talk{'s stay' if len(booked) != 1 else ' stays'} booked." if booked else ""
    return notice(
        "Archived ",
        PaperRef(found),
        ": it leaves lists, search and the rotation; its history stays.",
        kept,
        " Undo: ",
        command_code(f"restore {found.number}"),
    )


@verb(
    VERBS,
    "restore",
    "bring an archived paper back",
    "restore 7",
    Arg("paper", PAPER, "the archived paper to bring back"),
    rights=catalog_admins("restore papers"),
    reference="admins: an archived paper back",
)
def restore(ctx: Context, paper: str) -> Answer:
    found = signups.find_paper(ctx.store, paper)
    if not catalog.set_archived(ctx.store, found, False):
        return notice(PaperRef(found), " is not archived: it is in the lists already.")
    return notice("Restored ", PaperRef(found), ": it is back in lists, search and the rotation.")


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


@verb(
    VERBS,
    "edit",
    "change a paper: the form filled in with it, or one field",
    "edit 7 tags moe, parallelism-dp",
    Arg("paper", PAPER, "the paper to edit (or: <paper> <field> <value>, e.g. 7 year 2024)"),
    Arg("field", WORD, optional=True, shown="<field>", typed_only=True),
    Arg("value", TEXT, rest=True, may_be_empty=True, shown="<value>", typed_only=True),
    rights=EDITING,
    reference="admins: the add form filled in with the paper, or one field (`edit 7 year 2025`)",
)
def edit(ctx: Context, paper: str, field: str | None, value: str | None) -> Answer:
    found = signups.find_paper(ctx.store, paper, with_tags=True)
    if field is None:
        return Answer(EditForm(found))
    name = field.lower().rstrip(":=")
    if name not in EDIT_FIELDS:
        return notice(
            "A paper has no field ",
            Code(field[:30]),
            ": change one of ",
            ", ".join(f"`{f}`" for f in EDIT_FIELDS),
            ", for example ",
            command_code(f"edit {found.number} tags moe, parallelism-dp"),
            ".",
            ok=False,
        )
    try:
        edited = edit_paper(ctx, found.number, {EDIT_FIELDS[name]: value or ""}, whole_form=False)
    except catalog.InvalidPaper as e:
        return notice(str(e)[:300], ". Nothing was changed.", ok=False)
    was = _field_text(found, EDIT_FIELDS[name])
    undone = was != _field_text(edited, EDIT_FIELDS[name]) and "\n" not in was and len(was) <= 300  # one line only
    undo = (" Undo: ", command_code(f"edit {found.number} {name} {was}".strip())) if undone else ()
    return notice("Saved ", PaperRef(edited), f": {name} changed. ", command_code(f"show {edited.number}"), *undo)


def _field_text(paper: catalog.Paper, field: str) -> str:
    """A field of `paper` as `edit <paper> <field> <value>` takes it."""
    value = getattr(paper, field, "")
    if isinstance(value, tuple):
        return ", ".join(value)
    return "" if value is None else str(value)


def edit_paper(
    ctx: Context, number: int, fields: dict, *, whole_form: bool = True, check: catalog.Check | None = None
) -> catalog.Paper:
    """Save an edit of paper `number` (the edit form, or one field): admins only. Raises Refusal, or
    InvalidPaper naming the bad field. `whole_form`: a field left empty is cleared (the form shows them all)."""
    check_rights(ctx, EDITING)
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
    return catalog.edit(ctx.store, paper, changes, clear_year=clear_year, check=check)


#: The edit form's fields, in the order the form's version lists them; what a member calls each.
FORM_FIELDS = {
    "title": "title",
    "authors": "authors",
    "year": "year",
    "url": "link",
    "summary": "summary",
    "tags": "tags",
}


def form_fields(paper: catalog.Paper, most: int) -> dict[str, str]:
    """The fields an edit form offers, as text, each whole: a field longer than the platform's input
    holds (`most` characters) is left out, so the form keeps it as it is."""
    shown = {
        "title": paper.title,
        "authors": paper.authors or "",
        "year": str(paper.year) if paper.year else "",
        "url": paper.url or "",
        "summary": paper.summary or "",
        "tags": ", ".join(paper.tags),
    }
    return {k: v for k, v in shown.items() if len(v) <= most}


#: A form's one input for authors and year (`Ada Lovelace (2025)`), where a platform's form has no room for two.
BYLINE = "by"


def form_byline(fields: dict[str, str]) -> str:
    """Authors and year (of form_fields) as BYLINE's input shows them, each whole."""
    authors, year = fields.get("authors", ""), fields.get("year", "")
    return f"{authors} ({year})" if authors and year else authors or year


def _read_byline(paper: catalog.Paper | None, values: dict) -> dict:
    """`values` with BYLINE read back as authors and year. Given back as the paper shows it now, it is
    the paper's own: authors like "Team (2019)" with no year would read back as a year."""
    if BYLINE not in values:
        return values
    values = dict(values)
    by = values.pop(BYLINE)
    fields = _all_fields(paper) if paper is not None else {}
    if paper is not None and _digest(by) == _digest(form_byline(fields)):
        values["authors"], values["year"] = fields["authors"], fields["year"]
    else:
        values["authors"], values["year"] = read_byline(by)
    return values


def _digest(value: str | None) -> str:
    """A short hash of a field's text, spaces aside (a platform may give back line breaks its own way)."""
    return hashlib.sha256(" ".join((value or "").split()).encode()).hexdigest()[:6]


def form_version(paper: catalog.Paper) -> str:
    """The paper as an edit form opened it: a short hash of each field, for the form to carry (36 characters)."""
    return "".join(_digest(v) for v in _all_fields(paper).values())


def _all_fields(paper: catalog.Paper) -> dict[str, str]:
    return form_fields(paper, 1 << 30)


def save_form(ctx: Context, number: int, values: dict, was: str) -> catalog.Paper:
    """Save a submitted edit form: only the fields the admin changed (a field the form left out, or
    gave back as it showed it, stays as it is; BYLINE, if the form has it, for authors and year);
    refused, naming what changed, when the paper changed since the form opened (`was`, its
    form_version), checked under the write lock."""
    check_rights(ctx, EDITING)
    if len(was) != 6 * len(FORM_FIELDS):
        raise Refusal(
            "This form is from an older paperbot: nothing was saved. ",
            command_code(f"edit {number}"),
            " opens it again.",
        )
    before = dict(zip(FORM_FIELDS, (was[i : i + 6] for i in range(0, len(was), 6)), strict=True))

    def unchanged(paper: catalog.Paper) -> None:
        moved = [FORM_FIELDS[k] for k, v in _all_fields(paper).items() if _digest(v) != before[k]]
        if moved:
            raise Refusal(
                f"#{number} was changed since this form opened (its {', '.join(moved)}): nothing was saved. ",
                command_code(f"edit {number}"),
                " opens it as it is now.",
            )

    paper = catalog.by_number(ctx.store, number)
    values = _read_byline(paper, values)
    changed = {k: v or "" for k, v in values.items() if k in FORM_FIELDS and _digest(v) != before[k]}
    if paper is None:
        raise Refusal(f"There is no paper #{number} any more: nothing was saved.")
    if not changed:
        unchanged(paper)
        return paper
    return edit_paper(ctx, number, changed, check=unchanged)


def suggestion_checked(ctx: Context, link: paper_refs.Ref) -> Answer | None:
    """What `suggest` answers without a look-up (the catalog has it, it is suggested already), else None."""
    already = paper_links.known(ctx.store, link)
    if already is not None:
        return notice("The catalog has it already: ", PaperRef(already), ". Nothing was suggested.")
    keys = (link.key, None) if link.kind == "arxiv" else (None, link.key)
    waiting = suggestions.same(ctx.store, arxiv_id=keys[0], doi=keys[1])
    if waiting is not None:
        return _already_suggested(waiting)
    return None


@verb(
    VERBS,
    "suggest",
    "suggest a paper by arXiv id, DOI or link",
    "suggest 2501.18512",
    Arg("link", LINK, "the paper's arXiv id, DOI or link"),
    reference="anyone: suggest a paper by arXiv id, DOI or link, for the admins to accept or decline",
)
def suggest(ctx: Context, link: paper_refs.Ref) -> Answer:
    checked = suggestion_checked(ctx, link)
    if checked is not None:
        return checked
    try:
        found = _lookups(ctx).fetch(link, ctx.lookup_wait)
    except LookupFailed as failed:
        return notice(str(failed), ok=False)
    already = paper_links.known(ctx.store, url=found.url, doi=found.doi)
    if already is not None:
        return notice("The catalog has it already: ", PaperRef(already), ". Nothing was suggested.")
    made, new = suggestions.add(ctx.store, ctx.member.id, found)
    if not new:
        return _already_suggested(made)
    return notice(
        f"Thanks: you suggested “{made.title}” (suggestion {made.id}). An admin will accept or decline it, "
        "and you will hear which."
    )


def _already_suggested(s: suggestions.Suggestion) -> Answer:
    return notice(
        f"“{s.title}” is suggested already (suggestion {s.id}, by ",
        Mention(s.suggested_by),
        "): it waits for an admin.",
    )


def _waiting(ctx: Context) -> Answer:
    shown, total = suggestions.waiting(ctx.store)
    if not shown:
        return notice("No suggestions are waiting. Members suggest with ", command_code("suggest <link>"), ".")
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


@verb(
    VERBS,
    "suggestions",
    "the suggested papers, to accept or decline",
    "suggestions",
    Arg("decision", CHOICE, optional=True, choices=("accept", "decline"), typed_only=True),
    Arg("n", NUMBER, typed_only=True),
    rights=catalog_admins("see and decide suggestions"),
    reference="admins: the suggested papers, with Accept and Decline buttons",
)
def suggestions_(ctx: Context, decision: str | None, n: int | None) -> Answer:
    if decision is None or n is None:
        return _waiting(ctx)
    try:
        if decision == "accept":
            paper, s = suggestions.accept(ctx.store, n, ctx.member.id)
            told = text("Your suggestion “", s.title, "” was accepted: it is ", PaperRef(paper), " in the catalog.")
            said = text("Accepted suggestion ", str(n), ": ", PaperRef(paper), " is in the catalog. ")
        else:
            s = suggestions.decline(ctx.store, n, ctx.member.id)
            told = text("Your suggestion “", s.title, "” was declined by the admins.")
            said = text(f"Declined suggestion {n} (“", s.title, "”). ")
    except suggestions.NotOpen as e:
        return notice(str(e), ok=False)
    if ctx.tell is not None:
        ctx.tell(s.suggested_by, told)
    return Answer(Notice(text(*said, Mention(s.suggested_by), " is told.")))
