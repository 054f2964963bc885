"""The group's page: its coming and past talks and its catalog by tag, as one HTML page.

    html = site.page(store, group, now, ask=names, query="diloco")   # served, with search results
    site.write_static(store, group, now, Path("public"), ask=names)   # the same, as files

Drawn with Jinja2 templates (bot/web/templates/, autoescaped: a title is text, never markup). It
reads without JavaScript; the static copy, which no server answers, searches with a small script.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import jinja2

from bot.calendar import MeetingCalendar, Week
from bot.catalog import queries as catalog
from bot.catalog.papers import Paper
from bot.schedule import slots, talks
from bot.schedule.rows import TalkWeek
from bot.store.connection import Store
from bot.web import member_names

#: Past talks the page lists, newest first.
PAST_SHOWN = 200
#: Papers listed under one tag, as many as a chat reply lists; the rest are found by search.
PER_TAG = 40
#: A catalog this small shows every tag's papers at once; a larger one, its tags folded.
OPEN_TAGS_UP_TO = 200
#: Search results on the served page.
RESULTS = 40
#: A query longer than this is cut: nothing a person types into a search box.
QUERY_CHARS = 200
#: The most of a request's query string read: QUERY_CHARS characters, each up to 3 UTF-8 bytes %-escaped.
QUERY_STRING_BYTES = QUERY_CHARS * 9 + 64

_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff]")

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("bot.web", "templates"),
    autoescape=True,  # every template, whatever its name: titles and summaries are members' text
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)
_ENV.filters["lang"] = lambda text: "zh" if _HAN.search(text or "") else "en"

_SLIDES = (".pdf", ".pptx", ".ppt", ".key", ".odp")
_RECORDINGS = ("youtube.com", "youtu.be", "vimeo.com", "bilibili.com")


def link_label(url: str) -> str:
    """A talk link's short name, by what it plainly is: slides, a recording, else the site it is on."""
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.").removeprefix("m.")
    path = parts.path.lower()
    if path.endswith(_SLIDES) or "slides" in url.lower():
        return "slides"
    if path.endswith((".mp4", ".webm", ".mov")) or any(host == h or host.endswith("." + h) for h in _RECORDINGS):
        return "recording"
    return host or "link"


def labelled(links: list[str]) -> list[tuple[str, str]]:
    """Each link with its label, numbered only where two links share one (slides 1, slides 2)."""
    labels = [link_label(url) for url in links]
    seen: dict[str, int] = {}
    out = []
    for url, label in zip(links, labels, strict=True):
        if labels.count(label) > 1:
            seen[label] = seen.get(label, 0) + 1
            label = f"{label} {seen[label]}"
        out.append((url, label))
    return out


_ENV.filters["labelled"] = labelled


@dataclass(frozen=True)
class Group:
    """What the page and the feeds need of a reading group."""

    group_id: int
    calendar: MeetingCalendar
    name: str = "Reading group"
    channel: str | None = None
    minutes: int = 60
    place: str | None = None


@dataclass(frozen=True)
class Talk:
    week: Week
    meeting: datetime
    paper: Paper | None
    presenter: str
    links: list[str]


def talk_links(store: Store, group_id: int, week: Week) -> list[str]:
    """The slides, recordings and notes attached to a talk (the `slides` command's)."""
    return list(talks.links(store, [week], group_id).get(week.key, ()))


def _coming(store: Store, group: Group, now: datetime, ask) -> list[Talk]:
    return [
        Talk(line.week, line.meeting, line.paper, member_names.display_name(store, line.presenter, ask), [])
        for line in slots.schedule(store, group.calendar, now)
        if isinstance(line, TalkWeek)
    ]


