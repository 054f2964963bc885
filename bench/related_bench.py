"""`related` and search across languages at 100,000 papers, beside `search` of a common word.

    python bench/related_bench.py                 # 100,000 papers (the catalog bench.py builds), 300 samples
    python bench/related_bench.py --papers 2000   # small and fast

Builds (or reuses) the synthetic catalog with bench.py's shared helper, then times, in one process
and interleaved so that the machine's moods fall on every row alike, the commands as the command
layer runs them (parsing, the queries, the reply; no HTTP): `related <paper>` of random papers,
`show <paper>` (which now lists the 3 closest), and searches, the baseline `search training` among
them. Then the dictionary's cost: its first read, and the process's RSS before and after it.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))

import bench  # noqa: E402

SEARCHES = ["training", "petrichor", "训练", "pipeline", "流水线", "推测解码", "fault tolerance", "数据并行训练"]


def rss_mb() -> float:
    return _status("VmRSS")


def _status(key: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--papers", type=int, default=100_000)
    p.add_argument("--samples", type=int, default=300)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", type=Path, default=HERE / "out" / "catalog")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    db = bench.fresh_copy(args.out.resolve(), args.papers, args.seed, {})

    from bot.calendar import Meeting, MeetingCalendar, PostSchedule
    from bot.catalog import bilingual
    from bot.catalog import queries as catalog
    from bot.chat import commands, context
    from bot.schedule.signups import Member

    before = rss_mb()
    store = catalog.open_store(db, seed=None)
    started = time.perf_counter()
    bilingual.load()
    load_s = time.perf_counter() - started
    gc.collect()
    after, peak = rss_mb(), _status("VmHWM")

    group = MeetingCalendar(UTC, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", UTC))
    ctx = context.Context(store, group, Member("U1", lambda: False), datetime.now(UTC))
    papers = catalog.count(store)
    rnd = random.Random(args.seed)
    lines = {"related <random paper>": lambda: f"related {rnd.randint(1, papers)}"}
    lines["show <random paper>"] = lambda: f"show {rnd.randint(1, papers)}"
    for words in SEARCHES:
        lines[f"search {words}"] = lambda words=words: f"search {words}"
    times: dict[str, list[float]] = {name: [] for name in lines}
    for _ in range(10):  # warm: the page cache, SQLite's statements
        for make in lines.values():
            commands.run(ctx, make())
    for _ in range(args.samples):
        for name, make in lines.items():
            line = make()
            t = time.perf_counter()
            commands.run(ctx, line)
            times[name].append((time.perf_counter() - t) * 1000)

    base = bench.pct(times["search training"], 50) or 1.0
    print(f"{papers:,} papers, {args.samples} samples a row, interleaved; in one process, the command layer\n")
    print("| command | p50 ms | p99 ms | max ms | p50 / `search training` |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, ms in times.items():
        p50, p99 = bench.pct(ms, 50) or 0.0, bench.pct(ms, 99) or 0.0
        print(f"| `{name}` | {p50:.2f} | {p99:.2f} | {max(ms):.2f} | {p50 / base:.2f}x |")
    print(
        f"\ndictionary: first read {load_s:.2f} s; RSS {before:.0f} MB before, {after:.0f} MB after ({peak:.0f} MB peak)"
    )
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
