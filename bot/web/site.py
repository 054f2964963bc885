"""The group's page: its coming and past talks and its catalog by tag, as one HTML page.

    html = site.page(store, group, now, ask=names, asked=Asked(query="diloco"))  # served, with search results
    html = site.page(store, group, now, asked=Asked(tag="llm", page=2))           # one page of a tag's papers
    site.write_static(store, group, now, Path("public"), ask=names)                # the same, as files

Drawn with Jinja2 templates (bot/web/templates/, autoescaped: a title is text, never markup). It
reads without JavaScript; every paper is reached from it by tag (each tag's papers paged,
TAG_PAGE a page: `?tag=` served, `tag-*.html` files in the static copy). The static copy, which
no server answers, searches with a small script over an index of every paper (search-index.js).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import jinja2
from markupsafe import Markup

from bot.calendar import MeetingCalendar, Week
from bot.catalog import queries as catalog
from bot.catalog.papers import Paper
from bot.schedule import attendance, history, questions, slots, talks
from bot.schedule.rows import TalkWeek
from bot.store import engine
from bot.store.connection import Store
from bot.web import charts, member_names

#: Past talks the page lists, newest first.
PAST_SHOWN = 200
#: Papers listed under one tag on the group's page, as many as a chat reply lists; the rest on the tag's pages.
PER_TAG = 40
#: The same once the catalog is past OPEN_TAGS_UP_TO (its tags folded): the page stays under a MB.
PER_TAG_FOLDED = 10
#: Papers on one page of a tag's listing.
TAG_PAGE = 100
#: The highest page number read from a request: past any catalog's last page, and a bounded OFFSET.
MAX_PAGE = 10_000
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
    channel: str | None = None
    minutes: int = 60
    place: str | None = None

    @property
    def title(self) -> str:
        """The page's title and the calendar's name: the group's name, else "Reading group" (a chat
        group's: in its channel, to tell its calendar from the others')."""
        if self.calendar.name:
            return self.calendar.name
        return f"Reading group in {self.channel}" if self.group_id != 1 and self.channel else "Reading group"


@dataclass(frozen=True)
class Talk:
    week: Week
    meeting: datetime
    paper: Paper | None
    presenter: str
    links: list[str]
    #: How many go (a coming talk) or went (a past one): see attendance.count.
    going: int = 0
    #: The questions brought to the meeting: (who asked, by name; the question), oldest first.
    questions: list[tuple[str, str]] = field(default_factory=list)


def talk_links(store: Store, group_id: int, week: Week) -> list[str]:
    """The slides, recordings and notes attached to a talk (the `slides` command's)."""
    return list(talks.links(store, [week], group_id).get(week.key, ()))


def _asked(store: Store, group: Group, found: list[Talk], ask) -> list[Talk]:
    """`found` with the questions brought to each talk's meeting."""
    by_week = questions.of_meetings(store, group.group_id, [t.week for t in found])
    return [
        replace(t, questions=[(member_names.display_name(store, q.asked_by, ask), q.text) for q in by_week[t.week.key]])
        if t.week.key in by_week
        else t
        for t in found
    ]


def _coming(store: Store, group: Group, now: datetime, ask) -> list[Talk]:
    lines = [line for line in slots.schedule(store, group.calendar, now) if isinstance(line, TalkWeek)]
    going = attendance.count(store, group.group_id, [line.week for line in lines])
    coming = [
        Talk(
            line.week,
            line.meeting,
            line.paper,
            member_names.display_name(store, line.presenter, ask),
            [],
            going.get(line.week.key, 0),
        )
        for line in lines
    ]
    return _asked(store, group, coming, ask)


def _past(store: Store, group: Group, now: datetime, ask) -> list[Talk]:
    this = group.calendar.week_of(now)
    rows = store.db.execute(
        "SELECT week, presenter, paper FROM slots WHERE group_id = ? AND kind = 'presenter' AND week <= ? "
        "ORDER BY week DESC LIMIT ?",
        [group.group_id, this.key, PAST_SHOWN + 1],
    ).fetchall()
    papers = catalog.many(store, {r[2] for r in rows})
    going = attendance.count(store, group.group_id, [Week.from_key(r[0]) for r in rows])
    talks = []
    for key, presenter, number in rows:
        week = Week.from_key(key)
        meeting = group.calendar.meeting_of(week)
        if meeting > now:  # this week's meeting, still ahead: a coming talk
            continue
        name = member_names.display_name(store, presenter, ask)
        found = talk_links(store, group.group_id, week)
        talks.append(Talk(week, meeting, papers.get(number), name, found, going.get(key, 0)))
    return _asked(store, group, talks[:PAST_SHOWN], ask)


def stats(store: Store, group: Group, now: datetime, ask) -> list[Markup]:
    """The group's history as SVG charts for the page (charts.svg escapes their text)."""
    past = history.of_group(store, group.calendar, now)
    if not past.talks and not past.attendance:
        return []
    name = lambda member: member_names.display_name(store, member, ask)  # noqa: E731
    return [Markup(charts.svg(chart)) for chart in charts.of_history(past, name)]


def _by_tag(store: Store, per_tag: int) -> list[tuple[str | None, int, list[Paper]]]:
    """Each tag (by name) with its count and its first `per_tag` papers, then the untagged (None)."""
    shelves: list[tuple[str | None, int, list[Paper]]] = []
    for tag, count in sorted(catalog.tag_counts(store)):
        _, shelf = catalog.tagged(store, tag, 1, per_tag)
        shelves.append((tag, count, shelf.papers))
    untagged = _untagged_page(store, 1, per_tag)
    if untagged.papers:
        shelves.append((None, untagged.total or 0, untagged.papers))
    return shelves


def _in_catalog(store: Store) -> int:
    """How many papers the catalog lists: archived papers are left out, as lists and search leave them."""
    return store.db.execute("SELECT count(*) FROM papers WHERE archived_at IS NULL").fetchone()[0]


@dataclass(frozen=True)
class Asked:
    """What a page request asks for: a search (`query`), one tag's papers (`tag`; `untagged` for the
    papers without one), or neither (the group's page); `page` of a search's results or a tag's papers."""

    query: str = ""
    tag: str | None = None
    untagged: bool = False
    page: int = 1


def query_of(query_string: str) -> str:
    """The search a page request asks for (`q=`), as the page shows it: its words, at most QUERY_CHARS."""
    return asked(query_string).query


def asked(query_string: str) -> Asked:
    """What a page request's query string asks for (`q=`, `tag=`, `untagged=1`, `page=`). Only its first
    QUERY_STRING_BYTES are read: a longer one costs no more than that."""
    fields = parse_qs(query_string[:QUERY_STRING_BYTES])
    query = " ".join(fields.get("q", [""])[0][: QUERY_CHARS * 2].split())[:QUERY_CHARS]
    tag = " ".join(fields.get("tag", [""])[0][: QUERY_CHARS * 2].split())[:QUERY_CHARS] or None
    number = fields.get("page", ["1"])[0]
    page = min(int(number), MAX_PAGE) if number.isascii() and number.isdigit() and 0 < len(number) < 7 else 1
    untagged = not query and tag is None and fields.get("untagged", [""])[0] == "1"
    return Asked(query, None if query else tag, untagged, max(page, 1))


def _untagged_page(store: Store, page: int, size: int) -> catalog.Page:
    """The papers without a tag, by number, a page of `size`."""
    unarchived = "number NOT IN (SELECT paper FROM paper_tags) AND archived_at IS NULL"
    total = store.db.execute(f"SELECT count(*) FROM papers WHERE {unarchived}").fetchone()[0]
    rows = store.db.execute(
        f"SELECT number FROM papers WHERE {unarchived} ORDER BY number LIMIT ? OFFSET ?", [size, (page - 1) * size]
    ).fetchall()
    found = catalog.many(store, [n for (n,) in rows])
    return catalog.Page([found[n] for (n,) in rows if n in found], page, page * size < total, total)


def static_name(tag: str | None, page: int) -> str:
    """The static copy's file of one page of `tag`'s papers (None: the untagged): the tag itself when it
    is a plain name, else a short hash of it, so that no tag makes a path of its own."""
    if tag is None:
        stem = "untagged"
    elif re.fullmatch(r"[a-z0-9][a-z0-9.-]{0,60}", tag) and ".." not in tag:
        stem = "tag-" + tag
    else:
        stem = "tag-" + hashlib.sha256(tag.encode()).hexdigest()[:12]
    return f"{stem}-{page}.html"


def served_href(tag: str | None, page: int) -> str:
    """The served page's address (relative: its query string) of one page of `tag`'s papers."""
    fields: dict[str, str | int] = {"tag": tag} if tag is not None else {"untagged": 1}
    if page > 1:
        fields["page"] = page
    return "?" + urlencode(fields)


def page(
    store: Store,
    group: Group,
    now: datetime,
    *,
    ask: member_names.Ask | None = None,
    query: str | None = None,
    asked: Asked | None = None,
    static: bool = False,
    feed_url: str | None = None,
) -> str:
    """The group's page as HTML: served (`asked` a search's results or a tag's papers; `query` is
    `asked`'s search) or static; a tag asked for draws that tag's page alone."""
    asked = asked or Asked(query=" ".join((query or "").split())[:QUERY_CHARS])
    href = (lambda tag, n: static_name(tag, n)) if static else served_href
    if asked.tag is not None or asked.untagged:
        return tag_page(store, group, now, asked.tag, asked.page, href=href, static=static)
    results = search_pager = None
    count = _in_catalog(store)
    if asked.query:
        found = catalog.search(store, asked.query, asked.page, RESULTS)
        results = found.papers if found is not None else []
        if found is not None:
            more = {"q": asked.query}
            search_pager = {
                "previous": "?" + urlencode({**more, "page": asked.page - 1}) if asked.page > 1 else None,
                "next": "?" + urlencode({**more, "page": asked.page + 1}) if found.has_more else None,
                "first": (asked.page - 1) * RESULTS + 1,
            }
    return _ENV.get_template("page.html").render(
        group=group,
        now=now,
        tz=group.calendar.tz.key,
        coming=_coming(store, group, now, ask),
        past=_past(store, group, now, ask),
        stats=stats(store, group, now, ask),
        # A search's page lists its results, not the catalog again (drawn each time: a search is seldom kept).
        shelves=[] if asked.query else _by_tag(store, PER_TAG if count <= OPEN_TAGS_UP_TO else PER_TAG_FOLDED),
        query=asked.query,
        results=results,
        search_pager=search_pager,
        static=static,
        feed_url=feed_url,
        papers=count,
        open_tags=count <= OPEN_TAGS_UP_TO,
        href=href,
    )


def tag_page(
    store: Store, group: Group, now: datetime, tag: str | None, number: int, *, href, static: bool = False
) -> str:
    """One page of `tag`'s papers (None: the untagged ones), TAG_PAGE of them, with links to the pages
    before and after it and back to the group's page."""
    if tag is None:
        shown = _untagged_page(store, number, TAG_PAGE)
    else:
        tag, shown = catalog.tagged(store, tag, number, TAG_PAGE)
    total = shown.total or 0
    pages = max(1, -(-total // TAG_PAGE))
    return _ENV.get_template("tag.html").render(
        group=group,
        now=now,
        tz=group.calendar.tz.key,
        tag=tag,
        shelf=shown.papers,
        total=total,
        number=number,
        pages=pages,
        previous=href(tag, number - 1) if 1 < number <= pages else None,
        next=href(tag, number + 1) if number < pages else None,
        home="index.html" if static else "./",
        static=static,
    )


class NotAFile(OSError):
    """What is in the way of a page's file is no regular file (a symlink, a pipe, a device, a folder)."""


def write_static(
    store: Store, group: Group, now: datetime, folder: Path, *, ask: member_names.Ask | None = None
) -> list[Path]:
    """The page as files in `folder` (made if missing), for any static host: index.html, each tag's
    pages (static_name's), and search-index.js, every paper for the page's search script.

    Only regular files are written: a symlink at a file's place (which could lead out of `folder`),
    a pipe (which would block) or a device is refused with NotAFile. Each file is written whole to
    a new temporary file in `folder` and renamed over its place, which replaces what is there (even
    a symlink made since the check) and never follows it."""
    html = page(store, group, now, ask=ask, static=True).encode()
    folder.mkdir(parents=True, exist_ok=True)
    index = folder / "index.html"
    _refuse_unless_regular(index)  # before any file is written
    written = []
    shelves: list[str | None] = [tag for tag, _ in catalog.tag_counts(store)]
    if _untagged_page(store, 1, 1).papers:
        shelves.append(None)
    for tag in shelves:
        number, more = 1, True
        while more:
            path = folder / static_name(tag, number)
            _write_regular(path, tag_page(store, group, now, tag, number, href=static_name, static=True).encode())
            written.append(path)
            more = TAG_PAGE * number < _count(store, tag)
            number += 1
    index_js = folder / "search-index.js"
    _write_regular(index_js, search_index(store))
    _write_regular(index, html)  # last: a reader never follows a link to a tag page not yet written
    return [index, index_js, *written]


def _count(store: Store, tag: str | None) -> int:
    if tag is None:
        return _untagged_page(store, 1, 1).total or 0
    return catalog.tagged(store, tag, 1, 1)[1].total or 0


def search_index(store: Store) -> bytes:
    """Every paper of the catalog for the static page's search script: one JavaScript statement,
    `paperbotIndex([[number, title, url, tags], ...])`, loaded by a script element (a file:// page
    cannot fetch JSON). Summaries are left out: 40,000 papers make 6 MB (1 MB gzipped), with them 12."""
    joined = "string_agg" if engine.is_postgres(store) else "group_concat"
    rows = store.db.execute(
        f"SELECT p.number, p.title, p.url, coalesce((SELECT {joined}(t.name, ' ') FROM paper_tags pt "
        "JOIN tags t ON t.id = pt.tag WHERE pt.paper = p.number), '') FROM papers p WHERE p.archived_at IS NULL "
        "ORDER BY p.number"
    )
    # JSON escapes "<" too: no "</script>" nor "<!--" can come out of a title.
    papers = json.dumps([list(r) for r in rows], ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return f"paperbotIndex({papers});\n".encode()


def _refuse_unless_regular(path: Path) -> None:
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        what = "a symbolic link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode) else "a pipe or a device"
        raise NotAFile(
            f"{path} is {what}, not a regular file: site writes only regular files (remove it, or name another folder)"
        )


def _write_regular(path: Path, data: bytes) -> None:
    _refuse_unless_regular(path)
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
