"""A hosted install: N places (Slack workspaces) with G groups each, two replicas on one PostgreSQL database.

    python bench/places_bench.py              # 200 places x 5 groups, 2 replicas (~10 min)
    python bench/places_bench.py --quick      # 20 places x 2 groups (the smoke test)

It starts the Slack stand-in with N workspaces (tests/support/slack_standin.py: each its channels, an
admin and a member; every call answered as the workspace of its token) and Slack's limits on
chat.postMessage, per channel (one a second, burst 3) and per workspace (`--workspace-rate`), a
PostgreSQL server of its own, and two `paperbot run` replicas of a hosted install (SLACK_CLIENT_ID) on
one database. Then:

1. one place: installed through the flow (/slack/install, Slack's consent, /slack/oauth_redirect), its
   catalog imported and its G groups made with the code's own functions; signed commands from its
   members to the replicas in turn: each command's p50 and p99 (the baseline);
2. N places: the other N-1 installed the same way, each with its catalog and groups; a first request
   from each place to each replica (a replica makes a place's bot at its first request or check, as
   `run` does for every place within 30 s of its start); then the same commands from random members
   of random places: p50 and p99, and the ratio to one place's (target: p50 within 1.2x);
3. the floor: a bare client posts one message to a channel of each group of each place, with each
   workspace's own token, as fast as the limits let it (a thread a workspace, honouring Retry-After);
4. Monday: every group's post due at one minute; one place (the second) answered 429 on every post
   for its first `--hammer` seconds. Counted in the stand-in: each group's post exactly once, with its
   own workspace's token; the time from the slot to the last post of every other place against the
   floor (target 1.5x); the hammered place's posts after its 429s end.

Markdown to stdout, progress to stderr, work files to bench/out/places-<time>/.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import shutil
import sys
import threading
import time
import urllib.request
import uuid
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))  # the stand-ins and the PostgreSQL server: tests.support

import groups_bench as gb  # noqa: E402
import synth  # noqa: E402

import bench  # noqa: E402

KEY = "yzMWc0fHo7oqrJex8gf66U_VtUieX3eVIib0ue6tslI="  # PAPERBOT_SECRET_KEY of the bench's install
SECRET = "places-bench-signing-secret"
COMMANDS = ("week", "schedule", "tag {tag}", "search {word}", "show {paper}")
LATENCY_WITHIN = 1.2
POSTS_WITHIN = 1.5
REPLICAS = 2


def team(i: int) -> str:
    return f"T0P{i:04d}"


def channel(i: int, g: int) -> str:
    return f"C0P{i:04d}G{g}"


def floor_channel(i: int, g: int) -> str:
    return f"C0F{i:04d}G{g}"


def admin(i: int) -> str:
    return f"U0P{i:04d}A"


def member(i: int) -> str:
    return f"U0P{i:04d}M"


def start_replica(url: str, api_url: str, workdir: Path, name: str) -> bench.Server:
    env = bench.base_env(Path("unused"))
    env.update(
        {
            "PAPERBOT_DB": url,
            "SLACK_CLIENT_ID": "1111.2222",
            "SLACK_CLIENT_SECRET": "standin-client-secret",
            "SLACK_SIGNING_SECRET": SECRET,
            "PAPERBOT_SECRET_KEY": KEY,
            "SLACK_API_URL": api_url,
            "PAPERBOT_SCHEDULE": "0 9 1 1 *",  # the install's own group (none here) at no slot near the bench's
            "PAPERBOT_ARXIV_API": "http://127.0.0.1:9/api/query",
            "PAPERBOT_CROSSREF_API": "http://127.0.0.1:9",
        }
    )
    server = bench.Server([sys.executable, "-m", "bot", "run"], env, workdir, name)

    def ready(s: bench.Server) -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{s.port}/healthz", timeout=2) as r:
            return r.status == 200

    server.wait_ready(ready)
    return server


def install(port: int, slack, team_id: str) -> None:
    """The install flow as an admin's browser goes through it (tests/support/slack_hosted.py's Visitor)."""
    from tests.support.slack_hosted import Visitor

    answer = Visitor(port, slack, prefix="").install(team_id)
    if answer.status != 200:
        raise SystemExit(f"installing {team_id} answered {answer.status}: {answer.body[:300]}")


def fill_place(url: str, place: str, jsonl: Path, channels: list[str], admin_id: str, cron: str) -> None:
    """The place's catalog and its groups, made with the code's own functions (as `import` and `group start`)."""
    from zoneinfo import ZoneInfo

    from bot.calendar import MeetingCalendar, PostSchedule
    from bot.catalog import files, importing
    from bot.places.registry import open_place
    from bot.schedule import groups

    store = open_place(url, place)
    try:
        importing.upsert(store, files.read(jsonl).papers)
        utc = ZoneInfo("UTC")
        post = PostSchedule(cron, utc)
        env = groups.Group(groups.ENV, None, MeetingCalendar(utc, post.default_meeting(), post))
        for ch in channels:
            group, how = groups.start(store, env, ch, "slack", admin_id)
            if how != "started":
                raise SystemExit(f"{place} {ch}: group start answered {how!r}")
            groups.change(store, group, "schedule", cron, lambda word: None)
    finally:
        store.close()


def set_schedules(url: str, places: list[str], cron: str) -> None:
    """Every group of every place posting at `cron` (as `group set schedule` would)."""
    from bot.places.registry import open_place
    from bot.schedule import groups

    for place in places:
        store = open_place(url, place)
        try:
            for group in groups.chat_groups(store):
                groups.change(store, group, "schedule", cron, lambda word: None)
        finally:
            store.close()


class Signer:
    """Signed slash commands to the replicas in turn, each on a keep-alive connection."""

    def __init__(self, ports: list[int], response_url: str):
        import hashlib
        import hmac

        self._hmac, self._sha = hmac, hashlib.sha256
        self.conns = [http.client.HTTPConnection("127.0.0.1", p, timeout=30) for p in ports]
        self.response_url = response_url
        self.turn = 0

    def command(self, team_id: str, ch: str, user: str, text: str) -> tuple[float, int, bytes]:
        form = urlencode(
            {
                "team_id": team_id,
                "channel_id": ch,
                "user_id": user,
                "command": "/paper",
                "text": text,
                "response_url": self.response_url,
                "trigger_id": f"1337.{uuid.uuid4().int % 10**9}.abcd",
                "api_app_id": "A0TEST",
            }
        ).encode()
        conn = self.conns[self.turn % len(self.conns)]
        self.turn += 1
        start = time.perf_counter()
        ts = str(int(time.time()))
        sig = "v0=" + self._hmac.new(SECRET.encode(), b"v0:" + ts.encode() + b":" + form, self._sha).hexdigest()
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": sig,
        }
        try:
            conn.request("POST", "/slack/events", body=form, headers=headers)
            response = conn.getresponse()
        except (OSError, http.client.HTTPException):  # the server closed an idle keep-alive connection
            conn.close()
            conn.connect()
            conn.request("POST", "/slack/events", body=form, headers=headers)
            response = conn.getresponse()
        body = response.read()
        return (time.perf_counter() - start) * 1000, response.status, body

    def close(self) -> None:
        for conn in self.conns:
            conn.close()


def latency(signer: Signer, lines: dict[str, list[tuple[str, str, str, str]]], warmup: int = 5) -> dict:
    """Each command's lines (team, channel, user, text): p50, p99 and the answers that were no reply."""
    out = {}
    for command, todo in lines.items():
        ms, errors = [], []
        for k, line in enumerate(todo):
            took, status, body = signer.command(*line)
            text = body.decode("utf-8", "replace")
            if status != 200 or "not installed" in text or "wrong" in text.lower():
                errors.append(f"{status} {text[:120]}")
            elif k >= warmup:
                ms.append(took)
        out[command] = {"p50": bench.pct(ms, 50), "p99": bench.pct(ms, 99), "n": len(ms), "errors": errors[:5]}
    return out


