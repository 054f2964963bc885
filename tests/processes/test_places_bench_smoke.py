"""The places benchmark runs end to end on a few places: two replicas of a hosted install on one
PostgreSQL database answer every place's commands, and post every group's post once, with its own
workspace's token, while one place is answered 429."""

from __future__ import annotations

import pytest

from tests.support import postgres
from tests.support.bench_run import run_bench

#: One post slot at a whole minute, and the hammered place's retries after it: two to three minutes.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(postgres.binaries() is None, reason="PostgreSQL is not installed"),
]


def test_places_bench_posts_once_each_with_its_own_token_and_one_hammered_place_delays_no_other(tmp_path):
    stdout, r = run_bench("places_bench.py", tmp_path, "--places", "6", "--hammer", "5", timeout=600)
    assert "| slot → last post of every other place |" in stdout
    posts = r["posts"]
    assert posts["once"] == posts["own_token"] == posts["groups"] == 12, posts
    assert posts["missing"] == posts["twice_or_more"] == 0, posts
    # The hammered place's posts come after its 429s; every other place's before them.
    assert posts["others_last_after_slot_s"] < posts["hammered_first_after_slot_s"], posts
    for phase in ("latency_one", "latency_many"):
        assert all(not x["errors"] and x["p50"] for x in r[phase].values()), r[phase]
