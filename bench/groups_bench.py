"""Scale: one install with 1,000 reading groups, against a Slack that rate-limits posts.

    python bench/groups_bench.py                       # 1,000 groups, workspace limit 20 posts/s (~4 min)
    python bench/groups_bench.py --quick               # 100 groups, a few samples (~2 min)
    python bench/groups_bench.py --workspace-rate 50   # another workspace-wide limit
    python bench/groups_bench.py --engines sqlite,postgresql   # the N-group bot on each engine, side by side

It starts the Slack stand-in (tests/support/slack_standin.py) with Slack's
limits on chat.postMessage: about one a second per channel with a burst of 3,
and a workspace-wide rate (`--workspace-rate`), answered 429 with Retry-After.
Then, in one run:

1. the floor: a client of its own posts one message to each of N channels
   as fast as the stand-in lets it (4 threads, honouring Retry-After): the
   least time the limit itself allows, measured (and computed from the buckets);
2. two `python -m bot run` processes on copies of one catalog: one with the
   environment's group only, one with N groups (made with the code's own
   group-creation function before it starts), every group's weekly post due
   at the same minute (a weekly slot a minute or two ahead, in UTC; the
   one-group bot posts its one at that minute too, so that both have the
   same week behind them);
3. the N posts: time from the slot to the last one in, each group's post
   exactly once (counted in the stand-in, by channel and by metadata);
4. command latency: signed /paper requests over HTTP (keep-alive, one client,
   blocks of 40 alternating between the two bots), typed in a group's channel;
5. the bots' memory (RSS and peak) after the posts.

With `--engines sqlite,postgresql`, step 2 starts an N-group bot on each engine: the groups are made
once in SQLite, and `paperbot copy` puts that install into a PostgreSQL database of the bench's own
(tests/support/postgres.py); each of those bots posts to a stand-in of its own, and step 4 alternates
among all the bots.

Markdown tables go to stdout, progress to stderr, work files to bench/out/groups-<time>/.
Loopback only; ports from 30000-31999.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack, closing
from datetime import UTC, datetime, timedelta
from multiprocessing import get_context
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # the stand-ins: tests.support

import loadgen  # noqa: E402
import synth  # noqa: E402

import bench  # noqa: E402  (helpers: Server, base_env, import_catalog, proc_status, log, pct)

SECRET, TOKEN = bench.SECRET, bench.TOKEN
ADMIN = "UBENCHADMIN"
ONE_CHANNEL = "C0ONEGROUP"  # the one-group bot's channel
ENV_APART = "C0ENVAPART"  # with --env-apart: group 1's channel, posting at no slot near the others'
POST_EVENT = "paper_of_the_week"  # bot.slack.blocks.POST_EVENT, checked at start
POSTS_WITHIN = 1.5  # x the floor
LATENCY_WITHIN = 1.2  # x the one-group bot's p50
BLOCK = 40


def group_channel(i: int) -> str:
    return f"C0G{i:05d}"


def floor_channel(i: int) -> str:
    return f"C0F{i:05d}"


# -- the groups --------------------------------------------------------------------


def make_groups(db: Path, env_channel: str, channels: list[str], schedule: str) -> None:
    """Groups 2..N in `channels` (group 1 is the environment's, in `env_channel`), each posting at
    `schedule` in UTC, made as `/paper group start` and `group set schedule` make them (the code's own
    functions, without their announcements), before the bot starts."""
    from zoneinfo import ZoneInfo

    from bot.calendar import MeetingCalendar, PostSchedule
    from bot.catalog.queries import open_store
    from bot.schedule import groups

    utc = ZoneInfo("UTC")
    post = PostSchedule(schedule, utc)
    env = groups.Group(groups.ENV, env_channel, MeetingCalendar(utc, post.default_meeting(), post))
    store = open_store(db)
    try:
        for channel in channels:
            group, how = groups.start(store, env, channel, "slack", ADMIN)
            if how != "started":
                raise SystemExit(f"{channel}: group start answered {how!r}")
            groups.change(store, group, "schedule", schedule, lambda word: None)
    finally:
        store.close()


def slot_ahead(seconds: float) -> datetime:
    """The first whole minute at least `seconds` from now (UTC)."""
    at = datetime.now(UTC) + timedelta(seconds=seconds)
    return (at + timedelta(minutes=1)).replace(second=0, microsecond=0)


def weekly_cron(at: datetime) -> str:
    return f"{at.minute} {at.hour} * * {at.strftime('%a').lower()}"


# -- the floor: the stand-in's own minimum ---------------------------------------------


def floor_posts(api_url: str, channels: list[str], threads: int = 4, tokens: dict[str, str] | None = None) -> dict:
    """Post one message to each channel as fast as the stand-in allows, honouring Retry-After (`tokens`:
    each channel's bot token, a hosted install's workspaces'; default the one install's). Runs in a
    worker process. Returns seconds, 429s seen."""
    from urllib.parse import urlsplit

    parts = urlsplit(api_url)
    todo = list(reversed(channels))
    lock = threading.Lock()
    seen = {"429": 0, "errors": []}
    block = [{"type": "section", "text": {"type": "mrkdwn", "text": "*The paper of the week*"}}]

    def worker() -> None:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        try:
            while True:
                with lock:
                    if not todo:
                        return
                    channel = todo.pop()
                body = json.dumps({"channel": channel, "text": "floor", "blocks": block}).encode()
                while True:
                    conn.request(
                        "POST",
                        "/api/chat.postMessage",
                        body=body,
                        headers={
                            "Content-Type": "application/json",
                            "Authorization": f"Bearer {(tokens or {}).get(channel, TOKEN)}",
                        },
                    )
                    response = conn.getresponse()
                    data = response.read()
                    if response.status == 429:
                        with lock:
                            seen["429"] += 1
                        time.sleep(float(response.getheader("Retry-After") or 1))
                        continue
                    if response.status != 200 or not json.loads(data).get("ok"):
                        with lock:
                            seen["errors"].append(data[:200].decode())
                    break
        finally:
            conn.close()

    start = time.perf_counter()
    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return {"seconds": time.perf_counter() - start, "rate_limited": seen["429"], "errors": seen["errors"][:5]}


# -- command latency ----------------------------------------------------------------


class ChannelClient(loadgen.Client):
    """loadgen's client, typing each command in a channel of the caller's choice."""

    def command_in(self, channel: str, text: str, user: str) -> tuple[float, int, bytes]:
        import hashlib
        import hmac
        from urllib.parse import urlencode

        form = urlencode(
            {
                "team_id": "T0TEST",
                "channel_id": channel,
                "user_id": user,
                "command": "/paper",
                "text": text,
                "response_url": "https://hooks.slack.invalid/commands/T0TEST/1/x",
                "trigger_id": loadgen.trigger_id(),
                "api_app_id": "A0TEST",
            }
        ).encode()
        start = time.perf_counter()
        ts = str(int(time.time()))
        sig = "v0=" + hmac.new(self.secret, b"v0:" + ts.encode() + b":" + form, hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": sig,
        }
        return loadgen.timed_post(self.conn, self.path, form, headers, start)


def latency(targets: dict[str, tuple[str, list[tuple[str, str, str]]]], warmup: int = 5) -> dict:
    """For each label: (url, [(channel, text, user)]). Blocks of BLOCK requests to each bot in turn
    (one keep-alive connection each), so both are measured in the same seconds. Runs in a worker."""
    clients = {label: ChannelClient(url, SECRET) for label, (url, _) in targets.items()}
    out = {label: {"ms": [], "errors": [], "kinds": {}} for label in targets}
    try:
        for label, (_, lines) in targets.items():
            for line in lines[:warmup]:
                clients[label].command_in(*line)
        n = max(len(lines) for _, lines in targets.values())
        for start in range(warmup, n, BLOCK):
            for label, (_, lines) in targets.items():
                for line in lines[start : start + BLOCK]:
                    ms, status, body = clients[label].command_in(*line)
                    loadgen._count(out[label], ms, loadgen.classify(status, body))
    finally:
        for client in clients.values():
            client.close()
    for part in out.values():
        part["errors"] = part["errors"][:10]
    return out


# -- the run ------------------------------------------------------------------------


def start_bot(db: Path | str, api_url: str, workdir: Path, name: str, channel: str, schedule: str) -> bench.Server:
    env = bench.base_env(db)
    env.update(
        {
            "SLACK_BOT_TOKEN": TOKEN,
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": api_url,
            "PAPERBOT_CHANNEL": channel,
            "PAPERBOT_SCHEDULE": schedule,
            "PAPERBOT_ADMINS": ADMIN,
        }
    )
    server = bench.Server([sys.executable, "-m", "bot", "run"], env, workdir, name)
    server.wait_ready(bench.healthz)
    return server


def posts_in_db(db: Path | str) -> int:
    sql = "SELECT count(*) FROM deliveries WHERE kind = 'post' AND state = 'sent'"
    if isinstance(db, str):  # a PostgreSQL URL
        import psycopg

        with psycopg.connect(db) as conn:
            return conn.execute(sql).fetchone()[0]
    with closing(sqlite3.connect(db, timeout=30)) as conn:
        return conn.execute(sql).fetchone()[0]


def start_postgres(workdir: Path):
    """A PostgreSQL server of the bench's own (Debian's postgresql-15, a Unix socket, fsync off as the
    tests run it), in a folder of the system's temporary one that its user can reach."""
    import tempfile

    from tests.support.postgres import Server

    return Server.start(Path(tempfile.mkdtemp(prefix="paperbot-groups-bench-")))


