"""paperbot's Discord HTTP-interactions benchmark: a synthetic catalog, the real import, the real server.

    python bench/discord_bench.py                      # 100,000 papers, 16 clients for 30 s
    python bench/discord_bench.py --json out.json      # also write every figure as JSON
    python bench/discord_bench.py --quick              # 2,000 papers, few samples (the smoke test runs this)

It imports a seeded catalog (bench/synth.py) with `python -m bot import` (reused from --out if it is
there), starts `python -m bot run` with DISCORD_PUBLIC_KEY against the Discord REST stand-in (in this
process), and times signed interactions end to end (Ed25519 signing, HTTP, waitress, DiscordDoor, the
command, the reply). The floor, measured in the same run in blocks alternating with each command's,
is the same stack answering a fixed reply: bot.web.http_door's waitress server and DiscordDoor's
verification before a WSGI app that answers, for each command, a fixed JSON reply of the size of
the bot's own reply to it. Then 16 concurrent clients send a mix of commands. Every body is
unique (a fresh interaction id) and signed with the stand-in's test key. See bench/README.md.

    python bench/discord_bench.py --serve-floor PORT REPLIES.json   # the floor server (started by the bench)
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # the stand-ins: tests.support

import loadgen  # noqa: E402

import bench  # noqa: E402
from bench import Server, base_env, first_monday, fresh_copy, log, papers_in, proc_status  # noqa: E402

PATH = "/discord/interactions"
CHANNEL = "1000000000000000003"
PREFILL_WEEKS = 26  # a full schedule: `schedule` lists 26 presenters
SIGNUP_WEEK_OFFSET = PREFILL_WEEKS + 4
BLOCK = 20  # requests a block: each row alternates blocks of its command and of the floor
TIMEOUT = 10.0

# Targets of the issue (19, item 8).
MEDIAN_VS_FLOOR = 3.0
P99_MS = 50.0
LOAD_RATE = 200.0


# -- interactions -----------------------------------------------------------------


def interaction(sub: str, user: str, *, focused: str | None = None, **options: str) -> dict:
    """`/paper <sub> ...` as Discord sends it, with an id and token of its own (a unique body)."""
    from tests.support.discord_standin import slash

    body = slash(sub, user, focused=focused, **options)
    n = random.getrandbits(62)
    body["id"] = str(1_200_000_000_000_000_000 + n)
    body["token"] = f"itoken-{n:x}-{time.time_ns()}"
    return body


def classify(status: int, raw: bytes) -> str:
    """'ok', 'signed-up', 'choices', or 'error: ...': what a member would see."""
    if status != 200:
        return f"error: HTTP {status} {raw[:120]!r}"
    try:
        reply = json.loads(raw)
    except ValueError:
        return f"error: not JSON {raw[:120]!r}"
    if reply.get("type") == 8:
        return "choices" if reply.get("data", {}).get("choices") else "error: no choices"
    if reply.get("type") != 4:
        return f"error: reply type {reply.get('type')!r}"
    data = reply.get("data") or {}
    text = (data.get("content") or "") + json.dumps(data.get("embeds") or [], ensure_ascii=False)
    if "Something went wrong" in text:
        return "error: the bot's apology"
    if "You're signed up" in text:
        return "signed-up"
    return "ok" if text.strip("[]") else "error: an empty reply"


class Client:
    """One keep-alive connection; every interaction signed as Discord signs it (timed with it)."""

    def __init__(self, port: int):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)

    def send(self, body: dict) -> tuple[float, int, bytes]:
        from tests.support.discord_standin import sign

        start = time.perf_counter()
        raw = json.dumps(body).encode()
        return loadgen.timed_post(self.conn, PATH, raw, sign(raw), start)

    def close(self) -> None:
        self.conn.close()


# -- the floor server ----------------------------------------------------------------


def floor_app(replies: dict[str, bytes], public_key: str):
    """DiscordDoor's verification, then the fixed reply for the subcommand (or "autocomplete")."""
    from bot.discord.door import DiscordDoor
    from bot.web.http_door import Refused, refuse

    door = DiscordDoor(public_key)

    def application(environ, start_response):
        try:
            found = door.admit(environ)
        except Refused as refusal:
            return refuse(environ, start_response, refusal)
        if found["type"] == 1:
            data = b'{"type": 1}'
        else:
            sub = found["data"]["options"][0]["name"]
            data = replies["autocomplete" if found["type"] == 4 else sub]
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]

    return application


