"""Search on SQLite and on PostgreSQL, the same catalog, timed in the same run.

    python bench/search_engines.py                  # 100,000 papers; both engines; a markdown table
    python bench/search_engines.py --quick          # 2,000 papers, 30 samples (the smoke test's size)

It generates bench.py's seeded catalog, imports it with `python -m bot import` into a SQLite file and
into a PostgreSQL database (Debian's postgresql-15, started in a temporary folder and stopped at
the end, as the tests start it), then times `catalog.search` in this process, engine after engine in
blocks, for bench.py's five search words and a few more (prefixes, a Chinese run typed without
spaces, a second page). The bot's server is left out: it is the same on both engines, and bench.py
times it. It also checks that both engines answer each query with the same page, and keeps
PostgreSQL's plan of the slowest query in the work directory.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))

import synth  # noqa: E402

from bot.catalog import queries as catalog  # noqa: E402
from tests.support.postgres import Server  # noqa: E402

BLOCK = 20  # samples of one query on one engine before the other engine's


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def import_into(jsonl: Path, db: str, workdir: Path) -> float:
    """Seconds `python -m bot import` takes to load `jsonl` into the new database `db`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERBOT_"))}
    env.update({"PAPERBOT_DB": db, "PAPERBOT_TIMEZONE": "UTC", "PYTHONPATH": str(ROOT)})
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bot", "import", str(jsonl)],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if done.returncode != 0:
        raise SystemExit(f"import into {db} failed: {done.stderr.strip()[-2000:]}")
    return time.perf_counter() - start


def queries(words: dict[str, dict]) -> dict[str, tuple[str, int]]:
    """label -> (query, page): bench.py's search words, and a few more."""
    out = {label: (w["query"], 1) for label, w in words.items()}
    common = words["common English"]["query"]
    out["2-letter prefix"] = (common[:2], 1)
    out["5-letter prefix"] = (common[:5], 1)
    out["Chinese run, no spaces"] = ("数据并行训练", 1)
    out["common English, page 5"] = (common, 5)
    return out


def time_ms(store, query: str, page: int) -> float:
    start = time.perf_counter()
    catalog.search(store, query, page)
    return (time.perf_counter() - start) * 1000


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="search on SQLite and PostgreSQL (see bench/README.md)")
    p.add_argument("--papers", type=int, default=100_000)
    p.add_argument("--requests", type=int, default=200, help="samples per query and engine (default 200)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    p.add_argument("--out", type=Path, help="work directory (default: a new one under bench/out/)")
    p.add_argument("--quick", action="store_true", help="2,000 papers, 30 samples")
    args = p.parse_args(argv)
    if args.quick:
        args.papers, args.requests = min(args.papers, 2000), min(args.requests, 30)
    workdir = args.out or HERE / "out" / time.strftime("search-engines-%Y%m%d-%H%M%S")
    workdir.mkdir(parents=True, exist_ok=True)

    log(f"generating {args.papers} papers (seed {args.seed})")
    papers = synth.catalog(args.papers, seed=args.seed)
    jsonl = workdir / "catalog.jsonl"
    synth.write_jsonl(papers, jsonl)
    words = synth.search_words(papers)
    del papers
    asked = queries(words)
    result: dict = {
        "command": "python bench/search_engines.py" + "".join(f" {a}" for a in (argv or sys.argv[1:])),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "params": vars(args) | {"json": str(args.json), "out": str(workdir)},
        "queries": {label: {"query": q, "page": n} for label, (q, n) in asked.items()},
        "import_s": {},
        "ms": {},
    }

    # A folder of its own, as the tests' (run as root, PostgreSQL's own user must reach it).
    server = Server.start(Path(tempfile.mkdtemp(prefix="paperbot-bench-pg-")))
    try:
        dbs = {"SQLite": str(workdir / "paperbot.db"), "PostgreSQL": server.new_database()}
        for engine, db in dbs.items():
            log(f"importing into {engine}")
            result["import_s"][engine] = import_into(jsonl, db, workdir)
            log(f"  {result['import_s'][engine]:.1f} s")
        stores = {engine: catalog.open_store(db) for engine, db in dbs.items()}
        try:
            result["same_pages"] = {
                label: [p.id for p in catalog.search(stores["SQLite"], q, n).papers]  # type: ignore[union-attr]
                == [p.id for p in catalog.search(stores["PostgreSQL"], q, n).papers]  # type: ignore[union-attr]
                for label, (q, n) in asked.items()
            }
            for label, (q, n) in asked.items():
                log(f"timing {label}: search {q} (page {n})")
                samples: dict[str, list[float]] = {engine: [] for engine in stores}
                for store in stores.values():  # warm both
                    for _ in range(3):
                        time_ms(store, q, n)
                while len(samples["SQLite"]) < args.requests:
                    for engine, store in stores.items():
                        samples[engine] += [time_ms(store, q, n) for _ in range(BLOCK)]
                result["ms"][label] = {
                    engine: {"p50": statistics.median(ms), "p99": pct(ms, 0.99), "n": len(ms)}
                    for engine, ms in samples.items()
                }
            slowest = max(asked, key=lambda label: result["ms"][label]["PostgreSQL"]["p50"])
            result["slowest_on_postgresql"] = slowest
            (workdir / "postgresql-plan.txt").write_text(plan(stores["PostgreSQL"], *asked[slowest]))
        finally:
            for store in stores.values():
                store.close()
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)

    report = render(result, words)
    print(report)
    (workdir / "report.md").write_text(report)
    (workdir / "result.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    return 0 if all(result["same_pages"].values()) else 1


def plan(store, query: str, page: int) -> str:
    """PostgreSQL's plan of one search, with its timings (EXPLAIN ANALYZE)."""
    from bot.catalog import pg_search, search_terms  # noqa: PLC0415

    db = store.db
    expand = lambda prefix: catalog._words_starting(db, prefix)  # noqa: E731
    expr = search_terms.all_of(search_terms.match_terms(query, expand=expand))
    sql, params = pg_search.page(
        expr, search_terms.sharing(query, expand=expand), catalog.SHARING_CANDIDATES, skip=(page - 1) * 40, want=41
    )
    rows = db.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params).fetchall()
    return f"search {query} (page {page})\n\n" + "\n".join(r[0] for r in rows) + "\n"


def render(r: dict, words: dict[str, dict]) -> str:
    lines = [
        f"`{r['command']}`, {r['when']}: {r['params']['papers']:,} papers, "
        f"{r['params']['requests']} samples per query and engine, `catalog.search` in one process.",
        "",
        f"Import (`python -m bot import`): SQLite {r['import_s']['SQLite']:.1f} s, "
        f"PostgreSQL {r['import_s']['PostgreSQL']:.1f} s.",
        "",
        "| search | papers matching | SQLite p50 / p99 | PostgreSQL p50 / p99 | PostgreSQL / SQLite (p50) | same page |",
        "| --- | ---: | ---: | ---: | ---: | :---: |",
    ]
    for label, ms in r["ms"].items():
        q = r["queries"][label]
        matching = words[label]["papers_matching"] if label in words else ""
        s, pg = ms["SQLite"], ms["PostgreSQL"]
        lines.append(
            f"| {label}: `{q['query']}`{'' if q['page'] == 1 else ' p' + str(q['page'])} | {matching} "
            f"| {s['p50']:.2f} / {s['p99']:.2f} ms | {pg['p50']:.2f} / {pg['p99']:.2f} ms "
            f"| {pg['p50'] / s['p50']:.1f}x | {'yes' if r['same_pages'][label] else '**no**'} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
