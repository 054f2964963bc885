"""The group's tagged paper catalog: finding, listing and searching papers, adding and deleting one.

    paper = catalog.find(store, "streaming-diloco")   # or "7", "#7"
    page = catalog.tagged(store, "Parallelism_DP")     # tags fold: parallelism-dp
    hits = catalog.search(store, "数据并行 fsdp")
    store = catalog.open_store("data/paperbot.db")     # a new file starts with the group's first list

A paper has a short slug `id` that imports match on, and a stable `number`
(#7) that is never reused. Writes go through `importing.upsert` and `add`, which
keep the search index in the same transaction as the paper. What a paper is and
how its fields are checked: papers.py.
"""

from __future__ import annotations

import difflib
import functools
import logging
import sqlite3
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bot.catalog import bilingual, pg_search, search_terms, starting
from bot.catalog import files as papers_file
from bot.catalog.importing import (  # noqa: F401  (re-exported: other modules import these from here)
    _NUMBERED,
    Claims,
    DiskFullDuringImport,
    LaterClaims,
    UpsertCounts,
    _Batch,
    _free_slug,
    _upsert_one,
    add_new,
    optimize,
    upsert,
)
from bot.catalog.papers import (  # noqa: F401  (re-exported: other modules import these from here)
    _REF,
    MAX_ID,
    MAX_LINK,
    MAX_NUMBER,
    MAX_SUMMARY,
    MAX_TAG,
    MAX_TAGS,
    MAX_TITLE,
    MAX_URL,
    MAX_WISHED_NUMBER,
    PAPER_COLUMNS,
    InvalidPaper,
    Paper,
    PaperInput,
    fold_tag,
    slugify,
    validate,
)
from bot.catalog.search_index import MERGING, SEARCH_TABLES, merging_left_off, set_merging
from bot.store import engine
from bot.store.connection import Store, set_meta

log = logging.getLogger(__name__)

PAGE_SIZE = 40


@dataclass
class Page:
    papers: list[Paper]
    page: int
    has_more: bool
    total: int | None = None  # None when counting would cost more than it tells


# -- reading ----------------------------------------------------------------

#: A paper's columns with its authors and year, for a paper shown alone or exported.
DETAIL_COLUMNS = f"{PAPER_COLUMNS}, p.authors, p.year"

#: The same without the summary (read as ''), for lists of weeks, which show a paper by its title.
PAPER_TITLE_COLUMNS = "p.number, p.id, p.title, '', p.url"


def joined_paper(row, at: int) -> Paper | None:
    """The paper in `row[at:at + 5]` of a query that selected PAPER_COLUMNS (None: no such paper). No tags."""
    return None if row[at] is None else Paper(row[at], row[at + 1], row[at + 2], row[at + 3], row[at + 4])


def _papers(store: Store, sql: str, params: Iterable = (), *, with_tags: bool = False) -> list[Paper]:
    db = store.db
    rows = db.execute(sql, list(params)).fetchall()
    tags: dict[int, tuple[str, ...]] = {}
    if with_tags and rows:
        numbers = [r[0] for r in rows]
        marks = ",".join("?" * len(numbers))
        found: dict[int, list[str]] = {}
        for paper, name in db.execute(
            f"SELECT pt.paper, t.name FROM paper_tags pt JOIN tags t ON t.id = pt.tag "
            f"WHERE pt.paper IN ({marks}) ORDER BY t.name",
            numbers,
        ):
            found.setdefault(paper, []).append(name)
        tags = {k: tuple(v) for k, v in found.items()}
    if rows and len(rows[0]) > 5:  # DETAIL_COLUMNS: authors and year too
        return [Paper(r[0], r[1], r[2], r[3], r[4], tags.get(r[0], ()), r[5], r[6]) for r in rows]
    return [Paper(r[0], r[1], r[2], r[3], r[4], tags.get(r[0], ())) for r in rows]


def find(store: Store, ref: str, *, with_tags: bool = True) -> Paper | None:
    """The paper that `ref` names: its id, or its number as `7` or `#7` (or `＃７`)."""
    ref = unicodedata.normalize("NFKC", ref).strip()
    m = _REF.match(ref)
    key: int | str
    if m:
        sql, key = f"SELECT {DETAIL_COLUMNS} FROM papers p WHERE p.number = ?", int(m[1])
    else:
        sql, key = f"SELECT {DETAIL_COLUMNS} FROM papers p WHERE p.id = ?", ref.lower()
    found = _papers(store, sql, [key], with_tags=with_tags)
    return found[0] if found else None