def command_lines(  # noqa: PLR0913 - the draw's parts
    rng: random.Random, places: list[int], groups_per: int, papers: int, tags: list[str], words: list[str], n: int
) -> dict[str, list[tuple[str, str, str, str]]]:
    lines = {}
    for command in COMMANDS:
        todo = []
        for _ in range(n):
            i = rng.choice(places)
            text = command.format(tag=rng.choice(tags), word=rng.choice(words), paper=rng.randint(1, papers))
            todo.append((team(i), channel(i, rng.randrange(groups_per)), member(i), text))
        lines[command] = todo
    return lines


def main(argv: list[str] | None = None) -> int:  # noqa: C901, PLR0915 (one phase after another)
    p = argparse.ArgumentParser(description="a hosted install: many places, two replicas, one PostgreSQL database")
    p.add_argument("--places", type=int, default=200)
    p.add_argument("--groups", type=int, default=5, help="groups a place (default 5)")
    p.add_argument("--papers", type=int, default=40, help="papers a place (default 40)")
    p.add_argument("--workspace-rate", type=float, default=1.0, help="posts a second per workspace (default 1)")
    p.add_argument("--requests", type=int, default=100, help="latency samples per command (default 100)")
    p.add_argument("--hammer", type=float, default=20.0, help="seconds the hammered place's posts get 429")
    p.add_argument("--out", type=Path)
    p.add_argument("--json", type=Path)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="20 places x 2 groups, 30 samples")
    args = p.parse_args(argv)
    if args.quick:
        args.places, args.groups, args.requests = min(args.places, 20), min(args.groups, 2), min(args.requests, 30)
    if args.places < 3 or args.groups < 1:
        p.error("--places at least 3, --groups at least 1")
    n, g = args.places, args.groups

    from bot.slack import blocks
    from tests.support.slack_standin import PostLimits, SlackStandin

    workdir = args.out or HERE / "out" / time.strftime("places-%Y%m%d-%H%M%S")
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    argv_shown = argv if argv is not None else sys.argv[1:]
    limits = PostLimits(channel_rate=1.0, channel_burst=3, workspace_rate=args.workspace_rate, workspace_burst=1)
    result: dict = {
        "command": "python bench/places_bench.py" + "".join(f" {a}" for a in argv_shown),
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "params": {"places": n, "groups": g, "papers": args.papers, "replicas": REPLICAS, "hammer_s": args.hammer},
        "limits": {"channel": "1/s, burst 3", "workspace": f"{args.workspace_rate:g}/s, burst 1"},
    }
    papers = synth.catalog(args.papers, seed=args.seed)
    jsonl = workdir / "catalog.jsonl"
    synth.write_jsonl(papers, jsonl)
    tags = sorted({t for paper in papers for t in paper.get("tags", [])})[:20] or ["x"]
    words = [w for paper in papers[:20] for w in paper["title"].split()[:2] if len(w) > 3][:20] or ["paper"]
    rng = random.Random(args.seed)
    posted: dict[str, list[tuple[float, str | None]]] = {}
    lock = threading.Lock()

    with ExitStack() as stack:
        slack = stack.enter_context(SlackStandin(limits=limits))
        for i in range(n):
            slack.add_workspace(
                team(i),
                f"Lab {i}",
                channels={*(channel(i, k) for k in range(g)), *(floor_channel(i, k) for k in range(g))},
                admins={admin(i)},
                users={member(i)},
            )
        pg = gb.start_postgres(workdir)
        stack.callback(lambda: shutil.rmtree(pg.folder, ignore_errors=True))
        stack.callback(pg.stop)
        url = pg.new_database()
        bench.log(f"starting {REPLICAS} replicas of a hosted install on one PostgreSQL database")
        replicas = [start_replica(url, slack.api_url, workdir, f"replica-{k}") for k in range(REPLICAS)]
        for r in replicas:
            stack.callback(r.stop)
        ports = [r.port for r in replicas]
        signer = Signer(ports, slack.response_url())
        stack.callback(signer.close)
        never = "0 9 1 1 *"

        bench.log("one place: installed, filled, measured")
        install(ports[0], slack, team(0))
        fill_place(url, f"slack-{team(0)}", jsonl, [channel(0, k) for k in range(g)], admin(0), never)
        result["latency_one"] = latency(signer, command_lines(rng, [0], g, args.papers, tags, words, args.requests + 5))
        bench.log(f"one place: {json.dumps({c: round(x['p50'] or 0, 2) for c, x in result['latency_one'].items()})}")

        bench.log(f"{n} places: installing and filling the other {n - 1}")
        t = time.perf_counter()
        for i in range(1, n):
            install(ports[i % REPLICAS], slack, team(i))
            fill_place(url, f"slack-{team(i)}", jsonl, [channel(i, k) for k in range(g)], admin(i), never)
        result["setup_seconds"] = time.perf_counter() - t
        # Steady state: each replica makes a place's bot at its first request or check (its Bolt app, its
        # auth.test), as `run` does within 30 s of a start; one `help` from each place to each replica first.
        t = time.perf_counter()
        for i in range(n):
            for _ in ports:
                took, status, body = signer.command(team(i), channel(i, 0), member(i), "help")
                if status != 200:
                    raise SystemExit(f"{team(i)}: help answered {status}: {body[:200]!r}")
        result["first_requests_seconds"] = time.perf_counter() - t
        result["latency_many"] = latency(
            signer, command_lines(rng, list(range(n)), g, args.papers, tags, words, args.requests + 5)
        )
        bench.log(f"{n} places: {json.dumps({c: round(x['p50'] or 0, 2) for c, x in result['latency_many'].items()})}")

        bench.log(f"floor: {n * g} posts, each with its workspace's token")
        tokens = {floor_channel(i, k): slack.tokens(team(i))[-1] for i in range(n) for k in range(g)}
        # A thread a workspace: the limits are each workspace's, so the bare client waits on each in parallel.
        floor = gb.floor_posts(slack.api_url, list(tokens), threads=n, tokens=tokens)
        floor["computed_seconds"] = limits.floor_seconds(g, g)
        result["floor"] = floor
        if floor["errors"]:
            raise SystemExit(f"the floor's posts failed: {floor['errors']}")
        bench.log(f"floor: {floor['seconds']:.1f} s ({floor['rate_limited']} answered 429)")

        def on_accept(call) -> None:
            if call.method == "chat.postMessage" and (call.params.get("metadata") or {}).get("event_type") == (
                blocks.POST_EVENT
            ):
                with lock:
                    posted.setdefault(call.params.get("channel"), []).append((time.time(), slack.team_of(call.token)))

        slot = gb.slot_ahead(45)
        cron = gb.weekly_cron(slot)
        set_schedules(url, [f"slack-{team(i)}" for i in range(n)], cron)
        slack.on_accept = on_accept
        hammered = 1
        slack.hammer(team(hammered), until=slot.timestamp() + args.hammer)
        result["slot"] = {"at": slot.isoformat(), "schedule": cron}
        bench.log(f"every group's post due at {slot:%H:%M} UTC; {team(hammered)} answered 429 for {args.hammer:g} s")
        every = [(i, channel(i, k)) for i in range(n) for k in range(g)]
        deadline = slot.timestamp() + max(3 * floor["seconds"], 60) + args.hammer + 60
        while time.time() < deadline:
            with lock:
                done = sum(1 for _, ch in every if ch in posted)
            if done >= len(every):
                break
            time.sleep(0.2)
        time.sleep(3)  # a second post of any group would come after its first
        with lock:
            seen = {ch: list(v) for ch, v in posted.items()}
        s = slot.timestamp()
        others = [t for i, ch in every if i != hammered for t, _ in seen.get(ch, [])]
        mine = [t for i, ch in every if i == hammered for t, _ in seen.get(ch, [])]
        result["posts"] = {
            "groups": len(every),
            "once": sum(1 for _, ch in every if len(seen.get(ch, [])) == 1),
            "missing": sum(1 for _, ch in every if not seen.get(ch)),
            "twice_or_more": sum(1 for _, ch in every if len(seen.get(ch, [])) > 1),
            "own_token": sum(1 for i, ch in every for _, tm in seen.get(ch, []) if tm == team(i)),
            "others_last_after_slot_s": (max(others) - s) if others else None,
            "others_first_after_slot_s": (min(others) - s) if others else None,
            "hammered_first_after_slot_s": (min(mine) - s) if mine else None,
            "hammered_last_after_slot_s": (max(mine) - s) if mine else None,
            "rate_limited_429": slack.rate_limited,
        }
        bench.log(f"posts: {result['posts']}")
        result["memory"] = [bench.proc_status(r.proc.pid) for r in replicas if r.proc.poll() is None]
    result["seconds"] = time.monotonic() - started
    gb.write_out(workdir, result, args.json, report(result))
    return 0


