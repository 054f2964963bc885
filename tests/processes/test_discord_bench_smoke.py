"""The Discord benchmark runs end to end on a small catalog and reports every figure (no timed assertions)."""

from __future__ import annotations

import pytest

from tests.support.bench_run import run_bench

#: The benchmark builds a catalog and starts two servers: left out of the development loop.
pytestmark = pytest.mark.slow

ROWS = {
    "tag parallelism-dp",
    "search training",
    "search 训练",
    "show <random paper>",
    "schedule",
    "week",
    "signup <paper> <date>",
    'autocomplete (show, paper: "train")',
}


def test_discord_bench_quick_run_reports_every_figure(tmp_path):
    stdout, r = run_bench("discord_bench.py", tmp_path, timeout=240)
    assert "| target |" in stdout and "targets pass" in stdout

    assert r["papers_in_db"] >= r["params"]["papers"]
    assert set(r["rows"]) == ROWS
    for name, row in r["rows"].items():
        assert row["n"] == r["params"]["requests"], name
        assert row["p50_ms"] > 0 and row["p99_ms"] >= row["p50_ms"], name
        assert row["floor"]["n"] == row["n"] and row["floor"]["p50_ms"] > 0, name
        assert row["ratio"] > 0, name
        assert row["kinds"].get("error", 0) == 0 and not row["errors"], (name, row["errors"])
    # Every timed sign-up really signed up (a week and a paper of its own), and autocomplete offered choices.
    assert r["rows"]["signup <paper> <date>"]["kinds"] == {"signed-up": r["params"]["requests"]}
    assert r["rows"]['autocomplete (show, paper: "train")']["kinds"] == {"choices": r["params"]["requests"]}
    # The floor answers replies of the bot's sizes.
    assert all(n > 100 for n in r["reply_bytes"].values())

    load = r["load"]
    assert load["commands"] > 0 and load["commands_per_s"] > 0 and load["errors"] == 0, load["error_samples"]
    assert {"p50_ms", "p99_ms", "max_ms"} <= set(load)
    assert len(r["targets"]) == 3 * len(ROWS) + 2 and all(isinstance(t["pass"], bool) for t in r["targets"])
    assert r["bot_exit_code"] == 0