def by_number(store: Store, number: int) -> Paper | None:
    found = _papers(store, f"SELECT {DETAIL_COLUMNS} FROM papers p WHERE p.number = ?", [number], with_tags=True)
    return found[0] if found else None


def similar_ids(store: Store, ref: str, n: int = 3) -> list[str]:
    """Paper ids that look like `ref`, for 'did you mean'."""
    ref = ref.strip().lower()
    if not ref or _REF.match(ref):
        return []
    prefix = [
        r[0]
        for r in store.db.execute(
            "SELECT id FROM papers WHERE id >= ? AND id < ? ORDER BY id LIMIT ?", [ref[:3], ref[:3] + "\uffff", 200]
        )
    ]
    return difflib.get_close_matches(ref, prefix, n=n, cutoff=0.5)


#: The archived papers' numbers, read through the partial index papers_archived (there are few).
ARCHIVED = "SELECT number FROM papers WHERE archived_at IS NOT NULL"


def _archived_by_tag(db) -> dict[int, int]:
    """How many archived papers each tag has (tags.papers counts every paper, archived or not)."""
    return dict(db.execute(f"SELECT tag, count(*) FROM paper_tags WHERE paper IN ({ARCHIVED}) GROUP BY tag").fetchall())


def tag_counts(store: Store) -> list[tuple[str, int]]:
    """Every tag with its paper count (archived papers left out), commonest first."""
    db = store.db
    archived = _archived_by_tag(db)
    rows = db.execute("SELECT id, name, papers FROM tags WHERE papers > 0 ORDER BY papers DESC, name").fetchall()
    if not archived:
        return [(name, n) for _, name, n in rows]
    counts = [(name, n - archived.get(tag, 0)) for tag, name, n in rows]
    return sorted(((name, n) for name, n in counts if n > 0), key=lambda c: (-c[1], c[0]))


def tag_names(store: Store) -> list[str]:
    return [r[0] for r in store.db.execute("SELECT name FROM tags WHERE papers > 0 ORDER BY name")]


def closest_tags(store: Store, wanted: str, n: int = 3) -> list[str]:
    """Existing tags that look like `wanted`, closest first."""
    names = tag_names(store)
    close = difflib.get_close_matches(wanted, names, n=n, cutoff=0.5)
    if len(close) < n:
        close += [t for t in names if (wanted in t or t in wanted) and t not in close][: n - len(close)]
    return close


def tagged(store: Store, tag: str, page: int = 1, size: int = PAGE_SIZE) -> tuple[str, Page]:
    """Papers carrying `tag` (folded), a page of `size` at a time, by number."""
    name = fold_tag(tag)
    # One statement, so one consistent read: the tag's count (less its archived papers) comes along
    # with each of its papers.
    unarchived = f"t.papers - (SELECT count(*) FROM paper_tags a WHERE a.tag = t.id AND a.paper IN ({ARCHIVED}))"
    rows = store.db.execute(
        f"SELECT {unarchived}, {PAPER_COLUMNS} FROM tags t JOIN paper_tags pt ON pt.tag = t.id "
        "JOIN papers p ON p.number = pt.paper WHERE t.name = ? AND p.archived_at IS NULL "
        "ORDER BY pt.paper LIMIT ? OFFSET ?",
        [name, size, (page - 1) * size],
    ).fetchall()
    if rows:
        total = rows[0][0]
    else:  # no such tag, or a page past its end
        row = store.db.execute(f"SELECT {unarchived} FROM tags t WHERE t.name = ?", [name]).fetchone()
        total = row[0] if row else 0
    papers = [Paper(r[1], r[2], r[3], r[4], r[5]) for r in rows]
    return name, Page(papers, page, page * size < total, total)


