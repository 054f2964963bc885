"""The group's page reaches every paper of the catalog (issue 28): each tag's papers paged, the untagged
too, and a search that finds any paper; served over real HTTP, and as `paperbot site DIR` writes it."""

from __future__ import annotations

import re
from html import unescape

import pytest

from bot import cli
from bot.catalog import queries as catalog
from bot.catalog.papers import PaperInput
from bot.web import feeds, site
from tests.support.databases import database_for
from tests.support.served_page import served_feeds


@pytest.fixture
def served(tmp_path, store):
    yield from served_feeds(tmp_path, store, lambda calendars: feeds.around(None, calendars))


BULK = 2 * site.TAG_PAGE + 30  # past a tag's first page and its second


def _grow(store) -> list[int]:
    """BULK papers tagged `bulk`, each with a word of its own in its title, and 3 untagged ones."""
    bulk = [PaperInput(id=f"bulk-{k}", title=f"Bulk study zq{k}x", summary="bulk", tags=("bulk",)) for k in range(BULK)]
    loose = [PaperInput(id=f"loose-{k}", title=f"Loose note {k}", tags=()) for k in range(3)]
    return [catalog.add(store, paper).number for paper in bulk + loose]


def _numbers(html: str) -> set[int]:
    return {int(n) for n in re.findall(r'<span class="num">#(\d+)</span>', html)}


def _link(html: str, text: str) -> str | None:
    found = re.search(rf'<a (?:rel="\w+" )?href="([^"]+)">{re.escape(text)}', html)
    return unescape(found[1]) if found else None


def _walk(fetch, first: str) -> set[int]:
    """Every paper number on a tag's pages, from `first` along the "Next page" links."""
    seen, address, pages = set(), first, 0
    while address is not None:
        html = fetch(address)
        seen |= _numbers(html)
        address, pages = _link(html, "Next page"), pages + 1
        assert pages < 50
    return seen


def test_the_served_page_reaches_every_paper_by_tag_and_its_search_finds_any(served, store):
    added = _grow(store)
    page = served.urls()["page"]

    def fetch(query: str) -> str:
        status, _, body = served.get(page + query)
        assert status == 200, (query, status)
        return body.decode()

    front = fetch("")
    assert f"All {BULK} papers tagged bulk" in front and "search for them" not in front
    reached = _numbers(front)
    for tag, _ in catalog.tag_counts(store):
        address = _link(front, f"All {dict(catalog.tag_counts(store))[tag]} papers tagged {tag}")
        if address is not None:
            reached |= _walk(fetch, address)
    everything = {p.number for p in catalog.all_papers(store)}
    bulk_pages = _walk(fetch, _link(front, f"All {BULK} papers tagged bulk"))
    assert set(added[:BULK]) <= bulk_pages and len(bulk_pages) == BULK
    assert everything <= reached, "every paper is reached from the page"
    assert set(added[BULK:]) == _numbers(fetch("?untagged=1")), "the untagged papers have their page too"

    last = added[BULK - 1]
    assert last not in _numbers(front), "a paper the front page does not list"
    found = fetch(f"?q=zq{BULK - 1}x")
    assert last in _numbers(found.split('id="coming"')[0]), "its search finds it"
    # A search's results are paged: all of `bulk` are reached from its first page.
    results, address = set(), "?q=bulk"
    while address is not None:
        html = fetch(address)
        results |= _numbers(html.split('id="coming"')[0])
        address = _link(html, "Next page")
    assert set(added[:BULK]) <= results


def test_the_static_site_writes_every_tags_pages_and_a_search_index_of_every_paper(tmp_path, store, monkeypatch):
    added = _grow(store)
    store.close()
    for name in [n for n in __import__("os").environ if n.startswith(("PAPERBOT_", "SLACK_", "DISCORD_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PAPERBOT_DB", database_for(tmp_path))  # the store fixture's, on either engine
    monkeypatch.chdir(tmp_path)
    public = tmp_path / "public"
    assert cli.main(["site", str(public)]) == 0
    front = (public / "index.html").read_text()
    bulk = _link(front, f"All {BULK} papers tagged bulk")
    assert bulk == "tag-bulk-1.html"

    def fetch(name: str) -> str:
        return (public / name).read_text()

    assert set(added[:BULK]) == _walk(fetch, bulk)
    index = (public / "search-index.js").read_text()
    assert index.startswith("paperbotIndex([") and "<" not in index
    store = catalog.open_store(database_for(tmp_path))
    assert all(f"[{p.number}," in index for p in catalog.all_papers(store)), "the index holds every paper"
    store.close()


def test_page_requests_are_read_within_bounds():
    assert site.asked("page=99999999999999") == site.Asked(page=1)
    assert site.asked("page=3&tag=llm") == site.Asked(tag="llm", page=3)
    assert site.asked("untagged=1&q=x") == site.Asked(query="x")
    assert site.static_name("../../etc", 1).startswith("tag-") and "/" not in site.static_name("../x", 2)
