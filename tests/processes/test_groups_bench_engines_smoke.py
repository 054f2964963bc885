"""The many-groups benchmark's engine comparison runs end to end: the same groups on SQLite and on
PostgreSQL (copied by `paperbot copy`), each posting once per group and answering every command."""

from __future__ import annotations

import pytest

from tests.support import postgres
from tests.support.bench_run import run_bench

#: Three bots wait for a post slot at a whole minute: one to two minutes, left out of the development loop.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(postgres.binaries() is None, reason="PostgreSQL is not installed"),
]


def test_groups_bench_engines_posts_once_on_each_engine_and_reports_both(tmp_path):
    stdout, r = run_bench(
        "groups_bench.py", tmp_path, "--groups", "20", "--env-apart", "--engines", "sqlite,postgresql", timeout=400
    )
    assert "postgresql / sqlite p50" in stdout and "| bot / measured floor" in stdout
    for engine in ("sqlite", "postgresql"):
        posts = r["engines"][engine]["posts"]
        assert posts["posted_once"] == posts["stored_once"] == posts["recorded_sent_in_db"] == 20, (engine, posts)
        assert posts["missing"] == posts["twice_or_more"] == 0, (engine, posts)
    assert r["copy_seconds"] > 0
    for command, row in r["latency"].items():
        for label in ("one", "many", "many-postgresql"):
            assert row[label]["p50"] > 0 and row[label]["errors"] == [], (command, label, row[label])
