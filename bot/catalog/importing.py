"""Writing many papers at once: an import's rows, added or updated by id, the search index kept in step.

    counts = importing.upsert(store, papers)      # UpsertCounts(added=..., updated=..., unchanged=...)

Commits in batches, so that a big import never holds the write lock for long
while the bot is serving sign-ups. A row without an id is the paper that got
its title's slug, so importing the same file twice changes nothing.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import sqlite_utils

from bot.catalog import refs as paper_refs
from bot.catalog import search_terms
from bot.catalog.papers import (
    MAX_ID,
    MAX_NUMBER,
    PAPER_COLUMNS,
    InvalidPaper,
    PaperInput,
    _ascii_slug,
    _ascii_slug_cut_mid_word,
    cut_slug,
    slugify,
)
from bot.catalog.search_index import MERGING, MERGING_DEFERRED, SEARCH_TABLES, set_merging
from bot.store import engine
from bot.store.connection import DiskFull, Store


@dataclass
class UpsertCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    problems: list[str] = field(default_factory=list)


class DiskFullDuringImport(DiskFull):
    """A batch found the disk full: the batches before it are in (`counts`), this one and the rest are not."""

    def __init__(self, counts: UpsertCounts, full: DiskFull):
        super().__init__(str(full))
        self.sqlite_errorcode = full.sqlite_errorcode
        self.counts = counts


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def upsert(
    store: Store,
    papers: Iterable[PaperInput],
    *,
    in_transaction: bool = False,
    batch: int = 1000,
    claims: Claims | None = None,
) -> UpsertCounts:
    """Add or update papers by id; identical rows change nothing.

    Commits every `batch` papers, so that an import of a big list never holds
    the write lock for long while the bot is serving sign-ups. `claims`: what the rows of the
    whole import say by id (several files); by default these papers' own.
    """
    counts = UpsertCounts()
    chunk: list[PaperInput] = []

    def flush(claims: Claims) -> None:
        if in_transaction:
            _upsert_chunk(store, chunk, counts, claims)
        else:
            before = replace(counts, problems=list(counts.problems))
            try:
                with store.write():
                    _upsert_chunk(store, chunk, counts, claims)
            except DiskFull as full:  # rolled back: the counts say what the committed batches did
                raise DiskFullDuringImport(before, full) from full
            time.sleep(IMPORT_GAP_SECONDS)  # the lock is free: a waiting sign-up takes its turn now
        chunk.clear()

    if in_transaction:
        chunk.extend(papers)
        flush(claims or Claims(chunk))
        return counts
    # Checkpoint the WAL every 80 MB instead of every 4 MB while importing: each checkpoint
    # copies pages back and syncs, and a big import spent a fifth of its time there.
    sqlite = not engine.is_postgres(store)  # PostgreSQL has no log to checkpoint nor segments to merge
    if sqlite:
        store.db.execute(f"PRAGMA wal_autocheckpoint = {BULK_CHECKPOINT_PAGES}")
        # Nor merge the search indexes' segments at every commit: optimize() merges them once at the end.
        with store.write() as db:
            set_merging(db, MERGING_DEFERRED)
    try:
        if claims is None:  # every row's id, before the first is written (see Claims)
            papers = list(papers)
            claims = Claims(papers)
        for paper in papers:  # read as they come: an import passes its file's rows one at a time
            chunk.append(paper)
            if len(chunk) >= batch:
                flush(claims)
        if chunk:
            flush(claims)
    finally:
        if sqlite:
            store.db.execute("PRAGMA wal_autocheckpoint = 1000")
            try:
                with store.write() as db:
                    set_merging(db, MERGING)
            except DiskFull:  # the next start turns merging back on (catalog.open_store)
                pass
    if sqlite:
        if counts.added + counts.updated >= OPTIMIZE_AFTER:
            optimize(store)
        store.db.execute("PRAGMA wal_checkpoint(PASSIVE)")
    elif counts.added + counts.updated >= OPTIMIZE_AFTER:
        # Now rather than when autovacuum comes by: the GIN indexes' pending entries, which every search
        # reads one by one, go into the indexes, and PostgreSQL learns how common the new words are,
        # by which it plans a search.
        store.db.execute("VACUUM (ANALYZE) papers, paper_tags, tags, paper_search")
    return counts


BULK_CHECKPOINT_PAGES = 20_000


#: After writing this many papers, the search indexes are merged into one segment each.
OPTIMIZE_AFTER = 2000


#: Between two of an import's write transactions: long enough for a writer asking every millisecond
#: (Store.write) to get the lock, short enough to cost 100 batches a fraction of a second.
IMPORT_GAP_SECONDS = 0.003
#: Pages of search index that one merge step writes, in a transaction of its own (at most about half a second).
MERGE_STEP_PAGES = 1000


def optimize(store: Store) -> None:
    """Merge each search index into one segment: a big import leaves dozens, and every query reads them all.

    FTS5's 'optimize' does it in one transaction, which at 100,000 papers holds the write
    lock for seconds. A negative 'merge' does the same work a step at a time; a step that
    changes fewer than 2 rows means the index is one segment.
    """
    for table in SEARCH_TABLES:
        while True:
            with store.write() as db:
                before = db.conn.total_changes
                db.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('merge', ?)", [-MERGE_STEP_PAGES])
                done = db.conn.total_changes - before < 2
            if done:
                break
            time.sleep(IMPORT_GAP_SECONDS)


#: What an update compares: the paper's columns, its authors and year.
_ROW_COLUMNS = f"{PAPER_COLUMNS}, p.authors, p.year, p.doi"


class _Batch:
    """The writes of one transaction. New papers' rows go to SQLite in bulk (executemany) at `flush`."""

    def __init__(self, db):
        self.db = db
        self.tag_ids: dict[str, int] = {}
        self.counts: Counter = Counter()  # tag id -> papers added minus papers removed
        self.words: set[str] = set()  # words this transaction put in search_vocab
        self.rows: dict[str, list[tuple]] = {
            "papers": [],
            "paper_tags": [],
            "search": [],
            "titles": [],
            "tag_words": [],
            "vocab": [],
        }
        self.now = _now()
        self.keys: dict[tuple[str, str], tuple[int, str]] = {}  # (column, arXiv id or DOI) -> paper
        self.refs: dict[int, tuple[PaperInput, tuple[str | None, str | None]]] = {}  # id(row) -> (row, its keys)
        # Numbers are handed out here, so that new papers can be inserted in bulk; none is ever handed
        # out twice (engine.numbers_given).
        self.next_number = 1 + engine.highest_paper_number(db)

    def existing(self, papers: list[PaperInput]) -> dict[str, tuple]:
        """The stored rows of the papers in `papers` that have an id, by id."""
        ids = [p.id for p in papers if p.id is not None]
        found: dict[str, tuple] = {}
        for i in range(0, len(ids), 900):
            part = ids[i : i + 900]
            marks = ",".join("?" * len(part))
            for row in self.db.execute(f"SELECT {_ROW_COLUMNS} FROM papers p WHERE p.id IN ({marks})", part):
                found[row[1]] = tuple(row)
        return found

    def new_paper(self, paper: PaperInput, slug: str) -> int:
        """Queue a new paper; its number is its wish when that number was never used, else the next."""
        number = paper.number
        if number is None or number < self.next_number:
            number = self.next_number
        if number > MAX_NUMBER:  # only after an import wished for a number near the top
            raise InvalidPaper(
                "number", f"no paper number is left for it: numbers go up to {MAX_NUMBER:,}, and the last is taken"
            )
        self.next_number = number + 1
        url = paper.url or ""
        arxiv_id, doi = self.refs_of(paper)
        for kind, key in (("arxiv_id", arxiv_id), ("doi", doi)):
            if key is not None:
                self.keys.setdefault((kind, key), (number, slug))
        self.rows["papers"].append(
            (number, slug, paper.title, paper.summary or "", url, paper.authors or "", paper.year, arxiv_id, doi)
            + (self.now, self.now)
        )
        return number

    def refs_of(self, paper: PaperInput) -> tuple[str | None, str | None]:
        """(arXiv id, DOI) of a row's link and DOI, worked out once a row (an import reads each thrice)."""
        found = self.refs.get(id(paper))
        if found is None or found[0] is not paper:
            found = self.refs[id(paper)] = (paper, paper_refs.keys_of(paper.url or "", paper.doi))
        return found[1]

    def load_keys(self, papers: list[PaperInput]) -> None:
        """Look up, in a few queries, the stored papers that have the arXiv ids and DOIs of `papers`."""
        wanted: dict[str, set[str]] = {"arxiv_id": set(), "doi": set()}
        for p in papers:
            arxiv_id, doi = self.refs_of(p)
            for kind, key in (("arxiv_id", arxiv_id), ("doi", doi)):
                if key is not None and (kind, key) not in self.keys:
                    wanted[kind].add(key)
        for kind, keys in wanted.items():
            keys_list = list(keys)
            for i in range(0, len(keys_list), 900):
                part = keys_list[i : i + 900]
                marks = ",".join("?" * len(part))
                rows = self.db.execute(
                    f"SELECT {kind}, number, id FROM papers WHERE {kind} IN ({marks}) ORDER BY number DESC", part
                )
                for key, number, slug in rows:  # the lowest number last: it is the one named
                    self.keys[(kind, key)] = (number, slug)

    def known(self, arxiv_id: str | None, doi: str | None) -> tuple[tuple[int, str], str] | None:
        """((number, id), "arXiv id" or "DOI") of the paper, stored (see load_keys) or queued, that has this
        arXiv id or DOI."""
        for kind, key, by in (("arxiv_id", arxiv_id, "arXiv id"), ("doi", doi, "DOI")):
            found = self.keys.get((kind, key)) if key is not None else None
            if found is not None:
                return found, by
        return None

    def tag_id(self, name: str) -> int:
        tag_id = self.tag_ids.get(name)
        if tag_id is None:
            row = self.db.execute("SELECT id FROM tags WHERE name = ?", [name]).fetchone()
            if row is None:
                row = self.db.execute("INSERT INTO tags (name) VALUES (?) RETURNING id", [name]).fetchone()
            tag_id = row[0]
            self.tag_ids[name] = tag_id
        return tag_id

    def set_tags(self, number: int, tags: Iterable[str]) -> None:
        """Give a paper that has no tags rows these tags (each name once)."""
        for name in tags:
            tag_id = self.tag_id(name)
            self.rows["paper_tags"].append((tag_id, number))
            self.counts[tag_id] += 1

    def drop_tags(self, number: int) -> None:
        self.flush()  # the paper's tags may still be queued
        self.counts.subtract(r[0] for r in self.db.execute("SELECT tag FROM paper_tags WHERE paper = ?", [number]))
        self.db.execute("DELETE FROM paper_tags WHERE paper = ?", [number])

    def index(self, number: int, title: str, summary: str, tags: Iterable[str], authors: str = "") -> None:
        """Queue a paper's search rows (its old rows, if any, must be gone: see `unindex`). Authors are
        searched with the summary (`search dettmers`), not an index of their own."""
        (title_text, title_words), (summary_text, summary_words), (tag_text, tag_words) = (
            search_terms.index_form(title),
            search_terms.index_form(f"{summary}\n{authors}" if authors else summary),
            search_terms.index_form(" ".join(tags)),
        )
        self.rows["search"].append((number, title_text, summary_text, tag_text))
        self.rows["titles"].append((number, title_text))
        self.rows["tag_words"].append((number, tag_text))
        fresh = (title_words | summary_words | tag_words) - self.words
        self.rows["vocab"].extend((w,) for w in fresh)
        self.words |= fresh

    def unindex(self, number: int) -> None:
        self.flush()  # the paper's new rows may still be queued
        for table in SEARCH_TABLES:
            self.db.execute(f"DELETE FROM {table} WHERE rowid = ?", [number])

    def flush(self) -> None:
        """Send the queued rows and the tags' counts (before the transaction commits)."""
        conn, rows = self.db.conn, self.rows
        conn.executemany(
            "INSERT INTO papers (number, id, title, summary, url, authors, year, arxiv_id, doi, added_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows["papers"],
        )
        if rows["papers"]:
            engine.numbers_given(self.db, max(row[0] for row in rows["papers"]))
        conn.executemany("INSERT INTO paper_tags (tag, paper) VALUES (?, ?) ON CONFLICT DO NOTHING", rows["paper_tags"])
        conn.executemany("INSERT INTO paper_search (rowid, title, summary, tags) VALUES (?, ?, ?, ?)", rows["search"])
        conn.executemany("INSERT INTO paper_titles (rowid, text) VALUES (?, ?)", rows["titles"])
        conn.executemany("INSERT INTO paper_tag_words (rowid, text) VALUES (?, ?)", rows["tag_words"])
        conn.executemany("INSERT INTO search_vocab (term) VALUES (?) ON CONFLICT DO NOTHING", rows["vocab"])
        conn.executemany(
            "UPDATE tags SET papers = papers + ? WHERE id = ?", [(n, tag_id) for tag_id, n in self.counts.items() if n]
        )
        for queued in rows.values():
            queued.clear()
        self.counts.clear()


