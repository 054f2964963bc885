"""The group's tagged paper catalog.

    paper = catalog.find(store, "streaming-diloco")   # or "7", "#7"
    page = catalog.tagged(store, "Parallelism_DP")     # tags fold: parallelism-dp
    hits = catalog.search(store, "数据并行 fsdp")

A paper has a short slug `id` that imports match on, and a stable `number`
(#7) that is never reused. Writes go through `upsert` and `add`, which keep the
search index in the same transaction as the paper.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import NamedTuple

from bot import search_terms
from bot.store import MERGING, MERGING_DEFERRED, SEARCH_TABLES, Store, set_merging

PAGE_SIZE = 40
MAX_TITLE = 300
MAX_SUMMARY = 6000
MAX_URL = 1000
#: A url written into a Slack link (each & as &amp;) is at most this long, so that a paper's
#: link and title always fit in one section.
MAX_LINK = 1200
MAX_TAG = 50
MAX_TAGS = 20
LINE_SCAN = 400

_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_ID = 40
#: A reference to a paper by number: `7` or `#7`, at most 9 digits. Ids are never only digits, so
#: that every paper can be named both ways.
_REF = re.compile(r"^#?(\d{1,9})$")
#: Never in titles and summaries: control characters (all but tab, newline, carriage return; the
#: C1 ones too; Slack shows them as boxes, a terminal obeys them) and what shows as nothing and only hides or
#: reorders text: zero-width space, word joiner, BOM, the bidi overrides and isolates (joiners and
#: direction marks, which scripts and emoji need, stay).
_HIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b\u2060\ufeff\u202a-\u202e\u2066-\u2069]")
#: Never in tags: all of that, and the joiners, direction marks and soft hyphen too (a tag that
#: held one could never be typed).
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]"
)
#: An import may wish for a number up to here, so that the papers after it still get numbers a
#: reference can name (up to 999,999,999).
MAX_WISHED_NUMBER = 99_999_999
#: What separates tags in text, after NFKC (which folds ， ； ﹐ ﹔ to , ; and ､ ﹑ to 、).
_TAG_SEPARATORS = re.compile(r"[,;、]")


class InvalidPaper(ValueError):
    """A paper's field is missing or malformed: `field` names it, str() explains."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


class Paper(NamedTuple):
    """A paper as stored. A named tuple: lists build dozens per reply, and tuples are the cheapest immutable value."""

    number: int
    id: str
    title: str
    summary: str
    url: str
    tags: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        """The summary's first line, cut to fit a list."""
        summary = self.summary.strip()
        if not summary:
            return ""
        first = summary[:LINE_SCAN].splitlines()[0]  # the cut below never looks further
        return first if len(first) <= 140 else first[:139].rstrip() + "…"


@dataclass(frozen=True)
class PaperInput:
    """A paper as an import row or the add form gives it; None = leave as is."""

    id: str | None
    title: str | None = None
    summary: str | None = None
    url: str | None = None
    tags: tuple[str, ...] | None = None
    number: int | None = None
    source: str | None = field(default=None, compare=False)  # where it was read ("list.csv line 4"), for problems


@dataclass
class Page:
    papers: list[Paper]
    page: int
    has_more: bool
    total: int | None = None  # None when counting would cost more than it tells


@dataclass
class UpsertCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    problems: list[str] = field(default_factory=list)


# -- names ------------------------------------------------------------------


def fold_tag(text: str) -> str:
    """`'#Parallelism_DP'` -> `'parallelism-dp'`: the one spelling of a tag.

    Separators at either end go too (`parallelism-dp,` as typed from a list): no tag holds one.
    """
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).replace("`", "")  # tags show in `code`
    text = text.strip().strip(",;、").strip().lstrip("#").casefold()
    text = re.sub(r"[\s_\-]+", "-", text)
    return text.strip("-")


