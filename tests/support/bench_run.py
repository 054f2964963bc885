"""A benchmark script run once, quickly, as its smoke test runs it: its output and its JSON report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_bench(script: str, tmp_path: Path, *args: str, timeout: float) -> tuple[str, dict]:
    """Run `bench/<script> --quick ARGS` with its report and work files under `tmp_path`; its stdout
    and report. Fails the test, with the end of stderr, when it exits non-zero."""
    out_json = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), "--quick", *args, "--json", str(out_json),
         "--out", str(tmp_path / "work")],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, json.loads(out_json.read_text(encoding="utf-8"))
