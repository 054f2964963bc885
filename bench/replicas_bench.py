"""Replicas: N groups' weekly posts due at one slot, three `paperbot run` on one PostgreSQL database.

    python bench/replicas_bench.py                    # 1,000 groups, 3 replicas, workspace limit 20/s (~6 min)
    python bench/replicas_bench.py --quick            # 40 groups at 5 posts/s (the smoke test, ~3 min)
    python bench/replicas_bench.py --replicas 5 --rounds calm

It starts the Slack stand-in (tests/support/slack_standin.py) with Slack's limits on
chat.postMessage, as bench/groups_bench.py does (one a second per channel, burst 3; a workspace-wide
rate, answered 429 with Retry-After), and a PostgreSQL server of its own (Debian's postgresql-15, as
the tests start it). Then:

1. the floor: a bare client posts one message to each of N channels as fast as the limit lets it
   (groups_bench's floor: the least time the limit itself allows, measured);
2. each round: a new database (the catalog and N groups made with the code's own functions in SQLite,
   then `paperbot copy` into PostgreSQL), a new stand-in, every group's post due at one minute,
   and R `python -m bot run` replicas (HTTP mode, a port each) on that database;
   - `calm`: the replicas post; the time from the slot to the last post, held to the floor;
   - `kill`: once a third of the posts are in, the replica holding the most unfinished claims is
     killed (SIGKILL); the others finish;
3. each group's post counted in the stand-in by channel (its calls) and by metadata (its stored
   messages): exactly once, missing, or more than once; and the database's `sent` rows, waited for
   (a post the killed replica sent but did not record is recorded from the channel's history by the
   replica that takes its row over, at its next check).

Markdown tables go to stdout, progress to stderr, work files to bench/out/replicas-<time>/.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from datetime import UTC, datetime
from multiprocessing import get_context
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # the stand-ins and the PostgreSQL server: tests.support

import groups_bench as gb  # noqa: E402
import synth  # noqa: E402

import bench  # noqa: E402

KILL_AT = 1 / 3  # of the posts in, when the `kill` round kills a replica


def in_flight(url: str) -> dict[str, int]:
    """Unfinished weekly posts by owner (`host:pid:id`), read from the database."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT owner, count(*) FROM deliveries WHERE kind = 'post' AND state != 'sent' AND owner IS NOT NULL "
            "GROUP BY owner"
        ).fetchall()
    return {owner: k for owner, k in rows}


def run_round(
    name: str, args, base: Path, pg, floor: dict, workdir: Path, limits, users: dict, groups: list[str]
) -> dict:
    """One round on a new database and a new stand-in: its posts counted, and what was killed."""
    from tests.support.slack_standin import SlackStandin

    n = len(groups)
    db = workdir / f"{name}.db"
    shutil.copy(base, db)
    slot = gb.slot_ahead(30 + n * 0.03 + args.replicas * 3)
    cron = gb.weekly_cron(slot)
    bench.log(f"{name}: making {n} groups in chat, all posting at {cron} (UTC)")
    gb.make_groups(db, gb.ENV_APART, groups, cron)
    url = pg.new_database()
    copy_seconds = gb.copy_to_postgres(db, url, workdir)
    posted: dict[str, list[float]] = {}
    lock = threading.Lock()

    def on_accept(call) -> None:
        if call.method == "chat.postMessage" and (call.params.get("metadata") or {}).get("event_type") == gb.POST_EVENT:
            with lock:
                posted.setdefault(call.params.get("channel"), []).append(time.time())

    out: dict = {"round": name, "slot": slot.isoformat(), "schedule": cron, "copy_seconds": copy_seconds}
    with ExitStack() as stack:
        slack = stack.enter_context(SlackStandin(channels={*groups, gb.ENV_APART}, users=users, limits=limits))
        bench.log(f"{name}: starting {args.replicas} replicas on one PostgreSQL database")
        replicas = []
        for k in range(args.replicas):
            # The environment's group posts on 1 January: only the N groups are due at the slot.
            replica = gb.start_bot(url, slack.api_url, workdir, f"{name}-replica-{k}", gb.ENV_APART, "0 9 1 1 *")
            stack.callback(replica.stop)
            replicas.append(replica)
        slack.on_accept = on_accept
        wait = (slot - datetime.now(UTC)).total_seconds()
        if wait < 0:
            raise SystemExit("the setup took longer than the slot was ahead: raise the margin in slot_ahead")
        bench.log(f"{name}: waiting {wait:.0f} s for the slot {slot:%H:%M} UTC")
        # Past the floor's threefold, a killed replica's claims wait for the next check (30 s) and more.
        deadline = slot.timestamp() + max(3 * floor["seconds"], 60) + 90
        killed = None
        while time.time() < deadline:
            with lock:
                done = sum(1 for c in groups if c in posted)
            if name == "kill" and killed is None and done >= max(1, int(n * KILL_AT)):
                killed = kill_one(url, replicas, done, slot)
                bench.log(f"{name}: {killed}")
            if done >= n:
                break
            time.sleep(0.1)
        time.sleep(3)  # a second post of any group would come after its first: give it time to show
        # A post the killed replica sent but did not record is recorded by the replica that takes its row
        # over (at its next check, every 30 s), from the channel's history: wait for the database to agree.
        recorded_at = None
        while time.time() < deadline + 60:
            if gb.posts_in_db(url) >= n:
                recorded_at = time.time() - slot.timestamp()
                break
            time.sleep(0.5)
        time.sleep(1)
        with lock:
            times = {c: list(v) for c, v in posted.items()}
        posts = gb.count_posts(slack, groups, times, slot)
        posts["recorded_sent_in_db"] = gb.posts_in_db(url)
        posts["all_recorded_after_slot_s"] = recorded_at
        posts["rate_limited_429"] = slack.rate_limited
        out |= {"posts": posts, "killed": killed}
        out["replicas_alive_at_end"] = sum(1 for r in replicas if r.proc.poll() is None)
        out["memory"] = [bench.proc_status(r.proc.pid) for r in replicas if r.proc.poll() is None]
    bench.log(f"{name}: {out['posts']}")
    return out