class Claims:
    """What the rows of one import (every file of an `import` command) say by id. A row without an
    id must not take an id that another row names, unless for its own title, or that row would
    retitle or retag the id-less row's paper (and the next import add it again); and where both
    stand for one paper, the row with the id has the say on the fields it sets."""

    def __init__(self, papers: Iterable[PaperInput]):
        self._titles: dict[str, str | None] = {}
        self._fields: dict[str, frozenset[str]] = {}  # few distinct sets, each kept once (see _one)
        for p in papers:
            if p.id is None:
                continue
            self._claim(p.id, p.title.casefold() if p.title is not None else None)
            self._fields[p.id] = _one(self._fields.get(p.id, _NONE) | {f for f in _FIELDS if getattr(p, f) is not None})

    def _claim(self, slug: str, title: str | None) -> None:
        if title is not None or slug not in self._titles:
            self._titles[slug] = title

    @classmethod
    def union(cls, claims: Iterable[Claims]) -> Claims:
        """The claims of several files' rows, read one file after the other."""
        whole = cls(())
        for part in claims:
            for slug, title in part._titles.items():
                whole._claim(slug, title)
            for slug, fields in part._fields.items():
                whole._fields[slug] = _one(whole._fields.get(slug, _NONE) | fields)
        return whole

    def fields(self, slug: str) -> set[str]:
        """The fields that rows naming `slug` set."""
        return set(self._fields.get(slug, _NONE))

    def elsewhere(self, slug: str, title: str) -> bool:
        """Is `slug` named for another title (so not the paper that an id-less row of `title` is)?"""
        claimed = self._titles.get(slug)
        return claimed is not None and claimed != title.casefold()

    def free_for(self, slug: str, title: str) -> bool:
        """May a new paper of `title` from an id-less row get `slug`: no row names it, or one does for that title?"""
        return slug not in self._titles or self._titles[slug] == title.casefold()


