"""Reading and writing paper lists: YAML, JSON, JSON Lines and CSV.

    report = papers_file.read(Path("reading-list.csv"))
    report.papers      # valid rows as catalog.PaperInput
    report.problems    # ["reading-list.csv line 4: url must start with http:// ..."]
    papers_file.write(catalog.all_papers(store), "json", sys.stdout)

A bad row never stops the others: it is reported as a person finds it in the
file, by its line (CSV and JSON Lines: `line 4`, the header being line 1) or
its place in the list (YAML and JSON: `item 3`, 1 the first), and skipped.
Files are read a row at a time (PaperList), so memory does not grow with the file.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import yaml
from yaml.composer import Composer

from bot.catalog import bibtex
from bot.catalog.papers import InvalidPaper, Paper, PaperInput, validate

FORMATS = ("json", "csv", "yaml", "bibtex")
SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".jsonl": "jsonl", ".csv": "csv", ".bib": "bibtex"}
FIELDS = ("id", "number", "title", "summary", "tags", "url", "authors", "year")


@dataclass
class ReadReport:
    papers: list[PaperInput] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: What was read but not used: a column or key paperbot does not know ("tag" for "tags").
    notes: list[str] = field(default_factory=list)


class _Bad(str):
    """A row that could not even be parsed; the text says why."""


class UnreadableFile(ValueError):
    """The file as a whole cannot be read (missing, wrong format, broken syntax, too large, not a file)."""


#: The largest paper list read: a list of 100,000 papers is about 45 MB in any of the formats.
#: A larger file is refused before it is read; one that holds no papers (a disk image, a log) fails here.
MAX_FILE_BYTES = 128 * 1024 * 1024
#: How many characters of a JSON list are read at a time; memory does not grow with the file (see PaperList).
CHUNK = 1 << 18
#: The longest one paper may be in a JSON list (its title, 6,000 characters of summary, escaped, and more).
MAX_ITEM_CHARS = 1 << 22


def read(path: Path) -> ReadReport:
    """Every row of the file at once (a small list: the seed, a test). An import reads a PaperList, row by row."""
    papers = PaperList(path)
    report = ReadReport(papers=list(papers))
    report.problems, report.notes = papers.problems, papers.notes
    return report


class PaperList:
    """A paper list file, read a row at a time each time it is iterated (an import reads it twice: what the
    rows claim, then writing them), so that memory holds a row, not the file.

        papers = PaperList(Path("reading-list.csv"))   # UnreadableFile now: missing, not a file, too large
        for paper in papers: ...                        # UnreadableFile midway: broken syntax
        papers.problems, papers.notes                   # of the last pass

    The file is checked before anything is read from it: it must be a regular file (a named pipe
    would wait for a writer forever, /dev/zero never ends) of at most MAX_FILE_BYTES.
    """

    def __init__(self, path: Path):
        self.path = path
        kind = SUFFIXES.get(path.suffix.lower())
        if kind is None:
            raise UnreadableFile(f"{path}: unknown file type (use {', '.join(sorted(SUFFIXES))})")
        self.kind = kind
        try:
            info = path.stat()
        except FileNotFoundError:
            raise UnreadableFile(f"{path}: no such file") from None
        except OSError as e:
            raise UnreadableFile(f"{path}: cannot be read ({e.__class__.__name__}: {e})") from None
        if stat.S_ISDIR(info.st_mode):
            raise UnreadableFile(f"{path}: is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(f"{path}: is not a regular file (a pipe or a device); save the list to a file first")
        if info.st_size > MAX_FILE_BYTES:
            raise UnreadableFile(
                f"{path}: is {info.st_size / 2**20:.0f} MB, too large for a paper list (at most"
                f" {MAX_FILE_BYTES // 2**20} MB, about 250,000 papers): split it into smaller files"
            )
        self.problems: list[str] = []
        self.notes: list[str] = []

    @property
    def by_line(self) -> bool:
        """Is each line read on its own (JSON Lines, CSV): broken syntax is one row's problem, not the file's?"""
        return self.kind in ("jsonl", "csv")

    def __iter__(self) -> Iterator[PaperInput]:
        self.problems, self.notes = [], []
        return self._read(self.problems, self.notes)

    def quietly(self) -> Iterator[PaperInput]:
        """The rows again, keeping the problems and notes of the last iteration as they are."""
        return self._read([], [])

    def _read(self, problems: list[str], notes: list[str]) -> Iterator[PaperInput]:
        path, kind = self.path, self.kind
        seen: dict[str, str] = {}
        unknown: dict[str, str] = {}  # a key paperbot does not read -> where it was first seen
        with _text(path) as text:
            for where, row in _decoded(path, _rows(path, kind, text)):
                paper = self._paper(where, row, unknown, problems, notes)
                if paper is None:
                    continue
                key = paper.id or f"title:{(paper.title or '').casefold()}"
                if key in seen:
                    problems.append(f"{path} {where}: repeats the paper of {seen[key]}; skipped")
                    continue
                seen[key] = where
                yield paper
            if not seen and not problems and not text.seen_text:
                raise UnreadableFile(f"{path}: is empty")
        for key, where in unknown.items():
            notes.append(
                f"{path}: {'column' if kind == 'csv' else 'key'} {key[:40]!r} ({where}) is not read;"
                f" paperbot reads {', '.join(FIELDS)}"
            )

    def _paper(
        self, where: str, row: object, unknown: dict[str, str], problems: list[str], notes: list[str]
    ) -> PaperInput | None:
        path, kind = self.path, self.kind
        if isinstance(row, _Bad):
            problems.append(f"{path} {where}: {row}")
            return None
        if not isinstance(row, dict):
            problems.append(f"{path} {where}: expected an object with id, title, summary, tags, url")
            return None
        folded: dict[str, object] = {}
        for k, v in row.items():  # "Tags" as a CSV header may write it
            key = str(k).strip().lower()
            if key in folded:
                notes.append(f"{path} {where}: {k!r} names the field {key!r} again; the last one is read")
            folded[key] = v
        for key in folded:  # in the file's order
            if key not in FIELDS:
                unknown.setdefault(key, "the header" if kind == "csv" else where)
        try:
            # A row with an id may be an update, which needs no title (upsert refuses an unknown id without one).
            return validate(folded, new=False, source=f"{path} {where}")
        except InvalidPaper as e:
            problems.append(f"{path} {where}: {e}")
        except (ValueError, TypeError, RecursionError) as e:  # whatever a row holds, it is one row's problem
            problems.append(f"{path} {where}: cannot be read ({e.__class__.__name__})")
        return None


class _Text(io.TextIOWrapper):
    """The file as text, read a chunk at a time; `seen_text`: was anything but white space read?"""

    seen_text = False

    def read(self, size: int | None = -1, /) -> str:
        chunk = super().read(size)
        self.seen_text = self.seen_text or bool(chunk.strip())
        return chunk

    # typeshed's TextIOWrapper has _io._IOBase's bytes readline and __next__ among its bases: str is right.
    def readline(self, size: int = -1, /) -> str:  # type: ignore[override]
        line = super().readline(size)
        self.seen_text = self.seen_text or bool(line.strip())
        return line

    def __next__(self) -> str:  # type: ignore[override]
        line = super().__next__()
        self.seen_text = self.seen_text or bool(line.strip())
        return line


def _text(path: Path) -> _Text:
    """UTF-8 (with or without a byte order mark), or UTF-16 with its byte order mark (a .csv some
    spreadsheets and editors save as "Unicode"); the text as it is: a \r inside a CSV field or a
    JSON string is kept, and lines end at \n, \r\n or \r."""
    try:
        raw = path.open("rb")
    except OSError as e:
        raise UnreadableFile(f"{path}: cannot be read ({e.__class__.__name__}: {e})") from None
    start = raw.read(2)
    raw.seek(0)
    encoding = "utf-16" if start in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) else "utf-8-sig"
    return _Text(raw, encoding=encoding, newline="")


def _decoded(path: Path, rows: Iterator[tuple[str, object]]) -> Iterator[tuple[str, object]]:
    """`rows`, with a byte that is not UTF-8 named as the file's problem."""
    where = "the start"
    try:
        for where, row in rows:
            yield where, row
    except UnicodeDecodeError:
        raise UnreadableFile(
            f"{path}: is not UTF-8 text (after {where}): save it as UTF-8 and import it again"
        ) from None