def search(store: Store, query: str, page: int = 1, size: int = PAGE_SIZE) -> Page | None:
    """Papers matching every word of `query`, best first; None if there is nothing to search for.

    Best first means: papers whose title has all the words, then those whose
    tags have them, then the rest; newest first within each group; then those
    that hold them only in the other language (`pipeline` as 流水线, `推测解码`
    as "speculative decoding": see bilingual); then the papers sharing part of a
    Chinese run (search_terms.sharing). The query's terms are the same on both
    engines; the page is read by FTS5 on SQLite (_fts5_page) and by tsvectors on
    PostgreSQL (pg_search), in one statement.
    """
    db = store.db
    expand = functools.cache(lambda prefix: _words_starting(db, prefix))  # the terms and sharing ask alike
    terms = search_terms.match_terms(query, expand=expand)
    if not terms:
        return None
    expr = search_terms.all_of(terms)
    skip = (page - 1) * size
    want = size + 1  # one more tells whether there is a next page
    postgres = engine.is_postgres(db)

    def read(sharing: search_terms.Sharing | None, widened: str | None) -> list:
        if postgres:
            matches, params = pg_search.page(expr, sharing, SHARING_CANDIDATES, widened, skip=skip, want=want)
        else:
            matches, params = _fts5_page(db, expr, len(terms), sharing, widened, skip=skip, want=want)
        return db.execute(
            f"SELECT {PAPER_COLUMNS} FROM ({matches}) AS m JOIN papers p ON p.number = m.n "
            "ORDER BY m.g, m.s DESC, m.n DESC",
            params,
        ).fetchall()

    rows = read(None, None)
    if len(rows) <= size:  # the exact hits leave room: the other language's, then those sharing a Chinese run
        holds = functools.partial(pg_search.holds, db) if postgres else functools.partial(_holds, db)
        other = search_terms.other_language(query, bilingual.other_language, holds, expand)
        sharing = search_terms.sharing(query, expand=expand)
        if other or sharing is not None:
            rows = read(sharing, search_terms.all_of(other) if other else None)
    return Page([Paper(*row) for row in rows[:size]], page, len(rows) > size)


#: The newest papers sharing part of a Chinese run that are scored, at most: bounds a search's cost
#: whatever the catalog's size.
SHARING_CANDIDATES = 500


def _fts5_page(
    db, expr: str, terms: int, sharing: search_terms.Sharing | None, widened: str | None, *, skip: int, want: int
) -> tuple[str, dict]:
    """SQLite's query of the page's papers (g: group, n: number, s: score), with its parameters.

    Each group is its own FTS5 index (SEARCH_TABLES, in that order), read in rowid order, which FTS5
    walks lazily and stops after one page: a page costs about the same whether a word is in ten
    papers or in half the catalog (a bm25 sort would have to score every match first). The groups
    are the arms of one UNION ALL under the page's LIMIT, so SQLite reads a group only when the ones
    before it ran out, and the page is one consistent read.
    """
    groups = list(SEARCH_TABLES)
    if terms > 1:
        # FTS5 walks an AND backwards by loading each word's whole list, even when another of the words
        # is in no paper of that index ("training 训练" in titles): asking forwards first is a cheap "none".
        groups = [
            t
            for t in groups[:-1]
            if db.execute(f"SELECT 1 FROM {t} WHERE {t} MATCH :q LIMIT 1", {"q": expr}).fetchone() is not None
        ] + groups[-1:]
    arms = []
    for i, table in enumerate(groups):
        earlier = "".join(f" AND rowid NOT IN (SELECT rowid FROM {t} WHERE {t} MATCH :q)" for t in groups[:i])
        earlier += f" AND rowid NOT IN ({ARCHIVED})"  # archived papers leave search
        arms.append(
            f"SELECT * FROM (SELECT {i} AS g, rowid AS n, 0 AS s FROM {table} WHERE {table} MATCH :q{earlier} "
            "ORDER BY rowid DESC LIMIT :deep)"
        )
    params = {"q": expr, "deep": skip + want, "want": want, "skip": skip, "x": widened or expr}
    if widened:
        # After the exact hits, the papers that hold the query only in the other language (流水线 for pipeline).
        arms.append(
            f"SELECT * FROM (SELECT {len(groups)} AS g, rowid AS n, 0 AS s FROM paper_search WHERE paper_search "
            "MATCH :x AND rowid NOT IN (SELECT rowid FROM paper_search WHERE paper_search MATCH :q) "
            f"AND rowid NOT IN ({ARCHIVED}) ORDER BY rowid DESC LIMIT :deep)"
        )
    if sharing is not None:
        arms.append(_sharing_arm(db, len(arms), sharing, params))
    return f"{' UNION ALL '.join(arms)} LIMIT :want OFFSET :skip", params


