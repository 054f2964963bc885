"""The copy benchmark runs end to end on a small install: every copy's counts equal on both sides."""

from __future__ import annotations

import pytest

from tests.support import postgres
from tests.support.bench_run import run_bench

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(postgres.binaries() is None, reason="PostgreSQL is not installed"),
]


def test_copy_bench_quick_run_copies_each_way_with_equal_counts(tmp_path):
    stdout, r = run_bench("copy_bench.py", tmp_path, timeout=300)
    assert "| SQLite -> PostgreSQL |" in stdout and "| PostgreSQL -> SQLite |" in stdout
    assert [c["copy"] for c in r["copies"]] == [
        "SQLite -> PostgreSQL",
        "PostgreSQL -> SQLite",
        "PostgreSQL -> PostgreSQL",
        "SQLite -> SQLite",
    ]
    for c in r["copies"]:
        assert c["counts_equal"] and c["papers"] == r["install"]["papers"] == 2000 and c["seconds"] > 0, c
