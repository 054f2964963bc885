"""Suggestions: papers members propose, kept apart from the catalog until an admin accepts or declines one.

    s = suggestions.add(store, "U1", found)        # a Suggestion, number s.id; not in the catalog
    suggestions.waiting(store)                     # the open ones, oldest first
    paper, s = suggestions.accept(store, 3, "U9")  # the paper joins the catalog with a number
    s = suggestions.decline(store, 4, "U9")

A suggestion is never in lists, search or the rotation: it is not a paper until it is accepted.
Suggestions are the install's, as the catalog is (its `group_id` column keeps its default, 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from bot.catalog import queries as catalog
from bot.catalog.importing import add_new
from bot.catalog.papers import InvalidPaper, Paper, validate
from bot.intake import links as paper_links
from bot.intake.lookup import Found
from bot.store.connection import Store

#: The open suggestions one list shows.
LIST_MAX = 20


@dataclass(frozen=True)
class Suggestion:
    id: int
    suggested_by: str
    title: str
    authors: str
    year: int | None
    summary: str
    url: str
    state: str  # open, accepted, declined
    paper: int | None  # the catalog's number, once accepted

    @property
    def byline(self) -> str:
        return Paper(0, "", self.title, self.summary, self.url, (), self.authors, self.year).byline


class NotOpen(Exception):
    """No open suggestion has that number; str() says what became of it."""


_COLUMNS = "id, suggested_by, title, authors, year, summary, url, state, paper"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _one(db, number: int) -> Suggestion | None:
    row = db.execute(f"SELECT {_COLUMNS} FROM suggestions WHERE id = ?", [number]).fetchone()
    return Suggestion(*row) if row else None


def same(store: Store, found: Found | None = None, *, arxiv_id: str | None = None, doi: str | None = None):
    """The open suggestion of the same paper (by arXiv id or DOI), or None."""
    if found is not None:
        arxiv_id, doi = found.keys
    for column, key in (("arxiv_id", arxiv_id), ("doi", doi)):
        if key is None:
            continue
        row = store.db.execute(
            f"SELECT {_COLUMNS} FROM suggestions WHERE {column} = ? AND state = 'open' ORDER BY id LIMIT 1", [key]
        ).fetchone()
        if row:
            return Suggestion(*row)
    return None


def add(store: Store, member: str, found: Found, platform: str = "") -> tuple[Suggestion, bool]:
    """Keep `found` as `member`'s suggestion: (it, True); or (the open suggestion of the same paper,
    False) when one came first, checked under the write lock so that two at once make one."""
    arxiv_id, doi = found.keys
    fields = paper_links.fields(found, ())
    with store.write() as db:
        first = same(store, found)
        if first is not None:
            return first, False
        inserted = db.execute(
            "INSERT INTO suggestions (suggested_by, platform, title, authors, year, summary, url, arxiv_id, doi, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [member, platform, fields["title"], fields["authors"], found.year, found.summary[:6000], found.url]
            + [arxiv_id, doi, _now()],
        ).fetchone()
        made = _one(db, inserted[0])
    assert made is not None
    return made, True


def waiting(store: Store, limit: int = LIST_MAX) -> tuple[list[Suggestion], int]:
    """The open suggestions, oldest first (at most `limit`), and how many are open in all."""
    db = store.db
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM suggestions WHERE state = 'open' ORDER BY id LIMIT ?", [limit]
    ).fetchall()
    total = db.execute("SELECT count(*) FROM suggestions WHERE state = 'open'").fetchone()[0]
    return [Suggestion(*r) for r in rows], total


def _open(db, number: int) -> Suggestion:
    found = _one(db, number)
    if found is None:
        raise NotOpen(f"There is no suggestion {number}.")
    if found.state != "open":
        paper = f" (#{found.paper})" if found.paper else ""
        raise NotOpen(f"Suggestion {number} was {found.state} already{paper}.")
    return found


def accept(store: Store, number: int, by: str) -> tuple[Paper, Suggestion]:
    """Put suggestion `number` in the catalog (a paper with a number), with the catalog's tags that fit.

    When the catalog has the paper already (added meanwhile, by link or title), the suggestion is
    accepted as that paper: never a second copy. Raises NotOpen.
    """
    with store.write() as db:
        s = _open(db, number)
        existing = paper_links.known(store, url=s.url)
        if existing is None:
            row = db.execute("SELECT number FROM papers WHERE lower(title) = lower(?)", [s.title]).fetchone()
            existing = catalog.by_number(store, row[0]) if row else None
        if existing is not None:
            paper_number = existing.number
        else:
            tags = paper_links.propose_tags(store, Found(s.title, s.authors, s.year, s.url, s.summary))
            raw = {"title": s.title, "summary": s.summary, "url": s.url, "authors": s.authors, "year": s.year}
            try:
                new = validate({**raw, "tags": list(tags)}, new=True)
            except InvalidPaper:  # a link too long for a chat link, say: kept without it
                new = validate({**raw, "url": None, "tags": list(tags)}, new=True)
            paper_number = add_new(db, new)
        db.execute(
            "UPDATE suggestions SET state = 'accepted', paper = ?, decided_by = ?, decided_at = ? WHERE id = ?",
            [paper_number, by, _now(), number],
        )
        done = _one(db, number)
    paper = catalog.by_number(store, paper_number)
    assert paper is not None and done is not None
    return paper, done


def decline(store: Store, number: int, by: str) -> Suggestion:
    """Turn suggestion `number` down: it never enters the catalog. Raises NotOpen."""
    with store.write() as db:
        _open(db, number)
        db.execute(
            "UPDATE suggestions SET state = 'declined', decided_by = ?, decided_at = ? WHERE id = ?",
            [by, _now(), number],
        )
        done = _one(db, number)
    assert done is not None
    return done