def _sharing_arm(db, g: int, sharing: search_terms.Sharing, params: dict) -> str:
    """The last arm of a search with a Chinese run typed without spaces (`数据并行训练`): the papers
    that hold not all of it but at least half of its bigrams (and every other word), most shared
    first, among the newest SHARING_CANDIDATES sharing any. Read only when the papers holding all
    of it leave the page room (UNION ALL is lazy)."""
    params["any"] = sharing.any
    params["need"] = sharing.need
    # The oldest of the newest papers sharing any bigram: the candidates and each bigram are read from
    # it on only (FTS5 seeks to a rowid range), so the cost stays the same as the catalog grows.
    params["low"] = (
        db.execute(
            "SELECT min(n) FROM (SELECT rowid AS n FROM paper_search WHERE paper_search MATCH :any "
            f"ORDER BY rowid DESC LIMIT {SHARING_CANDIDATES})",
            params,
        ).fetchone()[0]
        or 0
    )
    # Not those an earlier arm gave: the exact hits, or those of the other language (:x holds :q's too).
    candidates = (
        "SELECT rowid AS n FROM paper_search WHERE paper_search MATCH :any AND rowid >= :low AND rowid NOT IN "
        f"(SELECT rowid FROM paper_search WHERE paper_search MATCH :x AND rowid >= :low) AND rowid NOT IN ({ARCHIVED})"
    )
    shared = []
    for k, gram in enumerate(sharing.grams):
        params[f"g{k}"] = gram
        shared.append(f"(n IN (SELECT rowid FROM paper_search WHERE paper_search MATCH :g{k} AND rowid >= :low))")
    return (
        f"SELECT * FROM (SELECT {g} AS g, n, s FROM (SELECT n, {' + '.join(shared)} AS s FROM ({candidates})) "
        "WHERE s >= :need ORDER BY s DESC, n DESC LIMIT :deep)"
    )


def _holds(db, term: str) -> bool:
    """Does any paper match the FTS5 `term`? (The catalog as the glossary of search across languages.)"""
    return db.execute("SELECT 1 FROM paper_search WHERE paper_search MATCH ? LIMIT 1", [term]).fetchone() is not None


def _words_starting(db, prefix: str) -> list[str] | None:
    """Indexed words that start with `prefix`, or None if there are more than a query should name."""
    rows = db.execute(
        "SELECT term FROM search_vocab WHERE term >= ? AND term < ? ORDER BY term LIMIT ?",
        [prefix, prefix + "\U0010ffff", search_terms.MAX_EXPANSION + 1],
    ).fetchall()
    return None if len(rows) > search_terms.MAX_EXPANSION else [r[0] for r in rows]


def many(store: Store, numbers, *, with_tags: bool = False) -> dict[int, Paper]:
    """Papers by number, in one query."""
    numbers = list(numbers)
    if not numbers:
        return {}
    marks = ",".join("?" * len(numbers))
    sql = f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.number IN ({marks})"
    return {p.number: p for p in _papers(store, sql, numbers, with_tags=with_tags)}


def count(store: Store) -> int:
    return store.db.execute("SELECT count(*) FROM papers").fetchone()[0]


def empty(store: Store) -> bool:
    """No paper at all, archived ones included: a new place's catalog, or one begun with `init --empty`."""
    return store.db.execute("SELECT 1 FROM papers LIMIT 1").fetchone() is None


def all_papers(store: Store, batch: int = 2000) -> Iterator[Paper]:
    """Every paper with its tags, by number, read in batches (for export)."""
    last = 0
    while True:
        chunk = _papers(
            store,
            f"SELECT {DETAIL_COLUMNS} FROM papers p WHERE p.number > ? ORDER BY p.number LIMIT ?",
            [last, batch],
            with_tags=True,
        )
        if not chunk:
            return
        yield from chunk
        last = chunk[-1].number


# -- writing ----------------------------------------------------------------


def add(store: Store, paper: PaperInput) -> Paper:
    """Add one new paper (the add form): a slug is made from the title when none is given."""
    with store.write() as db:
        if paper.id is not None and db.execute("SELECT 1 FROM papers WHERE id = ?", [paper.id]).fetchone():
            raise InvalidPaper("id", f"there is already a paper with id {paper.id}")
        same = db.execute("SELECT number FROM papers WHERE lower(title) = lower(?)", [paper.title]).fetchone()
        if same is not None:
            raise InvalidPaper("title", f"#{same[0]} already has this title")
        number = add_new(db, paper)
    found = by_number(store, number)
    assert found is not None
    return found


