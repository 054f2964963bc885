"""The many-groups benchmark runs end to end on a small install and reports every figure (no timed assertions)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Two bots wait for a post slot at a whole minute: one to two minutes, left out of the development loop.
pytestmark = pytest.mark.slow


def test_groups_bench_quick_run_posts_each_group_once_and_reports(tmp_path):
    out_json = tmp_path / "groups.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "groups_bench.py"),
            "--quick",
            "--groups",
            "30",
            "--env-apart",
            "--json",
            str(out_json),
            "--out",
            str(tmp_path / "work"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| bot / measured floor" in done.stdout and "| bot memory (MB)" in done.stdout
    r = json.loads(out_json.read_text(encoding="utf-8"))
    posts = r["posts"]
    assert posts["posted_once"] == posts["stored_once"] == posts["recorded_sent_in_db"] == 30, posts
    assert posts["missing"] == posts["twice_or_more"] == 0, posts
    assert r["floor"]["seconds"] > 0 and posts["last_after_slot_s"] is not None
    for command, row in r["latency"].items():
        for label in ("one", "many"):
            assert row[label]["p50"] > 0 and row[label]["errors"] == [], (command, label, row[label])
    assert r["memory_after"]["many"]["rss_mb"] > 0
