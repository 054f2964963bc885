"""BibTeX: paper lists read from `.bib` files and the catalog written as one.

    for where, row in bibtex.rows(text): ...        # ("line 4", {"title": ..., "authors": ...}) or a Problem
    out.write(bibtex.entry(paper))                  # one @misc entry

An entry's fields map to a paper's: title; author (`A and B`, `Last, First` turned
round, `and others` as `et al.`) to authors (`A, B, et al.`); year; url, else doi
(as a doi.org link), else eprint (as an arXiv link) to the link; abstract to the summary; keywords to tags; and the
entry's key to the paper's id when it is one (`streaming-diloco`). Other fields
are not read. Entries are cut from the text one at a time (brace counting), and
each is parsed on its own by bibtexparser, so memory holds one entry, and a
broken entry is that entry's problem. `@string` macros apply to the entries after them, and values
are read as BibTeX reads them (`value`): `{...}`, `"..."`, digits and macros, joined by `#`; a field
read that names a macro the file does not define skips its entry (BibTeX's styles define the months).
A macro is kept expanded, so a value that names one costs its length, never a walk down the macros it
was built from; the expansion is bounded before it is made (MAX_VALUE_CHARS a value, MAX_MACROS macros
holding MAX_MACRO_CHARS in all, MAX_BROUGHT_CHARS brought by macros into the fields read, in all): a
file past a bound (macros that double each other, a large macro named by many entries) is refused whole.

bibtexparser 2 (not 1): version 1's pyparsing grammar takes about 8 ms an entry
(a 100,000-paper file: a quarter of an hour), version 2's own splitter about 0.4 ms.

Writing escapes what TeX would read as markup (`{ } \\ % & $ # _ ~ ^`), so a title
such as `{Braces} & 100% \\o/` reads back as it was: a round trip keeps every paper.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import TextIO

from bot.catalog.papers import Paper

#: The longest one entry may be (a title, 6,000 characters of abstract, escaped, and more).
MAX_ENTRY_CHARS = 1 << 22
#: The longest a value may be once its macros are expanded: ten times a paper's longest field, escaped.
MAX_VALUE_CHARS = 1 << 16
#: How many @string macros a file may define, and how many characters they may hold in all.
MAX_MACROS = 10_000
MAX_MACRO_CHARS = 1 << 22
#: The most characters macros may bring into the fields read, the whole file's entries together: a
#: 220 KB file naming a 60 KB macro in every field of 2,000 entries took over a minute to read.
MAX_BROUGHT_CHARS = 1 << 24


class Problem(str):
    """An entry that could not be read; the text says why."""


class Unreadable(ValueError):
    """The file as a whole cannot be read as BibTeX."""


class TooLarge(Unreadable):
    """A value or the file's macros would expand past their bound; the text names the entry."""


class BadValue(ValueError):
    """A value BibTeX would not read (`value`); the text says why, after the field's name."""


# -- reading -------------------------------------------------------------------

_START = re.compile(r"@\s*([A-Za-z]+)\s*([{(])")
_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def _entries(text: TextIO) -> Iterator[tuple[int, str, str]]:
    """(first line, type, text) of each `@type{...}` in the file, read a line at a time. Text
    outside entries is a comment, as BibTeX reads it, and so is a line that starts with `%`."""
    line_no = 0
    pending = ""  # text after an entry's end on its last line
    while True:
        if pending:
            line, pending = pending, ""
        else:
            line = text.readline()
            if not line:
                return
            line_no += 1
        if line.lstrip().startswith("%"):  # a comment line, as bibtexparser and biber read one
            continue
        m = _START.search(line)
        if m is None:
            continue
        start_line, kind, opener = line_no, m[1].lower(), m[2]
        closer = "}" if opener == "{" else ")"
        body = [line[m.start() :]]
        size = len(body[0])
        depth, at = 0, m.end() - 1 - m.start()  # the opener's place in body[0]
        chunk, done = body[0], False
        while True:
            for i in range(at, len(chunk)):
                ch = chunk[i]
                if ch == "{" or (ch == opener and depth == 0):
                    depth += 1
                elif ch == "}" or (ch == closer and depth == 1):
                    depth -= 1
                    if depth == 0:
                        body[-1], pending = chunk[: i + 1], chunk[i + 1 :]
                        done = True
                        break
            if done:
                break
            chunk = text.readline()
            if not chunk:
                yield start_line, kind, Problem(f"the entry that starts here is never closed (a {closer} is missing)")
                return
            line_no += 1
            size += len(chunk)
            if size > MAX_ENTRY_CHARS:
                raise Unreadable(f"the entry on line {start_line} is never closed within {MAX_ENTRY_CHARS} characters")
            body.append(chunk)
            at = 0
        yield start_line, kind, "".join(body)