#: Given a paper as it is under the write lock; raises to change nothing.
Check = Callable[[Paper], None]


def edit(
    store: Store, paper: Paper, changes: PaperInput, *, clear_year: bool = False, check: Check | None = None
) -> Paper:
    """Change a paper's fields (None: as it is); its number, id, talks, votes and posts stay. The
    search index follows in the same transaction. `clear_year`: the year is taken away. `check` is
    given the paper as it is under the write lock, and may raise to change nothing (a form's save
    over a paper changed since it opened)."""
    changes = PaperInput(
        id=paper.id,
        title=changes.title,
        summary=changes.summary,
        url=changes.url,
        tags=changes.tags,
        authors=changes.authors,
        year=changes.year,
        doi=changes.doi,
    )
    with store.write() as db:
        if db.execute("SELECT 1 FROM papers WHERE number = ?", [paper.number]).fetchone() is None:
            raise InvalidPaper("title", f"#{paper.number} was deleted meanwhile")
        if check is not None:
            now = by_number(store, paper.number)
            assert now is not None
            check(now)
        if changes.title is not None:
            same = db.execute(
                "SELECT number FROM papers WHERE lower(title) = lower(?) AND number != ?",
                [changes.title, paper.number],
            ).fetchone()
            if same is not None:
                raise InvalidPaper("title", f"#{same[0]} already has this title")
        batch = _Batch(db)
        _upsert_one(batch, changes, batch.existing([changes]))
        batch.flush()
        if clear_year:
            db.execute("UPDATE papers SET year = NULL WHERE number = ?", [paper.number])
    found = by_number(store, paper.number)
    assert found is not None
    return found


class PaperInUse(Exception):
    """A paper that a talk, a post or another record refers to cannot be deleted; str() says what refers to it."""


#: What each table that refers to papers holds, in words, for the refusal to delete one.
_USES = {
    "slots": "a talk (booked or given)",
    "deliveries": "a weekly post or reminder",
    "votes": "votes",
}


def delete(store: Store, paper: Paper) -> None:
    """Delete a paper that nothing refers to: its tags and search rows go with it; its number is never
    handed out again. Raises PaperInUse naming what refers to it.

    Every table whose rows name a paper (by a foreign key that does not cascade) is asked, so a
    table added later is asked too.
    """
    with store.write() as db:
        if db.execute("SELECT 1 FROM papers WHERE number = ?", [paper.number]).fetchone() is None:
            return  # deleted meanwhile
        use = _use(db, paper)
        if use is not None:
            raise PaperInUse(use)
        db.execute(
            "UPDATE tags SET papers = papers - 1 WHERE id IN (SELECT tag FROM paper_tags WHERE paper = ?)",
            [paper.number],
        )
        db.execute("DELETE FROM paper_tags WHERE paper = ?", [paper.number])
        for table in SEARCH_TABLES:
            db.execute(f"DELETE FROM {table} WHERE rowid = ?", [paper.number])
        try:
            db.execute("DELETE FROM papers WHERE number = ?", [paper.number])
        except sqlite3.IntegrityError:  # a reference the look-up above did not know of
            raise PaperInUse("other records") from None


def in_use(store: Store, paper: Paper) -> str | None:
    """What refers to `paper` and so keeps it from deletion, in words; None: nothing does."""
    return _use(store.db, paper)


def _use(db, paper: Paper) -> str | None:
    for table, column in _references(db):
        if db.execute(f'SELECT 1 FROM "{table}" WHERE "{column}" = ? LIMIT 1', [paper.number]).fetchone():
            return _USES.get(table, f"the {table} table")
    return None


def _references(db) -> list[tuple[str, str]]:
    """(table, column) of every foreign key to papers that does not delete with the paper."""
    if engine.is_postgres(db):
        return db.execute(
            "SELECT cl.relname, a.attname FROM pg_constraint c JOIN pg_class cl ON cl.oid = c.conrelid "
            "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey) "
            "WHERE c.contype = 'f' AND c.confrelid = 'papers'::regclass AND c.confdeltype <> 'c'"
        ).fetchall()
    found = []
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        for row in db.execute(f'PRAGMA foreign_key_list("{table}")').fetchall():
            # id, seq, table, from, to, on_update, on_delete, match
            if row[2] == "papers" and row[6].upper() != "CASCADE":
                found.append((table, row[3]))
    return found


