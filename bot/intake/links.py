"""Papers from links: the catalog's paper a link already names, the tags proposed for a looked-up paper.

    known(store, paper_refs.parse("2501.18512"))    # Paper #29, or None
    propose_tags(store, found)                      # ("parallelism-dp",): tags the catalog has that fit
    fields(found, tags)                             # the add form's fields, filled in

What `add <link>` and `suggest <link>` share; the look-up itself is lookup.py's.
"""

from __future__ import annotations

import re
import unicodedata

from bot.catalog import queries as catalog
from bot.catalog.papers import MAX_AUTHORS, MAX_SUMMARY, MAX_TITLE
from bot.catalog.refs import Ref, keys_of
from bot.intake.lookup import Found
from bot.store.connection import Store

#: Tags proposed for one paper at most.
MAX_PROPOSED = 5
#: The add forms' summary field holds this much (Slack's and Discord's inputs: 3,000 characters).
FORM_SUMMARY = 3000


def known(store: Store, ref: Ref | None = None, *, url: str = "", doi: str | None = None) -> catalog.Paper | None:
    """The catalog's paper that `ref` (or a link and a DOI) names, by its arXiv id, DOI or link; None when none."""
    arxiv_id, doi_key = keys_of(url, doi)
    if ref is not None:
        arxiv_id, doi_key = (ref.key, doi_key) if ref.kind == "arxiv" else (arxiv_id, ref.key)
    db = store.db
    for column, key in (("arxiv_id", arxiv_id), ("doi", doi_key)):
        if key is None:
            continue
        row = db.execute(f"SELECT number FROM papers WHERE {column} = ? ORDER BY number LIMIT 1", [key]).fetchone()
        if row is not None:
            return catalog.by_number(store, row[0])
    if url:
        row = db.execute("SELECT number FROM papers WHERE url = ? ORDER BY number LIMIT 1", [url]).fetchone()
        if row is not None:
            return catalog.by_number(store, row[0])
    return None


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", unicodedata.normalize("NFKC", text).casefold())


def propose_tags(store: Store, found: Found, limit: int = MAX_PROPOSED) -> tuple[str, ...]:
    """The catalog's own tags that fit a looked-up paper, commonest first.

    A tag fits when each of its words is a word of the title or abstract, or (a short word of at
    most 3 letters, as tags abbreviate) the initials of words that follow one another there:
    `parallelism-dp` fits "…pipeline parallelism for data parallel training". No new tag is ever
    made up: an admin adds those by hand.
    """
    words = _words(f"{found.title} {found.summary}")
    present = set(words)
    for n in (2, 3):
        present |= {"".join(w[0] for w in words[i : i + n]) for i in range(len(words) - n + 1)}
    proposed = []
    for name, _count in catalog.tag_counts(store):
        parts = name.split("-")
        if all(p in present and (len(p) > 1 or len(parts) > 1) for p in parts):
            proposed.append(name)
            if len(proposed) == limit:
                break
    return tuple(proposed)


def fields(found: Found, tags: tuple[str, ...]) -> dict:
    """A looked-up paper as the add form's fields (a summary cut to fit the form)."""
    summary = found.summary
    if len(summary) > FORM_SUMMARY:
        summary = summary[: FORM_SUMMARY - 1].rstrip() + "…"
    authors = found.authors
    if len(authors) > MAX_AUTHORS:  # a physics paper's thousands of names: the first ones
        authors = authors[: MAX_AUTHORS - 10].rsplit(",", 1)[0] + ", et al."
    return {
        "title": found.title[:MAX_TITLE],
        "authors": authors,
        "year": found.year,
        "url": found.url,
        "summary": summary[:MAX_SUMMARY],
        "tags": list(tags),
        "doi": found.doi,
    }