#: libyaml's loader when PyYAML has it (several times faster on a big list), the same safe rules.
if TYPE_CHECKING:  # either has the safe loader's interface
    _YAML_LOADER = yaml.SafeLoader
else:
    _YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Loader(_YAML_LOADER):
    """The safe loader, except that a scalar that cannot become an int or a date (5,000 digits,
    2024-13-45) stays text, for its row's check to refuse: one bad row, not a file refused whole.

    It also composes one node at a time (PyYAML's composer, on libyaml's events), so that a list is
    read an item at a time: libyaml's own composer makes the whole document first."""

    compose_node = Composer.compose_node
    compose_scalar_node = Composer.compose_scalar_node
    compose_sequence_node = Composer.compose_sequence_node
    compose_mapping_node = Composer.compose_mapping_node


def _or_text(construct):
    def lenient(loader, node):
        try:
            return construct(loader, node)
        except (ValueError, KeyError, TypeError, yaml.YAMLError):  # !!bool maybe, !!float abc, !!binary %%%
            return loader.construct_scalar(node)

    return lenient


for _tag, _construct in (
    ("int", _YAML_LOADER.construct_yaml_int),
    ("float", _YAML_LOADER.construct_yaml_float),
    ("bool", _YAML_LOADER.construct_yaml_bool),
    ("timestamp", _YAML_LOADER.construct_yaml_timestamp),
    ("binary", _YAML_LOADER.construct_yaml_binary),
):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _or_text(_construct))