def serve_floor(port: int, replies_path: Path) -> None:
    from bot.web import http_door

    replies = {k: v.encode() for k, v in json.loads(replies_path.read_text(encoding="utf-8")).items()}
    server = http_door.http_server(floor_app(replies, os.environ["DISCORD_PUBLIC_KEY"]), port, host="127.0.0.1")
    print("ready", flush=True)
    server.run()


def pings(server: Server) -> bool:
    from tests.support.discord_standin import ping

    client = Client(server.port)
    try:
        ms, status, raw = client.send(ping())
    finally:
        client.close()
    return status == 200 and json.loads(raw) == {"type": 1}


# -- measuring -----------------------------------------------------------------------


def interleaved(bot_port: int, floor_port: int, make, floor_make, n: int, warm: int) -> dict:
    """`n` interactions made by `make` to the bot, in blocks of BLOCK, each block after as many made by
    `floor_make` to the floor; the first `warm` of each are not counted."""
    bot, floor = Client(bot_port), Client(floor_port)
    out: dict = {"ms": [], "floor_ms": [], "kinds": {}, "errors": []}
    try:
        for _ in range(warm):
            bot.send(make())
            floor.send(floor_make())
        for start in range(0, n - warm, BLOCK):
            part = range(start, min(start + BLOCK, n - warm))
            for _ in part:
                ms, status, raw = floor.send(floor_make())
                out["floor_ms"].append(ms)
                if classify(status, raw).startswith("error"):
                    out["errors"].append(f"floor: {classify(status, raw)}")
            for _ in part:
                ms, status, raw = bot.send(make())
                kind = classify(status, raw)
                out["ms"].append(ms)
                out["kinds"][kind.split(":")[0]] = out["kinds"].get(kind.split(":")[0], 0) + 1
                if kind.startswith("error"):
                    out["errors"].append(kind)
    finally:
        bot.close()
        floor.close()
    out["errors"] = out["errors"][:20]
    return out


