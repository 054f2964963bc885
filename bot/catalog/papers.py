"""A paper: its types, the checks on its fields, and the names (slugs, tags) it goes by.

    paper = validate({"title": "Streaming DiLoCo", "tags": "Parallelism_DP"}, new=True)
    fold_tag("#Parallelism_DP")      # 'parallelism-dp'
    slugify("Streaming DiLoCo: ...") # 'streaming-diloco'

No database here: catalog.py reads and writes papers, importing.py writes many at once.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from typing import NamedTuple

from bot.catalog import refs as paper_refs

MAX_TITLE = 300
MAX_SUMMARY = 6000
MAX_URL = paper_refs.MAX_URL  # a paper's link is at most as long as a reference's
#: A url written into a chat link (each & as &amp;) is at most this long, so that a paper's
#: link and title always fit in one block of a message.
MAX_LINK = 1200
MAX_TAG = 50
MAX_AUTHORS = 2000
#: Years a paper may carry: printing began after the first, and none is from the far future.
MIN_YEAR, MAX_YEAR = 1000, 2999
MAX_TAGS = 20
LINE_SCAN = 400

_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_ID = 40
#: A reference to a paper by number: `7` or `#7`, at most 9 digits. Ids are never only digits, so
#: that every paper can be named both ways.
_REF = re.compile(r"^#?(\d{1,9})$")
#: Never in titles and summaries: control characters (all but tab, newline, carriage return; the
#: C1 ones too; chat apps show them as boxes, a terminal obeys them) and what shows as nothing and only hides or
#: reorders text: zero-width space, word joiner, BOM, the bidi overrides and isolates (joiners and
#: direction marks, which scripts and emoji need, stay).
HIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b\u2060\ufeff\u202a-\u202e\u2066-\u2069]")
#: Never in tags: all of that, and the joiners, direction marks and soft hyphen too (a tag that
#: held one could never be typed).
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]"
)
#: Paper numbers run from 1 to here (eight digits, as lists show them); an import may wish for any of them.
MAX_NUMBER = 99_999_999
MAX_WISHED_NUMBER = MAX_NUMBER
#: What separates tags in text, after NFKC (which folds ， ； ﹐ ﹔ to , ; and ､ ﹑ to 、).
_TAG_SEPARATORS = re.compile(r"[,;、]")


#: A paper's stored columns, for `SELECT {PAPER_COLUMNS} FROM papers p` here and for other modules'
#: joins (`SELECT ..., {PAPER_COLUMNS} FROM x LEFT JOIN papers p ...`, then `joined_paper`).
PAPER_COLUMNS = "p.number, p.id, p.title, p.summary, p.url"


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
    authors: str = ""  # as a list prints them: "Ada Lovelace, Alan Turing"
    year: int | None = None

    @property
    def byline(self) -> str:
        """`Ada Lovelace, Alan Turing (2025)`: who wrote it and when, as far as known ('' when neither is)."""
        authors = self.authors if len(self.authors) <= 300 else self.authors[:299].rstrip() + "…"
        year = str(self.year) if self.year else ""
        return f"{authors} ({year})" if authors and year else authors or year

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
    authors: str | None = None
    year: int | None = None
    #: The DOI a file or look-up gives besides the link (the link's own arXiv id or DOI is read from it).
    doi: str | None = None
    source: str | None = field(default=None, compare=False)  # where it was read ("list.csv line 4"), for problems


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


def _ascii_words(title: str) -> str:
    head = title.split(":", 1)[0] if ":" in title[:60] else title
    ascii_text = unicodedata.normalize("NFKD", head).encode("ascii", "ignore").decode()
    return "-".join(re.findall(r"[a-z0-9]+", ascii_text.lower()))


def _ascii_slug(title: str) -> str:
    return cut_slug(_ascii_words(title), MAX_ID)


def _ascii_slug_cut_mid_word(title: str) -> str:
    """The slug that versions before word-boundary cuts made (`…-distribu`), to find their papers again."""
    return _ascii_words(title)[:MAX_ID].strip("-")


def cut_slug(slug: str, limit: int) -> str:
    """`slug` in at most `limit` characters, cut after a whole word (a first word longer than that is cut)."""
    if len(slug) <= limit:
        return slug
    words = slug[: limit + 1].rsplit("-", 1)[0]  # the word the limit falls in goes, unless it is the first
    return words if "-" in slug[: limit + 1] else slug[:limit]


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


_BYLINE_YEAR = re.compile(r"^(.*?)\s*\(\s*(\d{4})\s*\)\s*$|^\s*(\d{4})\s*$", re.DOTALL)


def read_byline(text: str | None) -> tuple[str | None, str | None]:
    """`"Ada Lovelace, Alan Turing (2025)"` -> ("Ada Lovelace, Alan Turing", "2025"): a form with one
    field for both (Discord's modals have five) read back as `byline` writes it. Empty: (None, None)."""
    text = (text or "").strip()
    if not text:
        return None, None
    m = _BYLINE_YEAR.match(text)
    if m is None:
        return text, None
    if m[3]:
        return None, m[3]
    return m[1].strip() or None, m[2]


def _year(value: object) -> int | None:
    """A paper's year: 2025 or "2025" (empty: none given); anything else is refused, naming the field."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_YEAR <= value <= MAX_YEAR:
        raise InvalidPaper("year", f"year must be a year like 2025 (from {MIN_YEAR} to {MAX_YEAR})")
    return value


def validate(raw: dict, *, new: bool, source: str | None = None) -> PaperInput:  # noqa: C901 (a check per field, in the order reported)
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
        except UnicodeEncodeError:  # a lone surrogate (\ud800 in JSON): no database or chat platform takes it
            raise InvalidPaper(name, f"{name} holds a character that is not valid Unicode") from None
        # One line break, whatever the file was saved with: a CSV from Excel (\r\n) is the same paper.
        value = HIDDEN.sub("", value).replace("\r\n", "\n").replace("\r", "\n").strip()
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
        raise InvalidPaper(
            "url", f"url has too many & characters: written into a link (each & as &amp;) it is over {MAX_LINK} long"
        )
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
    authors = text("authors", MAX_AUTHORS)
    if authors is not None:
        authors = " ".join(authors.split())
    year = _year(raw.get("year"))
    doi = raw.get("doi")
    if doi is not None:
        ref = paper_refs.parse(doi) if isinstance(doi, str) else None
        if ref is None or ref.kind != "doi":
            raise InvalidPaper("doi", "doi must be a DOI like 10.1145/3600006")
        doi = ref.key
    # A wish: a new paper gets it when it was never used, else the next number; an update keeps its own.
    number = _number(raw.get("number"))
    return PaperInput(
        id=pid,
        title=title,
        summary=summary,
        url=url,
        tags=folded,
        number=number,
        authors=authors,
        year=year,
        doi=doi,
        source=source,
    )