class _Macros(dict):
    """The @string macros so far (names folded to lowercase), each as its expanded text, within the bounds."""

    def __init__(self):
        super().__init__(MONTHS)
        self.held = 0  # the characters the file's macros hold
        self.brought = 0  # the characters they brought into the fields read so far, beyond the names

    def bring(self, raw: str, expanded: str) -> None:
        """Count what a field's macros brought (`expanded` beyond `raw`); TooLarge past MAX_BROUGHT_CHARS,
        before the field is read further (names, TeX), work that grows with its length."""
        self.brought += max(len(expanded) - len(raw), 0)
        if self.brought > MAX_BROUGHT_CHARS:
            raise TooLarge(f"brings the macros' text past {MAX_BROUGHT_CHARS:,} characters in all")

    def define(self, where: str, key: str, raw: str) -> Problem | None:
        """Define `key` as `raw` reads; a Problem when it cannot be read, TooLarge past a bound."""
        name = key.lower()
        try:
            text = value(raw, self)
        except BadValue as problem:
            return Problem(f"@string {key[:40]} {problem}: skipped")
        except TooLarge as bound:
            raise TooLarge(f"{where}: @string {key[:40]} {bound}") from None
        if name not in self and len(self) - len(MONTHS) >= MAX_MACROS:
            raise TooLarge(f"{where}: @string {key[:40]} is past the {MAX_MACROS:,} macros a file may define")
        self.held += len(text) - len(self.get(name, ""))
        if self.held > MAX_MACRO_CHARS:
            raise TooLarge(f"{where}: @string {key[:40]} brings the macros past {MAX_MACRO_CHARS:,} characters")
        self[name] = text
        return None


def rows(text: TextIO) -> Iterator[tuple[str, object]]:
    """(where, row) for each entry: `line N` (its first line), and a dict of paper fields or a Problem."""
    # Imported here: bibtexparser takes a tenth of a second to import, which no other verb should wait for.
    import bibtexparser  # noqa: PLC0415

    macros = _Macros()
    for line, kind, body in _entries(text):
        where = f"line {line}"
        if isinstance(body, Problem):
            yield where, body
            continue
        if kind in ("comment", "preamble"):
            continue
        try:
            # No middleware: values come as written (`first # " Nets"`), and `value` reads them as BibTeX does.
            parsed = bibtexparser.parse_string(body, parse_stack=[])
        except Exception as e:  # whatever an entry holds, it is that entry's problem
            yield where, Problem(f"is not a BibTeX entry that can be read ({e.__class__.__name__})")
            continue
        entries, failed = list(parsed.entries), list(parsed.failed_blocks)
        if kind == "string":
            if failed or not parsed.strings:
                yield where, Problem("is an @string that cannot be read")
                continue
            for string in parsed.strings:
                problem = macros.define(where, string.key, string.value)
                if problem is not None:
                    yield where, problem
            continue
        if failed or not entries:
            error = str(getattr(failed[0], "error", "")).split(":")[0] if failed else "no fields"
            yield where, Problem(f"is not a BibTeX entry that can be read ({error[:80] or 'broken'})")
            continue
        entry = entries[0]
        fields = {}
        try:
            for field in entry.fields:
                name = field.key.lower()
                if name in _READ:  # a field not read may name a macro of a style file (`journal = jacm`)
                    fields[name] = value(field.value, macros)
                    macros.bring(field.value, fields[name])
        except BadValue as problem:
            yield where, Problem(f"{name} {problem}: skipped")
            continue
        except TooLarge as bound:
            raise TooLarge(f"{where}: entry {entry.key[:40]}, field {name}, {bound}") from None
        yield where, paper_fields(entry.key, fields)


#: The fields `paper_fields` reads.
_READ = frozenset({"title", "author", "year", "url", "doi", "eprint", "archiveprefix", "abstract", "keywords"})

#: The macros BibTeX's standard styles define: the months.
MONTHS = {
    name[:3].lower(): name
    for name in "January February March April May June July August September October November December".split()
}

_NOT_A_VALUE = 'is not a value BibTeX reads ({...}, "..." or an @string, joined by #)'
_DELIMITERS = re.compile(r'[{}"]')
_NUMBER = re.compile(r"[0-9]+")
_MACRO = re.compile(r"[^\s\"#%'(),={}0-9][^\s\"#%'(),={}]*")


