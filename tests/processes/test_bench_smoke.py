"""The benchmark runs end to end on a small catalog and reports every figure (no timed assertions)."""

from __future__ import annotations

import pytest

from tests.support.bench_run import run_bench

#: The benchmark builds a catalog and starts servers: about a minute, left out of the development loop.
pytestmark = pytest.mark.slow


def test_bench_quick_run_reports_every_figure(tmp_path):
    stdout, r = run_bench("bench.py", tmp_path, "--rounds", "2", timeout=180)
    assert "| target |" in stdout and "targets pass" in stdout

    assert r["import"]["seconds"] > 0 and r["import"]["total_mb"] > 0
    assert r["data"]["tags"] > 100 and r["data"]["papers"] == r["params"]["papers"]
    for label in ("a", "b"):
        assert r["floors"][label]["p50_ms"] > 0 and r["floors"][label]["p99_ms"] > 0
    rows = r["rows"]
    wanted = {"tag (top tag)", "tag (rare tag)", "show", "schedule", "signup"} | {
        f"search ({label})"
        for label in ("common English", "rare English", "common Chinese", "rare Chinese", "multi-word")
    }
    assert wanted <= set(rows)
    for name in wanted:
        row = rows[name]
        assert row["n"] == 2 * r["params"]["requests"], name  # two rounds, pooled
        assert len(row["ratio_by_round"]) == 2 and all(x > 0 for x in row["ratio_by_round"]), name
        assert row["p50_ms"] > 0 and row["p99_ms"] >= row["p50_ms"], name
        assert row["kinds"].get("error", 0) == 0, (name, row["errors"])
    # Every timed sign-up really signed up, in the second round too (new papers, new weeks).
    assert rows["signup"]["kinds"].get("signed-up") == rows["signup"]["n"]

    load = r["load"]
    assert load["commands"] > 0 and load["commands_per_s"] > 0
    assert load["kinds"].get("signed-up", 0) > 0 and load["kinds"].get("taken", 0) == 0  # the load's sign-ups are real
    assert {"errors", "over_3s", "p50_ms", "p99_ms", "max_ms"} <= set(load)
    assert r["memory"]["rss_mb"] > 0 and r["memory"]["hwm_mb"] >= r["memory"]["rss_mb"] * 0.5
    assert r["announcements"] > 0  # sign-ups were announced to the stand-in's channel

    sizes = r["growth"]["sizes"]
    assert len(sizes) == 3 and sizes[-1] == r["params"]["papers"]
    for by_size in r["growth"]["by_query"].values():
        assert all(by_size[str(s)]["p99_ms"] > 0 for s in sizes)

    assert r["targets"] and all(isinstance(t["pass"], bool) for t in r["targets"])
    assert r["bot_exit_code"] == 0


def test_search_on_both_engines_reports_both_and_the_same_pages(tmp_path):
    pytest.importorskip("psycopg")
    from tests.support.postgres import binaries

    if binaries() is None:
        pytest.skip("PostgreSQL is not installed")
    stdout, r = run_bench("search_engines.py", tmp_path, timeout=300)
    assert "| search |" in stdout and "PostgreSQL p50 / p99" in stdout
    assert all(r["same_pages"].values()), r["same_pages"]
    assert r["import_s"]["SQLite"] > 0 and r["import_s"]["PostgreSQL"] > 0
    for label, engines in r["ms"].items():
        for engine in ("SQLite", "PostgreSQL"):
            assert engines[engine]["n"] >= r["params"]["requests"] and engines[engine]["p50"] > 0, (label, engine)
