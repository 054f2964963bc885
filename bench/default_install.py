"""The default install (SQLite) before and after PostgreSQL: the same figures, in the same sitting.

    python bench/default_install.py --before ../pre-pg                   # each tree with its own .venv (~3 min)
    python bench/default_install.py --before ../pre-pg --before ../x    # more trees, side by side
    python bench/default_install.py --before ../pre-pg --quick           # start-up and console only (~20 s)

For each tree (each `--before` in turn, then this one), with that tree's own virtualenv
(`<tree>/.venv`), in the same sitting:

1. `python bench/bench.py --quick` of that tree (command latency against its floors, RSS, import);
2. start-up: `python -c "import bot.cli"`, wall time (best of 7), and `-X importtime`'s cumulative
   time of `bot.cli`;
3. `paperbot console` on a fresh SQLite file, typing README's commands: wall time, peak RSS (the
   process's own, from wait4), and whether psycopg (PostgreSQL's driver) was imported at all.

Markdown tables go to stdout, progress to stderr, work files to bench/out/default-<time>/.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: README's console transcript
CONSOLE_INPUT = "search 数据并行\nshow 29\nsignup 29 next\nschedule\ntag paralelism\n"


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def clean_env(db: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERBOT_", "DISCORD_", "PYTHON"))}
    return {**env, "PAPERBOT_DB": str(db), "PAPERBOT_TIMEZONE": "UTC"}


def run_measured(argv: list[str], env: dict, cwd: Path, stdin: str = "") -> tuple[float, float, str, str]:
    """Run a process: its wall seconds, its own peak RSS in MB (os.wait4 reports that child alone),
    stdout, stderr."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode})")
    return seconds, usage.ru_maxrss / 1024, out, ""


def startup(tree: Path, python: str, workdir: Path) -> dict:
    db = workdir / f"startup-{tree.name}.db"
    env = clean_env(db)
    walls = []
    for _ in range(7):
        start = time.perf_counter()
        subprocess.run([python, "-c", "import bot.cli"], env=env, cwd=tree, check=True)
        walls.append(time.perf_counter() - start)
    done = subprocess.run(
        [python, "-X", "importtime", "-c", "import bot.cli"], env=env, cwd=tree, capture_output=True, text=True
    )
    cumulative = None
    for line in done.stderr.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == "bot.cli":
            cumulative = int(parts[1]) / 1000
    imported = {line.split("|")[2].strip() for line in done.stderr.splitlines() if line.count("|") == 2}
    return {
        "import_bot_cli_best_ms": min(walls) * 1000,
        "importtime_bot_cli_ms": cumulative,
        "psycopg_imported": any(name.split(".")[0] == "psycopg" for name in imported),
        "modules": len(imported),
    }


def console(tree: Path, python: str, workdir: Path) -> dict:
    folder = workdir / f"console-{tree.name}"
    folder.mkdir(exist_ok=True)
    db = folder / "paperbot.db"
    env = clean_env(db)
    # The first use creates the database and loads the first list: once untimed, then timed.
    subprocess.run(
        [python, "-m", "bot", "console"], input="help\n", env=env, cwd=tree, check=True, capture_output=True, text=True
    )
    seconds, rss, out, _ = run_measured([python, "-m", "bot", "console"], env, tree, CONSOLE_INPUT)
    done = subprocess.run(
        [python, "-X", "importtime", "-m", "bot", "console"],
        input=CONSOLE_INPUT,
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.split("|")[2].strip() for line in done.stderr.splitlines() if line.count("|") == 2}
    return {
        "seconds": seconds,
        "peak_rss_mb": rss,
        "psycopg_imported": any(name.split(".")[0] == "psycopg" for name in imported),
        "psycopg_installed": subprocess.run([python, "-c", "import psycopg"], capture_output=True).returncode == 0,
        "output_lines": len(out.splitlines()),
    }


def slack_bench(tree: Path, python: str, workdir: Path) -> dict:
    out = workdir / f"bench-{tree.name}.json"
    log(f"{tree}: python bench/bench.py --quick")
    start = time.perf_counter()
    subprocess.run(
        [python, "bench/bench.py", "--quick", "--json", str(out), "--out", str(workdir / f"work-{tree.name}")],
        cwd=tree,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
        check=True,
        stdout=subprocess.DEVNULL,
    )
    result = json.loads(out.read_text())
    result["_seconds"] = time.perf_counter() - start
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="the default SQLite install, before and after a change")
    p.add_argument(
        "--before", type=Path, action="append", required=True, help="another tree, with its own .venv (repeatable)"
    )
    p.add_argument("--quick", action="store_true", help="start-up and console only, no bench.py")
    p.add_argument("--out", type=Path)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    workdir = args.out or HERE / "out" / time.strftime("default-%Y%m%d-%H%M%S")
    workdir.mkdir(parents=True, exist_ok=True)
    trees = [*(t.resolve() for t in args.before), ROOT]
    result: dict = {
        "command": "python bench/default_install.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "trees": [],
    }
    for tree in trees:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True)
        python = str(tree / ".venv" / "bin" / "python")
        log(f"{tree} at {commit.stdout.strip()}")
        entry = {"tree": str(tree), "commit": commit.stdout.strip()}
        entry |= {"startup": startup(tree, python, workdir), "console": console(tree, python, workdir)}
        if not args.quick:
            entry["bench"] = slack_bench(tree, python, workdir)
        result["trees"].append(entry)
    (workdir / "result.json").write_text(json.dumps(result, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2))
    print(report(result))
    return 0