# -- the database file --------------------------------------------------------

#: The group's first list, loaded into a new database: data/ of a clone, or its copy in an
#: installed package (pyproject.toml ships data/ as bot/seed/).
_BOT = Path(__file__).resolve().parent.parent
SEED_FILE = next(
    (path for path in (_BOT.parent / "data" / "papers.yaml", _BOT / "seed" / "papers.yaml") if path.is_file()),
    _BOT.parent / "data" / "papers.yaml",
)


def open_store(
    path: str | Path, *, seed: Path | None = SEED_FILE, writes: bool = True, schema: str | None = None
) -> Store:
    """The database at `path`; a missing file is made with the papers of `seed` (None: no papers).

    Raises store.NotADatabase for a file that is there but no paperbot database. `schema`: a place's
    tables in a PostgreSQL database (bot/places/registry.py).
    """
    if isinstance(path, str) and path.startswith(("postgresql://", "postgres://")):
        from bot.store.postgres import PgStore  # noqa: PLC0415 - psycopg is loaded only for PostgreSQL

        store: Store = PgStore(path, create=lambda new: _first_papers(new, seed), writes=writes, schema=schema)
    else:
        store = Store(path, create=lambda new: _first_papers(new, seed), writes=writes)
    try:
        _settle(store, seed)
    except BaseException:
        store.close()
        raise
    return store


def _first_papers(store: Store, seed: Path | None) -> None:
    """Fill a new database with the papers of `seed`, and mark it seeded (so never again)."""
    with store.write() as db:
        count = _seed(store, seed)
        set_meta(db, "seeded", str(count))
        set_meta(db, "seeded_digest", starting.digest(db))


def _settle(store: Store, seed: Path | None) -> None:
    """What an opened database may still need: its first papers (a file made without them, by
    Store alone), and the search indexes' merging, which an import that was killed leaves off."""
    db = store.db
    unseeded = db.execute("SELECT 1 FROM meta WHERE key = 'seeded'").fetchone() is None
    if not unseeded and not merging_left_off(db):
        return
    with store.write() as db:
        if db.execute("SELECT 1 FROM meta WHERE key = 'seeded'").fetchone() is None:
            # Only an empty catalog is seeded: papers someone already has are never overwritten.
            empty = db.execute("SELECT count(*) FROM papers").fetchone()[0] == 0
            count = _seed(store, seed) if empty else 0
            db.execute("INSERT INTO meta (key, value) VALUES ('seeded', ?)", [str(count)])
            set_meta(db, "seeded_digest", starting.digest(db))
        if merging_left_off(db):
            set_merging(db, MERGING)


def _seed(store: Store, seed: Path | None) -> int:
    """Load `seed` inside the caller's write transaction; how many papers it gave."""
    if seed is None:
        return 0
    if not seed.is_file():
        log.warning("no seed catalog at %s; starting with an empty catalog", seed)
        return 0
    report = papers_file.read(seed)
    for problem in report.problems:
        log.warning("seed %s", problem)
    upsert(store, report.papers, in_transaction=True)
    return len(report.papers)


# -- archiving ------------------------------------------------------------------


def archived_at(store: Store, paper: Paper) -> str | None:
    """When the paper was archived (ISO time, UTC), or None while it is in the catalog's lists."""
    row = store.db.execute("SELECT archived_at FROM papers WHERE number = ?", [paper.number]).fetchone()
    return row[0] if row else None


def archived_among(store: Store, numbers: Iterable[int]) -> set[int]:
    """Which of `numbers` are archived papers, in one query (a schedule's papers)."""
    numbers = list(numbers)
    if not numbers:
        return set()
    marks = ",".join("?" * len(numbers))
    rows = store.db.execute(f"SELECT number FROM papers WHERE number IN ({marks}) AND archived_at IS NOT NULL", numbers)
    return {r[0] for r in rows}


def set_archived(store: Store, paper: Paper, archived: bool) -> bool:
    """Archive the paper (it leaves lists, search, tag counts and the rotation, keeping its number,
    talks and posts) or restore it; False when it was so already."""

    when = datetime.now(UTC).isoformat(timespec="seconds") if archived else None
    with store.write() as db:
        changed = db.execute(
            "UPDATE papers SET archived_at = ? WHERE number = ? AND (archived_at IS NULL) = ?",
            [when, paper.number, archived],
        ).rowcount
    return bool(changed)
