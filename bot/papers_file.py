"""Reading and writing paper lists: YAML, JSON, JSON Lines and CSV.

    report = papers_file.read(Path("reading-list.csv"))
    report.papers      # valid rows as catalog.PaperInput
    report.problems    # ["reading-list.csv line 4: url must start with http:// ..."]
    papers_file.write(catalog.all_papers(store), "json", sys.stdout)

A bad row never stops the others: it is reported with its line (CSV, JSON
Lines) or its index (YAML, JSON) and skipped.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import yaml

from bot.papers import InvalidPaper, Paper, PaperInput, validate

FORMATS = ("json", "csv", "yaml")
SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".jsonl": "jsonl", ".csv": "csv"}
FIELDS = ("id", "number", "title", "summary", "tags", "url")


@dataclass
class ReadReport:
    papers: list[PaperInput] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: What was read but not used: a column or key paperbot does not know ("tag" for "tags").
    notes: list[str] = field(default_factory=list)


class _Bad(str):
    """A row that could not even be parsed; the text says why."""


class UnreadableFile(ValueError):
    """The file as a whole cannot be read (missing, wrong format, broken syntax)."""


def read(path: Path) -> ReadReport:
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise UnreadableFile(f"{path}: unknown file type (use {', '.join(sorted(SUFFIXES))})")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UnreadableFile(f"{path}: no such file") from None
    except OSError as e:
        raise UnreadableFile(f"{path}: cannot be read ({e.__class__.__name__}: {e})") from None
    # UTF-8 (with or without a byte order mark), or UTF-16 with its byte order mark (a .csv some
    # spreadsheets and editors save as "Unicode").
    # The text as it is: a \r inside a CSV field or a JSON string is kept.
    encoding = "utf-16" if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as e:
        raise UnreadableFile(
            f"{path}: is not UTF-8 text (byte {e.start}): save it as UTF-8 and import it again"
        ) from None

    if not text.strip():
        raise UnreadableFile(f"{path}: is empty")
    report = ReadReport()
    seen: dict[str, str] = {}
    unknown: dict[str, str] = {}  # a key paperbot does not read -> where it was first seen
    for where, row in _rows(path, kind, text):
        if isinstance(row, _Bad):
            report.problems.append(f"{path} {where}: {row}")
            continue
        if not isinstance(row, dict):
            report.problems.append(f"{path} {where}: expected an object with id, title, summary, tags, url")
            continue
        folded: dict[str, object] = {}
        for k, v in row.items():  # "Tags" as a CSV header may write it
            key = str(k).strip().lower()
            if key in folded:
                report.notes.append(f"{path} {where}: {k!r} names the field {key!r} again; the last one is read")
            folded[key] = v
        row = folded
        for key in row:  # in the file's order
            if key not in FIELDS:
                unknown.setdefault(key, "the header" if kind == "csv" else where)
        try:
            # A row with an id may be an update, which needs no title (upsert refuses an unknown id without one).
            paper = validate(row, new=False, source=f"{path} {where}")
        except InvalidPaper as e:
            report.problems.append(f"{path} {where}: {e}")
            continue
        except (ValueError, TypeError, RecursionError) as e:  # whatever a row holds, it is one row's problem
            report.problems.append(f"{path} {where}: cannot be read ({e.__class__.__name__})")
            continue
        key = paper.id or f"title:{(paper.title or '').casefold()}"
        if key in seen:
            report.problems.append(f"{path} {where}: repeats the paper of {seen[key]}; skipped")
            continue
        seen[key] = where
        report.papers.append(paper)
    for key, where in unknown.items():
        report.notes.append(
            f"{path}: {'column' if kind == 'csv' else 'key'} {key[:40]!r} ({where}) is not read;"
            f" paperbot reads {', '.join(FIELDS)}"
        )
    return report


#: libyaml's loader when PyYAML has it (several times faster on a big list), the same safe rules.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_JSONL_LINES = re.compile(r"\r\n|\r|\n")


class _Loader(_YAML_LOADER):
    """The safe loader, except that a scalar that cannot become an int or a date (5,000 digits,
    2024-13-45) stays text, for its row's check to refuse: one bad row, not a file refused whole."""


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


def _rows(path: Path, kind: str, text: str) -> Iterator[tuple[str, object]]:
    if kind == "jsonl":
        # Lines end at \n, \r\n or \r (JSON has no raw \r inside a string); splitlines() would also
        # split at U+2028 or U+0085, which a JSON string may hold.
        for n, line in enumerate(_JSONL_LINES.split(text), start=1):
            if not line.strip():
                continue
            try:
                yield f"line {n}", json.loads(line, parse_int=_json_int)
            except json.JSONDecodeError as e:
                yield f"line {n}", _Bad(f"not JSON ({e.msg})")
            except (ValueError, RecursionError) as e:  # a number of 5,000 digits, nesting 100,000 deep
                yield f"line {n}", _Bad(f"cannot be read ({e.__class__.__name__})")
        return
    if kind == "csv":
        # strict: a quote that is never closed is an error, not a field that swallows the rest of the file.
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        try:
            names = [name.strip().lower() for name in next(reader, [])]
        except csv.Error as e:
            raise UnreadableFile(f"{path}: the first line is not valid CSV ({e})") from None
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
    try:
        data = json.loads(text, parse_int=_json_int) if kind == "json" else yaml.load(text, Loader=_Loader)
    except json.JSONDecodeError as e:
        raise UnreadableFile(f"{path}: not valid JSON (line {e.lineno}: {e.msg})") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark else ""
        raise UnreadableFile(f"{path}: not valid YAML{where}") from None
    except (ValueError, RecursionError, KeyError, TypeError) as e:  # nesting 100,000 deep, a complex key
        raise UnreadableFile(f"{path}: cannot be read ({e.__class__.__name__}: {str(e)[:100]})") from None
    if isinstance(data, dict) and isinstance(data.get("papers"), list):
        data = data["papers"]
    if data is None:
        data = []
    if not isinstance(data, list):
        raise UnreadableFile(f"{path}: expected a list of papers")
    for i, row in enumerate(data):
        yield f"item {i}", row


def as_dict(paper: Paper) -> dict:
    return {
        "id": paper.id,
        "number": paper.number,
        "title": paper.title,
        "summary": paper.summary,
        "tags": list(paper.tags),
        "url": paper.url,
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
    for paper in papers:  # one at a time: an export of 100,000 papers never sits in memory
        n += 1
        row = as_dict(paper)
        if fmt == "json":
            out.write(("\n  " if n == 1 else ",\n  ") + json.dumps(row, ensure_ascii=False))
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