def _as_written(loader, node):
    """A node of a tag no safe constructor takes (an unquoted `=` or `<<` value, `!mine x`): as written."""
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)


_Loader.add_constructor(None, _as_written)


def _json_int(digits: str) -> int | float:
    """A JSON number too long for int() (over 4,300 digits) is no number a paper has: inf, which
    its row's check refuses, rather than a file refused whole."""
    return int(digits) if len(digits) <= 4000 else float("inf")


_JSON = json.JSONDecoder(parse_int=_json_int)


def _rows(path: Path, kind: str, text: TextIO) -> Iterator[tuple[str, object]]:
    """(where, row) for each row of the file, numbered as a person reads it: `line N` (the file's
    line, 1 the first) in JSON Lines and CSV, `item N` (1 the first) in a YAML or JSON list."""
    if kind == "jsonl":
        yield from _jsonl_rows(text)
    elif kind == "csv":
        yield from _csv_rows(path, text)
    elif kind == "json":
        yield from _json_rows(path, text)
    elif kind == "bibtex":
        yield from _bibtex_rows(path, text)
    else:
        yield from _yaml_rows(path, text)


def _jsonl_rows(text: TextIO) -> Iterator[tuple[str, object]]:
    # Lines end at \n, \r\n or \r (JSON has no raw \r inside a string); splitlines() would also
    # split at U+2028 or U+0085, which a JSON string may hold.
    for n, line in enumerate(text, start=1):
        if not line.strip():
            continue
        try:
            yield f"line {n}", json.loads(line, parse_int=_json_int)
        except json.JSONDecodeError as e:
            yield f"line {n}", _Bad(f"not JSON ({e.msg})")
        except (ValueError, RecursionError) as e:  # a number of 5,000 digits, nesting 100,000 deep
            yield f"line {n}", _Bad(f"cannot be read ({e.__class__.__name__})")


def _csv_rows(path: Path, text: TextIO) -> Iterator[tuple[str, object]]:
    # strict: a quote that is never closed is an error, not a field that swallows the rest of the file.
    reader = csv.reader(text, strict=True)
    try:
        names = [name.strip().lower() for name in next(reader, [])]
    except csv.Error as e:
        raise UnreadableFile(f"{path}: the first line is not valid CSV ({e})") from None
    if not names:
        return
    if not {"id", "title"} & set(names):
        raise UnreadableFile(f"{path}: the first line must name the columns (id,title,summary,tags,url)")
    while True:
        start = reader.line_num + 1  # a row is named by its first line: a quoted field may span several
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as e:  # the reader goes on after the lines it read for this row
            # A stray quote makes one field of the lines after it, up to the next quote: say which.
            lines = f"line {start}" if reader.line_num <= start else f"lines {start}-{reader.line_num}"
            if "end of data" in str(e):  # a quote that is never closed: nothing after it is a row
                yield lines, _Bad("a quote opened on its first line is never closed; these lines are skipped")
                return
            yield lines, _Bad(f"not valid CSV ({e}); a quote opened on its first line takes in the rest")
            continue
        if not cells:
            continue  # a blank line
        where = f"line {start}"
        if len(cells) > len(names):
            yield where, _Bad("has more fields than the header")
            continue
        # An empty cell means "no value given": an update keeps what it had.
        yield where, {k: v for k, v in zip(names, cells, strict=False) if k and v != ""}


