"""The many-groups benchmark runs end to end on a small install and reports every figure (no timed assertions)."""

from __future__ import annotations

import pytest

from tests.support.bench_run import run_bench

#: Two bots wait for a post slot at a whole minute: one to two minutes, left out of the development loop.
pytestmark = pytest.mark.slow


def test_groups_bench_quick_run_posts_each_group_once_and_reports(tmp_path):
    stdout, r = run_bench("groups_bench.py", tmp_path, "--groups", "30", "--env-apart", timeout=300)
    assert "| bot / measured floor" in stdout and "| bot memory (MB)" in stdout
    posts = r["posts"]
    assert posts["posted_once"] == posts["stored_once"] == posts["recorded_sent_in_db"] == 30, posts
    assert posts["missing"] == posts["twice_or_more"] == 0, posts
    assert r["floor"]["seconds"] > 0 and posts["last_after_slot_s"] is not None
    for command, row in r["latency"].items():
        for label in ("one", "many"):
            assert row[label]["p50"] > 0 and row[label]["errors"] == [], (command, label, row[label])
    assert r["memory_after"]["many"]["rss_mb"] > 0
