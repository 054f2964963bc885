"""README, manifest, help and .env.example say the same as the code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
from conftest import ROOT
from slack_sdk import WebClient

from bot import commands
from bot.commands import COMMANDS
from bot.console import render
from bot.settings import SETTINGS
from bot.slack.blocks import message

MANIFEST = json.loads((ROOT / "manifest.json").read_text())
README = (ROOT / "README.md").read_text()


def test_manifest_is_valid_for_slacks_schema():
    schema = json.loads((Path(__file__).parent / "data" / "manifest.schema.1.0.0.json").read_text())
    jsonschema.validate(MANIFEST, schema)


def test_help_readme_and_manifest_name_the_same_commands():
    usages = [c.usage for c in COMMANDS]
    [slash] = MANIFEST["features"]["slash_commands"]
    assert slash["command"] == "/paper" and slash["should_escape"] is True  # mentions arrive as <@U…>
    assert slash["usage_hint"].split(" | ") == usages
    table = re.findall(r"^\| `/paper ([^`]+)` \|", README, flags=re.M)
    assert table == usages
    help_reply = commands.run(None, "help").reply  # help needs no context
    text = render(help_reply)
    slack_text = json.dumps(message(help_reply), ensure_ascii=False)
    for c in COMMANDS:
        assert c.usage in text and f"/paper {c.example}" in text
        assert c.name in slack_text


def test_manifest_asks_only_for_the_scopes_the_code_uses():
    scope_of = {
        "chat_postMessage": {"chat:write"},
        "chat_update": {"chat:write"},
        "chat_postEphemeral": {"chat:write"},
        "conversations_history": {"channels:history", "groups:history", "im:history"},
        "conversations_open": {"im:write"},
        "users_info": {"users:read"},
        "views_open": set(),
        "views_publish": set(),
        "auth_test": set(),
    }
    code = "\n".join(p.read_text() for p in (ROOT / "bot").rglob("*.py"))
    names = set(re.findall(r"\b(?:client|quick|answers|quick_client\([^)]*\))\.([a-z]+_[A-Za-z]+)", code))
    called = {n for n in names if callable(getattr(WebClient, n, None))}  # Web API methods, not attributes
    assert called <= set(scope_of), f"a Web API method without a known scope: {called - set(scope_of)}"
    needed = {"commands"}.union(*(scope_of[m] for m in called))
    assert set(MANIFEST["oauth_config"]["scopes"]["bot"]) == needed
    assert MANIFEST["settings"]["event_subscriptions"]["bot_events"] == ["app_home_opened"]
    assert MANIFEST["settings"]["interactivity"]["is_enabled"] and MANIFEST["settings"]["socket_mode_enabled"]


def test_readme_settings_table_matches_the_code():
    names = re.findall(r"^\| `([A-Z_]+)` \|", README, flags=re.M)
    assert names == list(SETTINGS)


def test_readme_first_screen_has_the_two_commands_and_ci_runs_the_same_tests():
    first_screen = "\n".join(README.splitlines()[:12])
    assert "pip install -e . && paperbot console" in first_screen
    test_command = "pip install -e '.[test]' && python -m pytest"
    assert test_command in first_screen
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install -e '.[test]'" in ci and "\npython -m pytest\n" in ci


def test_an_installed_package_carries_the_seed_list():
    """`pip install .` (a wheel) has no data/: pyproject ships data/papers.yaml inside the package."""
    import tomllib

    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["package-dir"]["bot.seed"] == "data" and "bot.seed" in setuptools["packages"]
    assert "papers.yaml" in setuptools["package-data"]["bot.seed"] and (ROOT / "data" / "papers.yaml").is_file()
    found = {p.parent.relative_to(ROOT).as_posix().replace("/", ".") for p in (ROOT / "bot").rglob("__init__.py")}
    assert found == set(setuptools["packages"]) - {"bot.seed"}, "a package of bot/ is missing from pyproject.toml"


def test_the_readme_session_is_what_the_console_prints(tmp_path):
    """README's transcript, replayed at its moment (Wednesday 2 December 2026, Asia/Shanghai)."""
    import io
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from bot import console
    from bot.catalog import open_store
    from bot.settings import Settings
    from bot.signups import Member

    block = README.split("## A session", 1)[1].split("```console\n", 1)[1].split("```", 1)[0]
    typed = [line[len("/paper> ") :] for line in block.splitlines() if line.startswith("/paper> ")]
    settings = Settings.load({"PAPERBOT_TIMEZONE": "Asia/Shanghai", "PAPERBOT_MEETING": "thu 16:00"}, dotenv=None)
    store = open_store(tmp_path / "paperbot.db")
    now = datetime(2026, 12, 2, 10, 0, tzinfo=ZoneInfo("Asia/Shanghai"))

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = io.StringIO()
    context = lambda: commands.Context(store, settings.group, Member("console", lambda: True), now)  # noqa: E731
    console.serve(context, Terminal("".join(t + "\n" for t in typed)), out)
    # The terminal echoes what was typed after each prompt; the output does not hold it.
    expected = block
    for t in typed:
        expected = expected.replace(f"/paper> {t}\n", "/paper> ", 1)
    printed = out.getvalue()
    assert printed.endswith("/paper> \n")  # the last prompt, then Ctrl-D
    assert printed.removesuffix("/paper> \n").rstrip() == expected.rstrip()