def kill_one(url: str, replicas: list, done: int, slot: datetime) -> dict:
    """SIGKILL the replica holding the most unfinished claims (the first, when none holds any)."""
    by_pid = {r.proc.pid: r for r in replicas}
    held: dict[int, int] = {}
    for owner, k in in_flight(url).items():
        try:
            pid = int(owner.split(":")[1])
        except (IndexError, ValueError):
            continue
        if pid in by_pid:
            held[pid] = held.get(pid, 0) + k
    pid = max(held, key=held.__getitem__) if held else replicas[0].proc.pid
    os.kill(pid, signal.SIGKILL)
    by_pid[pid].proc.wait(10)
    return {
        "replica": by_pid[pid].name,
        "after_slot_s": time.time() - slot.timestamp(),
        "posts_in_at_kill": done,
        "its_unfinished_claims": held.get(pid, 0),
        "unfinished_claims_by_replica": {by_pid[p].name: k for p, k in held.items()},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="replicas on one PostgreSQL database: one slot, N posts, a kill")
    p.add_argument("--groups", type=int, default=1000, help="groups, each with a post due at the slot (default 1000)")
    p.add_argument("--replicas", type=int, default=3, help="`paperbot run` processes (default 3)")
    p.add_argument("--workspace-rate", type=float, default=20.0, help="workspace-wide posts a second (default 20)")
    p.add_argument("--papers", type=int, default=500, help="catalog size (default 500)")
    p.add_argument("--rounds", default="calm,kill", help="calm, kill or both (default calm,kill)")
    p.add_argument("--out", type=Path, help="work directory (default: a new one under bench/out/)")
    p.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="40 groups, 200 papers, workspace limit 5/s at most")
    args = p.parse_args(argv)
    if args.quick:
        args.groups, args.papers = min(args.groups, 40), min(args.papers, 200)
        args.workspace_rate = min(args.workspace_rate, 5.0)  # a fan-out of some seconds, to kill a replica in
    rounds = [r.strip() for r in args.rounds.split(",") if r.strip()]
    if args.groups < 3 or args.replicas < 2 or args.workspace_rate <= 0 or not rounds or set(rounds) - {"calm", "kill"}:
        p.error("--groups at least 3, --replicas at least 2, --workspace-rate above 0, --rounds of calm and kill")
    n = args.groups

    from bot.slack import blocks
    from tests.support.slack_standin import PostLimits, SlackStandin

    if blocks.POST_EVENT != gb.POST_EVENT:
        raise SystemExit(f"the weekly post's metadata is now {blocks.POST_EVENT!r}: update groups_bench.POST_EVENT")
    workdir = args.out or HERE / "out" / time.strftime("replicas-%Y%m%d-%H%M%S")
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    argv_shown = argv if argv is not None else sys.argv[1:]
    limits = PostLimits(channel_rate=1.0, channel_burst=3, workspace_rate=args.workspace_rate)
    result: dict = {
        "command": "python bench/replicas_bench.py" + "".join(f" {a}" for a in argv_shown),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "params": {"groups": n, "replicas": args.replicas, "workspace_rate": args.workspace_rate, "rounds": rounds},
        "limits": {
            "channel": "1/s, burst 3",
            "workspace": f"{args.workspace_rate:g}/s, burst {limits._workspace_burst()}",
        },
    }
    bench.log(f"catalog of {args.papers} papers")
    jsonl = workdir / "catalog.jsonl"
    synth.write_jsonl(synth.catalog(args.papers, seed=args.seed), jsonl)
    base = workdir / "catalog.db"
    bench.import_catalog(jsonl, base, workdir)
    groups = [gb.group_channel(i) for i in range(n)]
    floors = [gb.floor_channel(i) for i in range(n)]
    users = {gb.ADMIN: {"is_admin": True}}

    with ExitStack() as stack:
        pool = stack.enter_context(ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")))
        with SlackStandin(channels=set(floors), users=users, limits=limits) as slack:
            bench.log(f"floor: {n} posts to {n} channels at {args.workspace_rate:g}/s")
            floor = pool.submit(gb.floor_posts, slack.api_url, floors).result()
        floor["computed_seconds"] = limits.floor_seconds(n, n)
        result["floor"] = floor
        bench.log(f"floor: {floor['seconds']:.1f} s ({floor['rate_limited']} answered 429)")
        if floor["errors"]:
            raise SystemExit(f"the floor's posts failed: {floor['errors']}")
        pg = gb.start_postgres(workdir)
        stack.callback(lambda: shutil.rmtree(pg.folder, ignore_errors=True))
        stack.callback(pg.stop)
        result["rounds"] = [run_round(name, args, base, pg, floor, workdir, limits, users, groups) for name in rounds]
    result["seconds"] = time.monotonic() - started
    gb.write_out(workdir, result, args.json, report(result))
    return 0


def report(r: dict) -> str:
    f = gb._f
    floor, n, k = r["floor"], r["params"]["groups"], r["params"]["replicas"]
    rounds = r["rounds"]
    lines = [
        f"`{r['command']}` ({r['seconds']:.0f} s; {r['when']})",
        "",
        f"{n} groups' weekly posts due at one minute, {k} `paperbot run` replicas on one PostgreSQL database. "
        f"Stand-in limits on chat.postMessage: per channel {r['limits']['channel']}; workspace "
        f"{r['limits']['workspace']}. Floor, computed from the buckets: {f(floor['computed_seconds'])} s; "
        f"measured (a bare client, 4 threads, honouring Retry-After, {floor['rate_limited']} × 429): "
        f"{f(floor['seconds'])} s.",
        "",
        "| round | " + " | ".join(x["round"] for x in rounds) + " |",
        "| --- |" + " ---: |" * len(rounds),
    ]

    def row(name: str, cell) -> None:
        lines.append(f"| {name} | " + " | ".join(cell(x) for x in rounds) + " |")

    def ratio(x: dict) -> str:
        took = x["posts"]["last_after_slot_s"]
        return f(took / floor["seconds"] if took is not None and floor["seconds"] else None, 2)

    def killed(x: dict) -> str:
        kill = x.get("killed")
        if not kill:
            return "–"
        return (
            f"{kill['replica']} at {f(kill['after_slot_s'])} s, {kill['posts_in_at_kill']} posts in, "
            f"holding {kill['its_unfinished_claims']} claims"
        )

    row("killed (SIGKILL)", killed)
    row("slot → first post", lambda x: f"{f(x['posts']['first_after_slot_s'])} s")
    row("slot → last post", lambda x: f"{f(x['posts']['last_after_slot_s'])} s")
    row("answered 429", lambda x: str(x["posts"]["rate_limited_429"]))
    row(f"last post / measured floor (target ≤ {gb.POSTS_WITHIN})", ratio)
    row(
        "posted exactly once (stand-in calls / stored / db `sent`)",
        lambda x: f"{x['posts']['posted_once']} / {x['posts']['stored_once']} / {x['posts']['recorded_sent_in_db']}",
    )
    row(
        "slot → every post recorded `sent` in the database",
        lambda x: f"{f(x['posts'].get('all_recorded_after_slot_s'))} s",
    )
    row("missing (target 0)", lambda x: str(x["posts"]["missing"]))
    row("posted twice or more (target 0)", lambda x: str(x["posts"]["twice_or_more"]))
    row("replicas alive at the end", lambda x: str(x["replicas_alive_at_end"]))
    row("replicas' RSS at the end, MB", lambda x: ", ".join(f(m["rss_mb"]) for m in x["memory"]))
    row("`paperbot copy` of the round's install, s", lambda x: f(x["copy_seconds"]))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
