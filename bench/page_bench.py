"""Pages never starve chat (issue 29, break 8): Discord replies while 100 clients read the group's page.

    python bench/page_bench.py                         # 40,000 papers, 100 page readers
    python bench/page_bench.py --json out.json         # also write every figure as JSON
    python bench/page_bench.py --quick                 # 2,000 papers, 10 readers, few samples (the smoke test)
    python bench/page_bench.py --bot-root DIR          # the bot of another checkout (say, before the change)

It imports a seeded catalog (bench/synth.py), starts `python -m bot run` with DISCORD_PUBLIC_KEY and
PAPERBOT_PUBLIC_URL (interactions and the page on one port) against the Discord REST stand-in, and
times signed interactions end to end, one after another on one keep-alive connection: first with
no page readers (the baseline), then while the readers (in processes of their own, so that their
Python does not slow the chat client's clock) fetch the page over and over, each on its own
connection: the page itself most often, else a search (`?q=` a word of the catalog) or a tag's page.
Target: every reply under Discord's 3 s. See bench/README.md.

    python bench/page_bench.py --read URL STOPFILE THREADS SEED   # one reader process (started by the bench)
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # the stand-ins: tests.support

from discord_bench import CHANNEL, Client, classify, interaction, pings  # noqa: E402

import bench  # noqa: E402
from bench import Server, base_env, fresh_copy, log, papers_in, proc_status  # noqa: E402

#: Where users reach the bot, as PAPERBOT_PUBLIC_URL says: only its path matters to what is served.
PUBLIC = "https://bench.invalid/reading"
#: Discord's window for an interaction's reply.
REPLY_MS = 3000.0
READER_PROCESSES = 4
READ_TIMEOUT = 60.0
#: What a reader asks for, in turn: the page most often, then a search and a tag's page.
READS = ("page", "page", "page", "search", "tag")
WORDS = ("training", "model", "parallel", "diloco", "训练", "模型", "petrichor", "communication", "memory", "并行")


# -- the readers ----------------------------------------------------------------------


def read(url: str, stop: Path, threads: int, seed: int) -> None:
    """`threads` readers of the page at `url` until `stop` exists; prints their figures as JSON."""
    parts = urlsplit(url)
    results: list[dict] = []
    lock = threading.Lock()
    tags = [f"tag-{k}" for k in range(40)] + ["parallelism-dp"]

    def reader(k: int) -> None:
        rng = random.Random(seed * 1000 + k)
        out: dict = {"ms": [], "status": {}, "bytes": 0}
        i = k
        while not stop.exists():
            kind = READS[i % len(READS)]
            i += 1
            path = parts.path
            if kind == "search":
                path += "?q=" + quote(rng.choice(WORDS) + " " + rng.choice(WORDS))
            elif kind == "tag":
                path += f"?tag={quote(rng.choice(tags))}&page={rng.randint(1, 3)}"
            start = time.perf_counter()
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=READ_TIMEOUT)
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                body = response.read()
                status, size = str(response.status), len(body)
            except (OSError, http.client.HTTPException) as e:
                status, size = type(e).__name__, 0
            finally:
                conn.close()
            out["ms"].append((time.perf_counter() - start) * 1000)
            out["status"][status] = out["status"].get(status, 0) + 1
            out["bytes"] += size
            if status == "503":  # as a browser would, a moment before it tries again (Retry-After is 5 s)
                time.sleep(rng.uniform(0.5, 1.5))
        with lock:
            results.append(out)

    pool = [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(READ_TIMEOUT + 5)
    status: dict[str, int] = {}
    for r in results:
        for key, n in r["status"].items():
            status[key] = status.get(key, 0) + n
    print(json.dumps({"ms": [x for r in results for x in r["ms"]], "status": status,
                      "bytes": sum(r["bytes"] for r in results), "finished": len(results)}))  # fmt: skip


def start_readers(url: str, stop: Path, readers: int, seed: int, env: dict) -> list[subprocess.Popen]:
    processes = min(READER_PROCESSES, readers)
    counts = [readers // processes + (1 if k < readers % processes else 0) for k in range(processes)]
    return [
        subprocess.Popen(
            [sys.executable, str(Path(__file__)), "--read", url, str(stop), str(n), str(seed + k)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for k, n in enumerate(counts)
    ]


def finish_readers(procs: list[subprocess.Popen], seconds: float) -> dict:
    ms: list[float] = []
    status: dict[str, int] = {}
    total_bytes = 0
    for p in procs:
        out, err = p.communicate(timeout=READ_TIMEOUT + 30)
        if p.returncode != 0:
            raise SystemExit(f"a reader process failed ({p.returncode}): {err[-2000:]}")
        r = json.loads(out)
        ms += r["ms"]
        total_bytes += r["bytes"]
        for key, n in r["status"].items():
            status[key] = status.get(key, 0) + n
    return {"requests": len(ms), "per_s": len(ms) / seconds, "status": status, "mb": total_bytes / 1e6,
            **bench.summary(ms)}  # fmt: skip


# -- chat ------------------------------------------------------------------------------


def chat(port: int, mix: list, n: int) -> dict:
    """`n` interactions from `mix`, in turn, one after another on one keep-alive connection."""
    client = Client(port)
    out: dict = {"ms": [], "kinds": {}, "errors": [], "over_3s": 0}
    try:
        for i in range(n):
            ms, status, raw = client.send(mix[i % len(mix)]())
            kind = classify(status, raw)
            out["ms"].append(ms)
            out["kinds"][kind.split(":")[0]] = out["kinds"].get(kind.split(":")[0], 0) + 1
            out["over_3s"] += ms >= REPLY_MS
            if kind.startswith("error") and len(out["errors"]) < 20:
                out["errors"].append(kind)
    finally:
        client.close()
    return {**bench.summary(out.pop("ms")), **out}


# -- the run ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Discord replies while many clients read the group's page")
    p.add_argument("--papers", type=int, default=40_000, help="catalog size (default 40000)")
    p.add_argument("--readers", type=int, default=100, help="concurrent page readers (default 100)")
    p.add_argument("--requests", type=int, default=200, help="chat replies timed in each phase (default 200)")
    p.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    p.add_argument("--out", type=Path, help="work directory; its imported catalog is reused")
    p.add_argument("--bot-root", type=Path, help="run the bot of this checkout (default: this one)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="2000 papers, 10 readers, 30 replies a phase")
    p.add_argument("--read", nargs=4, metavar=("URL", "STOP", "THREADS", "SEED"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.read:
        read(args.read[0], Path(args.read[1]), int(args.read[2]), int(args.read[3]))
        return 0
    if args.quick:
        args.papers, args.readers, args.requests = min(args.papers, 2000), min(args.readers, 10), min(args.requests, 30)

    from bot.catalog.queries import open_store
    from bot.web import feeds
    from tests.support.discord_standin import GUILD, PUBLIC_KEY, TOKEN, DiscordStandin

    workdir = args.out or HERE / "out" / f"page-{args.papers}"
    workdir.mkdir(parents=True, exist_ok=True)
    busy0, own0, started = bench.cpu_busy_seconds(), bench.own_cpu_seconds(), time.monotonic()
    result: dict = {
        "command": "python bench/page_bench.py"
        + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:])),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "loadavg_at_start": os.getloadavg()},
        "params": {k: getattr(args, k) for k in ("papers", "readers", "requests", "seed", "quick")},
        "bot_root": str(args.bot_root or ROOT),
    }
    db = fresh_copy(workdir, args.papers, args.seed, result)
    result["papers_in_db"] = n_papers = papers_in(db)

    rng = random.Random(args.seed)
    reader_id = "1299999999999999999"
    mix = [
        lambda: interaction("tag", reader_id, tag="parallelism-dp"),
        lambda: interaction("search", reader_id, words="training"),
        lambda: interaction("search", reader_id, words="训练"),
        lambda: interaction("show", reader_id, paper=str(rng.randint(1, n_papers))),
        lambda: interaction("week", reader_id),
        lambda: interaction("schedule", reader_id),
    ]
    stop = workdir / "readers.stop"
    with DiscordStandin(channels={CHANNEL}) as discord:
        env = {k: v for k, v in base_env(db).items() if not k.startswith("DISCORD_")}
        if args.bot_root:
            env["PYTHONPATH"] = os.pathsep.join([str(args.bot_root.resolve()), env["PYTHONPATH"]])
        env.update({"DISCORD_TOKEN": TOKEN, "DISCORD_PUBLIC_KEY": PUBLIC_KEY, "DISCORD_API_URL": discord.api_url,
                    "DISCORD_GUILD": GUILD, "PAPERBOT_CHANNEL": CHANNEL})  # fmt: skip
        log("starting `python -m bot run` (Discord, HTTP interactions, the page served)")
        bot = Server([sys.executable, "-m", "bot", "run"], {**env, "PAPERBOT_PUBLIC_URL": PUBLIC}, workdir, "bot")
        try:
            bot.wait_ready(pings)
            store = open_store(db)
            page_url = f"http://127.0.0.1:{bot.port}" + urlsplit(feeds.urls(store, PUBLIC, 1, reader_id)["page"]).path
            store.close()
            first = http.client.HTTPConnection("127.0.0.1", bot.port, timeout=READ_TIMEOUT)
            t0 = time.perf_counter()
            first.request("GET", urlsplit(page_url).path)
            response = first.getresponse()
            result["page"] = {"status": response.status, "bytes": len(response.read()),
                              "first_ms": (time.perf_counter() - t0) * 1000}  # fmt: skip
            first.close()
            log(f"the page: {result['page']}")

            log(f"baseline: {args.requests} chat replies, no page readers")
            result["baseline"] = chat(bot.port, mix, args.requests)

            log(f"{args.readers} page readers, and {args.requests} chat replies meanwhile")
            stop.unlink(missing_ok=True)
            reader_env = {k: v for k, v in env.items() if k != "PAPERBOT_DB"}
            readers = start_readers(page_url, stop, args.readers, args.seed, reader_env)
            t0 = time.monotonic()
            busy_load0 = bench.cpu_busy_seconds()
            bot_cpu0 = bench.process_cpu_seconds(bot.proc.pid)
            time.sleep(2)  # the readers connected and reading before the first timed reply
            try:
                result["with_readers"] = chat(bot.port, mix, args.requests)
            finally:
                stop.touch()
            seconds = time.monotonic() - t0
            result["readers"] = finish_readers(readers, seconds)
            result["with_readers"]["machine_busy_cores"] = (bench.cpu_busy_seconds() - busy_load0) / seconds
            result["with_readers"]["bot_cores"] = (bench.process_cpu_seconds(bot.proc.pid) - bot_cpu0) / seconds
            result["memory"] = proc_status(bot.proc.pid)
        finally:
            stop.touch()
            result["bot_exit_code"] = bot.stop()
    result["seconds"] = time.monotonic() - started
    busy, own = bench.cpu_busy_seconds() - busy0, bench.own_cpu_seconds() - own0
    result["machine"]["others_cores_whole_run"] = max(0.0, busy - own) / result["seconds"]
    result["machine"]["loadavg_at_end"] = os.getloadavg()
    worst = result["with_readers"]["max_ms"]
    errors = result["with_readers"]["kinds"].get("error", 0)
    result["targets"] = [
        {"target": f"every chat reply under {REPLY_MS / 1000:g} s while {args.readers} clients read the page",
         "figure": f"{worst:.0f} ms", "pass": worst < REPLY_MS},
        {"target": "no chat reply failed", "figure": str(errors), "pass": errors == 0},
    ]  # fmt: skip
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    print(report(result))
    return 0


def report(r: dict) -> str:
    f = lambda x, d=1: "-" if x is None else f"{x:.{d}f}"  # noqa: E731
    rd, pg = r["readers"], r["page"]
    lines = [
        f"## Chat while {r['params']['readers']} clients read the page: {r['papers_in_db']} papers",
        "",
        f"`{r['command']}`; {r['machine']['cpus']} cores, Python {r['machine']['python']}; load average at start "
        f"{r['machine']['loadavg_at_start'][0]:.2f}, at end {r['machine']['loadavg_at_end'][0]:.2f}; other "
        f"processes {r['machine']['others_cores_whole_run']:.2f} cores on average. The page: {pg['bytes']:,} bytes, "
        f"first drawn in {pg['first_ms']:.0f} ms.",
        "",
        "| chat replies (tag, search, show, week, schedule in turn) | n | p50 ms | p99 ms | max ms | over 3 s | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, key in (("baseline: no page readers", "baseline"), ("while the page is read", "with_readers")):
        c = r[key]
        lines.append(
            f"| {name} | {c['n']} | {f(c['p50_ms'], 2)} | {f(c['p99_ms'], 2)} | {f(c['max_ms'])} | "
            f"{c['over_3s']} | {c['kinds'].get('error', 0)} |"
        )
    statuses = ", ".join(f"{k}: {v}" for k, v in sorted(rd["status"].items()))
    lines += [
        "",
        "| page readers | requests | requests/s | MB read | p50 ms | p99 ms | max ms | answers |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        f"| {r['params']['readers']} | {rd['requests']} | {rd['per_s']:.0f} | {rd['mb']:.0f} | {f(rd['p50_ms'])} | "
        f"{f(rd['p99_ms'])} | {f(rd['max_ms'])} | {statuses} |",
        "",
        f"Meanwhile the bot used {r['with_readers']['bot_cores']:.2f} cores and the machine "
        f"{r['with_readers']['machine_busy_cores']:.2f} (of {r['machine']['cpus']}).",
        "",
        "| target | figure | verdict |",
        "| --- | ---: | --- |",
    ]
    lines += [f"| {t['target']} | {t['figure']} | {'pass' if t['pass'] else '**miss**'} |" for t in r["targets"]]
    errors = r["baseline"]["errors"] + r["with_readers"]["errors"]
    if errors:
        lines.append(f"- chat errors: {errors[:3]}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
