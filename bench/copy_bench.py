"""How long `paperbot copy` takes for a large install, each way, and whether every count came across.

    python bench/copy_bench.py                        # 100,000 papers with a year of history (about 2 minutes)
    python bench/copy_bench.py --quick                # 2,000 papers (the smoke test)
    python bench/copy_bench.py --json bench/out/copy.json

It imports a synthetic catalog (bench/synth.py) into a new SQLite file with `paperbot import`, gives it
history (groups with a year of sign-ups, their posts' delivery records, votes, suggestions, talk links,
questions, attendance), starts a PostgreSQL server of its own in a temporary folder (Debian's
postgresql-15, on a Unix socket; fsync off, as the tests run it), then times real `paperbot copy`
processes: SQLite -> PostgreSQL, PostgreSQL -> SQLite, PostgreSQL -> PostgreSQL and SQLite -> SQLite.
Each copy's per-table counts, as it printed them, are checked against counts taken on both databases
by this script.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # the PostgreSQL server the tests start: tests.support.postgres

import synth  # noqa: E402

from tests.support.postgres import Server  # noqa: E402

GROUPS, WEEKS = 20, 52


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def env_for(db: Path | str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERBOT_", "DISCORD_"))}
    return {**env, "PAPERBOT_DB": str(db), "PAPERBOT_TIMEZONE": "UTC", "PYTHONUNBUFFERED": "1"}


def paperbot(*argv: str, db: Path | str, cwd: Path) -> tuple[float, float, str]:
    """Run `paperbot ARGV`: its wall time, its CPU time, its stdout."""
    start, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run(
        [sys.executable, "-m", "bot", *argv], env=env_for(db), cwd=cwd, capture_output=True, text=True, timeout=1800
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"paperbot {' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return seconds, children_cpu() - cpu, done.stdout


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def server_cpu(server: Server) -> float:
    """CPU seconds PostgreSQL's ended processes used (a connection's, once it has closed): the
    server's share of a copy, which the machine's other load does not inflate as it does wall time."""
    pid = int((server.data / "postmaster.pid").read_text().split()[0])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")  # cutime, cstime


def make_install(db: Path, papers: int, seed: int, workdir: Path) -> dict:
    """A SQLite install of `papers` synthetic papers and a year of history in `GROUPS` groups."""
    jsonl = workdir / "catalog.jsonl"
    synth.write_jsonl(synth.catalog(papers, seed=seed), jsonl)
    paperbot("init", "--empty", db=db, cwd=workdir)
    seconds, _, _ = paperbot("import", str(jsonl), db=db, cwd=workdir)
    rng = random.Random(seed)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    monday = date(2026, 1, 5)
    conn = sqlite3.connect(db)
    with conn:
        numbers = [r[0] for r in conn.execute("SELECT number FROM papers")]
        conn.executemany(
            "INSERT INTO groups (id, platform, channel, updated_at, started_at) VALUES (?, 'slack', ?, ?, ?)",
            [(g, f"C0BENCH{g:03d}", now, now) for g in range(2, GROUPS + 2)],
        )
        weeks = [(monday + timedelta(weeks=w)).strftime("%G-W%V") for w in range(WEEKS)]
        slots = [(g, w, f"U{rng.randrange(500):04d}", rng.choice(numbers)) for g in range(1, GROUPS + 2) for w in weeks]
        conn.executemany(
            "INSERT INTO slots (group_id, week, kind, presenter, paper, booked_by, booked_at) "
            "VALUES (?, ?, 'presenter', ?, ?, 'bench', '2026-01-01T00:00:00+00:00')",
            slots,
        )
        conn.executemany(
            "INSERT INTO deliveries (kind, dest, key, state, paper, claimed_at, attempts, channel, message_ref, "
            "updated_at) VALUES ('post', ?, ?, 'sent', ?, 1767600000.5, 1, ?, '1767600000.000100', ?)",
            [(f"C0BENCH{g:03d}", w, p, f"C0BENCH{g:03d}", now) for g, w, _, p in slots],
        )
        votes = {(rng.choice(numbers), f"U{rng.randrange(500):04d}") for _ in range(20_000)}
        conn.executemany("INSERT INTO votes (paper, member, voted_at) VALUES (?, ?, ?)", [(*v, now) for v in votes])
        conn.executemany(
            "INSERT INTO suggestions (suggested_by, platform, title, url, created_at) VALUES (?, 'slack', ?, ?, ?)",
            [(f"U{i:04d}", f"Suggested paper {i}", f"https://example.org/s/{i}", now) for i in range(200)],
        )
        conn.executemany(
            "INSERT INTO talk_links (group_id, week, url, added_by, added_at) VALUES (?, ?, ?, ?, ?)",
            [(g, w, f"https://example.org/slides/{g}/{w}", u, now) for g, w, u, _ in slots[::2]],
        )
        conn.executemany(
            "INSERT INTO questions (group_id, week, asked_by, platform, text, asked_at) VALUES (?, ?, ?, 'slack', ?, ?)",
            [(g, w, u, f"A question on {w}", now) for g, w, u, _ in slots],
        )
        conn.executemany(
            "INSERT INTO attendance (group_id, week, member, going, said_at) VALUES (?, ?, ?, ?, ?)",
            [(g, w, f"U{m:04d}", m % 2, now) for g, w, _, _ in slots for m in range(5)],
        )
    conn.close()
    return {"import_seconds": round(seconds, 1), "papers": len(numbers)}


def counts_of(db: Path | str) -> dict[str, int]:
    """Each table's rows, counted by this script (not by copy)."""
    if isinstance(db, str):
        import psycopg

        with psycopg.connect(db) as conn:
            tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
            return {
                t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
                for t in tables
                if t != "paperbot_migrations"
            }
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    fts = {"paper_search", "paper_titles", "paper_tag_words"}
    shadows = {f"{t}_{s}" for t in fts for s in ("data", "idx", "content", "docsize", "config")}
    counted = {
        t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
        for t in names
        if t not in shadows and not t.startswith(("sqlite_", "_sqlite_"))
    }
    conn.close()
    return counted


