"""Exactly once under a race: 8 processes deliver the same 2,000 messages at once, on PostgreSQL and SQLite.

    python bench/claims_bench.py                        # 8 processes, 2,000 keys, both engines (~1-2 min)
    python bench/claims_bench.py --quick                # 4 processes, 200 keys
    python bench/claims_bench.py --db postgresql://...  # on a PostgreSQL of your own (it must be empty)

Each process opens the database and calls the delivery code (`bot.delivery.sending.deliver`), the
one the weekly post and the reminders go through, for every key in an order of its own, with a
transport that appends one line per message "sent" to a file of its own. Then it counts, across
the processes: keys sent more than once (duplicates, the target is 0), keys never sent (missing,
0), and what the database recorded. Without --db it starts a PostgreSQL of its own
(tests/support/postgres.py, Debian's postgresql-15) in the work folder, and runs the same race on a
SQLite file, for comparison.

A port of the claim as one read then one write, without the store's write lock, gave more than one
winner for 1,865 of 2,000 keys here (../shared/notes/scale-facts.md): the figure this guards.
Markdown to stdout, progress to stderr, work files under bench/out/claims-<time>/.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(1, str(ROOT))  # the stand-ins: tests.support


def worker(db: str, keys: int, out: Path, seed: int, go_at: float) -> None:
    """One racing process: deliver every key once, in its own order, starting at `go_at` (unix time)."""
    from bot.catalog.queries import open_store  # noqa: PLC0415 - loaded in the worker, not the parent
    from bot.delivery import sending  # noqa: PLC0415

    store = open_store(db, seed=None)
    order = list(range(keys))
    random.Random(seed).shuffle(order)
    with out.open("a", encoding="utf-8") as sent_file:

        class Transport:
            def send(self, d, message):
                sent_file.write(f"{d.key}\n")
                sent_file.flush()
                return sending.Sent(d.dest, f"ref-{d.key}-{seed}")

            def reaches(self, user):
                return True

            def find(self, d, since):
                return None

        transport = Transport()
        time.sleep(max(0.0, go_at - time.time()))
        statuses: Counter[str] = Counter()
        for k in order:
            d = sending.Delivery("post", "C0RACE", f"key-{k}")
            statuses[sending.deliver(store, d, lambda: ("message", None), transport).status] += 1
    store.close()
    print(json.dumps(dict(statuses)))


def race(db: str, processes: int, keys: int, work: Path) -> dict:
    from bot.catalog.queries import open_store  # noqa: PLC0415

    open_store(db, seed=None).close()  # made and migrated before the race, as `run` leaves it
    go_at = time.time() + 3.0  # every process started and connected before the gun
    outs = [work / f"sent-{i}.txt" for i in range(processes)]
    children = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                db,
                "--keys",
                str(keys),
                "--out",
                str(out),
                "--seed",
                str(i),
                "--go-at",
                repr(go_at),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for i, out in enumerate(outs)
    ]
    statuses: Counter[str] = Counter()
    for child in children:
        stdout, _ = child.communicate(timeout=1800)
        if child.returncode != 0:
            raise SystemExit(f"a worker failed ({child.returncode})")
        statuses.update(json.loads(stdout.strip().splitlines()[-1]))
    seconds = time.time() - go_at
    sends = Counter(line.strip() for out in outs for line in out.read_text(encoding="utf-8").splitlines())
    store = open_store(db, seed=None)
    recorded = store.db.execute("SELECT count(*) FROM deliveries WHERE state = 'sent'").fetchone()[0]
    store.close()
    return {
        "processes": processes,
        "keys": keys,
        "seconds": round(seconds, 2),
        "sent_once": sum(1 for n in sends.values() if n == 1),
        "duplicates": sum(1 for n in sends.values() if n > 1),
        "missing": keys - len(sends),
        "recorded_sent": int(recorded),
        "statuses": dict(statuses),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, help="racing processes (8; 4 with --quick)")
    parser.add_argument("--keys", type=int, help="messages each tries to deliver (2,000; 200 with --quick)")
    parser.add_argument("--db", help="a PostgreSQL URL (an empty database) instead of one started here")
    parser.add_argument("--quick", action="store_true", help="4 processes, 200 keys (unless given)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--go-at", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.processes = args.processes or (4 if args.quick else 8)
    args.keys = args.keys or (200 if args.quick else 2000)
    if args.worker:
        worker(args.worker, args.keys, args.out, args.seed, args.go_at)
        return 0
    work = args.out or ROOT / "bench" / "out" / f"claims-{time.strftime('%Y%m%d-%H%M%S')}"
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict] = {}
    server = None
    try:
        if args.db:
            pg_url = args.db
        else:
            from tests.support.postgres import Server  # noqa: PLC0415

            print("starting PostgreSQL ...", file=sys.stderr)
            # A folder of its own under /tmp: PostgreSQL runs as its own user, who may not enter `work`.
            server = Server.start(Path(tempfile.mkdtemp(prefix="paperbot-claims-pg-")))
            pg_url = server.new_database()
        for engine, db in (("postgresql", pg_url), ("sqlite", str(work / "race.db"))):
            print(f"{engine}: {args.processes} processes racing for {args.keys} keys ...", file=sys.stderr)
            (work / engine).mkdir(exist_ok=True)
            results[engine] = race(db, args.processes, args.keys, work / engine)
    finally:
        if server is not None:
            server.stop()
            shutil.rmtree(server.folder, ignore_errors=True)
    print("| engine | processes | keys | seconds | sent once | duplicates | missing | recorded sent |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for engine, r in results.items():
        print(
            f"| {engine} | {r['processes']} | {r['keys']} | {r['seconds']:.1f} | {r['sent_once']} | "
            f"{r['duplicates']} | {r['missing']} | {r['recorded_sent']} |"
        )
    ok = all(r["duplicates"] == 0 and r["missing"] == 0 for r in results.values())
    print(f"\ntarget 0 duplicates, 0 missing: {'met' if ok else 'MISSED'}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    (work / "result.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