def copy_to_postgres(db: Path, url: str, workdir: Path) -> float:
    """`paperbot copy DB URL`, a real process: its wall seconds."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bot", "copy", str(db), url],
        env=bench.base_env(db),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        raise SystemExit(f"paperbot copy failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return time.perf_counter() - start


def label_of(engine: str, engines: list[str]) -> str:
    """The N-group bot's label: `many` on the first engine, `many-<engine>` on the others."""
    return "many" if engine == engines[0] else f"many-{engine}"


def write_out(workdir: Path, result: dict, json_path: Path | None, text: str) -> None:
    """A run's figures into its work folder (and `json_path`, when asked), its report there and on stdout."""
    (workdir / "result.json").write_text(json.dumps(result, indent=2))
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(result, indent=2))
    (workdir / "report.md").write_text(text)
    print(text)


def main(argv: list[str] | None = None) -> int:  # noqa: C901, PLR0915 (a branch per option and report section)
    p = argparse.ArgumentParser(description="paperbot at scale: many groups, a rate-limited Slack")
    p.add_argument("--groups", type=int, default=1000, help="groups in the install (default 1000)")
    p.add_argument("--workspace-rate", type=float, default=20.0, help="workspace-wide posts a second (default 20)")
    p.add_argument("--papers", type=int, default=3000, help="catalog size (default 3000)")
    p.add_argument("--requests", type=int, default=200, help="latency samples per command and bot (default 200)")
    p.add_argument("--out", type=Path, help="work directory (default: a new one under bench/out/)")
    p.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="100 groups, 30 samples")
    p.add_argument(
        "--env-apart",
        action="store_true",
        help="all N groups started in chat, and group 1 (the environment's) on a schedule of its own",
    )
    p.add_argument(
        "--engines",
        default="sqlite",
        help="the N-group bot on each of these engines, side by side (sqlite,postgresql): the same catalog "
        "and groups, PostgreSQL's copied from SQLite's by `paperbot copy`, each bot with a stand-in of its own",
    )
    args = p.parse_args(argv)
    if args.quick:
        args.groups, args.requests, args.papers = min(args.groups, 100), min(args.requests, 30), min(args.papers, 500)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if args.groups < 1 or args.workspace_rate <= 0:
        p.error("--groups must be at least 1 and --workspace-rate above 0")
    if not engines or set(engines) - {"sqlite", "postgresql"} or len(set(engines)) != len(engines):
        p.error("--engines: sqlite and/or postgresql, each once")
    n = args.groups

    from bot.slack import blocks
    from tests.support.slack_standin import PostLimits, SlackStandin

    if blocks.POST_EVENT != POST_EVENT:
        raise SystemExit(f"the weekly post's metadata is now {blocks.POST_EVENT!r}: update POST_EVENT")

    workdir = args.out or HERE / "out" / time.strftime("groups-%Y%m%d-%H%M%S")
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    argv_shown = argv if argv is not None else sys.argv[1:]
    result: dict = {
        "command": "python bench/groups_bench.py" + "".join(f" {a}" for a in argv_shown),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "params": {
            "groups": n,
            "workspace_rate": args.workspace_rate,
            "requests": args.requests,
            "env_apart": args.env_apart,
            "engines": engines,
        },
    }
    limits = PostLimits(channel_rate=1.0, channel_burst=3, workspace_rate=args.workspace_rate)
    result["limits"] = {
        "channel": "1/s, burst 3",
        "workspace": f"{args.workspace_rate:g}/s, burst {limits._workspace_burst()}",
    }

    bench.log(f"catalog of {args.papers} papers")
    papers = synth.catalog(args.papers, seed=args.seed)
    jsonl = workdir / "catalog.jsonl"
    synth.write_jsonl(papers, jsonl)
    del papers
    base = workdir / "catalog.db"
    bench.import_catalog(jsonl, base, workdir)
    db_one, db_many = workdir / "one.db", workdir / "many.db"
    for db in (db_one, db_many):
        shutil.copy(base, db)

    groups = [group_channel(i) for i in range(n)]
    # Group 1 is one of the N, posting at the same minute; or (--env-apart) it is elsewhere, at a slot
    # of its own (1 January), and the N groups are all started in chat.
    env_channel, chat = (ENV_APART, groups) if args.env_apart else (groups[0], groups[1:])
    floors = [floor_channel(i) for i in range(n)]
    users = {ADMIN: {"is_admin": True}, **{f"UM{k}": {} for k in range(50)}}
    ctx = get_context("spawn")
    labels = {engine: label_of(engine, engines) for engine in engines}
    posted: dict[str, dict[str, list[float]]] = {engine: {} for engine in engines}
    posted_lock = threading.Lock()

    def on_accept(engine: str):
        def seen(call) -> None:
            if call.method == "chat.postMessage":
                meta = call.params.get("metadata") or {}
                if meta.get("event_type") == POST_EVENT:
                    with posted_lock:
                        posted[engine].setdefault(call.params.get("channel"), []).append(time.time())

        return seen

    with ExitStack() as stack:
        # One stand-in for each N-group bot (the one-group bot and the floor share the first): each
        # engine's bot meets the same limits, alone.
        slacks = {
            engine: stack.enter_context(
                SlackStandin(channels={*groups, *floors, ONE_CHANNEL, ENV_APART}, users=users, limits=limits)
            )
            for engine in engines
        }
        slack = slacks[engines[0]]
        pool = stack.enter_context(ProcessPoolExecutor(max_workers=1, mp_context=ctx))
        pool.submit(time.sleep, 0).result()
        # The floor runs first, with the stand-in to itself; then its buckets fill up again.
        bench.log(f"floor: {n} posts to {n} channels at {args.workspace_rate:g}/s")
        floor = pool.submit(floor_posts, slack.api_url, floors).result()
        floor["computed_seconds"] = limits.floor_seconds(n, n)
        result["floor"] = floor
        bench.log(f"floor: {floor['seconds']:.1f} s ({floor['rate_limited']} answered 429)")
        if floor["errors"]:
            raise SystemExit(f"the floor's posts failed: {floor['errors']}")

        # The slot: far enough ahead for the groups to be made, copied and the bots to start.
        slot = slot_ahead(30 + n * 0.02 + (20 + n * 0.01) * ("postgresql" in engines))
        cron = weekly_cron(slot)
        result["slot"] = {"at": slot.isoformat(), "schedule": cron}
        bench.log(f"making {len(chat)} groups in chat, all posting at {cron} (UTC)")
        t = time.perf_counter()
        make_groups(db_many, env_channel, chat, cron)
        result["make_groups_seconds"] = time.perf_counter() - t
        dbs: dict[str, Path | str] = {"sqlite": db_many}
        if "postgresql" in engines:
            pg = start_postgres(workdir)
            stack.callback(lambda: shutil.rmtree(pg.folder, ignore_errors=True))
            stack.callback(pg.stop)
            dbs["postgresql"] = pg.new_database()
            bench.log("paperbot copy: the install with its groups into PostgreSQL")
            result["copy_seconds"] = copy_to_postgres(db_many, dbs["postgresql"], workdir)

        bench.log(f"starting `python -m bot run`: one group, and all of them on {', '.join(engines)}")
        one = start_bot(db_one, slack.api_url, workdir, "bot-one", ONE_CHANNEL, cron)
        stack.callback(one.stop)
        env_cron = "0 9 1 1 *" if args.env_apart else cron
        many = {}
        for engine in engines:
            many[engine] = start_bot(
                dbs[engine], slacks[engine].api_url, workdir, f"bot-{n}-{engine}", env_channel, env_cron
            )
            stack.callback(many[engine].stop)
        bots = {"one": one, **{labels[e]: many[e] for e in engines}}
        for engine in engines:
            slacks[engine].on_accept = on_accept(engine)

        result["memory_before"] = {label: bench.proc_status(b.proc.pid) for label, b in bots.items()}
        early = sum(len(v) for per in posted.values() for v in per.values())
        if early:
            raise SystemExit(f"{early} posts went out before their slot: the run cannot time the slot")
        wait = (slot - datetime.now(UTC)).total_seconds()
        if wait < 0:
            raise SystemExit("the setup took longer than the slot was ahead: raise the margin in slot_ahead")
        bench.log(f"waiting {wait:.0f} s for the slot {slot:%H:%M} UTC")
        deadline = slot.timestamp() + max(3 * floor["seconds"], 60) + 30
        while time.time() < deadline:
            with posted_lock:
                done = min(sum(1 for c in groups if c in posted[e]) for e in engines)
            if done >= n:
                break
            time.sleep(0.2)
        time.sleep(2)  # a second post of any group would come after its first: give it time to show
        result["engines"] = {}
        for engine in engines:
            with posted_lock:
                times = {c: list(v) for c, v in posted[engine].items()}
            posts = count_posts(slacks[engine], groups, times, slot)
            posts["recorded_sent_in_db"] = posts_in_db(dbs[engine])
            posts["rate_limited_429"] = slacks[engine].rate_limited - (
                floor["rate_limited"] if engine == engines[0] else 0
            )
            result["engines"][engine] = {"posts": posts}
            bench.log(f"posts on {engine}: {posts}")
        result["posts"] = result["engines"][engines[0]]["posts"]
        result["memory_after_posts"] = {label: bench.proc_status(b.proc.pid) for label, b in bots.items()}

        # Latency: typed in the one group's channel, and in a random group's channel of the many.
        rng = random.Random(args.seed)
        commands = ["week", "schedule", "group", "show {paper}", "mine", "groups"]
        r = args.requests + 5
        rows = {}
        for command in commands:
            bench.log(f"latency: {command}")

            def line(channel: str, command: str = command) -> tuple[str, str, str]:
                return channel, command.format(paper=rng.randint(1, args.papers)), f"UM{rng.randrange(50)}"

            targets = {"one": (one.url, [line(ONE_CHANNEL) for _ in range(r)])}
            for engine in engines:
                targets[labels[engine]] = (many[engine].url, [line(rng.choice(groups)) for _ in range(r)])
            out = pool.submit(latency, targets).result()
            rows[command] = {
                label: {
                    "p50": bench.pct(o["ms"], 50),
                    "p99": bench.pct(o["ms"], 99),
                    "errors": o["errors"],
                    "kinds": o["kinds"],
                }
                for label, o in out.items()
            }
        result["latency"] = rows
        result["memory_after"] = {label: bench.proc_status(b.proc.pid) for label, b in bots.items()}
    result["seconds"] = time.monotonic() - started
    write_out(workdir, result, args.json, report(result))
    return 0


