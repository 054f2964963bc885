"""Finding papers in the catalog: `tags`, `tag`, `search`, `related`, `show`."""

from __future__ import annotations

from bot.catalog import queries as catalog
from bot.catalog import related as closeness
from bot.catalog import search_terms, votes
from bot.chat.context import Answer, Context, calendars, notice
from bot.chat.lists import LIST_FOOTER, if_empty, pager, shown_range, votes_of
from bot.chat.registry import PAPER, TAG, TEXT, Arg, Verb, verb
from bot.chat.replies import PaperCard, PaperList, TagCounts
from bot.rich_text import Bold, Button, Code, command_code, text
from bot.schedule import questions, signups, slots, talks
from bot.schedule.signups import Refusal

VERBS: dict[str, Verb] = {}


@verb(
    VERBS,
    "tags",
    "every tag with its paper count",
    "tags",
    paged=True,
    nothing_after=lambda typed: (": it lists every tag. The papers of one: ", command_code(f"tag {typed[:50]}"), "."),
    reference="every tag with its paper count",
)
def tags(ctx: Context, page: int) -> Answer:
    counts = catalog.tag_counts(ctx.store)
    if not counts and (hint := if_empty(ctx)):
        return hint
    size = ctx.platform.tags_page
    pages = max(1, -(-len(counts) // size))
    if page > pages:
        return notice(f"There are {len(counts)} tags; there is no page {page}.", ok=False)
    first = (page - 1) * size
    buttons = pager("tags", page, page < pages, size)
    return Answer(TagCounts(counts[first : first + size], len(counts), first, buttons))


@verb(
    VERBS,
    "tag",
    "the papers with a tag",
    "tag parallelism-dp",
    Arg("tag", TAG, rest=True),
    paged=True,
    reference="the papers with a tag (`Parallelism_DP`, `#parallelism-dp` and `parallelism dp` are one tag)",
)
def tag(ctx: Context, tag: str, page: int) -> Answer:
    size = ctx.platform.papers_page
    name, found = catalog.tagged(ctx.store, tag, page, size)
    total = found.total or 0  # a tag's papers are always counted
    if total == 0:
        if begin := if_empty(ctx):
            return begin
        close = catalog.closest_tags(ctx.store, name)
        hint: list = []
        if close:
            hint = [" Did you mean "]
            for i, other in enumerate(close):
                hint += [" or " if i else "", Code(other)]
            hint.append("?")
        return notice("No paper is tagged ", Code(name), ".", *hint, " All tags: ", command_code("tags"), ok=False)
    if not found.papers:
        return notice("Tag ", Code(name), f" has {total} papers; there is no page {page}.", ok=False)
    many = total > size
    heading = text(
        f"{total} paper{'s' if total != 1 else ''} tagged ",
        Bold(name),
        f" ({shown_range(found, size)})" if many else "",
    )
    buttons = pager(f"tag {name}", found.page, found.has_more, size)
    return Answer(PaperList(heading, found.papers, LIST_FOOTER, buttons, votes_of(ctx, found.papers)))


@verb(
    VERBS,
    "search",
    "papers whose title, summary or tags match, best first",
    "search diloco",
    Arg("words", TEXT, "words of a title, summary or tag", rest=True, may_be_empty=True),
    paged=True,
    reference="papers whose title, summary or tags match, best first; English and Chinese",
)
def search(ctx: Context, words: str, page: int) -> Answer:
    size = ctx.platform.papers_page
    found = catalog.search(ctx.store, words, page, size)
    if (found is None or not found.papers) and (hint := if_empty(ctx)):
        return hint
    shown = words.strip()[:100]
    if found is None:
        example = (command_code("search diloco"), " or ", command_code("search 数据并行"), ".")
        if shown:  # only symbols, emoji, punctuation: nothing a paper could match
            return notice("No paper matches “", shown, "”: search looks for words, for example ", *example, ok=False)
        return notice("Give me a word to look for, for example ", *example, ok=False)
    if not found.papers:
        if page > 1:
            return notice(f"There is no page {page} of results for “", shown, "”.", ok=False)
        return notice(
            "No paper matches “",
            shown,
            "”. Try fewer or shorter words, or browse ",
            command_code("tags"),
            ".",
            ok=False,
        )
    more = found.has_more or page > 1
    heading = text("Papers matching “", Bold(shown), "”, best first", f" ({shown_range(found, size)})" if more else "")
    # The pager repeats the query as typed, so that the next page reads the same; a long one only as
    # far as it was searched: the whole text would not fit in a button.
    again = " ".join(words.split())
    buttons = pager(
        f"search {again if len(again) <= 200 else search_terms.searched_words(words)}", found.page, found.has_more, size
    )
    return Answer(PaperList(heading, found.papers, LIST_FOOTER, buttons, votes_of(ctx, found.papers)))


@verb(
    VERBS,
    "related",
    "the papers of the catalog closest to one, best first",
    "related streaming-diloco",
    Arg("paper", PAPER, rest=True),
    reference="up to 5 papers of the catalog closest to one (title, summary, tags), best first",
)
def related(ctx: Context, paper: str) -> Answer:
    found = _paper(ctx, paper)
    if isinstance(found, Answer):
        return found
    close = closeness.closest(ctx.store, found, RELATED)
    if not close:
        return notice(
            f"No paper of the catalog is close to #{found.number}: none shares its rarer words or tags.", ok=False
        )
    heading = text(f"Papers closest to #{found.number} ", Bold(found.title[:200]), ", best first")
    return Answer(PaperList(heading, close, LIST_FOOTER, [], votes_of(ctx, close)))


def _paper(ctx: Context, ref: str) -> catalog.Paper | Answer:
    """The paper `ref` names, with its tags; the hint on adding papers when the catalog has none at
    all; else Refusal, saying there is no such paper."""
    try:
        return signups.find_paper(ctx.store, ref, with_tags=True)
    except Refusal:
        hint = if_empty(ctx)
        if hint is None:
            raise
        return hint


#: How many papers `related` lists, and `show` under a paper.
RELATED, RELATED_ON_CARD = 5, 3


@verb(
    VERBS,
    "show",
    "one paper in full, who presented it or will",
    "show streaming-diloco",
    Arg("paper", PAPER, rest=True),
    reference="one paper in full, who presented it or will",
)
def show(ctx: Context, paper: str) -> Answer:
    found = _paper(ctx, paper)
    if isinstance(found, Answer):
        return found
    history = slots.history_in(ctx.store, calendars(ctx), found)
    presented = [s for s in history if s.meeting <= ctx.now]
    coming = [s for s in history if s.meeting > ctx.now]
    archived = catalog.archived_at(ctx.store, found) is not None
    button = None if history or archived else Button("Sign up to present", f"signup {found.number}", primary=True)
    note = text("Archived: it is left out of lists, search and the rotation. ", command_code(f"restore {found.number}"))
    return Answer(
        PaperCard(
            found,
            presented,
            coming,
            button,
            note if archived else (),
            votes.count(ctx.store, found),
            archived,
            talks.of_paper(ctx.store, found),
            closeness.closest(ctx.store, found, RELATED_ON_CARD),
            questions.of_talks(ctx.store, history),
        )
    )
