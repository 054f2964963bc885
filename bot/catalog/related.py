"""The catalog's papers closest to one paper, from the catalog's own words and tags (no model).

    close = related.closest(store, paper, 5)    # best first; never the paper itself, nor an archived one

A paper's words (its title's, summary's and tags' words, Chinese as the bigrams search indexes)
are looked up in the search index one by one; a word in more than COMMON papers (or 5% of a
small catalog) says little about a paper and is left out, and every other word's papers score
its rarity (BM25's idf), three times for a word of the title or the tags. The papers with the
highest sum win, ties to the newest. Each look-up reads at most COMMON + 1 rows, and a paper's
look-ups BUDGET rows in all, so the cost is bounded whatever the catalog's size.

The look-ups are FTS5 MATCHes on SQLite, one at a time, and tsquery matches on PostgreSQL, all in one
statement (pg_search.papers_with_each), where each round trip costs more than a look-up.
"""

from __future__ import annotations

import math
from collections import defaultdict

from bot.catalog import pg_search, search_terms
from bot.catalog.papers import Paper
from bot.catalog.queries import ARCHIVED, many
from bot.store import engine
from bot.store.connection import Store

#: A word in more papers than this is too common to tell papers apart (and would cost a long read);
#: in a small catalog, a word in more than one paper in COMMON_SHARE is.
COMMON, COMMON_SHARE, COMMON_FLOOR = 200, 20, 8
#: The paper's words looked up, at most (its title's and tags' first): bounds the reads of a long summary.
MAX_WORDS = 32
#: Rows read for one paper, at most, whatever its length: bounds the slowest look-up.
BUDGET = 2000
#: Words of one or two letters, and English's commonest, which tell nothing about a paper.
_STOP = frozenset(
    "a an and are as at be by for from in into is it of on or the to via with we our this that its than "
    "using based towards toward new".split()
)


def _words(paper: Paper) -> dict[str, float]:
    """The paper's words as index terms, each with its weight: 3 in the title or tags, else 1; half
    that for a Chinese bigram (a run's overlapping pairs would count each character twice)."""
    weights: dict[str, float] = {}
    for text, weight in ((paper.title, 3.0), (" ".join(paper.tags), 3.0), (paper.summary, 1.0)):
        indexed, words = search_terms.index_form(text)
        for word in indexed.split():
            if len(word) > 1 and word not in _STOP and not word.isdigit():
                weights.setdefault(word, weight if word in words else weight / 2)
    return weights


def closest(store: Store, paper: Paper, n: int = 5) -> list[Paper]:
    """Up to `n` papers closest to `paper` (which must carry its tags), best first."""
    db = store.db
    # The highest number stands for the catalog's size (numbers are never reused): count(*) reads every row.
    total = db.execute("SELECT max(number) FROM papers").fetchone()[0] or 1
    common = min(COMMON, max(COMMON_FLOOR, total // COMMON_SHARE))
    scores: dict[int, float] = defaultdict(float)
    read = 0
    # The title's and tags' words come first, so a long summary's tail is what MAX_WORDS cuts.
    words = list(_words(paper).items())[:MAX_WORDS]
    if engine.is_postgres(db):  # every look-up in one round trip
        each = iter(pg_search.papers_with_each(db, [f'"{word}"' for word, _ in words], common + 1))
    else:
        each = (
            db.execute(
                "SELECT rowid FROM paper_search WHERE paper_search MATCH ? ORDER BY rowid DESC LIMIT ?",
                [f'"{word}"', common + 1],
            ).fetchall()
            for word, _ in words
        )
    for (_word, weight), found in zip(words, each, strict=True):
        read += len(found)
        if read > BUDGET:
            break
        if len(found) > common or len(found) < 2:
            continue  # too common to tell, or only this paper's own
        # BM25's idf: a word in half the papers or more counts for nothing.
        rarity = weight * max(0.0, math.log((total - len(found) + 0.5) / (len(found) + 0.5)))
        for (number,) in found:
            scores[number] += rarity
    scores.pop(paper.number, None)
    if not scores:
        return []
    archived = {r[0] for r in db.execute(ARCHIVED)}
    best = sorted((s, number) for number, s in scores.items() if number not in archived)
    chosen = [number for _, number in reversed(best[-n:])]
    papers = many(store, chosen, with_tags=True)
    return [papers[number] for number in chosen if number in papers]