def load(port: int, mix: list, seconds: float, threads: int) -> dict:
    """`threads` clients, each sending interactions made by `mix` round-robin for `seconds`."""
    results: list[dict] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client_thread(k: int) -> None:
        client = Client(port)
        ms, kinds, errors, i = [], {}, [], k
        while time.monotonic() < deadline:
            t, status, raw = client.send(mix[i % len(mix)]())
            i += 1
            kind = classify(status, raw)
            ms.append(t)
            kinds[kind.split(":")[0]] = kinds.get(kind.split(":")[0], 0) + 1
            if kind.startswith("error") and len(errors) < 20:
                errors.append(kind)
        client.close()
        with lock:
            results.append({"ms": ms, "kinds": kinds, "errors": errors})

    start = time.monotonic()
    pool = [threading.Thread(target=client_thread, args=(k,), daemon=True) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(seconds + 2 * TIMEOUT)
    elapsed = time.monotonic() - start
    ms = [x for r in results for x in r["ms"]]
    kinds: dict[str, int] = {}
    for r in results:
        for key, n in r["kinds"].items():
            kinds[key] = kinds.get(key, 0) + n
    errors = [e for r in results for e in r["errors"]][:20]
    if len(results) < threads:
        errors.append(f"{threads - len(results)} client threads did not finish")
    return {
        "commands": len(ms),
        "commands_per_s": len(ms) / elapsed,
        "errors": kinds.get("error", 0) + threads - len(results),
        "error_samples": errors,
        "kinds": kinds,
        **bench.summary(ms),
    }


# -- the run -------------------------------------------------------------------------


def profile(db: Path, sub: str, options: list[str], n: int, limit: int) -> None:
    """cProfile of the bot's WSGI application (bot.discord.serve.wsgi: DiscordDoor's check, the
    command on the work lane, the reply's JSON) over `n` signed interactions, in process; waitress
    and HTTP left out.
    Each interaction is `/paper SUB name=value ...`; "name~=value" makes that option the focused one
    (an autocomplete)."""
    import cProfile
    import io
    import pstats

    from bot.catalog.queries import open_store
    from bot.discord.app import DiscordBot
    from bot.discord.serve import wsgi
    from bot.discord.settings import DiscordSettings
    from tests.support.discord_standin import GUILD, PUBLIC_KEY, TOKEN, DiscordStandin, sign

    focused = next((o.split("~=")[0] for o in options if "~=" in o), None)
    given = dict(o.replace("~=", "=").split("=", 1) for o in options)
    with DiscordStandin(channels={CHANNEL}) as discord:
        env = {"DISCORD_TOKEN": TOKEN, "DISCORD_PUBLIC_KEY": PUBLIC_KEY, "DISCORD_API_URL": discord.api_url}
        env.update({"DISCORD_GUILD": GUILD, "PAPERBOT_DB": str(db), "PAPERBOT_CHANNEL": CHANNEL})
        settings = DiscordSettings.load({**env, "PAPERBOT_TIMEZONE": "UTC"}, dotenv=None)
        store = open_store(settings.db_path)
        bot = DiscordBot(settings, store)
        app = wsgi(bot, PUBLIC_KEY)

        def environ() -> dict:
            raw = json.dumps(interaction(sub, "1299999999999999999", focused=focused, **given)).encode()
            headers = sign(raw)
            return {
                "REQUEST_METHOD": "POST",
                "PATH_INFO": PATH,
                "CONTENT_LENGTH": str(len(raw)),
                "wsgi.input": io.BytesIO(raw),
                "HTTP_X_SIGNATURE_ED25519": headers["X-Signature-Ed25519"],
                "HTTP_X_SIGNATURE_TIMESTAMP": headers["X-Signature-Timestamp"],
            }

        # The command runs on the bot's "work" lane: a second profiler, enabled in that thread for each.
        work = cProfile.Profile()
        answer = bot._answer

        def profiled_answer(*args):
            work.enable()
            try:
                return answer(*args)
            finally:
                work.disable()

        status = []
        for _ in range(5):
            app(environ(), lambda s, h: status.append(s))
        environs = [environ() for _ in range(n)]
        bot._answer = profiled_answer
        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.enable()
        for e in environs:
            app(e, lambda s, h: status.append(s))
        profiler.disable()
        elapsed = time.perf_counter() - start
        assert set(status) == {"200 OK"}, set(status)
        print(f"/paper {sub} {' '.join(options)}: {elapsed / n * 1000:.2f} ms a request under cProfile ({n})")
        print("## the request's thread (waitress's, here the caller's): the door, the wait, the JSON")
        pstats.Stats(profiler).strip_dirs().sort_stats("cumulative").print_stats(limit)
        print("## the work lane: the command and its reply")
        pstats.Stats(work).strip_dirs().sort_stats("cumulative").print_stats(limit)
        bot.close(5)
        store.close()


def main(argv: list[str] | None = None) -> int:  # noqa: C901 (a branch per option and report section)
    p = argparse.ArgumentParser(description="paperbot's Discord HTTP-interactions benchmark (bench/README.md)")
    p.add_argument("--papers", type=int, default=100_000, help="catalog size (default 100000)")
    p.add_argument("--requests", type=int, default=300, help="latency samples per command (default 300)")
    p.add_argument("--load-seconds", type=float, default=30, help="length of the concurrent load (default 30)")
    p.add_argument("--clients", type=int, default=16, help="concurrent clients in the load (default 16)")
    p.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    p.add_argument(
        "--out", type=Path, help="work directory; its imported catalog is reused (default bench/out/discord-<papers>)"
    )
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="2000 papers, 40 samples, 3 s load")
    p.add_argument("--serve-floor", nargs=2, metavar=("PORT", "REPLIES"), help=argparse.SUPPRESS)
    p.add_argument(
        "--profile",
        nargs="+",
        metavar="ARG",
        help="DB SUB [name=value | name~=value (focused)]...: cProfile the bot's WSGI app in process, then stop",
    )
    p.add_argument("-n", type=int, default=300, help="requests profiled with --profile (default 300)")
    args = p.parse_args(argv)
    if args.profile:
        if len(args.profile) < 2:
            p.error("--profile needs DB and SUB")
        profile(Path(args.profile[0]), args.profile[1], args.profile[2:], args.n, 30)
        return 0
    if args.serve_floor:
        serve_floor(int(args.serve_floor[0]), Path(args.serve_floor[1]))
        return 0
    if args.quick:
        args.papers, args.requests, args.load_seconds = (
            min(args.papers, 2000),
            min(args.requests, 40),
            min(args.load_seconds, 3),
        )
    if args.papers < 400 + args.requests:
        p.error(f"--papers must be at least {400 + args.requests} for --requests {args.requests}")
    if SIGNUP_WEEK_OFFSET + args.requests + 30 > 519:
        p.error("--requests: at most 450 (each timed sign-up books a week of its own, ten years ahead at most)")

    from tests.support.discord_standin import GUILD, PUBLIC_KEY, TOKEN, DiscordStandin

    workdir = args.out or HERE / "out" / f"discord-{args.papers}"
    workdir.mkdir(parents=True, exist_ok=True)
    busy0, own0 = bench.cpu_busy_seconds(), bench.own_cpu_seconds()
    started = time.monotonic()
    result: dict = {
        "command": "python bench/discord_bench.py"
        + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:])),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "loadavg_at_start": os.getloadavg()},
        "params": {k: getattr(args, k) for k in ("papers", "requests", "load_seconds", "clients", "seed", "quick")},
    }

    db = fresh_copy(workdir, args.papers, args.seed, result)
    n_papers = papers_in(db)
    result["papers_in_db"] = n_papers

    R, warm = args.requests, min(10, max(3, args.requests // 10))
    monday = first_monday()
    rng = random.Random(args.seed)
    users = {f"13000000000000{k:05d}": {} for k in range(PREFILL_WEEKS + R + warm + 1)}

    with DiscordStandin(channels={CHANNEL}, users=users) as discord:
        env = base_env(db)
        env = {k: v for k, v in env.items() if not k.startswith("DISCORD_")}
        env.update(
            {
                "DISCORD_TOKEN": TOKEN,
                "DISCORD_PUBLIC_KEY": PUBLIC_KEY,
                "DISCORD_API_URL": discord.api_url,
                "DISCORD_GUILD": GUILD,
                "PAPERBOT_CHANNEL": CHANNEL,
            }
        )
        log("starting `python -m bot run` (Discord, HTTP interactions)")
        bot = Server([sys.executable, "-m", "bot", "run"], env, workdir, "discord-bot")
        floor = None
        try:
            bot.wait_ready(pings)
            result["memory_at_start"] = proc_status(bot.proc.pid)
            member = list(users)
            # A realistic schedule: the next 26 weeks have presenters (not timed).
            first = Client(bot.port)
            signed_up = ""
            try:
                for k in range(PREFILL_WEEKS):
                    week = (monday + timedelta(weeks=k)).isoformat()
                    _, status, raw = first.send(interaction("signup", member[k], paper=str(100 + k), date=week))
                    if classify(status, raw) != "signed-up":
                        raise SystemExit(f"prefill sign-up {k} failed: {status} {raw[:300]!r}")
                    signed_up = raw.decode("utf-8")
            finally:
                first.close()
            discord.wait_for(lambda d: len(d.messages(CHANNEL)) >= PREFILL_WEEKS, timeout=60)

            reader = "1299999999999999999"
            signups = iter(range(R + warm + 10))

            def signup() -> dict:
                j = next(signups)
                week = (monday + timedelta(weeks=SIGNUP_WEEK_OFFSET + j)).isoformat()
                return interaction("signup", member[PREFILL_WEEKS + j], paper=str(300 + j), date=week)

            rows = {
                "tag parallelism-dp": lambda: interaction("tag", reader, tag="parallelism-dp"),
                "search training": lambda: interaction("search", reader, words="training"),
                "search 训练": lambda: interaction("search", reader, words="训练"),
                "show <random paper>": lambda: interaction("show", reader, paper=str(rng.randint(1, n_papers))),
                "schedule": lambda: interaction("schedule", reader),
                "week": lambda: interaction("week", reader),
                "signup <paper> <date>": signup,
                'autocomplete (show, paper: "train")': lambda: interaction(
                    "show", reader, focused="paper", paper="train"
                ),
            }

            # The floor's replies: the bot's own reply to each, its size kept (a fixed copy, no work behind it).
            probe = Client(bot.port)
            replies: dict[str, str] = {}
            try:
                for name, make in rows.items():
                    if name.startswith("signup"):
                        continue
                    raw = probe.send(make())[2].decode("utf-8")
                    replies[
                        "autocomplete" if name.startswith("autocomplete") else make()["data"]["options"][0]["name"]
                    ] = raw
            finally:
                probe.close()
            replies["signup"] = signed_up  # a sign-up's reply, from the prefill
            replies_path = workdir / "floor-replies.json"
            replies_path.write_text(json.dumps(replies, ensure_ascii=False), encoding="utf-8")
            result["reply_bytes"] = {k: len(v.encode()) for k, v in replies.items()}
            floor_env = {**base_env(workdir / "unused.db"), "DISCORD_PUBLIC_KEY": PUBLIC_KEY}
            floor = Server(
                [sys.executable, str(Path(__file__)), "--serve-floor", "{port}", str(replies_path)],
                floor_env,
                workdir,
                "discord-floor",
            )
            floor.wait_ready(pings)

            result["rows"] = {}
            for name, make in rows.items():
                log(f"timing {name}")
                n = R + warm
                # The floor does no work, so a sign-up's floor is any signed sign-up (no week is taken).
                floor_make = make if not name.startswith("signup") else lambda: interaction("signup", reader, paper="1")
                out = interleaved(bot.port, floor.port, make, floor_make, n, warm)
                if name.startswith("signup"):
                    discord.wait_for(lambda d: len(d.messages(CHANNEL)) >= PREFILL_WEEKS + R + warm, timeout=120)
                row = {**bench.summary(out["ms"]), "kinds": out["kinds"], "errors": out["errors"]}
                row["floor"] = bench.summary(out["floor_ms"])
                row["ratio"] = row["p50_ms"] / row["floor"]["p50_ms"]
                result["rows"][name] = row

            log(f"load: {args.clients} clients for {args.load_seconds:g} s")
            mix = [rows[k] for k in rows if not k.startswith("signup")]
            busy_load0, t0 = bench.cpu_busy_seconds(), time.monotonic()
            result["load"] = load(bot.port, mix, args.load_seconds, args.clients)
            result["load"]["machine_busy_cores"] = (bench.cpu_busy_seconds() - busy_load0) / (time.monotonic() - t0)
            result["memory"] = proc_status(bot.proc.pid)
        finally:
            if floor is not None:
                floor.stop()
            result["bot_exit_code"] = bot.stop()
    result["seconds"] = time.monotonic() - started
    busy, own = bench.cpu_busy_seconds() - busy0, bench.own_cpu_seconds() - own0
    result["machine"]["busy_cores_whole_run"] = busy / result["seconds"]
    # Other processes' CPU (say, another engineer's tests): the whole machine's less this run's and its children's.
    result["machine"]["others_cores_whole_run"] = max(0.0, busy - own) / result["seconds"]
    result["machine"]["loadavg_at_end"] = os.getloadavg()
    result["targets"] = targets(result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    print(report(result))
    return 0


def targets(r: dict) -> list[dict]:
    out = []
    for name, row in r["rows"].items():
        out.append(
            {
                "target": f"`{name}` median <= {MEDIAN_VS_FLOOR:g}x floor",
                "figure": f"{row['ratio']:.2f}x",
                "pass": row["ratio"] <= MEDIAN_VS_FLOOR,
            }
        )
        out.append(
            {
                "target": f"`{name}` p99 < {P99_MS:g} ms",
                "figure": f"{row['p99_ms']:.1f} ms",
                "pass": row["p99_ms"] < P99_MS,
            }
        )
        out.append(
            {
                "target": f"`{name}` zero errors",
                "figure": str(row["kinds"].get("error", 0)),
                "pass": row["kinds"].get("error", 0) == 0,
            }
        )
    load_ = r["load"]
    out.append(
        {
            "target": f"{r['params']['clients']} clients >= {LOAD_RATE:g} commands/s",
            "figure": f"{load_['commands_per_s']:.0f}/s",
            "pass": load_["commands_per_s"] >= LOAD_RATE,
        }
    )
    out.append({"target": "load: zero errors", "figure": str(load_["errors"]), "pass": load_["errors"] == 0})
    return out


def report(r: dict) -> str:
    f = lambda x, d=1: "-" if x is None else f"{x:.{d}f}"  # noqa: E731
    lines = [
        f"## Discord HTTP interactions: {r['papers_in_db']} papers, {r['params']['requests']} samples a command",
        "",
        f"`{r['command']}`; {r['machine']['cpus']} cores, Python {r['machine']['python']}; load average at start "
        f"{r['machine']['loadavg_at_start'][0]:.2f}, at end {r['machine']['loadavg_at_end'][0]:.2f}; machine busy "
        f"{r['machine']['busy_cores_whole_run']:.2f} cores on average, of which other processes "
        f"{r['machine']['others_cores_whole_run']:.2f}.",
        "",
        "| command | reply bytes | p50 ms | p99 ms | max ms | floor p50 ms | floor p99 ms | p50 / floor | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, row in r["rows"].items():
        sub = "autocomplete" if name.startswith("autocomplete") else name.split()[0]
        lines.append(
            f"| `{name}` | {r['reply_bytes'].get(sub, '-')} | {f(row['p50_ms'], 2)} | {f(row['p99_ms'], 2)} | "
            f"{f(row['max_ms'])} | {f(row['floor']['p50_ms'], 2)} | {f(row['floor']['p99_ms'], 2)} | "
            f"{row['ratio']:.2f} | {row['kinds'].get('error', 0)} |"
        )
    ld = r["load"]
    lines += [
        "",
        "| load | commands | commands/s | p50 ms | p99 ms | max ms | errors | machine busy (cores) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {r['params']['clients']} clients, {r['params']['load_seconds']:g} s, reads and autocomplete | "
        f"{ld['commands']} | {ld['commands_per_s']:.0f} | {f(ld['p50_ms'], 2)} | {f(ld['p99_ms'], 2)} | "
        f"{f(ld['max_ms'])} | {ld['errors']} | {ld['machine_busy_cores']:.2f} |",
        "",
        "| target | figure | verdict |",
        "| --- | ---: | --- |",
    ]
    lines += [f"| {t['target']} | {t['figure']} | {'pass' if t['pass'] else '**miss**'} |" for t in r["targets"]]
    passed = sum(t["pass"] for t in r["targets"])
    lines += ["", f"{passed} of {len(r['targets'])} targets pass."]
    for name, row in r["rows"].items():
        if row["errors"]:
            lines.append(f"- `{name}` errors: {row['errors'][:3]}")
    if ld["error_samples"]:
        lines.append(f"- load errors: {ld['error_samples'][:3]}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