def slugify(title: str) -> str:
    """A slug from a title: its part before a colon, lowercased, ASCII words joined by '-'.

    A title with no ASCII words (数据并行训练), or only digits there (a slug `7` would read as
    paper number 7), gets `paper-` and eight letters from a hash of the title instead, so that
    such titles do not all share one slug (letters: never mistaken for a taken slug's `-2`).
    """
    slug = _ascii_slug(title)
    if slug and not slug.replace("-", "").isdigit():
        return slug
    folded = " ".join(unicodedata.normalize("NFKC", title).casefold().split())
    return "paper-" + hashlib.blake2b(folded.encode(), digest_size=4).hexdigest().translate(_HEX_LETTERS)


_HEX_LETTERS = str.maketrans("0123456789abcdef", "abcdefghijklmnop")


def _ascii_slug(title: str) -> str:
    head = title.split(":", 1)[0] if ":" in title[:60] else title
    ascii_text = unicodedata.normalize("NFKD", head).encode("ascii", "ignore").decode()
    return "-".join(re.findall(r"[a-z0-9]+", ascii_text.lower()))[:MAX_ID].strip("-")


def _number(value: object) -> int | None:
    """A paper number wished for by an import row: 7 or "7" or "#7", read as references are (see _REF).

    Only a wish: anything else (text, 0, a number past MAX_WISHED_NUMBER) is no wish, and the
    paper is imported with the next number, as files written for earlier versions expect.
    """
    if isinstance(value, str):
        m = _REF.match(value.strip())
        value = int(m[1]) if m else None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_WISHED_NUMBER:
        return None
    return value


def validate(raw: dict, *, new: bool, source: str | None = None) -> PaperInput:
    """Check one paper's fields; raise InvalidPaper naming the first bad one.

    `new`: the paper must be new (the add form), so it needs a title. Otherwise (an import row)
    it is new or an update of the paper with its id, where the fields left out keep their value:
    only a row without an id must have a title (upsert refuses an unknown id without one).
    """

    def text(name: str, limit: int) -> str | None:
        value = raw.get(name)
        if value is None:
            return None
        if name == "id" and isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**limit:
            value = str(value)  # refused below, with the reason: only digits
        if not isinstance(value, str):
            # YAML reads 0x1F as 31 and 12:30 as 750: a number here was text that the file did not quote.
            if isinstance(value, int | float) and not isinstance(value, bool):
                raise InvalidPaper(name, f"{name} must be text, and is a number (in YAML, put it in quotes)")
            raise InvalidPaper(name, f"{name} must be text")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (\ud800 in JSON): no database or Slack takes it
            raise InvalidPaper(name, f"{name} holds a character that is not valid Unicode") from None
        # One line break, whatever the file was saved with: a CSV from Excel (\r\n) is the same paper.
        value = _HIDDEN.sub("", value).replace("\r\n", "\n").replace("\r", "\n").strip()
        if len(value) > limit:
            raise InvalidPaper(name, f"{name} is longer than {limit} characters")
        return value

    pid = text("id", MAX_ID)
    if pid == "":
        pid = None
    if pid is not None and not _SLUG.match(pid):
        raise InvalidPaper("id", f"id {pid!r} must be lowercase letters, digits and '-' (like streaming-diloco)")
    if pid is not None and pid.isdigit():
        raise InvalidPaper("id", f"id {pid!r} is only digits, which reads as a paper number: add a word (paper-{pid})")
    title = text("title", MAX_TITLE)
    if title is not None:
        title = " ".join(title.split())
    if new and not title:
        raise InvalidPaper("title", "title is required")
    if pid is None and not title:
        raise InvalidPaper("title", "title is required (or the id of a paper to update)")
    if title == "":
        raise InvalidPaper("title", "title cannot be empty")
    summary = text("summary", MAX_SUMMARY)
    url = text("url", MAX_URL)
    if url and not re.match(r"^https?://[^\s<>|]+$", url, re.IGNORECASE):
        raise InvalidPaper("url", "url must start with http:// or https:// and have no spaces or < > | in it")
    if url and not url.startswith(("http://", "https://")):  # HTTPS://… as some pages write it
        scheme, rest = url.split(":", 1)
        url = scheme.lower() + ":" + rest
    if new and url and len(url) + 4 * url.count("&") > MAX_LINK:
        # The add form says so; an import keeps such a url (a list may hold one), shown unlinked.
        raise InvalidPaper("url", f"url has too many & characters: as Slack writes them it is over {MAX_LINK} long")
    tags = raw.get("tags")
    folded: tuple[str, ...] | None = None
    if tags is not None:
        if isinstance(tags, str):
            tags = [tags]
        if not isinstance(tags, list | tuple) or not all(isinstance(t, str) for t in tags):
            raise InvalidPaper("tags", "tags must be a list of words, or text separated by commas")
        try:
            "".join(tags).encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidPaper("tags", "tags hold a character that is not valid Unicode") from None
        seen: dict[str, None] = {}
        # Every entry is split, a list's too: a tag never holds a separator, or a CSV export
        # (tags joined by commas) would read back as other tags.
        for part in (p for t in tags for p in _TAG_SEPARATORS.split(unicodedata.normalize("NFKC", t))):
            name = fold_tag(part)
            if not any(ch.isalnum() for ch in name):
                if _INVISIBLE.sub("", part).strip():  # `#`, `--` or `!!`: something was meant, and it is no tag
                    raise InvalidPaper("tags", f"tag {part.strip()[:20]!r} has no letters or digits")
                continue  # a, b, (nothing after the last comma)
            if len(name) > MAX_TAG:
                raise InvalidPaper("tags", f"tag {name[:20]!r}… is longer than {MAX_TAG} characters")
            seen[name] = None
        if len(seen) > MAX_TAGS:
            raise InvalidPaper("tags", f"a paper can have at most {MAX_TAGS} tags")
        folded = tuple(seen)
    # A wish: a new paper gets it when it was never used, else the next number; an update keeps its own.
    number = _number(raw.get("number"))
    return PaperInput(id=pid, title=title, summary=summary, url=url, tags=folded, number=number, source=source)