def _bibtex_rows(path: Path, text: TextIO) -> Iterator[tuple[str, object]]:
    """The entries of a BibTeX file, one at a time, as paper fields (see bibtex.py)."""
    try:
        for where, row in bibtex.rows(text):
            yield where, _Bad(row) if isinstance(row, bibtex.Problem) else row
    except bibtex.TooLarge as e:
        raise UnreadableFile(f"{path} {e}: the file is refused") from None
    except bibtex.Unreadable as e:
        raise UnreadableFile(f"{path}: not valid BibTeX ({e})") from None


def _json_rows(path: Path, text: TextIO) -> Iterator[tuple[str, object]]:  # noqa: C901 (an incremental JSON reader: its window in one loop)
    """The items of a JSON list, decoded one at a time from a window of the file; `{"papers": [...]}`
    (a wrapped list) is read whole."""
    buf, at, lines_before = "", 0, 0  # the window, where in it, and the file's lines before the window
    eof = False

    def more() -> bool:
        nonlocal buf, at, lines_before, eof
        if eof:
            return False
        chunk = text.read(CHUNK)
        if not chunk:
            eof = True
            return False
        lines_before += buf.count("\n", 0, at)
        buf, at = buf[at:] + chunk, 0
        return True

    def skip_space() -> str:
        nonlocal at
        while True:
            while at < len(buf) and buf[at] in " \t\r\n":
                at += 1
            if at < len(buf) or not more():
                return buf[at] if at < len(buf) else ""

    def line_at(pos: int | None = None) -> int:
        return lines_before + buf.count("\n", 0, at if pos is None else pos) + 1

    def broken(e: json.JSONDecodeError) -> UnreadableFile:
        return UnreadableFile(f"{path}: not valid JSON (line {line_at(e.pos)}: {e.msg})")

    first = skip_space()
    if first == "{":  # {"papers": [...]}: read whole, as it always was
        while more():
            pass
        try:
            data = _JSON.decode(buf)
        except json.JSONDecodeError as e:
            raise broken(e) from None
        except (ValueError, RecursionError) as e:
            raise UnreadableFile(f"{path}: cannot be read ({e.__class__.__name__}: {str(e)[:100]})") from None
        if not isinstance(data.get("papers"), list):
            raise UnreadableFile(f"{path}: expected a list of papers")
        for i, row in enumerate(data["papers"], start=1):
            yield f"item {i}", row
        return
    if first == "":
        return
    if first != "[":
        try:
            _JSON.decode(buf[at:] + text.read(CHUNK))
        except json.JSONDecodeError as e:
            raise UnreadableFile(f"{path}: not valid JSON ({e.msg})") from None
        except (ValueError, RecursionError):
            pass
        raise UnreadableFile(f"{path}: expected a list of papers")
    at += 1
    n = 0
    while True:
        if skip_space() == "]" and n == 0:
            at += 1
            break
        while True:
            try:
                row, end = _JSON.raw_decode(buf, at)
                if end == len(buf) and not eof and more():  # a number cut at the window's edge
                    continue
                break
            except json.JSONDecodeError as e:
                if len(buf) - at > MAX_ITEM_CHARS or not more():
                    raise broken(e) from None
            except RecursionError:
                raise UnreadableFile(f"{path}: cannot be read (RecursionError: nesting too deep)") from None
        n += 1
        at = end
        yield f"item {n}", row
        after = skip_space()
        if after == ",":
            at += 1
            continue
        if after == "]":
            at += 1
            break
        raise UnreadableFile(f"{path}: not valid JSON (line {line_at()}: expected ',' or ']')")
    if skip_space() != "":
        raise UnreadableFile(f"{path}: not valid JSON (line {line_at()}: extra data)")


