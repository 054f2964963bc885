"""The shape of the code: the core knows no platform, and no module of bot/ imports itself in a circle.

The core is every module of bot/ outside the platform adapters (bot/slack/, bot/console/) and
bot/cli.py, which wires the adapters to the verbs. Imports are read from each module's syntax
tree, not by importing it. The circle check reads top-level imports only: an import inside a
function runs when it is called, after every module has loaded, so it cannot fail to load one.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.repo import ROOT

BOT = ROOT / "bot"
ADAPTERS = ("bot.slack", "bot.discord", "bot.console")
WIRING = {"bot.cli", "bot.__main__"}
PLATFORM_LIBRARIES = ("slack_bolt", "slack_sdk", "nacl", "websockets", *ADAPTERS)


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(BOT.rglob("*.py"))}


def _under(name: str, prefixes) -> bool:
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


def core_modules() -> list[str]:
    return [m for m in MODULES if not _under(m, ADAPTERS) and m not in WIRING]


def test_the_core_imports_no_platform():
    wrong = {
        module: sorted(i for i in imports(module, top_level_only=False) if _under(i, PLATFORM_LIBRARIES))
        for module in core_modules()
    }
    wrong = {m: i for m, i in wrong.items() if i}
    assert wrong == {}, f"core modules that import a platform (move the code to its adapter): {wrong}"
    assert "bot.chat.commands" in core_modules() and "bot.slack.app" not in core_modules()  # the check reads them


def test_the_verbs_reach_chat_platforms_only_through_their_adapters():
    """bot/cli.py runs the console itself, and finds Slack and Discord through bot.platforms: a new
    platform is a new package, and no verb changes."""
    chats = ("slack_bolt", "slack_sdk", "nacl", "websockets", "bot.slack", "bot.discord")
    assert sorted(i for i in imports("bot.cli", top_level_only=False) if _under(i, chats)) == []
    assert "bot.platforms" in imports("bot.cli", top_level_only=False)


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


def _graph() -> dict[str, set[str]]:
    graph = {}
    for module in MODULES:
        # A package's module imports its package first: that edge is Python's, not a circle of ours.
        parents = {module.rsplit(".", k)[0] for k in range(1, module.count(".") + 1)}
        graph[module] = {i for i in imports(module, top_level_only=True) if i in MODULES and i not in parents}
    return graph


def test_no_import_circle_among_bots_modules():
    assert _circle(_graph()) is None, f"an import circle: {' -> '.join(_circle(_graph()) or [])}"


def test_the_circle_check_finds_a_circle():
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None