class LaterClaims(Claims):
    """Claims read only when a row without an id asks for them (`read()` reads every row of the import
    again): an import whose rows all have ids, as an export's do, reads its files once."""

    def __init__(self, read: Callable[[], Claims]):
        self._read = read
        self._known: Claims | None = None

    def _claims(self) -> Claims:
        if self._known is None:
            self._known = self._read()
        return self._known

    def fields(self, slug: str) -> set[str]:
        return self._claims().fields(slug)

    def elsewhere(self, slug: str, title: str) -> bool:
        return self._claims().elsewhere(slug, title)

    def free_for(self, slug: str, title: str) -> bool:
        return self._claims().free_for(slug, title)


_FIELDS = ("title", "summary", "url", "tags", "authors", "year", "doi")
_NONE: frozenset[str] = frozenset()
_SETS: dict[frozenset[str], frozenset[str]] = {}


def _one(fields: frozenset[str]) -> frozenset[str]:
    """The one copy of this set of fields: an import of 100,000 rows holds a handful of sets, not 100,000."""
    return _SETS.setdefault(fields, fields)


_NO_CLAIMS = Claims([])


def _upsert_chunk(store: Store, papers: list[PaperInput], counts: UpsertCounts, claims: Claims) -> None:
    batch = _Batch(store.db)
    stored = batch.existing(papers)
    batch.load_keys([p for p in papers if p.id not in stored])  # rows that may be new papers
    for paper in papers:
        try:
            number, changed = _upsert_one(batch, paper, stored, claims=claims)
        except InvalidPaper as e:  # raised before the paper wrote anything: the rest goes on
            counts.problems.append(f"{paper.source}: {e}" if paper.source and not isinstance(e, _Placed) else str(e))
            continue
        if number is None:
            counts.unchanged += 1
        elif changed == "added":
            counts.added += 1
        else:
            counts.updated += 1
    batch.flush()


