"""A search's page on PostgreSQL: the same papers, in the same order, as FTS5 gives on SQLite.

    sql, params = pg_search.page(expr, sharing, 500, skip=0, want=41)   # rows (g, s, n): group, score, number
    pg_search.tsquery('"稀疏" + "疏矩" AND "gpu"*')               # "'稀疏' <-> '疏矩' & 'gpu':*"

catalog.search turns a query into FTS5 terms (search_terms.py) on both engines; here they become a
tsquery, read against paper_search's tsvectors (bot/store/postgres_schema.py): the title's, the
tags', and all three fields'. The groups are FTS5's: title matches, then tag matches, then the rest,
then the papers sharing part of a Chinese run; newest first within each. Each group is one arm
ordered by rowid under the page's LIMIT, so PostgreSQL may walk the primary key backwards and stop
after a page when a word is common, or read the GIN index when it is rare (its statistics decide).
"""

from __future__ import annotations

import re
from typing import Any

from bot.catalog.search_terms import Sharing

#: The archived papers' numbers (there are few): they leave search.
ARCHIVED = "SELECT number FROM papers WHERE archived_at IS NOT NULL"

#: A tsquery from the text of one: folded as the stored text is (accents), split as it is.
_QUERY = "to_tsquery('simple', paperbot_fold(:{}))"

# FTS5's syntax as search_terms writes it: quoted words (a trailing * makes a prefix), the phrase's
# `+`, AND, OR, NOT and parentheses.
_FTS5 = re.compile(r'"((?:[^"]|"")*)"(\*?)|(\+)|\b(AND|OR|NOT)\b|([()])|(\s+)|(.)')
_OPERATORS = {"AND": "&", "OR": "|", "NOT": "& !"}


def tsquery(expr: str) -> str:
    """The tsquery text of an FTS5 expression of search_terms' making (ValueError for any other).

    >>> tsquery('"稀疏" + "疏矩" AND ("distributed" OR "distribution") AND "gpu"*')
    "'稀疏' <-> '疏矩' & ( 'distributed' | 'distribution' ) & 'gpu':*"
    """
    out: list[str] = []
    operand_ended = False  # two operands side by side are an AND, as in FTS5
    for m in _FTS5.finditer(expr):
        quoted, star, plus, word, paren, space, other = m.groups()
        if space:
            continue
        if other is not None:
            raise ValueError(f"not an FTS5 expression of search_terms': {expr!r}")
        if quoted is not None or paren == "(":
            if operand_ended:
                out.append("&")
            operand_ended = False
        if quoted is not None:
            words = quoted.replace('""', '"').split()
            if not words:
                raise ValueError(f"an empty phrase in {expr!r}")
            lexemes = ["'" + w.replace("\\", "\\\\").replace("'", "''") + "'" for w in words]
            if star:
                lexemes[-1] += ":*"
            out.append(lexemes[0] if len(lexemes) == 1 else "(" + " <-> ".join(lexemes) + ")")
            operand_ended = True
        elif plus:
            out.append("<->")
            operand_ended = False
        elif word:
            out.append(_OPERATORS[word])
            operand_ended = False
        elif paren == "(":
            out.append("(")
        else:
            out.append(")")
            operand_ended = True
    return " ".join(out)


def holds(db: Any, expr: str) -> bool:
    """Does any paper match `expr` (search_terms' syntax)? The catalog as the glossary of search across languages."""
    found = db.execute(f"SELECT 1 FROM paper_search WHERE all_v @@ {_QUERY.format('t')} LIMIT 1", {"t": tsquery(expr)})
    return found.fetchone() is not None


def papers_with_each(db: Any, exprs: list[str], most: int) -> list[list[tuple[int]]]:
    """For each of `exprs`, the newest `most` papers matching it, as (number,) rows: one statement for
    them all (related.closest's look-ups; one round trip each cost more than the look-ups themselves)."""
    found: list[list[tuple[int]]] = [[] for _ in exprs]
    rows = db.execute(
        "SELECT w.i, p.rowid FROM unnest(CAST(:queries AS text[])) WITH ORDINALITY AS w(q, i) "
        "CROSS JOIN LATERAL (SELECT rowid FROM paper_search WHERE all_v @@ to_tsquery('simple', paperbot_fold(w.q)) "
        "ORDER BY rowid DESC LIMIT :most) AS p ORDER BY w.i, p.rowid DESC",
        {"queries": [tsquery(e) for e in exprs], "most": most},
    )
    for i, number in rows:
        found[i - 1].append((number,))
    return found


def page(
    expr: str, sharing: Sharing | None, candidates: int, widened: str | None = None, *, skip: int, want: int
) -> tuple[str, dict[str, Any]]:
    """The query of the page's papers, `want` of them after `skip`, with its parameters: rows of
    (g: group, s: score, n: number), best first by g, s descending, n descending. `sharing`'s papers
    are looked for among the newest `candidates` sharing any of its bigrams."""
    q = _QUERY.format("q")
    params: dict[str, Any] = {"q": tsquery(expr), "deep": skip + want, "want": want, "skip": skip}
    # One arm a group; each leaves out what an earlier group holds, and archived papers.
    arms = [
        f"SELECT 0 AS g, rowid AS n, 0 AS s FROM paper_search WHERE title_v @@ {q}",
        f"SELECT 1, rowid, 0 FROM paper_search WHERE tags_v @@ {q} AND NOT title_v @@ {q}",
        f"SELECT 2, rowid, 0 FROM paper_search WHERE all_v @@ {q} AND NOT title_v @@ {q} AND NOT tags_v @@ {q}",
    ]
    if widened:  # the papers that hold the query only in the other language (bot/catalog/bilingual.py)
        params["x"] = tsquery(widened)
        arms.append(f"SELECT 3, rowid, 0 FROM paper_search WHERE all_v @@ {_QUERY.format('x')} AND NOT all_v @@ {q}")
    arms = [f"({arm} AND rowid NOT IN ({ARCHIVED}) ORDER BY rowid DESC LIMIT :deep)" for arm in arms]
    if sharing is not None:
        arms.append(_sharing_arm(sharing, candidates, params))
    # Each arm holds at most a page's depth: sorting them together is cheap, and keeps the order
    # whatever plan PostgreSQL takes for the UNION ALL.
    sql = f"SELECT g, s, n FROM ({' UNION ALL '.join(arms)}) AS u ORDER BY g, s DESC, n DESC LIMIT :want OFFSET :skip"
    return sql, params


def _sharing_arm(sharing: Sharing, candidates: int, params: dict[str, Any]) -> str:
    params["any"] = tsquery(sharing.any)
    params["need"] = sharing.need
    params["candidates"] = candidates
    shared = []
    for k, gram in enumerate(sharing.grams):
        params[f"g{k}"] = tsquery(gram)
        shared.append(f"(all_v @@ {_QUERY.format(f'g{k}')})::int")
    # The newest candidates sharing any bigram, the papers holding the whole query among them included
    # (as FTS5 counts them), then those and archived papers left out.
    newest = (
        f"SELECT rowid AS n, all_v FROM paper_search WHERE all_v @@ {_QUERY.format('any')} "
        "ORDER BY rowid DESC LIMIT :candidates"
    )
    return (
        f"(SELECT 4, n, s FROM (SELECT n, {' + '.join(shared)} AS s FROM ({newest}) AS c "
        f"WHERE NOT all_v @@ {_QUERY.format('x' if 'x' in params else 'q')} AND n NOT IN ({ARCHIVED})) AS scored "
        "WHERE s >= :need ORDER BY s DESC, n DESC LIMIT :deep)"
    )