def _past(store: Store, group: Group, now: datetime, ask) -> list[Talk]:
    this = group.calendar.week_of(now)
    rows = store.db.execute(
        "SELECT week, presenter, paper FROM slots WHERE group_id = ? AND kind = 'presenter' AND week <= ? "
        "ORDER BY week DESC LIMIT ?",
        [group.group_id, this.key, PAST_SHOWN + 1],
    ).fetchall()
    papers = catalog.many(store, {r[2] for r in rows})
    talks = []
    for key, presenter, number in rows:
        week = Week.from_key(key)
        meeting = group.calendar.meeting_of(week)
        if meeting > now:  # this week's meeting, still ahead: a coming talk
            continue
        name = member_names.display_name(store, presenter, ask)
        talks.append(Talk(week, meeting, papers.get(number), name, talk_links(store, group.group_id, week)))
    return talks[:PAST_SHOWN]


def _by_tag(store: Store) -> list[tuple[str, int, list[Paper]]]:
    """Each tag (by name) with its count and its first PER_TAG papers, then the untagged."""
    shelves = []
    for tag, count in sorted(catalog.tag_counts(store)):
        _, shelf = catalog.tagged(store, tag, 1, PER_TAG)
        shelves.append((tag, count, shelf.papers))
    untagged = store.db.execute(
        "SELECT number FROM papers WHERE number NOT IN (SELECT paper FROM paper_tags) AND archived_at IS NULL "
        "ORDER BY number LIMIT ?",
        [PER_TAG + 1],
    ).fetchall()
    if untagged:
        found = catalog.many(store, [n for (n,) in untagged[:PER_TAG]])
        shelves.append(("untagged", len(untagged), [found[n] for (n,) in untagged[:PER_TAG] if n in found]))
    return shelves


def _in_catalog(store: Store) -> int:
    """How many papers the catalog lists: archived papers are left out, as lists and search leave them."""
    return store.db.execute("SELECT count(*) FROM papers WHERE archived_at IS NULL").fetchone()[0]


def query_of(query_string: str) -> str:
    """The search a page request asks for (`q=`), as the page shows it: its words, at most QUERY_CHARS.
    Only the query string's first QUERY_STRING_BYTES are read: a longer one costs no more than that."""
    value = parse_qs(query_string[:QUERY_STRING_BYTES]).get("q", [""])[0]
    return " ".join(value[: QUERY_CHARS * 2].split())[:QUERY_CHARS]


def page(
    store: Store,
    group: Group,
    now: datetime,
    *,
    ask: member_names.Ask | None = None,
    query: str | None = None,
    static: bool = False,
    feed_url: str | None = None,
) -> str:
    """The group's page as HTML: served (`query` shows search results) or static."""
    results = None
    shown_query = " ".join((query or "").split())[:QUERY_CHARS]
    if shown_query:
        found = catalog.search(store, shown_query, 1, RESULTS)
        results = found.papers if found is not None else []
    return _ENV.get_template("page.html").render(
        group=group,
        now=now,
        tz=group.calendar.tz.key,
        coming=_coming(store, group, now, ask),
        past=_past(store, group, now, ask),
        shelves=_by_tag(store),
        query=shown_query,
        results=results,
        static=static,
        feed_url=feed_url,
        papers=(count := _in_catalog(store)),
        open_tags=count <= OPEN_TAGS_UP_TO,
    )


class NotAFile(OSError):
    """What is in the way of a page's file is no regular file (a symlink, a pipe, a device, a folder)."""


def write_static(
    store: Store, group: Group, now: datetime, folder: Path, *, ask: member_names.Ask | None = None
) -> list[Path]:
    """The page as files in `folder` (made if missing), for any static host: index.html.

    Only regular files are written: a symlink at a file's place (which could lead out of `folder`),
    a pipe (which would block) or a device is refused with NotAFile. Each file is written whole to
    a new temporary file in `folder` and renamed over its place, which replaces what is there (even
    a symlink made since the check) and never follows it."""
    html = page(store, group, now, ask=ask, static=True).encode()
    folder.mkdir(parents=True, exist_ok=True)
    index = folder / "index.html"
    _write_regular(index, html)
    return [index]


def _write_regular(path: Path, data: bytes) -> None:
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        what = "a symbolic link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode) else "a pipe or a device"
        raise NotAFile(
            f"{path} is {what}, not a regular file: site writes only regular files (remove it, or name another folder)"
        )
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(temporary, 0o644)  # as a page a web server reads (mkstemp makes it 0600)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
