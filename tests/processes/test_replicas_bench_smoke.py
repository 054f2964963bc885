"""The replicas benchmark runs end to end on a few groups: three replicas on one PostgreSQL database
post each group's post once, and still once when one of them is killed in the middle."""

from __future__ import annotations

import pytest

from tests.support import postgres
from tests.support.bench_run import run_bench

#: Two rounds, each waiting for a post slot at a whole minute: two to four minutes.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(postgres.binaries() is None, reason="PostgreSQL is not installed"),
]


def test_replicas_bench_posts_once_with_three_replicas_and_with_one_killed(tmp_path):
    stdout, r = run_bench("replicas_bench.py", tmp_path, "--groups", "24", timeout=600)
    assert "| last post / measured floor" in stdout and "| killed (SIGKILL) |" in stdout
    calm, kill = r["rounds"]
    for x in (calm, kill):
        posts = x["posts"]
        assert posts["posted_once"] == posts["stored_once"] == posts["recorded_sent_in_db"] == 24, (x["round"], posts)
        assert posts["missing"] == posts["twice_or_more"] == 0, (x["round"], posts)
    assert calm["killed"] is None and calm["replicas_alive_at_end"] == 3
    assert kill["killed"]["replica"].startswith("kill-replica-") and kill["replicas_alive_at_end"] == 2
