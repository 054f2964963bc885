"""Import reads files, not streams: what is not a regular file, or is too large to be a paper list, is refused
before anything is read; what is read is read a row at a time, so memory does not grow with the file."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tracemalloc

import pytest
import yaml

from bot.catalog import files as papers_file

FORMATS = ["yaml", "json", "jsonl", "csv"]


def _env(tmp_path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERBOT_"))},
        "PAPERBOT_DB": str(tmp_path / "paperbot.db"),
    }


def _import(tmp_path, *files, timeout: float = 60):
    return subprocess.run(
        [sys.executable, "-m", "bot", "import", *map(str, files)],
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=timeout,
    )


def test_a_named_pipe_is_refused_at_once_not_waited_on(tmp_path):
    pipe = tmp_path / "papers.jsonl"
    os.mkfifo(pipe)
    good = tmp_path / "good.json"
    good.write_text('[{"title": "A paper"}]', encoding="utf-8")
    done = _import(tmp_path, pipe, good, timeout=30)  # nobody ever writes into the pipe
    assert done.returncode == 1
    assert f"paperbot: {pipe}: is not a regular file" in done.stderr
    assert f"{good}: 1 added" in done.stdout  # the other files are imported
    assert "Traceback" not in done.stderr


def test_a_device_is_refused_before_a_byte_is_read(tmp_path):
    zero = tmp_path / "zero.yaml"
    zero.symlink_to("/dev/zero")
    with pytest.raises(papers_file.UnreadableFile, match="is not a regular file"):
        papers_file.PaperList(zero)
    done = _import(tmp_path, zero, timeout=30)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_file_too_large_for_a_paper_list_is_refused_before_it_is_read(tmp_path, fmt):
    huge = tmp_path / f"huge.{fmt}"
    with huge.open("wb") as f:  # sparse: it takes no room on the disk
        f.truncate(papers_file.MAX_FILE_BYTES + 1)
    tracemalloc.start()
    try:
        with pytest.raises(papers_file.UnreadableFile, match=r"too large for a paper list \(at most 128 MB"):
            papers_file.PaperList(huge)
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()


def _write(path, fmt: str, rows: list[dict]) -> None:
    if fmt == "yaml":
        path.write_text(yaml.safe_dump(rows, allow_unicode=True, sort_keys=False, width=10_000), encoding="utf-8")
    elif fmt == "json":
        path.write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    else:
        with path.open("w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=["id", "title", "summary", "tags"])
            writer.writeheader()
            writer.writerows({**r, "tags": ",".join(r["tags"])} for r in rows)


@pytest.mark.slow  # imports a big file in a child process per format
@pytest.mark.parametrize("fmt", FORMATS)
def test_memory_does_not_grow_with_the_file(tmp_path, fmt):
    """1,500 papers with long summaries: about 25 MB of text, read in a few MB (read whole, it took several
    times the file)."""
    rows = [
        {
            "id": f"paper-{i}",
            "title": f"Paper {i}",
            "summary": f"{i} " + "数据并行训练与通信优化。" * 490,
            "tags": ["big"],
        }
        for i in range(1500)
    ]
    path = tmp_path / f"papers.{fmt}"
    _write(path, fmt, rows)
    size = path.stat().st_size
    assert size > 20 << 20
    tracemalloc.start()
    try:
        count = sum(1 for _ in papers_file.PaperList(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 1500
    assert peak < 12 << 20, f"{peak / 2**20:.1f} MB to read {size / 2**20:.1f} MB"


def test_rows_are_numbered_as_a_person_reads_the_file(tmp_path):
    rows = [{"title": "Good"}, {"title": ""}, {"title": "Also good", "url": "nope"}]
    expected = {
        "yaml": ["item 2", "item 3"],
        "json": ["item 2", "item 3"],
        "jsonl": ["line 2", "line 3"],
        "csv": ["line 3", "line 4"],  # the header is line 1
    }
    for fmt, where in expected.items():
        path = tmp_path / f"list.{fmt}"
        if fmt == "csv":
            path.write_text("title,url\nGood,\n,\nAlso good,nope\n", encoding="utf-8")
        else:
            _write(path, fmt, rows)
        report = papers_file.read(path)
        assert [p.split(": ", 1)[0] for p in report.problems] == [f"{path} {w}" for w in where], fmt


def test_a_broken_json_list_is_refused_whole_with_its_line_before_anything_is_imported(tmp_path):
    path = tmp_path / "list.json"
    body = ",\n".join(json.dumps({"title": f"Paper {i}"}) for i in range(3000))
    path.write_text("[\n" + body + ",\n{broken}\n]\n", encoding="utf-8")
    done = _import(tmp_path, path)
    assert done.returncode == 1
    assert f"paperbot: {path}: not valid JSON (line 3002: " in done.stderr, done.stderr
    check = subprocess.run(
        [sys.executable, "-m", "bot", "export"], capture_output=True, text=True, env=_env(tmp_path), timeout=60
    )
    assert len(json.loads(check.stdout)) == 32  # nothing of it was imported


def test_paper_numbers_stay_within_one_to_99_999_999(store):
    from bot.catalog import queries as catalog
    from bot.catalog.papers import PaperInput

    top = PaperInput(id="top", title="The top", number=99_999_999)
    past = PaperInput(id="past", title="Past the top", number=100_000_000)  # no wish: the next number
    counts = catalog.upsert(store, [top, past, PaperInput(id="after", title="After the top")])
    assert counts.added == 1
    assert catalog.find(store, "#99999999").id == "top"
    assert counts.problems == ["no paper number is left for it: numbers go up to 99,999,999, and the last is taken"] * 2
    assert catalog.find(store, "past") is None and catalog.find(store, "after") is None
    assert max(p.number for p in catalog.all_papers(store)) == 99_999_999
    with pytest.raises(catalog.InvalidPaper, match="no paper number is left"):
        catalog.add(store, catalog.validate({"title": "From the form"}, new=True))


def test_ids_made_from_long_titles_end_after_a_whole_word(store):
    from bot.catalog import queries as catalog
    from bot.catalog.papers import PaperInput

    title = "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"
    catalog.upsert(store, [PaperInput(id=None, title=title), PaperInput(id=None, title=title + ", again")])
    ids = [p.id for p in catalog.all_papers(store)][-2:]
    assert ids == ["efficient-large-scale-language-model", "efficient-large-scale-language-model-2"]
    catalog.upsert(store, [PaperInput(id=None, title=f"{title} {n}") for n in range(3, 13)])
    ids = [p.id for p in catalog.all_papers(store)][-10:]
    assert ids[-1] == "efficient-large-scale-language-model-12"  # 39 characters: no word cut
    # The 1,000th would not fit "model": its id ends after "language", not in the middle of "model".
    from bot.catalog.importing import _slug_prefix

    assert _slug_prefix("efficient-large-scale-language-model", 1000) + "-1000" == "efficient-large-scale-language-1000"


def test_a_paper_whose_id_an_earlier_version_cut_mid_word_is_found_again(store):
    from bot.catalog import queries as catalog
    from bot.catalog.papers import PaperInput

    title = "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"
    catalog.upsert(store, [PaperInput(id="efficient-large-scale-language-model-tra", title=title)])
    counts = catalog.upsert(store, [PaperInput(id=None, title=title, summary="Now with a summary")])
    assert (counts.added, counts.updated) == (0, 1)
    assert catalog.find(store, "efficient-large-scale-language-model-tra").summary == "Now with a summary"


def test_rows_without_ids_still_see_what_every_file_claims_when_read_a_row_at_a_time(tmp_path):
    first = tmp_path / "first.jsonl"
    first.write_text('{"title": "Title X"}\n', encoding="utf-8")
    second = tmp_path / "second.csv"
    second.write_text("id,title\ntitle-x,Another paper\n", encoding="utf-8")
    done = _import(tmp_path, first, second)
    assert done.returncode == 0, done.stderr
    assert f"{first}: 1 added" in done.stdout and f"{second}: 1 added" in done.stdout
    exported = subprocess.run(
        [sys.executable, "-m", "bot", "export"], capture_output=True, text=True, env=_env(tmp_path), timeout=60
    )
    ids = {p["title"]: p["id"] for p in json.loads(exported.stdout)}
    assert ids["Title X"] == "title-x-2" and ids["Another paper"] == "title-x"  # the id is the row's that names it
    again = _import(tmp_path, first, second)
    assert f"{first}: 0 added, 0 updated, 1 unchanged" in again.stdout
    assert f"{second}: 0 added, 0 updated, 1 unchanged" in again.stdout
