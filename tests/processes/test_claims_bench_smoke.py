"""Eight processes racing for the same 2,000 deliveries send each exactly once, on PostgreSQL and SQLite."""

from __future__ import annotations

import pytest

from tests.support.bench_run import run_bench
from tests.support.postgres import binaries

#: Sixteen thousand claims between eight processes: about a minute and a half, out of the development loop.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(binaries() is None, reason="PostgreSQL is not installed"),
]


def test_eight_processes_racing_for_2000_claims_send_each_once_on_both_engines(tmp_path):
    stdout, r = run_bench("claims_bench.py", tmp_path, "--processes", "8", "--keys", "2000", timeout=600)
    assert "target 0 duplicates, 0 missing: met" in stdout, stdout
    for engine in ("postgresql", "sqlite"):
        race = r[engine]
        assert race["processes"] == 8 and race["keys"] == 2000, race
        assert race["duplicates"] == 0 and race["missing"] == 0, (engine, race)
        assert race["sent_once"] == race["recorded_sent"] == 2000, (engine, race)
