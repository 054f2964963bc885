"""BibTeX: `import` reads .bib files, `export --format bibtex` writes them, and a round trip keeps every paper."""

from __future__ import annotations

import io
import json

import pytest

from bot import cli
from bot.catalog import bibtex
from bot.catalog import files as papers_file
from bot.catalog import queries as catalog
from bot.catalog.queries import open_store


def _main(monkeypatch, tmp_path, capsys, db, *argv):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / db))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code = cli.main(list(argv))
    return (code, *capsys.readouterr())


def _fields(paper) -> tuple:
    return (paper.id, paper.title, paper.summary, paper.url, tuple(sorted(paper.tags)), paper.authors, paper.year)


#: Titles and summaries that TeX would read as markup, as the add form or a file may give them.
HOSTILE = [
    dict(id="braces", title="{Unbalanced brace and } another {{", summary="a { b", tags=["x"]),
    dict(id="percent", title="100% of 50% & more: $5 #1 a_b ~c ^d", summary="50% & 100%\n\n第二段 % 注释"),
    dict(id="backslash", title=r"Back\slash \textbf{bold} \\ \% already \"escaped\"", summary=r"C:\path\{x}"),
    dict(id="accents", title=r"M{\"u}ller said ``quoted'' -- and --- dashes", authors="Ada Lovelace, Zoë Ünal, Jr."),
    dict(id="at-sign", title="@misc{fake, title = {inside}} and } @", summary="@article{x,\n}\n"),
    dict(id="chinese", title="数据并行训练 {大模型}", summary="中文摘要：含有 {花括号} 与 \\ 反斜杠", year=2024),
]


def test_a_bibtex_round_trip_keeps_every_seed_paper_and_hostile_titles(tmp_path, monkeypatch, capsys):
    store = open_store(tmp_path / "a.db")
    assert catalog.upsert(store, [catalog.validate(p, new=True) for p in HOSTILE]).added == len(HOSTILE)
    store.close()
    code, bib, err = _main(monkeypatch, tmp_path, capsys, "a.db", "export", "--format", "bibtex")
    assert code == 0, err
    (tmp_path / "catalog.bib").write_text(bib, encoding="utf-8")
    assert _main(monkeypatch, tmp_path, capsys, "b.db", "init", "--empty")[0] == 0
    code, out, err = _main(monkeypatch, tmp_path, capsys, "b.db", "import", "catalog.bib")
    assert code == 0 and "38 added" in out and "0 skipped" in out, (out, err)
    a, b = open_store(tmp_path / "a.db"), open_store(tmp_path / "b.db")
    before = [_fields(p) for p in catalog.all_papers(a)]
    after = [_fields(p) for p in catalog.all_papers(b)]
    assert len(before) == 38 and after == before
    assert any("数据并行" in p[2] for p in after)  # the seed's Chinese summaries, unchanged
    # Importing the export again changes nothing.
    code, out, _ = _main(monkeypatch, tmp_path, capsys, "b.db", "import", "catalog.bib")
    assert "0 added, 0 updated, 38 unchanged" in out


SCHOLAR = r"""
% A list as Google Scholar and Zotero export it; not @misc{commented-out, title = {Not a paper}}.
@string{nips = "Advances in Neural Information Processing Systems"}

@inproceedings{vaswani2017attention,
  title={Attention is All you Need},
  author={Vaswani, Ashish and Shazeer, Noam and Parmar, Niki},
  booktitle=nips,
  year={2017},
  doi = {10.5555/3295222.3295349},
  keywords = {transformers; attention},
  abstract = {The dominant sequence transduction models are based on {RNNs}.}
}

@article{Zhao:FSDP,
  title = "{PyTorch} {FSDP}: Experiences on Scaling Fully Sharded Data Parallel",
  author = "Zhao, Yanli and M{\"u}ller, J{\'e}r{\^o}me",
  year = 2023,
  eprint = {2304.11277},
  archivePrefix = {arXiv},
}

@misc{broken,
  title = {A title with = and no closing,
  year = {2020},

@misc{no-title, year = {2021}}
"""


