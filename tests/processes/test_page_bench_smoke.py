"""The page benchmark runs end to end on a small catalog and reports every figure (no timed assertions)."""

from __future__ import annotations

import pytest

from tests.support.bench_run import run_bench

#: The benchmark builds a catalog, starts a bot and reader processes: left out of the development loop.
pytestmark = pytest.mark.slow


def test_page_bench_quick_run_reports_every_figure(tmp_path):
    stdout, r = run_bench("page_bench.py", tmp_path, timeout=240)
    assert "| target |" in stdout and "while the page is read" in stdout

    assert r["papers_in_db"] >= r["params"]["papers"]
    assert r["page"]["status"] == 200 and r["page"]["bytes"] > 10_000
    for phase in ("baseline", "with_readers"):
        chat = r[phase]
        assert chat["n"] == r["params"]["requests"], phase
        assert chat["kinds"].get("error", 0) == 0 and not chat["errors"], (phase, chat["errors"])
        assert 0 < chat["p50_ms"] <= chat["max_ms"], phase
    readers = r["readers"]
    assert readers["requests"] > 0 and readers["status"].get("200", 0) > 0, readers
    assert set(readers["status"]) <= {"200", "503"}, "a reader gets the page or a quick 503, nothing else"
    assert [t["target"].split()[0] for t in r["targets"]] == ["every", "no"]
    assert r["bot_exit_code"] == 0