def report(r: dict) -> str:
    f = gb._f
    n, g = r["params"]["places"], r["params"]["groups"]
    floor, posts = r["floor"], r["posts"]
    lines = [
        f"`{r['command']}` ({r['seconds']:.0f} s; {r['when']})",
        "",
        f"{n} places (Slack workspaces), {g} groups each, {r['params']['papers']} papers each; "
        f"{r['params']['replicas']} `paperbot run` replicas of a hosted install on one PostgreSQL database, "
        f"commands to them in turn. Stand-in limits on chat.postMessage: per channel {r['limits']['channel']}; "
        f"per workspace {r['limits']['workspace']}.",
        "",
        f"| command (signed HTTP) | 1 place p50 ms | {n} places p50 ms | ratio (target ≤ {LATENCY_WITHIN}) "
        f"| 1 place p99 | {n} places p99 | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for command in COMMANDS:
        one, many = r["latency_one"][command], r["latency_many"][command]
        ratio = many["p50"] / one["p50"] if one["p50"] and many["p50"] else None
        lines.append(
            f"| `{command.split(' ')[0]}` | {f(one['p50'], 2)} | {f(many['p50'], 2)} | {f(ratio, 2)} | "
            f"{f(one['p99'], 2)} | {f(many['p99'], 2)} | {len(one['errors']) + len(many['errors'])} |"
        )
    took = posts["others_last_after_slot_s"]
    lines += [
        "",
        f"Monday: {posts['groups']} posts due at one minute; the second place answered 429 on every post for "
        f"its first {r['params']['hammer_s']:g} s. The limits' own time for a workspace's {g} posts, computed "
        f"from the buckets: {f(floor['computed_seconds'])} s; measured (a bare client, a thread a workspace, "
        f"each workspace's token, honouring Retry-After, {floor['rate_limited']} × 429): {f(floor['seconds'])} s.",
        "",
        "| Monday | |",
        "| --- | ---: |",
        f"| slot → first post | {f(posts['others_first_after_slot_s'])} s |",
        f"| slot → last post of every other place | {f(took)} s |",
        f"| that / floor (target ≤ {POSTS_WITHIN}) | {f(took / floor['seconds'] if took and floor['seconds'] else None, 2)} |",
        f"| hammered place: first, last post after the slot | {f(posts['hammered_first_after_slot_s'])} s, "
        f"{f(posts['hammered_last_after_slot_s'])} s |",
        f"| posted exactly once | {posts['once']} of {posts['groups']} |",
        f"| missing, twice or more (target 0, 0) | {posts['missing']}, {posts['twice_or_more']} |",
        f"| posted with its own workspace's token | {posts['own_token']} |",
        f"| answered 429 (the floor's included) | {posts['rate_limited_429']} |",
        f"| replicas' RSS at the end, MB | {', '.join(f(m['rss_mb']) for m in r['memory'])} |",
        f"| installing and filling {n - 1} places | {f(r['setup_seconds'])} s |",
        f"| a first request from each place to each replica (its bot made) | "
        f"{f(r['first_requests_seconds'] * 1000 / (2 * n), 1)} ms each |",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