# -- reading ----------------------------------------------------------------

#: A paper's stored columns, for `SELECT {PAPER_COLUMNS} FROM papers p` here and for other modules'
#: joins (`SELECT ..., {PAPER_COLUMNS} FROM x LEFT JOIN papers p ...`, then `joined_paper`).
PAPER_COLUMNS = "p.number, p.id, p.title, p.summary, p.url"
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
    return [Paper(r[0], r[1], r[2], r[3], r[4], tags.get(r[0], ())) for r in rows]


def find(store: Store, ref: str, *, with_tags: bool = True) -> Paper | None:
    """The paper that `ref` names: its id, or its number as `7` or `#7` (or `＃７`)."""
    ref = unicodedata.normalize("NFKC", ref).strip()
    m = _REF.match(ref)
    if m:
        sql, key = f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.number = ?", int(m[1])
    else:
        sql, key = f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.id = ?", ref.lower()
    found = _papers(store, sql, [key], with_tags=with_tags)
    return found[0] if found else None


def by_number(store: Store, number: int) -> Paper | None:
    found = _papers(store, f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.number = ?", [number], with_tags=True)
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


def tag_counts(store: Store) -> list[tuple[str, int]]:
    """Every tag with its paper count, commonest first."""
    return [
        tuple(r) for r in store.db.execute("SELECT name, papers FROM tags WHERE papers > 0 ORDER BY papers DESC, name")
    ]


def tag_names(store: Store) -> list[str]:
    return [r[0] for r in store.db.execute("SELECT name FROM tags WHERE papers > 0 ORDER BY name")]


def closest_tags(store: Store, wanted: str, n: int = 3) -> list[str]:
    """Existing tags that look like `wanted`, closest first."""
    names = tag_names(store)
    close = difflib.get_close_matches(wanted, names, n=n, cutoff=0.5)
    if len(close) < n:
        close += [t for t in names if (wanted in t or t in wanted) and t not in close][: n - len(close)]
    return close


def tagged(store: Store, tag: str, page: int = 1) -> tuple[str, Page]:
    """Papers carrying `tag` (folded), a page of PAGE_SIZE at a time, by number."""
    name = fold_tag(tag)
    # One statement, so one consistent read: the tag's count comes along with each of its papers.
    rows = store.db.execute(
        f"SELECT t.papers, {PAPER_COLUMNS} FROM tags t JOIN paper_tags pt ON pt.tag = t.id "
        "JOIN papers p ON p.number = pt.paper WHERE t.name = ? ORDER BY pt.paper LIMIT ? OFFSET ?",
        [name, PAGE_SIZE, (page - 1) * PAGE_SIZE],
    ).fetchall()
    if rows:
        total = rows[0][0]
    else:  # no such tag, or a page past its end
        row = store.db.execute("SELECT papers FROM tags WHERE name = ?", [name]).fetchone()
        total = row[0] if row else 0
    papers = [Paper(r[1], r[2], r[3], r[4], r[5]) for r in rows]
    return name, Page(papers, page, page * PAGE_SIZE < total, total)


def search(store: Store, query: str, page: int = 1) -> Page | None:
    """Papers matching every word of `query`, best first; None if there is nothing to search for.

    Best first means: papers whose title has all the words, then those whose
    tags have them, then the rest; newest first within each group. Each group
    is its own FTS5 index (SEARCH_TABLES, in that order), read in rowid order,
    which FTS5 walks lazily and stops after one page: a page costs about the
    same whether a word is in ten papers or in half the catalog (a bm25 sort
    would have to score every match first).
    The groups are the arms of one UNION ALL under the page's LIMIT, so SQLite
    reads a group only when the ones before it ran out, and the page is one
    consistent read.
    """
    db = store.db
    terms = search_terms.match_terms(query, expand=lambda prefix: _words_starting(db, prefix))
    if not terms:
        return None
    expr = search_terms.all_of(terms)
    skip = (page - 1) * PAGE_SIZE
    want = PAGE_SIZE + 1  # one more tells whether there is a next page
    groups = list(SEARCH_TABLES)
    if len(terms) > 1:
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
        arms.append(
            f"SELECT * FROM (SELECT {i} AS g, rowid AS n FROM {table} WHERE {table} MATCH :q{earlier} "
            "ORDER BY rowid DESC LIMIT :deep)"
        )
    rows = db.execute(
        f"SELECT {PAPER_COLUMNS} FROM ({' UNION ALL '.join(arms)} LIMIT :want OFFSET :skip) AS m "
        "JOIN papers p ON p.number = m.n ORDER BY m.g, m.n DESC",
        {"q": expr, "deep": skip + want, "want": want, "skip": skip},
    ).fetchall()
    return Page([Paper(*row) for row in rows[:PAGE_SIZE]], page, len(rows) > PAGE_SIZE)


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


def all_papers(store: Store, batch: int = 2000) -> Iterator[Paper]:
    """Every paper with its tags, by number, read in batches (for export)."""
    last = 0
    while True:
        chunk = _papers(
            store,
            f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.number > ? ORDER BY p.number LIMIT ?",
            [last, batch],
            with_tags=True,
        )
        if not chunk:
            return
        yield from chunk
        last = chunk[-1].number


# -- writing ----------------------------------------------------------------


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
            with store.write():
                _upsert_chunk(store, chunk, counts, claims)
            time.sleep(IMPORT_GAP_SECONDS)  # the lock is free: a waiting sign-up takes its turn now
        chunk.clear()

    if in_transaction:
        chunk.extend(papers)
        flush(claims or Claims(chunk))
        return counts
    # Checkpoint the WAL every 80 MB instead of every 4 MB while importing: each checkpoint
    # copies pages back and syncs, and a big import spent a fifth of its time there.
    store.db.execute(f"PRAGMA wal_autocheckpoint = {BULK_CHECKPOINT_PAGES}")
    # Nor merge the search indexes' segments at every commit: optimize() merges them once at the end.
    with store.write() as db:
        set_merging(db, MERGING_DEFERRED)
    try:
        papers = list(papers)  # every row's id, before the first is written (see Claims)
        claims = claims or Claims(papers)
        for paper in papers:
            chunk.append(paper)
            if len(chunk) >= batch:
                flush(claims)
        if chunk:
            flush(claims)
    finally:
        store.db.execute("PRAGMA wal_autocheckpoint = 1000")
        with store.write() as db:
            set_merging(db, MERGING)
    if counts.added + counts.updated >= OPTIMIZE_AFTER:
        optimize(store)
    store.db.execute("PRAGMA wal_checkpoint(PASSIVE)")
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
        # Numbers are handed out here, so that new papers can be inserted in bulk; AUTOINCREMENT's
        # sqlite_sequence follows explicit numbers, so none is ever handed out twice.
        self.next_number = (
            1
            + db.execute(
                "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'papers'), 0), "
                "coalesce((SELECT max(number) FROM papers), 0))"
            ).fetchone()[0]
        )

    def existing(self, papers: list[PaperInput]) -> dict[str, tuple]:
        """The stored rows of the papers in `papers` that have an id, by id."""
        ids = [p.id for p in papers if p.id is not None]
        found: dict[str, tuple] = {}
        for i in range(0, len(ids), 900):
            part = ids[i : i + 900]
            marks = ",".join("?" * len(part))
            for row in self.db.execute(f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.id IN ({marks})", part):
                found[row[1]] = tuple(row)
        return found

    def new_paper(self, paper: PaperInput, slug: str) -> int:
        """Queue a new paper; its number is its wish when that number was never used, else the next."""
        number = paper.number
        if number is not None and number >= self.next_number:
            self.next_number = number + 1
        else:
            number = self.next_number
            self.next_number += 1
        self.rows["papers"].append(
            (number, slug, paper.title, paper.summary or "", paper.url or "", self.now, self.now)
        )
        return number

    def tag_id(self, name: str) -> int:
        tag_id = self.tag_ids.get(name)
        if tag_id is None:
            row = self.db.execute("SELECT id FROM tags WHERE name = ?", [name]).fetchone()
            tag_id = row[0] if row else self.db.execute("INSERT INTO tags (name) VALUES (?)", [name]).lastrowid
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

    def index(self, number: int, title: str, summary: str, tags: Iterable[str]) -> None:
        """Queue a paper's search rows (its old rows, if any, must be gone: see `unindex`)."""
        (title_text, title_words), (summary_text, summary_words), (tag_text, tag_words) = (
            search_terms.index_form(title),
            search_terms.index_form(summary),
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
            "INSERT INTO papers (number, id, title, summary, url, added_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows["papers"],
        )
        conn.executemany("INSERT OR IGNORE INTO paper_tags (tag, paper) VALUES (?, ?)", rows["paper_tags"])
        conn.executemany("INSERT INTO paper_search (rowid, title, summary, tags) VALUES (?, ?, ?, ?)", rows["search"])
        conn.executemany("INSERT INTO paper_titles (rowid, text) VALUES (?, ?)", rows["titles"])
        conn.executemany("INSERT INTO paper_tag_words (rowid, text) VALUES (?, ?)", rows["tag_words"])
        conn.executemany("INSERT OR IGNORE INTO search_vocab (term) VALUES (?)", rows["vocab"])
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
        self._fields: dict[str, set[str]] = {}
        for p in papers:
            if p.id is None:
                continue
            if p.title is not None or p.id not in self._titles:
                self._titles[p.id] = p.title.casefold() if p.title is not None else None
            self._fields.setdefault(p.id, set()).update(f for f in _FIELDS if getattr(p, f) is not None)

    def fields(self, slug: str) -> set[str]:
        """The fields that rows naming `slug` set."""
        return self._fields.get(slug, set())

    def elsewhere(self, slug: str, title: str) -> bool:
        """Is `slug` named for another title (so not the paper that an id-less row of `title` is)?"""
        claimed = self._titles.get(slug)
        return claimed is not None and claimed != title.casefold()

    def free_for(self, slug: str, title: str) -> bool:
        """May a new paper of `title` from an id-less row get `slug`: no row names it, or one does for that title?"""
        return slug not in self._titles or self._titles[slug] == title.casefold()


_FIELDS = ("title", "summary", "url", "tags")
_NO_CLAIMS = Claims([])


def _upsert_chunk(store: Store, papers: list[PaperInput], counts: UpsertCounts, claims: Claims) -> None:
    batch = _Batch(store.db)
    stored = batch.existing(papers)
    for paper in papers:
        try:
            number, changed = _upsert_one(batch, paper, stored, claims=claims)
        except InvalidPaper as e:  # raised before the paper wrote anything: the rest goes on
            counts.problems.append(f"{paper.source}: {e}" if paper.source else str(e))
            continue
        if number is None:
            counts.unchanged += 1
        elif changed == "added":
            counts.added += 1
        else:
            counts.updated += 1
    batch.flush()


def add(store: Store, paper: PaperInput) -> Paper:
    """Add one new paper (the add form): a slug is made from the title when none is given."""
    with store.write() as db:
        if paper.id is not None and db.execute("SELECT 1 FROM papers WHERE id = ?", [paper.id]).fetchone():
            raise InvalidPaper("id", f"there is already a paper with id {paper.id}")
        same = db.execute("SELECT number FROM papers WHERE title = ? COLLATE NOCASE", [paper.title]).fetchone()
        if same is not None:
            raise InvalidPaper("title", f"#{same[0]} already has this title")
        batch = _Batch(db)
        number, _ = _upsert_one(batch, paper, {}, always_new=True)
        batch.flush()
    found = by_number(store, number)
    assert found is not None
    return found


def _slug_prefix(base: str, n: int) -> str:
    """What comes before "-N" in the N-th paper of a slug: the slug, cut so that the id stays within MAX_ID."""
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
_NUMBERED = f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.id > ? AND p.id < ? ORDER BY p.number"


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
    folded = title.casefold()
    for b in bases:
        row = db.execute(f"SELECT {PAPER_COLUMNS} FROM papers p WHERE p.id = ?", [b]).fetchone()
        if row is not None and row[2].casefold() == folded and not claims.elsewhere(row[1], title):
            return tuple(row)
        # A long slug's N-th paper cuts the slug shorter as N grows: every prefix it may have.
        for prefix in dict.fromkeys(_slug_prefix(b, n) for n in (2, 1000, 10_000, 100_000)):
            for row in db.execute(_NUMBERED, [prefix + "-0", prefix + "-:"]):
                if (
                    row[2].casefold() == folded
                    and row[1][len(prefix) + 1 :].isdigit()
                    and not claims.elsewhere(row[1], title)
                ):
                    return tuple(row)
    return None


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
        assert paper.title
        batch.flush()  # the lookups below must see every paper of this batch
        base = slugify(paper.title)
        if not always_new:
            # A row without an id is the paper that got its title's slug and has its title,
            # so importing such a file twice changes nothing.
            existing = _same_paper(db, paper.title, base, claims)
            if existing is not None:
                slug = existing[1]
                # Listed twice, with its id and without: the row with the id has the say on what it sets.
                paper = replace(paper, **dict.fromkeys(claims.fields(slug)))
        if slug is None:
            title = paper.title
            slug = _free_slug(db, base, lambda name: not claims.free_for(name, title))

    if existing is None:
        if not paper.title:
            raise InvalidPaper("title", f"there is no paper {slug} to update, and a new paper needs a title")
        number = batch.new_paper(paper, slug)
        stored[slug] = (number, slug, paper.title, paper.summary or "", paper.url or "")
        tags = paper.tags or ()
        batch.set_tags(number, tags)
        batch.index(number, paper.title, paper.summary or "", tags)
        return number, "added"

    number, _, old_title, old_summary, old_url = existing
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
    if (title, summary, url, tuple(sorted(tags))) == (old_title, old_summary, old_url, tuple(sorted(old_tags))):
        return None, ""
    batch.flush()  # the paper may have been queued as new in this batch
    db.execute(
        "UPDATE papers SET title = ?, summary = ?, url = ?, updated_at = ? WHERE number = ?",
        [title, summary, url, batch.now, number],
    )
    stored[slug] = (number, slug, title, summary, url)
    if tuple(sorted(tags)) != tuple(sorted(old_tags)):
        batch.drop_tags(number)
        batch.set_tags(number, tags)
    batch.unindex(number)
    batch.index(number, title, summary, tags)
    return number, "updated"