def count_posts(slack, groups: list[str], times: dict[str, list[float]], slot: datetime) -> dict:
    """Each group's weekly post, counted in the stand-in's calls (`times`, by channel) and in the
    messages it stored (by metadata): once, missing, or more than once; and when they came."""
    per_group = [len(times.get(c, [])) for c in groups]
    stored = [
        sum(1 for m in slack.messages(c) if (m.get("metadata") or {}).get("event_type") == POST_EVENT) for c in groups
    ]
    all_times = sorted(x for c in groups for x in times.get(c, []))
    return {
        "groups": len(groups),
        "posted_once": sum(1 for k in per_group if k == 1),
        "missing": sum(1 for k in per_group if k == 0),
        "twice_or_more": sum(1 for k in per_group if k > 1),
        "stored_once": sum(1 for k in stored if k == 1),
        "first_after_slot_s": (all_times[0] - slot.timestamp()) if all_times else None,
        "last_after_slot_s": (all_times[-1] - slot.timestamp()) if all_times else None,
        "first_to_last_s": (all_times[-1] - all_times[0]) if all_times else None,
    }


def _f(x, digits: int = 1) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def report(r: dict) -> str:
    n, floor = r["params"]["groups"], r["floor"]
    engines = r["params"].get("engines", ["sqlite"])
    labels = [label_of(e, engines) for e in engines]
    measured, computed = floor["seconds"], floor["computed_seconds"]
    per = {e: r["engines"][e]["posts"] for e in engines}

    def posts_row(name: str, cell) -> str:
        return f"| {name} | " + " | ".join(cell(per[e]) for e in engines) + " |"

    def ratio(p: dict) -> str:
        took = p["last_after_slot_s"]
        return _f(took / measured if took is not None and measured else None, 2)

    lines = [
        f"`{r['command']}` ({r['seconds']:.0f} s; {r['when']})",
        "",
        f"Stand-in limits on chat.postMessage: per channel {r['limits']['channel']}; workspace {r['limits']['workspace']}"
        + ("; each engine's bot posts to a stand-in of its own." if len(engines) > 1 else "."),
        "",
        f"Groups, posts due at the same minute ({r['slot']['schedule']} UTC)"
        + (", all started in chat, group 1 at a slot of its own" if r["params"].get("env_apart") else "")
        + f": {n}. Floor, computed from the stand-in's buckets: {_f(computed)} s; measured (a bare client, "
        f"4 threads, honouring Retry-After, {floor['rate_limited']} × 429): {_f(measured)} s."
        + (
            f" `paperbot copy` of the install into PostgreSQL: {_f(r.get('copy_seconds'))} s."
            if "copy_seconds" in r
            else ""
        ),
        "",
        "| posts | " + " | ".join(engines) + " |",
        "| --- |" + " ---: |" * len(engines),
        posts_row("bot: slot → first post", lambda p: f"{_f(p['first_after_slot_s'])} s"),
        posts_row("bot: slot → last post", lambda p: f"{_f(p['last_after_slot_s'])} s"),
        posts_row("answered 429", lambda p: str(p["rate_limited_429"])),
        posts_row(f"bot / measured floor (target ≤ {POSTS_WITHIN})", ratio),
        posts_row(
            "posted exactly once (stand-in calls / stored / db `sent`)",
            lambda p: f"{p['posted_once']} / {p['stored_once']} / {p['recorded_sent_in_db']}",
        ),
        posts_row("missing, posted twice or more", lambda p: f"{p['missing']}, {p['twice_or_more']}"),
        "",
    ]
    heads = "| command (signed HTTP, keep-alive) | 1 group p50 ms |" + "".join(
        f" {n} groups, {e}: p50 ms | ratio to 1 group (target ≤ {LATENCY_WITHIN}) |" for e in engines
    )
    compare = len(engines) > 1
    if compare:
        heads += f" {engines[1]} / {engines[0]} p50 (target ≤ 1.5) |"
    heads += " 1 group p99 |" + "".join(f" {e} p99 (target < 50) |" for e in engines) + " errors |"
    lines += [heads, "| --- |" + " ---: |" * (heads.count("|") - 2)]
    for command, row in r["latency"].items():
        one = row["one"]
        cells = [_f(one["p50"], 2)]
        for label in labels:
            many = row[label]
            cells += [_f(many["p50"], 2), _f(many["p50"] / one["p50"] if one["p50"] and many["p50"] else None, 2)]
        if compare:
            a, b = row[labels[0]]["p50"], row[labels[1]]["p50"]
            cells.append(_f(b / a if a and b else None, 2))
        cells.append(_f(one["p99"], 2))
        cells += [_f(row[label]["p99"], 2) for label in labels]
        cells.append(str(sum(len(row[label]["errors"]) for label in ["one", *labels])))
        shown = f"`{command}`" + (" (extra: lists every group)" if command == "groups" else "")
        lines.append(f"| {shown} | " + " | ".join(cells) + " |")
    mem = r["memory_after"]
    lines += [
        "",
        "| bot memory (MB) | 1 group | " + " | ".join(f"{n} groups, {e}" for e in engines) + " |",
        "| --- |" + " ---: |" * (1 + len(engines)),
        "| RSS at start | " + " | ".join(_f(r["memory_before"][x]["rss_mb"]) for x in ["one", *labels]) + " |",
        "| RSS after the posts | "
        + " | ".join(_f(r["memory_after_posts"][x]["rss_mb"]) for x in ["one", *labels])
        + " |",
        "| RSS / peak at the end | "
        + " | ".join(f"{_f(mem[x]['rss_mb'])} / {_f(mem[x]['hwm_mb'])}" for x in ["one", *labels])
        + " |",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
