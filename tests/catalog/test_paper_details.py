"""Papers' authors and year: kept, shown, searched, carried through export and import; and the arXiv id
and DOI that a paper's link names, read into columns of their own (migration m009) so that dedupe finds them."""

from __future__ import annotations

import io

import pytest
import sqlite_utils

from bot import cli
from bot.catalog import files as papers_file
from bot.catalog import queries as catalog
from bot.catalog.papers import validate
from bot.store import connection as store


def test_m009_reads_the_arxiv_id_and_doi_of_the_links_papers_already_have():
    db = sqlite_utils.Database(memory=True)
    for m in store.migrations._migrations:
        if m.name == "m009_paper_details":
            break
        m.fn(db)
    urls = [
        "https://arxiv.org/abs/2501.18512",
        "https://arxiv.org/pdf/2501.18513v2.pdf",
        "http://arxiv.org/abs/hep-th/9901001v3",
        "https://doi.org/10.1145/ABC.1",
        "https://example.com/x",
    ]
    for i, url in enumerate(urls):
        db.execute("INSERT INTO papers (id, title, url, added_at, updated_at) VALUES (?, 't', ?, 1, 1)", [f"p{i}", url])
    store.m009_paper_details(db)
    assert db.execute("SELECT arxiv_id, doi FROM papers ORDER BY number").fetchall() == [
        ("2501.18512", None),
        ("2501.18513", None),
        ("hep-th/9901001", None),
        (None, "10.1145/abc.1"),
        (None, None),
    ]


@pytest.fixture
def cat(tmp_path):
    s = catalog.open_store(tmp_path / "paperbot.db", seed=None)
    yield s
    s.close()


def test_a_paper_keeps_its_authors_and_year_and_is_found_by_an_author(cat):
    paper = catalog.add(
        cat,
        validate({"title": "Streaming DiLoCo", "authors": "Arthur Douillard, Ada Lovelace", "year": "2025"}, new=True),
    )
    assert (paper.authors, paper.year) == ("Arthur Douillard, Ada Lovelace", 2025)
    assert paper.byline == "Arthur Douillard, Ada Lovelace (2025)"
    assert [p.number for p in catalog.search(cat, "lovelace").papers] == [paper.number]


@pytest.mark.parametrize("year", ["twenty", 99999, "2025.5", True])
def test_a_year_that_is_no_year_is_refused_naming_the_field(year):
    with pytest.raises(catalog.InvalidPaper) as e:
        validate({"title": "T", "year": year}, new=True)
    assert e.value.field == "year"


@pytest.mark.parametrize("fmt", ["yaml", "json", "csv"])
def test_export_then_import_carries_authors_and_year(tmp_path, cat, fmt):
    catalog.add(cat, validate({"title": "A", "authors": "Ada, Alan", "year": 2024}, new=True))
    catalog.add(cat, validate({"title": "B"}, new=True))
    out = io.StringIO()
    papers_file.write(catalog.all_papers(cat), fmt, out)
    path = tmp_path / f"list.{fmt}"
    path.write_text(out.getvalue(), encoding="utf-8")
    other = catalog.open_store(tmp_path / "other.db", seed=None)
    try:
        report = papers_file.read(path)
        assert report.problems == [] and report.notes == []
        catalog.upsert(other, report.papers)
        got = {p.title: (p.authors, p.year) for p in catalog.all_papers(other)}
        assert got == {"A": ("Ada, Alan", 2024), "B": ("", None)}
        # The same file again changes nothing.
        counts = catalog.upsert(other, papers_file.read(path).papers)
        assert (counts.added, counts.updated) == (0, 0)
    finally:
        other.close()


def test_an_import_row_sets_a_papers_year_and_leaves_the_rest(tmp_path, cat):
    first = catalog.add(cat, validate({"title": "A", "authors": "Ada"}, new=True))
    path = tmp_path / "update.jsonl"
    path.write_text(f'{{"id": "{first.id}", "year": 2023}}\n', encoding="utf-8")
    counts = catalog.upsert(cat, papers_file.read(path).papers)
    assert counts.updated == 1
    paper = catalog.find(cat, first.id)
    assert (paper.title, paper.authors, paper.year) == ("A", "Ada", 2023)


def test_show_in_the_console_names_the_authors_and_year(tmp_path, monkeypatch, capsys, cat):
    catalog.add(cat, validate({"title": "Shown paper", "authors": "Ada Lovelace", "year": 2025}, new=True))
    cat.close()
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    monkeypatch.setattr("sys.stdin", io.StringIO("show 1\n"))
    assert cli.main(["console"]) == 0
    assert "by: Ada Lovelace (2025)" in capsys.readouterr().out