def _f(x, digits: int = 1) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def report(r: dict) -> str:
    trees = r["trees"]
    heads = " | ".join(f"`{t['commit']}`" for t in trees)
    lines = [f"`{r['command']}`", "", f"| figure | {heads} |", "| --- |" + " ---: |" * len(trees)]

    def row(name: str, get, digits: int = 1) -> None:
        lines.append(f"| {name} | " + " | ".join(_f(get(t), digits) for t in trees) + " |")

    def yes(name: str, get) -> None:
        lines.append(f"| {name} | " + " | ".join("yes" if get(t) else "no" for t in trees) + " |")

    row("`import bot.cli`, wall ms (best of 7)", lambda t: t["startup"]["import_bot_cli_best_ms"])
    row("`-X importtime`: bot.cli cumulative ms", lambda t: t["startup"]["importtime_bot_cli_ms"])
    row("modules imported by `import bot.cli`", lambda t: t["startup"]["modules"], 0)
    yes("psycopg imported by `import bot.cli`", lambda t: t["startup"]["psycopg_imported"])
    row("`paperbot console`, README's 5 commands: wall s", lambda t: t["console"]["seconds"], 2)
    row("`paperbot console`: peak RSS MB", lambda t: t["console"]["peak_rss_mb"])
    yes("psycopg installed", lambda t: t["console"]["psycopg_installed"])
    yes("psycopg imported by the console", lambda t: t["console"]["psycopg_imported"])
    if all("bench" in t for t in trees):
        lines += ["", *bench_rows(trees)]
    return "\n".join(lines) + "\n"


def bench_rows(trees: list[dict]) -> list[str]:
    """bench.py --quick's own rows, each tree's p50 / its floor (a) p50 alongside, and p99."""
    heads = " | ".join(f"`{t['commit']}` p50 ms (x floor a), p99" for t in trees)
    lines = [f"| bench.py --quick row | {heads} |", "| --- |" + " ---: |" * len(trees)]
    rows = [_rows(t["bench"]) for t in trees]
    for name in rows[0]:
        if not all(name in r for r in rows):
            continue
        cells = []
        for r in rows:
            x = r[name]
            ratio = f" ({x['ratio']:.2f}x)" if x.get("ratio") else ""
            cells.append(f"{_f(x.get('p50'), 2)}{ratio}, {_f(x.get('p99'), 1)}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    heads = " | ".join(f"`{t['commit']}`" for t in trees)
    lines += ["", f"| bench.py --quick figure | {heads} |", "| --- |" + " ---: |" * len(trees)]

    def row(name: str, get, digits: int = 1) -> None:
        lines.append(f"| {name} | " + " | ".join(_f(get(t["bench"]), digits) for t in trees) + " |")

    row("bot RSS at start, MB", lambda b: b.get("memory_at_start", {}).get("rss_mb"))
    row("bot RSS after the load, MB", lambda b: b.get("memory", {}).get("rss_mb"))
    row("import of the catalog (2,000 papers), s", lambda b: b.get("import", {}).get("seconds"), 2)
    row("load: commands/s", lambda b: b.get("load", {}).get("commands_per_s"))
    row("load: errors", lambda b: b.get("load", {}).get("errors"), 0)
    row("whole bench.py --quick, s", lambda b: b["_seconds"])
    return lines


def _rows(r: dict) -> dict:
    out = {}
    floors = r.get("floors") or {}
    for label in ("a", "b"):
        if label in floors:
            out[f"floor ({label})"] = {"p50": floors[label].get("p50_ms"), "p99": floors[label].get("p99_ms")}
    for name, row in (r.get("rows") or {}).items():
        floor = (row.get("floor_a") or {}).get("p50_ms")
        p50 = row.get("p50_ms")
        out[name] = {"p50": p50, "p99": row.get("p99_ms"), "ratio": p50 / floor if p50 and floor else None}
    return out


if __name__ == "__main__":
    sys.exit(main())