def printed_counts(stdout: str) -> dict[str, int]:
    return {p[0]: int(p[1].replace(",", "")) for line in stdout.splitlines()[:-1] if len(p := line.split()) == 2}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="2,000 papers")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    papers = 2000 if args.quick else args.papers
    workdir = (args.out or HERE / "out" / f"copy-{datetime.now():%Y%m%d-%H%M%S}").resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    source = workdir / "source.db"
    for leftover in workdir.glob("*.db*"):
        leftover.unlink()
    log(f"importing {papers:,} synthetic papers into {source} and giving it a year of history")
    result: dict = {"install": make_install(source, papers, args.seed, workdir), "copies": []}
    # Its own folder in the system's temporary one: PostgreSQL's user must reach it (not under /root, say).
    server = Server.start(Path(tempfile.mkdtemp(prefix="paperbot-copy-bench-")))
    try:
        pg1, pg2 = server.new_database(), server.new_database()
        expected = counts_of(source)
        for label, frm, to in [
            ("SQLite -> PostgreSQL", source, pg1),
            ("PostgreSQL -> SQLite", pg1, workdir / "back.db"),
            ("PostgreSQL -> PostgreSQL", pg1, pg2),
            ("SQLite -> SQLite", source, workdir / "again.db"),
        ]:
            log(f"copy: {label}")
            before = server_cpu(server)
            seconds, cpu, out = paperbot("copy", str(frm), str(to), db=source, cwd=workdir)
            time.sleep(0.5)  # the connections' processes end
            server_seconds = server_cpu(server) - before
            printed, found = printed_counts(out), counts_of(to)
            result["copies"].append(
                {
                    "copy": label,
                    "seconds": round(seconds, 2),
                    "paperbot_cpu_seconds": round(cpu, 2),
                    "postgresql_cpu_seconds": round(server_seconds, 2),
                    "rows": sum(printed.values()),
                    "tables": len(printed),
                    "papers": printed.get("papers"),
                    "counts_equal": printed == found == expected,
                    "summary": out.splitlines()[-1],
                }
            )
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)
    install = result["install"]
    print(f"## `paperbot copy`: {install['papers']:,} papers, {GROUPS + 1} groups with {WEEKS} weeks each\n")
    print(f"(import of the catalog into SQLite: {install['import_seconds']} s)\n")
    print("| copy | wall s | CPU s: paperbot | CPU s: PostgreSQL | rows | tables | counts equal |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for c in result["copies"]:
        print(
            f"| {c['copy']} | {c['seconds']:.1f} | {c['paperbot_cpu_seconds']:.1f} | {c['postgresql_cpu_seconds']:.1f} "
            f"| {c['rows']:,} | {c['tables']} | {'yes' if c['counts_equal'] else 'NO'} |"
        )
    print(f"\n(load average as it ended: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0 if all(c["counts_equal"] for c in result["copies"]) else 1


if __name__ == "__main__":
    sys.exit(main())