def _slug_prefix(base: str, n: int) -> str:
    """What comes before "-N" in the N-th paper of a slug: the slug, cut after a word so that the id
    stays within MAX_ID."""
    return cut_slug(base, min(36, MAX_ID - len(f"-{n}")))


def _slug_prefix_cut_mid_word(base: str, n: int) -> str:
    """What versions before word-boundary cuts put before "-N", to find their papers again."""
    return base[: min(36, MAX_ID - len(f"-{n}"))].rstrip("-")


def _free_slug(db, base: str, taken_too=lambda slug: False) -> str:
    """`base`, or when it is taken (or `taken_too`) `base-N` for an N that is free.

    Slugs are handed out as base, base-2, base-3, …, so the taken ones are mostly a run from 1:
    doubling N to a free one, then halving the gap to a taken one, finds the end of the run in
    about 2·log2(N) lookups, not N.
    """

    def name(n: int) -> str:
        return base if n == 1 else f"{_slug_prefix(base, n)}-{n}"

    def taken(n: int) -> bool:
        return taken_too(name(n)) or db.execute("SELECT 1 FROM papers WHERE id = ?", [name(n)]).fetchone() is not None

    if not taken(1):
        return base
    low, high = 1, 2  # low is taken; high is a guess until it is free
    while taken(high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        if taken(middle):
            low = middle
        else:
            high = middle
    return name(high)


#: Ids from "P-0" up to "P-:" (":" follows "9"): a prefix P and "-N", read as a range of the id index
#: (a LIKE would scan every paper). A hashed slug's letters come after that.
_NUMBERED = f"SELECT {_ROW_COLUMNS} FROM papers p WHERE p.id > ? AND p.id < ? ORDER BY p.number"


def _same_paper(db, title: str, base: str, claims: Claims = _NO_CLAIMS) -> tuple | None:
    """The paper that a row without an id stands for: the one that got its title's slug (`base`,
    or `base-N` when that was taken, see _free_slug) and has the same title, case aside, unless a
    row of the same import names its id with another title (`claims`).

    Before hashed slugs, a title without ASCII words got `paper` or `paper-N`, and one with only
    digits the digits (which migration m005 renamed `paper-<digits>`): those are looked at too, so
    that importing such a file again changes nothing.
    """
    bases = [base]
    legacy = _ascii_slug(title)
    if base != legacy:
        bases.append(legacy or "paper")
        if legacy.isdigit():
            bases.append(f"paper-{legacy}")
    # Before slugs were cut after a word, a long title's slug stopped where MAX_ID fell.
    mid_word = _ascii_slug_cut_mid_word(title)
    if mid_word and mid_word not in bases and not mid_word.replace("-", "").isdigit():
        bases.append(mid_word)
    folded = title.casefold()
    for b in bases:
        row = db.execute(f"SELECT {_ROW_COLUMNS} FROM papers p WHERE p.id = ?", [b]).fetchone()
        if row is not None and row[2].casefold() == folded and not claims.elsewhere(row[1], title):
            return tuple(row)
        # A long slug's N-th paper cuts the slug shorter as N grows: every prefix it may have.
        ns = (2, 1000, 10_000, 100_000)
        for prefix in dict.fromkeys([_slug_prefix(b, n) for n in ns] + [_slug_prefix_cut_mid_word(b, n) for n in ns]):
            for row in db.execute(_NUMBERED, [prefix + "-0", prefix + "-:"]):
                if (
                    row[2].casefold() == folded
                    and row[1][len(prefix) + 1 :].isdigit()
                    and not claims.elsewhere(row[1], title)
                ):
                    return tuple(row)
    return None


#: Where a BibTeX file's row was read: "refs.bib line 28".
_BIB_SOURCE = re.compile(r"^(?P<path>.*\.bib) (?P<line>line \d+)$", re.IGNORECASE)


class _Placed(InvalidPaper):
    """A problem whose text already says where it was read."""


def _untitled(paper: PaperInput, slug: str) -> InvalidPaper:
    """A row with an id the catalog lacks and no title: a .bib entry is named as BibTeX names it."""
    bib = _BIB_SOURCE.match(paper.source or "")
    if bib:
        return _Placed("title", f"{bib['path']}: entry {slug} ({bib['line']}) has no title: skipped")
    return InvalidPaper("title", f"there is no paper {slug} to update, and a new paper needs a title")


def add_new(db: sqlite_utils.Database, paper: PaperInput) -> int:
    """Add `paper` as a new paper, in the caller's write transaction (the add form, an accepted
    suggestion): its number. A slug is made from the title when it has no id."""
    batch = _Batch(db)
    number, _ = _upsert_one(batch, paper, {}, always_new=True)
    batch.flush()
    assert number is not None  # nothing stored to compare with: always added
    return number


def _upsert_one(
    batch: _Batch, paper: PaperInput, stored: dict[str, tuple], always_new: bool = False, claims: Claims = _NO_CLAIMS
) -> tuple[int | None, str]:
    """Write one paper; returns (number, 'added'|'updated'), or (None, '') when nothing changed.

    `stored` holds the rows of the batch's papers by id (looked up for the whole batch), and is kept up to date.
    """
    db = batch.db
    slug = paper.id
    existing = stored.get(slug) if slug is not None else None
    if slug is None:
        title = paper.title
        assert title
        batch.flush()  # the lookups below must see every paper of this batch
        base = slugify(title)
        if not always_new:
            # A row without an id is the paper that got its title's slug and has its title,
            # so importing such a file twice changes nothing.
            existing = _same_paper(db, title, base, claims)
            if existing is not None:
                slug = existing[1]
                # Listed twice, with its id and without: the row with the id has the say on what it sets.
                paper = replace(paper, **dict.fromkeys(claims.fields(slug)))
        if slug is None:
            slug = _free_slug(db, base, lambda name: not claims.free_for(name, title))

    if existing is None:
        if not paper.title:
            raise _untitled(paper, slug)
        if not always_new:  # an import: a paper the catalog has under another id is not added twice
            twin = batch.known(*batch.refs_of(paper))
            if twin is not None:
                (number, twin_id), by = twin
                raise InvalidPaper("url", f"the same paper as #{number} {twin_id} (by its {by}): skipped")
        number = batch.new_paper(paper, slug)
        stored[slug] = (number, slug, paper.title, paper.summary or "", paper.url or "", paper.authors or "")
        stored[slug] += (paper.year, paper.doi)
        tags = paper.tags or ()
        batch.set_tags(number, tags)
        batch.index(number, paper.title, paper.summary or "", tags, paper.authors or "")
        return number, "added"

    number, _, old_title, old_summary, old_url, old_authors, old_year, old_doi = existing
    old_tags = tuple(
        r[0]
        for r in db.execute(
            "SELECT t.name FROM paper_tags pt JOIN tags t ON t.id = pt.tag WHERE pt.paper = ? ORDER BY t.name", [number]
        )
    )
    title = paper.title if paper.title is not None else old_title
    summary = paper.summary if paper.summary is not None else old_summary
    url = paper.url if paper.url is not None else old_url
    tags = paper.tags if paper.tags is not None else old_tags
    authors = paper.authors if paper.authors is not None else old_authors
    year = paper.year if paper.year is not None else old_year
    doi = paper.doi if paper.doi is not None else old_doi
    if (title, summary, url, authors, year, doi, tuple(sorted(tags))) == (
        (old_title, old_summary, old_url, old_authors, old_year, old_doi, tuple(sorted(old_tags)))
    ):
        return None, ""
    batch.flush()  # the paper may have been queued as new in this batch
    arxiv_id, doi_key = paper_refs.keys_of(url, doi)
    db.execute(
        "UPDATE papers SET title = ?, summary = ?, url = ?, authors = ?, year = ?, arxiv_id = ?, doi = ?, "
        "updated_at = ? WHERE number = ?",
        [title, summary, url, authors, year, arxiv_id, doi_key, batch.now, number],
    )
    stored[slug] = (number, slug, title, summary, url, authors, year, doi_key)
    if tuple(sorted(tags)) != tuple(sorted(old_tags)):
        batch.drop_tags(number)
        batch.set_tags(number, tags)
    batch.unindex(number)
    batch.index(number, title, summary, tags, authors)
    return number, "updated"