def _yaml_rows(path: Path, text: TextIO) -> Iterator[tuple[str, object]]:
    """The items of a YAML list, composed and built one at a time; a mapping (`papers: [...]`) is read whole."""
    loader = _Loader(text)
    loader.anchors = {}
    try:
        try:
            loader.get_event()  # the stream's start
            if loader.check_event(yaml.StreamEndEvent):
                return
            loader.get_event()  # the document's start
            if loader.check_event(yaml.SequenceStartEvent):
                loader.get_event()
                n = 0
                while not loader.check_event(yaml.SequenceEndEvent):
                    n += 1
                    yield f"item {n}", _built(loader, _composed(loader))
                loader.get_event()
            else:
                data = _built(loader, _composed(loader))
                if isinstance(data, dict) and isinstance(data.get("papers"), list):
                    for i, row in enumerate(data["papers"], start=1):
                        yield f"item {i}", row
                elif data is not None:
                    raise UnreadableFile(f"{path}: expected a list of papers")
            loader.get_event()  # the document's end
            if not loader.check_event(yaml.StreamEndEvent):
                raise UnreadableFile(f"{path}: holds several YAML documents; put the papers in one list")
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark else ""
        raise UnreadableFile(f"{path}: not valid YAML{where}") from None
    except (RecursionError, KeyError, TypeError) as e:  # nesting 100,000 deep, a complex key
        raise UnreadableFile(f"{path}: cannot be read ({e.__class__.__name__}: {str(e)[:100]})") from None


def _composed(loader: _Loader) -> yaml.Node:
    """The next node, composed as PyYAML composes a document's root."""
    # PyYAML's compose_document passes index None and always gets a node; its stubs say int and Node | None.
    return loader.compose_node(None, None)  # type: ignore[arg-type,return-value]


def _built(loader: _Loader, node: yaml.Node) -> object:
    """The value of one composed node (a row: a row's bad value is the row's problem, see _or_text)."""
    try:
        return loader.construct_document(node)
    except ValueError as e:
        return _Bad(f"cannot be read ({e.__class__.__name__})")


def as_dict(paper: Paper) -> dict:
    return {
        "id": paper.id,
        "number": paper.number,
        "title": paper.title,
        "summary": paper.summary,
        "tags": list(paper.tags),
        "url": paper.url,
        "authors": paper.authors,
        "year": paper.year,
    }


def write(papers: Iterable[Paper], fmt: str, out: TextIO) -> int:
    """Write every paper to `out`; returns how many."""
    n = 0
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    writer = csv.DictWriter(out, fieldnames=list(FIELDS), lineterminator="\n") if fmt == "csv" else None
    # The csv module quotes a field holding a character of the line terminator (\n), but (Python 3.11) not
    # one holding a lone \r, which reads back as a line break: a row with a \r in it is written all quoted.
    quoted = csv.DictWriter(out, fieldnames=list(FIELDS), lineterminator="\n", quoting=csv.QUOTE_ALL)
    if writer:
        writer.writeheader()
    elif fmt == "json":
        out.write("[")
    elif fmt == "bibtex":
        out.write("% The paper catalog, written by paperbot: `paperbot import` reads it back.\n")
    for paper in papers:  # one at a time: an export of 100,000 papers never sits in memory
        n += 1
        row = as_dict(paper)
        if fmt == "json":
            out.write(("\n  " if n == 1 else ",\n  ") + json.dumps(row, ensure_ascii=False))
        elif fmt == "bibtex":
            out.write("\n" + bibtex.entry(paper))
        elif writer:
            row["tags"] = ",".join(paper.tags)
            (quoted if any("\r" in str(v) for v in row.values()) else writer).writerow(row)
        else:
            out.write(yaml.dump([row], Dumper=_YAML_DUMPER, allow_unicode=True, sort_keys=False, width=1000))
    if fmt == "json":
        out.write("\n]\n" if n else "]\n")
    elif fmt == "yaml" and n == 0:
        out.write("[]\n")
    return n
