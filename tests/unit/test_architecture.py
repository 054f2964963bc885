"""The shape of the code: bot/'s packages, which may import which, and how big a module may grow.

Run `python -m pytest tests/unit/test_architecture.py`: each rule is one test, and a broken rule says
in one line which import (or file) breaks it and what to do. The rules, as docs/architecture.md
draws them:

- no circle among bot's packages (nor among its modules, at load time);
- `store` imports nothing of the domain;
- `catalog` and `delivery` never import `schedule`;
- `schedule` never imports `chat`, `web` or `announcing`;
- only the adapters and the verbs (bot/cli.py) import `chat`;
- nothing imports `runtime` or an adapter (bot.slack, bot.discord, bot.console) but the verbs
  (bot/cli.py, bot/__main__.py), the adapter's own modules, and an adapter's serve module, which
  starts the scheduler (`bot.runtime.scheduler`);
- the core (everything but the adapters) imports no platform's library (slack_bolt, slack_sdk,
  hikari, nacl, websockets);
- at most 8 modules loose at bot/'s root besides __init__ and __main__;
- no module over 700 lines;
- each package imports only the floors below it, as docs/architecture.md draws them.

Imports are read from each module's syntax tree, not by importing it, at the top level and inside
functions alike: an import inside a function is still a dependency.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.support.repo import ROOT

BOT = ROOT / "bot"
ADAPTERS = ("bot.slack", "bot.discord", "bot.console")
WIRING = {"bot.cli", "bot.__main__"}
PLATFORM_LIBRARIES = ("slack_bolt", "slack_sdk", "hikari", "nacl", "websockets")
LONGEST_MODULE = 700
MOST_LOOSE_MODULES = 8


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(BOT.rglob("*.py"))}


def _under(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def imports(name: str, *, top_level_only: bool) -> set[str]:
    """Every module `name` imports (bot's modules by their module name; others as written)."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    if top_level_only:  # `if TYPE_CHECKING:` and `try:` blocks at the top level load with the module too
        nodes = [n for top in tree.body for n in ast.walk(top) if not isinstance(top, ast.FunctionDef | ast.ClassDef)]
        nodes += [
            n
            for top in tree.body
            if isinstance(top, ast.ClassDef)
            for stmt in top.body
            if not isinstance(stmt, ast.FunctionDef)
            for n in ast.walk(stmt)
        ]
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            for alias in node.names:  # from bot import catalog: the module bot.catalog.queries
                if f"{base}.{alias.name}" in MODULES:
                    found.add(f"{base}.{alias.name}")
    return found


def package_of(module: str) -> str | None:
    """The package a module of bot/ belongs to (`bot.schedule.weekly` -> `schedule`); a loose module is its
    own (`bot.cli` -> `cli`); bot/__init__.py belongs to none."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def importers(target: str) -> dict[str, list[str]]:
    """Each module of bot/ outside `target` that imports `target` or a module in it: the imports it makes."""
    found = {
        module: sorted(i for i in imports(module, top_level_only=False) if _under(i, [target]))
        for module in MODULES
        if not _under(module, [target])
    }
    return {m: i for m, i in found.items() if i}


def package_imports(package: str) -> set[str]:
    """The other packages (and loose modules) of bot/ that `package`'s modules import."""
    return {
        other
        for module in MODULES
        if package_of(module) == package
        for i in imports(module, top_level_only=False)
        if _under(i, ["bot"]) and (other := package_of(i)) not in (None, package)
    }


def core_modules() -> list[str]:
    return [m for m in MODULES if not _under(m, ADAPTERS)]


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of `graph`, as the list of its modules (the first again at the end), or None."""
    state: dict[str, int] = {}  # 1: being walked, 2: done
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := walk(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := walk(node)):
            return found
    return None


def _module_graph() -> dict[str, set[str]]:
    graph = {}
    for module in MODULES:
        # A package's module imports its package first: that edge is Python's, not a circle of ours.
        parents = {module.rsplit(".", k)[0] for k in range(1, module.count(".") + 1)}
        graph[module] = {i for i in imports(module, top_level_only=True) if i in MODULES and i not in parents}
    return graph


def package_graph() -> dict[str, set[str]]:
    """bot's packages and loose modules, each with those it imports (at the top level or in a function)."""
    return {p: package_imports(p) for p in {package_of(m) for m in MODULES} - {None}}


# -- the rules ------------------------------------------------------------------------------------


def test_no_import_circle_among_bots_packages():
    circle = _circle(package_graph())
    assert circle is None, f"packages import in a circle ({' -> '.join(circle or [])}): move the shared code down"


def test_no_import_circle_among_bots_modules():
    circle = _circle(_module_graph())
    assert circle is None, f"modules import each other at load time ({' -> '.join(circle or [])}): break the circle"


def test_the_circle_check_finds_a_circle():
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None


def test_store_imports_nothing_of_the_domain():
    wrong = package_imports("store")
    assert wrong == set(), f"bot/store/ imports {sorted(wrong)}: the SQLite file knows no papers or weeks; move it up"


@pytest.mark.parametrize("package", ["catalog", "delivery"])
def test_catalog_and_delivery_never_import_schedule(package):
    wrong = {m: i for m, i in importers("bot.schedule").items() if package_of(m) == package}
    assert wrong == {}, f"bot/{package}/ imports the schedule ({wrong}): pass the value in from the caller instead"


@pytest.mark.parametrize("above", ["chat", "web", "announcing"])
def test_schedule_never_imports_chat_web_or_announcing(above):
    wrong = {m: i for m, i in importers(f"bot.{above}").items() if package_of(m) == "schedule"}
    assert wrong == {}, f"bot/schedule/ imports bot/{above}/ ({wrong}): the schedule sits below it; move the code up"


def test_only_the_adapters_and_the_verbs_import_chat():
    wrong = {m: i for m, i in importers("bot.chat").items() if not _under(m, ADAPTERS) and m != "bot.cli"}
    assert wrong == {}, f"core modules import the chat commands ({wrong}): the commands call the core, not back"


def test_nothing_imports_runtime_but_the_verbs_and_the_adapters_serve_modules():
    """An adapter's serve module starts the scheduler for its platform (bot.runtime.scheduler; a hosted
    install's over every place, bot.runtime.hosting); the verbs start `run` with both platforms
    (bot.runtime.both_platforms); nothing else reaches runtime."""
    allowed = {
        f"{adapter}.serve": {"bot.runtime", "bot.runtime.scheduler", "bot.runtime.hosting"} for adapter in ADAPTERS
    }
    wrong = {
        m: i for m, i in importers("bot.runtime").items() if m not in WIRING and not set(i) <= allowed.get(m, set())
    }
    assert wrong == {}, f"modules that import bot/runtime/ ({wrong}): runtime is the top; pass what it needs down"


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_nothing_imports_an_adapter_but_the_verbs(adapter):
    wrong = {m: i for m, i in importers(adapter).items() if m not in WIRING}
    assert wrong == {}, f"{adapter} is imported by {wrong}: reach an adapter through bot/platforms.py, never by name"


def test_the_core_imports_no_platform():
    wrong = {
        module: sorted(i for i in imports(module, top_level_only=False) if _under(i, PLATFORM_LIBRARIES))
        for module in core_modules()
    }
    wrong = {m: i for m, i in wrong.items() if i}
    assert wrong == {}, f"core modules that import a platform's library (move the code to its adapter): {wrong}"
    assert "bot.chat.commands" in core_modules() and "bot.slack.app" not in core_modules()  # the check reads them


def test_the_verbs_reach_chat_platforms_only_through_their_adapters():
    """bot/cli.py runs the console itself, and finds Slack and Discord through bot.platforms: a new
    platform is a new package, and no verb changes."""
    chats = (*PLATFORM_LIBRARIES, "bot.slack", "bot.discord")
    wrong = sorted(i for i in imports("bot.cli", top_level_only=False) if _under(i, chats))
    assert wrong == [], f"bot/cli.py imports {wrong}: find the platform through bot.platforms"
    assert "bot.platforms" in imports("bot.cli", top_level_only=False)


def test_few_modules_are_loose_at_bots_root():
    loose = sorted(p.name for p in BOT.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(loose) <= MOST_LOOSE_MODULES, (
        f"{len(loose)} modules loose in bot/ ({', '.join(loose)}), at most {MOST_LOOSE_MODULES}: put one in its package"
    )


def test_no_module_is_over_700_lines():
    long = {
        p.relative_to(ROOT).as_posix(): n
        for p in sorted(BOT.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > LONGEST_MODULE
    }
    assert long == {}, f"modules over {LONGEST_MODULE} lines ({long}): split each by what its parts do"


def floors() -> dict[str, int]:
    """Each package's floor, as docs/architecture.md's table of floors gives it (`store` -> 0)."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = page.split("## Floors", 1)[1].split("\n## ", 1)[0]
    return {
        name.removesuffix("/").removesuffix(".py"): int(floor)
        for floor, names in re.findall(r"^\| (\d+) \| ([^|]+) \|", table, flags=re.M)
        for name in re.findall(r"`([^`]+)`", names)
    }


def test_each_package_imports_only_the_floors_below_it():
    """The floors of docs/architecture.md hold: a package imports only packages on lower floors."""
    placed, graph = floors(), package_graph()
    unplaced = sorted(set(graph) - set(placed))
    assert unplaced == [], f"packages on no floor of docs/architecture.md: {unplaced}; give each its floor"
    wrong = {
        f"{p} ({placed[p]})": sorted(f"{o} ({placed[o]})" for o in graph[p] if placed[o] >= placed[p]) for p in graph
    }
    wrong = {p: o for p, o in wrong.items() if o}
    assert wrong == {}, f"imports that do not go down a floor: {wrong}; move the code, or the floors in the docs"


def test_tests_import_what_they_share_from_tests_support_only():
    """A test imports helpers from tests/support/ and gets fixtures from conftest.py, never from another
    test file: a test file can then move or go without breaking others."""
    wrong = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        named |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level}
        bad = sorted(m for m in named if m.rpartition(".")[2].startswith(("test_", "conftest")))
        if bad:
            wrong[path.relative_to(ROOT).as_posix()] = bad
    assert wrong == {}, f"tests that import a test file or conftest ({wrong}): move the helper to tests/support/"