def value(raw: str, macros: dict[str, str]) -> str:  # noqa: C901 (a small parser: a branch per kind of token)
    """A field's or an @string's value as BibTeX reads it: `{...}`, `"..."`, digits and macro names,
    joined by `#`. Raise BadValue (`names @string "x", which the file does not define`) otherwise, and
    TooLarge before the value would grow past MAX_VALUE_CHARS."""
    out: list[str] = []
    size = 0  # the characters in out
    at, end = 0, len(raw)
    while True:
        while at < end and raw[at].isspace():
            at += 1
        if at == end:
            raise BadValue("has no value" if not out else "ends with # and no value after it")
        ch = raw[at]
        if ch in '{"':
            depth, i = 0, end
            for mark in _DELIMITERS.finditer(raw, at if ch == "{" else at + 1):  # jump from one to the next
                c = mark[0]
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if ch == "{" and depth == 0:
                        i = mark.start()
                        break
                elif ch == '"' and depth == 0:
                    i = mark.start()
                    break
            if i == end:
                raise BadValue(f"has a {'{' if ch == '{' else 'quote'} that is never closed")
            part = raw[at + 1 : i]
            at = i + 1
        else:
            m = _NUMBER.match(raw, at) or _MACRO.match(raw, at)
            if m is None:
                raise BadValue(_NOT_A_VALUE)
            word = m[0]
            if not word[0].isdigit():
                if word.lower() not in macros:
                    raise BadValue(f'names @string "{word[:40]}", which the file does not define')
                word = macros[word.lower()]
            part = word
            at = m.end()
        size += len(part)
        if size > MAX_VALUE_CHARS:  # checked before the join, which would hold it all
            raise TooLarge(f"expands past {MAX_VALUE_CHARS:,} characters (macros that double each other?)")
        out.append(part)
        while at < end and raw[at].isspace():
            at += 1
        if at == end:
            return "".join(out)
        if raw[at] != "#":
            raise BadValue(_NOT_A_VALUE)
        at += 1


def paper_fields(key: str, entry: dict) -> dict:
    """A paper's fields (as a paper file's row has them) from one parsed BibTeX entry: its key and fields."""
    fields = {k.lower(): v if isinstance(v, str) else str(v) for k, v in entry.items()}
    row: dict = {}
    if _SLUG.match(key) and not key.isdigit():
        row["id"] = key
    if "title" in fields:
        row["title"] = from_tex(fields["title"])
    if "author" in fields:
        row["authors"] = ", ".join(_name(n) for n in _split_names(fields["author"]) if _name(n))
    year = from_tex(fields.get("year", "")).strip()
    if year:  # its four digits (`2020a`, `{2020}`); else as written, which validate refuses as in other formats
        four = re.search(r"(?<!\d)(\d{4})(?!\d)", year)
        row["year"] = four[1] if four else year[:40]
    link = _verbatim(fields.get("url", ""))
    doi = _verbatim(fields.get("doi", ""))
    eprint = _verbatim(fields.get("eprint", ""))
    if not link and doi:
        doi = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)", "", doi, flags=re.IGNORECASE)
        link = f"https://doi.org/{doi}"
    if not link and eprint and fields.get("archiveprefix", "arxiv").strip().lower() == "arxiv":
        link = f"https://arxiv.org/abs/{re.sub(r'^arxiv:', '', eprint, flags=re.IGNORECASE)}"
    if link:
        row["url"] = link
    if "abstract" in fields:
        row["summary"] = from_tex(fields["abstract"])
    if "keywords" in fields:
        row["tags"] = [t for t in re.split(r"[,;]", from_tex(fields["keywords"])) if t.strip()]
    return row


def _verbatim(value: str) -> str:
    """A url, doi or eprint as written (braces that protect it dropped)."""
    return value.strip().strip("{}").strip()


def _split_names(value: str) -> list[str]:
    """`A and B and {C and D}`: the names, split at ` and ` outside braces."""
    names: list[str] = []
    current: list[str] = []
    depth = 0
    words = re.split(r"(\s+and\s+|[{}])", value)
    for part in words:
        if part == "{":
            depth += 1
        elif part == "}":
            depth -= 1
        elif depth == 0 and re.fullmatch(r"\s+and\s+", part or ""):
            names.append("".join(current))
            current = []
            continue
        current.append(part)
    names.append("".join(current))
    return [n for n in names if n.strip()]


#: What BibTeX's `and others` (the names left out) reads as in a paper's authors, and is written back as.
ET_AL = "et al."