def test_a_scholar_style_bib_file_maps_its_fields_and_counts_the_bad_entries(tmp_path):
    path = tmp_path / "list.bib"
    path.write_text(SCHOLAR, encoding="utf-8")
    report = papers_file.read(path)
    by_title = {p.title: p for p in report.papers}
    attention = by_title["Attention is All you Need"]
    assert attention.id == "vaswani2017attention"
    assert attention.authors == "Ashish Vaswani, Noam Shazeer, Niki Parmar" and attention.year == 2017
    assert attention.url == "https://doi.org/10.5555/3295222.3295349"
    assert attention.tags == ("transformers", "attention")
    assert attention.summary == "The dominant sequence transduction models are based on RNNs."
    fsdp = by_title["PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel"]
    assert fsdp.id is None  # `Zhao:FSDP` is no paper id: the title's slug is used
    assert fsdp.authors == "Yanli Zhao, Jérôme Müller" and fsdp.url == "https://arxiv.org/abs/2304.11277"
    assert len(report.papers) == 2
    assert len(report.problems) == 1, report.problems  # the entry that is never closed takes in the rest
    broken = SCHOLAR.splitlines().index("@misc{broken,") + 1
    assert f"line {broken}:" in report.problems[0] and "never closed" in report.problems[0]


def test_a_bad_entry_is_skipped_and_the_rest_imported(tmp_path, monkeypatch, capsys):
    (tmp_path / "list.bib").write_text(
        "@misc{one, title = {One}}\n@misc{two, title = {Two}, year = {12345}}\n@misc{three, year = {2020}}\n"
        "@misc{four, title = {Four}, url = {javascript:alert(1)}}\n@misc{five, title = {Five}}\n",
        encoding="utf-8",
    )
    assert _main(monkeypatch, tmp_path, capsys, "a.db", "init", "--empty")[0] == 0
    code, out, err = _main(monkeypatch, tmp_path, capsys, "a.db", "import", "list.bib")
    assert "2 added" in out and "3 skipped" in out, (out, err)
    assert "list.bib line 2: year must be a year like 2025" in err, err  # 12345 is no year: said, not dropped
    assert "line 3" in out + err and "line 4" in out + err


@pytest.mark.parametrize("name", ["empty.bib", "folder.bib"])
def test_a_bib_path_that_is_no_file_of_papers_is_refused_in_one_line(tmp_path, monkeypatch, capsys, name):
    if name == "folder.bib":
        (tmp_path / name).mkdir()
    else:
        (tmp_path / name).write_text("")
    assert _main(monkeypatch, tmp_path, capsys, "a.db", "init", "--empty")[0] == 0
    code, out, err = _main(monkeypatch, tmp_path, capsys, "a.db", "import", name)
    assert code != 0 and "Traceback" not in err and name in err, err


def test_an_entry_is_read_without_reading_the_rest_of_the_file():
    """Entries come one at a time: the first is read before the text after it is asked for."""

    class Lines(io.StringIO):
        asked = 0

        def readline(self, *a):
            self.asked += 1
            return super().readline(*a)

    text = Lines("@misc{one, title = {One}}\n" + "@misc{n, title = {N}}\n" * 1000)
    first = next(bibtex.rows(text))
    assert first == ("line 1", {"id": "one", "title": "One"}) and text.asked < 5


def test_export_as_json_and_bibtex_carry_the_same_papers(store, tmp_path):
    out = io.StringIO()
    assert papers_file.write(catalog.all_papers(store), "bibtex", out) == 32
    assert out.getvalue().count("@misc{") == 32
    listed = io.StringIO()
    papers_file.write(catalog.all_papers(store), "json", listed)
    assert len(json.loads(listed.getvalue())) == 32


