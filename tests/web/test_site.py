"""`paperbot site DIR`: the group's page as a static file, read as HTML (the browser's view is in
tests/processes/test_group_page_browser.py)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from html.parser import HTMLParser
from zoneinfo import ZoneInfo

import pytest

from bot import cli
from bot.calendar import Week
from bot.catalog.queries import open_store
from bot.web import site


class Reader(HTMLParser):
    """The page's text as a reader sees it, and its elements."""

    def __init__(self):
        super().__init__()
        self.text: list[str] = []
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_the_static_page_shows_titles_as_text_and_sets_chinese_as_chinese(tmp_path, seeded_file, monkeypatch):
    shutil.copyfile(seeded_file, tmp_path / "paperbot.db")
    for name in [n for n in __import__("os").environ if n.startswith(("PAPERBOT_", "SLACK_", "DISCORD_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    monkeypatch.setenv("PAPERBOT_TIMEZONE", "Asia/Shanghai")
    monkeypatch.chdir(tmp_path)
    store = open_store(tmp_path / "paperbot.db")
    this = Week.containing(datetime.now(UTC), ZoneInfo("Asia/Shanghai"))
    with store.write() as db:
        db.execute("UPDATE papers SET title = '<script>alert(1)</script>' WHERE number = 5")
        db.execute(
            "INSERT INTO slots (week, kind, presenter, paper, booked_by, booked_at) VALUES "
            "(?, 'presenter', 'U2', 5, 'U2', 'now'), (?, 'presenter', 'U3', 3, 'U3', 'now')",
            [this.plus(2).key, this.plus(-3).key],
        )
        # Talk materials, as the slides command keeps them.
        db.execute(
            "INSERT INTO talk_links (group_id, week, url, added_by, added_at) "
            "VALUES (1, ?, 'https://example.org/s.pdf', 'U3', 'now')",
            [this.plus(-3).key],
        )
    store.close()

    assert cli.main(["site", str(tmp_path / "public")]) == 0
    html = (tmp_path / "public" / "index.html").read_text()
    page = Reader()
    page.feed(html)
    text = " ".join(" ".join(page.text).split())
    assert "<script>alert(1)</script> U2" in text, "the title is text, as the reader sees it"
    scripts = [t for t, _ in page.tags if t == "script"]
    assert len(scripts) == 1 and "alert(1)" not in html.split("<script>\n", 1)[1]  # only the search script
    assert ("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}) in page.tags
    assert page.tags[0] == ("html", {"lang": "en"})
    assert any(t == "p" and a.get("lang") == "zh" for t, a in page.tags), "Chinese summaries carry lang=zh"
    assert "WenQuanYi Zen Hei" in html and "PingFang SC" in html
    assert ("a", {"href": "https://example.org/s.pdf"}) in page.tags, "past talks link their slides"


def test_a_talk_without_links_has_none(store):
    assert site.talk_links(store, 1, Week(2026, 50)) == []


def _catalog_text(html: str) -> tuple[str, str]:
    """The page's header line and its catalog section, as text."""
    page = Reader()
    page.feed(html)
    text = " ".join(" ".join(page.text).split())
    return text.split("Coming", 1)[0], text.split("The catalog by tag", 1)[1]


def test_archived_papers_leave_the_pages_catalog_but_keep_their_talks(store):
    from bot.calendar import Meeting, MeetingCalendar, PostSchedule
    from bot.catalog import queries as catalog

    utc = ZoneInfo("UTC")
    calendar = MeetingCalendar(utc, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", utc))
    now = datetime.now(UTC)
    tagged = catalog.by_number(store, 30)
    assert tagged.tags, "paper 30 has a tag"
    with store.write() as db:
        db.execute("DELETE FROM paper_tags WHERE paper = 31")  # an untagged paper, archived too
        db.execute(
            "INSERT INTO slots (week, kind, presenter, paper, booked_by, booked_at) "
            "VALUES (?, 'presenter', 'U2', 30, 'U2', 'now')",
            [calendar.week_of(now).plus(-2).key],
        )
    before = catalog.count(store)
    for number in (30, 31):
        catalog.set_archived(store, catalog.by_number(store, number), True)
    group = site.Group(1, calendar)
    for html in (site.page(store, group, now, static=True), site.page(store, group, now)):
        header, shelves = _catalog_text(html)
        assert f"{before - 2} papers in the catalog" in header
        assert "#30 " not in shelves and "#31 " not in shelves, shelves
        assert tagged.title not in shelves and 'data-text="real' not in html.lower()
        assert tagged.title in html, "the archived paper's past talk still shows"
    served = site.page(store, group, now, query="ReaL")
    assert "No paper matches" in served


def test_talk_links_are_named_by_what_they_are():
    assert site.labelled(
        [
            "https://example.org/talk.pdf",
            "https://docs.google.com/presentation/d/x/slides",
            "https://www.youtube.com/watch?v=abc",
            "https://cdn.example.org/rec.mp4",
            "https://notes.example.org/diloco",
        ]
    ) == [
        ("https://example.org/talk.pdf", "slides 1"),
        ("https://docs.google.com/presentation/d/x/slides", "slides 2"),
        ("https://www.youtube.com/watch?v=abc", "recording 1"),
        ("https://cdn.example.org/rec.mp4", "recording 2"),
        ("https://notes.example.org/diloco", "notes.example.org"),
    ]
    assert site.labelled(["https://vimeo.com/1"]) == [("https://vimeo.com/1", "recording")]


def _site(tmp_path, seeded_file, folder):
    """`paperbot site FOLDER` as its own process, bounded in time: a pipe in the way once hung it."""
    import os
    import subprocess
    import sys

    shutil.copyfile(seeded_file, tmp_path / "paperbot.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERBOT_", "SLACK_", "DISCORD_"))}
    return subprocess.run(
        [sys.executable, "-m", "bot", "site", str(folder)],
        capture_output=True,
        text=True,
        env={**env, "PAPERBOT_DB": str(tmp_path / "paperbot.db")},
        cwd=tmp_path,
        timeout=30,
    )


@pytest.mark.parametrize("kind", ["symlink out", "dangling symlink", "fifo", "folder"])
def test_site_never_writes_through_a_symlink_nor_opens_a_pipe(tmp_path, seeded_file, kind):
    """`site DIR` wrote through an index.html symlink to a file outside DIR, and hung on a FIFO: what is
    in the way and no regular file is refused in one line, and nothing outside DIR changes."""
    import os

    public = tmp_path / "public"
    public.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    index = public / "index.html"
    if kind == "symlink out":
        index.symlink_to(outside)
    elif kind == "dangling symlink":
        index.symlink_to(tmp_path / "made-outside.html")
    elif kind == "fifo":
        os.mkfifo(index)
    else:
        index.mkdir()
    done = _site(tmp_path, seeded_file, public)
    assert done.returncode == 1, done
    what = {"fifo": "a pipe or a device", "folder": "a folder"}.get(kind, "a symbolic link")
    assert done.stderr == (
        f"paperbot: {public}: cannot write the page there ({index} is {what}, not a regular file: site writes"
        " only regular files (remove it, or name another folder))\n"
    ), done.stderr
    assert outside.read_text() == "keep me" and not (tmp_path / "made-outside.html").exists()
    assert sorted(p.name for p in public.iterdir()) == ["index.html"]  # no temporary file left


def test_site_replaces_its_page_whole_and_keeps_a_hard_linked_copy_apart(tmp_path, seeded_file):
    """The page is written to a new file and renamed over the old: a file hard-linked to the old page
    (outside DIR) keeps what it had, and the new page is whole and readable."""
    import os

    public = tmp_path / "public"
    public.mkdir()
    (public / "index.html").write_text("old page")
    os.link(public / "index.html", tmp_path / "linked.html")
    done = _site(tmp_path, seeded_file, public)
    assert done.returncode == 0 and done.stdout.startswith(f"Wrote {public / 'index.html'}. And "), done
    assert (tmp_path / "linked.html").read_text() == "old page"
    page = (public / "index.html").read_text()
    assert page.rstrip().endswith("</html>") and os.stat(public / "index.html").st_mode & 0o777 == 0o644
    assert not [p.name for p in public.iterdir() if p.name.startswith(".")], "no temporary file left"


def test_the_page_says_how_many_go_to_each_talk(tmp_path, seeded_file, monkeypatch):
    shutil.copyfile(seeded_file, tmp_path / "paperbot.db")
    for name in [n for n in __import__("os").environ if n.startswith(("PAPERBOT_", "SLACK_", "DISCORD_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    monkeypatch.chdir(tmp_path)
    store = open_store(tmp_path / "paperbot.db")
    this = Week.containing(datetime.now(UTC), ZoneInfo("UTC"))
    past, coming = this.plus(-3).key, this.plus(2).key
    with store.write() as db:
        db.execute(
            "INSERT INTO slots (week, kind, presenter, paper, booked_by, booked_at) VALUES "
            "(?, 'presenter', 'U2', 5, 'U2', 'now'), (?, 'presenter', 'U3', 3, 'U3', 'now')",
            [coming, past],
        )
        # Three said going to the past talk (one of them Interested on Discord too), one can't;
        # one said going to the coming one.
        db.conn.executemany(
            "INSERT INTO attendance (group_id, week, member, going, said_at) VALUES (1, ?, ?, ?, 'now')",
            [(past, "U1", 1), (past, "U4", 1), (past, "U5", 1), (past, "U6", 0), (coming, "U1", 1)],
        )
        db.conn.executemany(
            "INSERT INTO event_interest (group_id, week, member) VALUES (1, ?, ?)", [(past, "U1"), (past, "U6")]
        )
    store.close()
    assert cli.main(["site", str(tmp_path / "public")]) == 0
    page = Reader()
    page.feed((tmp_path / "public" / "index.html").read_text())
    text = " ".join(" ".join(page.text).split())
    assert "U2 1 going" in text and "U3 3 going" in text