def _name(raw: str) -> str:
    """`Lovelace, Ada` -> `Ada Lovelace`; `{Ada Lovelace, Jr}` (braced whole) stays as it is; `others` is et al."""
    raw = raw.strip()
    if raw == "others":
        return ET_AL
    braced = raw.startswith("{") and raw.endswith("}") and _balanced(raw[1:-1])
    if not braced:
        parts = _top_level_commas(raw)
        if len(parts) == 2:
            raw = f"{parts[1].strip()} {parts[0].strip()}"
        elif len(parts) == 3:  # von Last, Jr, First
            raw = f"{parts[2].strip()} {parts[0].strip()}, {parts[1].strip()}"
    return " ".join(from_tex(raw).split())


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += (ch == "{") - (ch == "}")
        if depth < 0:
            return False
    return depth == 0


def _top_level_commas(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


#: What `entry` writes for a character TeX reads as markup, and what reading turns back.
_ESCAPES = {
    "\\": r"\textbackslash{}",
    "{": r"\textbraceleft{}",
    "}": r"\textbraceright{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "%": r"\%",
    "&": r"\&",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
}
_NAMED = {
    "textbackslash": "\\",
    "textbraceleft": "{",
    "textbraceright": "}",
    "textasciitilde": "~",
    "textasciicircum": "^",
    "ss": "ß",
    "o": "ø",
    "O": "Ø",
    "aa": "å",
    "AA": "Å",
    "ae": "æ",
    "AE": "Æ",
    "oe": "œ",
    "OE": "Œ",
    "l": "ł",
    "L": "Ł",
    "i": "ı",
    "j": "ȷ",
}
#: `\"u` and its kin: the combining mark each accent command puts on its letter.
_ACCENTS = {
    '"': "\u0308",
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "u": "\u0306",
    "v": "\u030c",
    "H": "\u030b",
    "c": "\u0327",
    "k": "\u0328",
}
_TEX = re.compile(
    r"\\([\\{}%&$#_])"  # \% and its kin
    r"|\\([\"'`^~=.]|[uvHck](?=[\s{]))\s*(?:\{(\\?[a-zA-Z])\}|(\\?[a-zA-Z]))"  # \"u, \'{e}, \c c
    r"|\\([a-zA-Z]+)(?:\{\}|\s)?"  # \textbackslash{}, \ss
)


def from_tex(value: str) -> str:
    """A field's text as a person reads it: escapes and accents decoded, grouping braces dropped."""
    out: list[str] = []
    at = 0
    for m in _TEX.finditer(value):
        out.append(_ungroup(value[at : m.start()]))
        if m[1]:
            out.append(m[1])
        elif m[2]:
            letter = m[3] or m[4]
            letter = {"\\i": "i", "\\j": "j"}.get(letter, letter)
            out.append(unicodedata.normalize("NFC", letter + _ACCENTS[m[2]]))
        else:
            out.append(_NAMED.get(m[5], m[0]))  # a command this reader does not know (\alpha): as written
        at = m.end()
    out.append(_ungroup(value[at:]))
    return "".join(out)


def _ungroup(text: str) -> str:
    """Text between escapes: braces group in TeX and show as nothing; `~` is a space that does not break."""
    return text.replace("{", "").replace("}", "").replace("~", "\u00a0")


# -- writing -------------------------------------------------------------------


def to_tex(text: str) -> str:
    return "".join(_ESCAPES.get(ch, ch) for ch in text)


def _url(url: str) -> str:
    """A link as BibTeX's url field holds it (verbatim): braces and backslashes, which would end or
    escape the field, percent-encoded (the same address)."""
    return url.replace("\\", "%5C").replace("{", "%7B").replace("}", "%7D")


def _author(name: str) -> str:
    """A name as `author` lists it: braced whole when a comma or an `and` in it would split it."""
    written = to_tex(name)
    return "{" + written + "}" if "," in name or re.search(r"\sand\s", name) else written


def entry(paper: Paper) -> str:
    """One `@misc` entry for the paper, keyed by its id."""
    fields = [("title", to_tex(paper.title))]
    authors = getattr(paper, "authors", "")
    if authors:
        names = [n.strip() for n in authors.split(", ") if n.strip()]
        fields.append(("author", " and ".join("others" if n == ET_AL else _author(n) for n in names)))
    year = getattr(paper, "year", None)
    if year:
        fields.append(("year", str(year)))
    if paper.url:
        fields.append(("url", _url(paper.url)))
    if paper.summary:
        fields.append(("abstract", to_tex(paper.summary)))
    if paper.tags:
        fields.append(("keywords", to_tex(", ".join(paper.tags))))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@misc{{{paper.id},\n{body}\n}}\n"