def test_an_entry_for_a_paper_the_catalog_has_under_another_key_is_skipped(tmp_path, monkeypatch, capsys):
    (tmp_path / "list.bib").write_text(
        "@misc{fresh-one, title = {A fresh paper}, url = {https://arxiv.org/abs/2501.00001}}\n"
        "@misc{diloco-again,\n  title = {DiLoCo again},\n  url = {https://arxiv.org/abs/2311.08105v2}\n}\n"
        "@misc{broken, year = {2020}}\n"
        "@misc{doi-twin, title = {The fresh one again}, doi = {10.48550/arXiv.2501.00001}}\n",
        encoding="utf-8",
    )
    assert _main(monkeypatch, tmp_path, capsys, "a.db", "init")[0] == 0
    store = open_store(tmp_path / "a.db")
    before = catalog.count(store)
    store.close()
    code, out, err = _main(monkeypatch, tmp_path, capsys, "a.db", "import", "list.bib")
    assert "1 added" in out and "3 skipped" in out, (out, err)
    assert "list.bib line 2: the same paper as #32 diloco (by its arXiv id): skipped" in err, err
    assert "list.bib: entry broken (line 6) has no title: skipped" in err, err
    assert "list.bib line 7: the same paper as #" in err and "fresh-one (by its arXiv id)" in err, err
    store = open_store(tmp_path / "a.db")
    assert catalog.count(store) == before + 1
    assert catalog.find(store, "diloco-again") is None


def test_a_csv_row_for_a_paper_the_catalog_has_by_its_doi_is_skipped(tmp_path, monkeypatch, capsys):
    (tmp_path / "a.csv").write_text("id,title,url\nfirst,First,https://doi.org/10.1145/3600006.3613145\n")
    (tmp_path / "b.csv").write_text("id,title,url\nsecond,Second,https://doi.org/10.1145/3600006.3613145\n")
    assert _main(monkeypatch, tmp_path, capsys, "a.db", "init", "--empty")[0] == 0
    assert "1 added" in _main(monkeypatch, tmp_path, capsys, "a.db", "import", "a.csv")[1]
    code, out, err = _main(monkeypatch, tmp_path, capsys, "a.db", "import", "b.csv")
    assert "0 added" in out and "1 skipped" in out, (out, err)
    assert "b.csv line 2: the same paper as #1 first (by its DOI): skipped" in err, err


def test_and_others_reads_as_et_al_and_is_written_back_as_others(tmp_path):
    path = tmp_path / "list.bib"
    path.write_text(
        "@misc{gpipe, title = {GPipe}, author = {Huang, Yanping and Cheng, Youlong and others}}\n", encoding="utf-8"
    )
    (paper,) = papers_file.read(path).papers
    assert paper.authors == "Yanping Huang, Youlong Cheng, et al."
    stored = catalog.Paper(1, "gpipe", "GPipe", "", "", (), authors=paper.authors)
    written = bibtex.entry(stored)
    assert "author = {Yanping Huang and Youlong Cheng and others}" in written, written
    again = tmp_path / "again.bib"
    again.write_text(written, encoding="utf-8")
    assert papers_file.read(again).papers[0].authors == paper.authors


MACROS = """@string{first = "Deep"}
@string{full = first # " Learning"}
@misc{chain, title = full, url = {https://example.org/m}}
@misc{joined, title = first # " Nets", url = {https://example.org/p}}
@misc{quoted, title = "Deep" # { Nets} # " " # 2, month = jan, journal = jacm, url = {https://example.org/q}}
@misc{undefined, title = nosuchmacro, url = {https://example.org/u}}
@misc{huge-year, title = {Huge}, year = {99999999999999999999}}
@string{broken = nothing # "x"}
"""


def test_string_macros_and_hash_joins_are_read_as_bibtex_reads_them(tmp_path, monkeypatch, capsys):
    (tmp_path / "x.bib").write_text(MACROS, encoding="utf-8")
    assert _main(monkeypatch, tmp_path, capsys, "a.db", "init", "--empty")[0] == 0
    code, out, err = _main(monkeypatch, tmp_path, capsys, "a.db", "import", "x.bib")
    assert "3 added" in out and "3 skipped" in out, (out, err)
    store = open_store(tmp_path / "a.db")
    titles = {p.id: p.title for p in catalog.all_papers(store)}
    assert titles == {"chain": "Deep Learning", "joined": "Deep Nets", "quoted": "Deep Nets 2"}, titles
    assert 'x.bib line 6: title names @string "nosuchmacro", which the file does not define: skipped\n' in err, err
    assert "x.bib line 7: year must be a year like 2025" in err, err
    assert 'x.bib line 8: @string broken names @string "nothing", which the file does not define: skipped\n' in err


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ('"a" #', "ends with # and no value after it"),
        ("{a", "has a { that is never closed"),
        ("a b", 'names @string "a", which the file does not define'),
        ('"a" "b"', "is not a value BibTeX reads"),
    ],
)
def test_a_value_bibtex_would_not_read_is_refused_naming_why(raw, problem):
    with pytest.raises(bibtex.BadValue, match=problem):
        bibtex.value(raw, {})


def _doubling(levels: int, start: str = "xxxxxxxxxxxxxxxx") -> list[str]:
    """@string macros that each hold the one before twice: 1 KB of them would expand to terabytes."""
    lines = [f'@string{{m0 = "{start}"}}']
    lines += [f"@string{{m{i} = m{i - 1} # m{i - 1}}}" for i in range(1, levels)]
    return lines


def test_a_macro_bomb_is_refused_in_one_line_naming_its_entry_in_bounded_memory(tmp_path):
    """A 1 KB file of self-doubling @string macros took 2.1 GB on import: the expansion is bounded before
    it is made, and the file is refused whole, in one line that names the @string, under a 1 GB cap."""
    import os
    import resource
    import subprocess
    import sys

    bomb = tmp_path / "bomb.bib"
    bomb.write_text("\n".join([*_doubling(40), "@misc{bomb, title = m39}", "@misc{fine, title = {Fine}}"]) + "\n")
    assert bomb.stat().st_size < 1100

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERBOT_"))}
    done = subprocess.run(
        [sys.executable, "-m", "bot", "import", str(bomb)],
        capture_output=True,
        text=True,
        env={**env, "PAPERBOT_DB": str(tmp_path / "a.db")},
        timeout=120,
        preexec_fn=cap,
    )
    assert done.returncode == 1, done
    lines = done.stderr.splitlines()
    assert lines == [
        f"paperbot: {bomb} line 14: @string m13 expands past 65,536 characters (macros that double each other?):"
        " the file is refused"
    ], done.stderr
    assert "added" not in done.stdout  # nothing of it imported: not even the fine entry after it


def test_a_large_macro_named_by_many_entries_is_refused_in_bounded_time(tmp_path):
    """A 220 KB file naming one 60 KB macro in every field of 2,000 entries took a minute and a half
    to read (each field's names and TeX walked anew): what macros bring into the fields read is bounded
    for the whole file, and the file is refused in one line that names the entry past the bound."""
    import os
    import subprocess
    import sys

    fields = ", ".join(f"{f} = big" for f in ("title", "author", "abstract", "keywords", "url"))
    lines = ['@string{big = "' + "y" * 60_000 + '"}', *(f"@misc{{e{i}, {fields}}}" for i in range(2000))]
    bomb = tmp_path / "wide.bib"
    bomb.write_text("\n".join(lines) + "\n")
    assert bomb.stat().st_size < 250_000
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERBOT_"))}
    done = subprocess.run(
        [sys.executable, "-m", "bot", "import", str(bomb)],
        capture_output=True,
        text=True,
        env={**env, "PAPERBOT_DB": str(tmp_path / "a.db")},
        timeout=30,
    )
    assert done.returncode == 1, done
    assert done.stderr.splitlines() == [
        f"paperbot: {bomb} line 57: entry e55, field url, brings the macros' text past 16,777,216 characters"
        " in all: the file is refused"
    ], done.stderr


@pytest.mark.parametrize(
    ("tail", "named"),
    [
        (["@misc{wide, title = m11 # m11 # m11 # m11 # m11}"], "line 13: entry wide, field title, expands past"),
        (
            [f"@string{{copy{i} = m11 # {{{i}}}}}" for i in range(200)],
            "line 138: @string copy125 brings the macros past",
        ),
        ([f'@string{{s{i} = ""}}' for i in range(10_001)], "line 10001: @string s9988 is past the 10,000 macros"),
    ],
)
def test_every_bound_on_macros_refuses_the_file_naming_the_entry(tail, named):
    """A field that joins a macro many times, many copies of a large macro, many macros: each is bounded."""
    text = io.StringIO("\n".join([*_doubling(12), *tail]) + "\n")
    with pytest.raises(bibtex.TooLarge, match=named):
        list(bibtex.rows(text))
