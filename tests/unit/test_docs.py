"""README, docs/, manifest, help, .env.example and the operators' files say the same as the code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from slack_sdk import WebClient

from bot.chat import commands, reference
from bot.chat.commands import VERBS
from bot.console.render import render
from bot.places.sealing import MAKE_A_KEY
from bot.slack.blocks import message
from bot.slack.hosted import BOT_SCOPES, EVENTS_PATH, INSTALL_PATH, REDIRECT_PATH
from bot.slack.settings import SETTINGS
from tests.support import readme_session
from tests.support.databases import database_for
from tests.support.repo import ROOT

MANIFEST = json.loads((ROOT / "manifest.json").read_text())
#: The same app served over HTTP, for a hosted install (docs/hosting.md): Slack's Marketplace takes no Socket Mode.
HOSTED_MANIFEST = json.loads((ROOT / "docs" / "deploy" / "manifest.hosted.json").read_text())
README = (ROOT / "README.md").read_text()
DOCS = {p.relative_to(ROOT).as_posix(): p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))}
SETTINGS_DOC = (ROOT / "docs" / "settings.md").read_text()
#: Files that README or docs/ link to and that other branches add (the lead empties this after merging).
PENDING = {"LICENSE"}


@pytest.mark.parametrize("manifest", [MANIFEST, HOSTED_MANIFEST], ids=["manifest.json", "manifest.hosted.json"])
def test_manifest_is_valid_for_slacks_schema(manifest):
    schema = json.loads((Path(__file__).parents[1] / "data" / "manifest.schema.1.0.0.json").read_text())
    jsonschema.validate(manifest, schema)


def test_help_readme_and_manifest_name_the_same_commands():
    usages = [c.usage for c in VERBS.values()]
    [slash] = MANIFEST["features"]["slash_commands"]
    assert slash["command"] == "/paper" and slash["should_escape"] is True  # mentions arrive as <@U…>
    assert slash["usage_hint"].split(" | ") == usages
    table = re.findall(r"^\| `/paper ([^`]+)` \|", README, flags=re.M)
    assert table == usages
    # Both are drawn from the declarations: `python -m bot.chat.reference --write` after changing one.
    assert reference.in_readme(README, VERBS) == README, "README's command table is out of step with the verbs"
    assert slash["usage_hint"] == reference.usage_hint(VERBS)
    help_reply = commands.run(None, "help").reply  # help needs no context
    text = render(help_reply)
    slack_text = json.dumps(message(help_reply), ensure_ascii=False)
    for c in VERBS.values():
        assert c.usage in text and f"/paper {c.example}" in text
        assert c.name in slack_text


def test_manifest_asks_only_for_the_scopes_the_code_uses():
    scope_of = {
        "chat_postMessage": {"chat:write"},
        "chat_update": {"chat:write"},
        "chat_postEphemeral": {"chat:write"},
        "conversations_history": {"channels:history", "groups:history", "im:history"},
        "conversations_replies": {"channels:history", "groups:history", "im:history"},
        "conversations_open": {"im:write"},
        "users_info": {"users:read"},
        "views_open": set(),
        "views_update": set(),
        "views_publish": set(),
        "auth_test": set(),
    }
    code = "\n".join(p.read_text() for p in (ROOT / "bot").rglob("*.py"))
    names = set(re.findall(r"\b(?:client|quick|answers|quick_client\([^)]*\))\.([a-z]+_[A-Za-z]+)", code))
    called = {n for n in names if callable(getattr(WebClient, n, None))}  # Web API methods, not attributes
    assert called <= set(scope_of), f"a Web API method without a known scope: {called - set(scope_of)}"
    needed = {"commands"}.union(*(scope_of[m] for m in called))
    assert set(MANIFEST["oauth_config"]["scopes"]["bot"]) == needed
    # A hosted install's flow asks each workspace for the same scopes (bot/slack/hosted.py).
    assert sorted(BOT_SCOPES) == sorted(MANIFEST["oauth_config"]["scopes"]["bot"])
    # The Home tab; and an uninstall, which a hosted install hears of (a self-hosted one acks and ignores it).
    assert MANIFEST["settings"]["event_subscriptions"]["bot_events"] == [
        "app_home_opened",
        "app_uninstalled",
        "tokens_revoked",
    ]
    assert MANIFEST["settings"]["interactivity"]["is_enabled"] and MANIFEST["settings"]["socket_mode_enabled"]


def test_the_hosted_manifest_is_manifest_json_served_over_http():
    """docs/deploy/manifest.hosted.json is manifest.json with Socket Mode off and every request URL on
    one host, the one its OAuth redirect URL names: Slack's Marketplace takes HTTP apps only, and the
    two files cannot drift (a new verb's usage hint: copy manifest.json's into it)."""
    [redirect] = MANIFEST["oauth_config"]["redirect_urls"]
    assert redirect.startswith("https://") and redirect.endswith(REDIRECT_PATH)  # Slack wants HTTPS redirects
    events = redirect.removesuffix(REDIRECT_PATH) + EVENTS_PATH
    expected = json.loads(json.dumps(MANIFEST))
    expected["features"]["slash_commands"][0]["url"] = events
    expected["settings"]["event_subscriptions"]["request_url"] = events
    expected["settings"]["interactivity"]["request_url"] = events
    expected["settings"]["socket_mode_enabled"] = False
    assert expected == HOSTED_MANIFEST, "docs/deploy/manifest.hosted.json is out of step with manifest.json"
    hosting = DOCS["docs/hosting.md"]
    assert all("deploy/manifest.hosted.json" in DOCS[page] for page in ("docs/hosting.md", "docs/slack-setup.md"))
    assert INSTALL_PATH in hosting and REDIRECT_PATH in hosting and redirect in hosting


def test_the_hosting_page_says_how_to_make_the_secret_key():
    """The one-line command that PAPERBOT_SECRET_KEY's error points at (docs/hosting.md)."""
    assert MAKE_A_KEY in DOCS["docs/hosting.md"]
    assert MAKE_A_KEY in (ROOT / ".env.example").read_text()


def test_the_settings_table_in_docs_matches_the_code_and_env_example():
    from bot.discord.settings import DISCORD_SETTINGS

    names = re.findall(r"^\| `([A-Z_]+)` \|", SETTINGS_DOC, flags=re.M)
    assert names == list(SETTINGS) + list(DISCORD_SETTINGS)
    lines = (ROOT / ".env.example").read_text().splitlines()
    example = [line.split("=", 1)[0].strip() for line in lines if line.strip() and not line.startswith("#")]
    # PAPERBOT_DB is there commented out: a value in .env would take the Docker image's database off its volume.
    assert example == [name for name in SETTINGS if name != "PAPERBOT_DB"]
    # Discord's are there, commented out: a Slack install's .env leaves them unset.
    commented = [m[1] for line in lines if (m := re.match(r"^# ([A-Z_]+)=", line))]
    assert commented == ["PAPERBOT_DB", *DISCORD_SETTINGS]
    assert "docs/settings.md" in README


def test_every_setting_named_in_readme_and_docs_exists():
    misspellings_shown_on_purpose = {"PAPERBOT_TIMEZON", "SLACK_API_ULR", "SLACK_USER_TOKEN"}
    for name, text in {"README.md": README, **DOCS}.items():
        named = set(re.findall(r"\b(?:PAPERBOT|SLACK)_[A-Z_]*[A-Z]\b", text)) - misspellings_shown_on_purpose
        assert named <= set(SETTINGS), f"{name} names settings that do not exist: {named - set(SETTINGS)}"


def _verbs() -> dict[str, set[str]]:
    """Each verb of `paperbot` and its options, from the CLI's own parser."""
    import argparse

    from bot.cli import parser

    [verbs] = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return {name: {o for action in sub._actions for o in action.option_strings} for name, sub in verbs.choices.items()}


def _options() -> set[str]:
    """The options given before the verb (`paperbot --verbose run`)."""
    from bot.cli import parser

    return {o for action in parser()._actions for o in action.option_strings}


def test_readme_verbs_table_matches_the_cli():
    rows = re.findall(r"^\| `([a-z-]+)([^`]*)` \|", README.split("## The verbs", 1)[1], flags=re.M)
    verbs = _verbs()
    assert [verb for verb, _ in rows] == list(verbs)
    for verb, args in rows:
        assert set(re.findall(r"--[a-z-]+", args)) <= verbs[verb], f"`{verb}{args}`: an option it does not have"


def _code(text: str) -> str:
    """The code in markdown: fenced blocks and `spans`, where commands are written as typed."""
    fence = re.compile(r"^```[^\n]*\n(.*?)^```", flags=re.M | re.S)
    return "\n".join(fence.findall(text) + re.findall(r"`([^`\n]+)`", fence.sub("", text)))


#: `paperbot VERB` or `paperbot --option` as typed (not `/var/lib/paperbot`, the user or the image name).
INVOKED = re.compile(r"(?:^|(?<=\s)|(?<=bin/))paperbot (?:([a-z][a-z-]*)|(--[a-z-]+))", flags=re.M)


def test_every_verb_and_command_named_in_readme_and_docs_exists():
    verbs, names = _verbs(), set(VERBS)
    for doc, text in {"README.md": README, **DOCS}.items():
        code = _code(text)
        for verb, option in INVOKED.findall(code):
            if verb:
                assert verb in verbs, f"{doc}: `paperbot {verb}` is no verb"
            else:
                assert option in _options(), f"{doc}: `paperbot {option}` is no option"
        for command in re.findall(r"/paper ([a-z]+)", code):
            assert command in names, f"{doc}: `/paper {command}` is no command"


def test_links_in_readme_and_docs_point_at_files_that_exist():
    for doc, text in {"README.md": README, **DOCS}.items():
        base = (ROOT / doc).parent
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path = (base / target).resolve().relative_to(ROOT.resolve()).as_posix()
            assert (ROOT / path).exists() or path in PENDING, f"{doc} links to {target}, which does not exist"


def test_readme_is_short_and_points_at_the_depth_in_docs():
    # The commands table grows with each verb (drawn from the declarations); the rest stays short.
    prose = [line for line in README.splitlines() if not line.startswith("| `/paper ")]
    assert len(prose) <= 125
    for page in DOCS:
        if page.endswith(".md"):
            assert page in README, f"README does not link {page}"
    assert "bench/README.md" in README


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
    """README's transcript, replayed at its moment (Thursday 3 December 2026, 21:44 in Shanghai), on
    the tests' engine (PAPERBOT_TEST_ENGINE): the same output on both."""
    from bot.catalog.queries import open_store

    _, _, shown = readme_session.session()
    store = open_store(database_for(tmp_path))
    try:
        assert readme_session.replay(store).rstrip() == shown.rstrip()
    finally:
        store.close()


def test_slack_setup_says_why_for_every_scope_the_manifest_asks_for():
    page = (ROOT / "docs" / "slack-setup.md").read_text()
    for scope in MANIFEST["oauth_config"]["scopes"]["bot"]:
        assert f"`{scope}`" in page, f"docs/slack-setup.md does not say why the app asks for {scope}"


def test_the_docker_image_runs_the_bot_as_a_user_with_the_database_on_a_volume():
    dockerfile = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")  # continued lines as one
    steps: dict[str, list[str]] = {}
    for line in dockerfile.splitlines():
        if line[:1].isupper():
            instruction, rest = line.split(None, 1)
            steps.setdefault(instruction, []).append(rest)
    assert re.fullmatch(r"PYTHON_IMAGE=python:3\.1[1-9]-slim", steps["ARG"][0])
    assert any(re.search(r"pip install \.(\s|$)", run) for run in steps["RUN"]), "pip install . (no test extras)"
    assert steps["USER"][-1] not in ("root", "0")
    assert json.loads(steps["VOLUME"][-1]) == ["/data"]
    assert any("PAPERBOT_DB=/data/paperbot.db" in env.split() for env in steps["ENV"])
    assert json.loads(steps["ENTRYPOINT"][-1]) == ["paperbot"] and json.loads(steps["CMD"][-1]) == ["run"]
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert "**" in ignored
    assert not any(line.startswith("!") and (".env" in line or ".db" in line) for line in ignored)


def test_compose_runs_the_bot_with_env_and_the_database_on_its_volume():
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    [service] = compose["services"].values()
    assert service["command"] == ["run"] and service["env_file"] == ".env"
    [volume] = service["volumes"]
    name, target = volume.split(":")[:2]
    assert name in compose["volumes"]
    assert service["environment"]["PAPERBOT_DB"].startswith(target + "/")


def test_the_systemd_unit_runs_the_bot_as_its_own_user_writing_only_the_database_folder():
    unit: dict[str, list[str]] = {}
    for line in (ROOT / "docs" / "paperbot.service").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            unit.setdefault(key, []).append(value)
    assert unit["ExecStart"][0].endswith("/paperbot run")
    assert unit["User"][0] not in ("root", "0") and unit["EnvironmentFile"] and unit["WorkingDirectory"]
    assert unit["Restart"] == ["on-failure"] and unit["NoNewPrivileges"] == ["yes"]
    assert unit["ProtectSystem"] == ["strict"]
    [db] = [v.split("=", 1)[1] for e in unit["Environment"] for v in e.split() if v.startswith("PAPERBOT_DB=")]
    assert str(Path(db).parent) in unit["ReadWritePaths"][0].split()


def architecture_tree() -> set[str]:
    """The files and folders docs/architecture.md's tree names (`bot/store/connection.py`, `bot/store/`)."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    tree = page.split("## The tree", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    named, folders = set(), ["bot"]
    for line in tree.splitlines()[1:]:
        prefix, name = re.fullmatch(r"([│ ]*)[├└]── (\S+).*", line).groups()
        depth = len(prefix) // 4 + 1
        del folders[depth:]
        path = "/".join(folders) + "/" + name
        named.add(path)
        if name.endswith("/"):
            folders.append(name.rstrip("/"))
    return named


def test_the_architecture_page_names_every_module_and_no_gone_one():
    """docs/architecture.md's tree follows the code: a new module or package is placed in it, a removed one
    leaves it."""
    files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "bot").rglob("*.py") if p.name != "__init__.py"}
    folders = {p.parent.relative_to(ROOT).as_posix() + "/" for p in (ROOT / "bot").rglob("__init__.py")} - {"bot/"}
    named = architecture_tree()
    assert files - named == set(), f"modules missing from docs/architecture.md's tree: {sorted(files - named)}"
    assert folders - named == set(), f"packages missing from docs/architecture.md's tree: {sorted(folders - named)}"
    gone = {n for n in named if not (ROOT / n).exists()}
    assert gone == set(), f"docs/architecture.md's tree names what is gone: {sorted(gone)}"


def test_the_documented_docker_backup_reads_the_containers_database_and_fails_on_a_missing_one(tmp_path):
    """.env's PAPERBOT_DB once moved the database off the volume, and the backup line then copied an empty one."""
    import os
    import shlex
    import sqlite3
    import subprocess
    import sys

    [line] = [ln for ln in DOCS["docs/operations.md"].splitlines() if ln.startswith("docker exec bot python -c")]
    code = shlex.split(line)[5].replace("/data/backup.db", str(tmp_path / "backup.db"))

    def backup(db) -> subprocess.CompletedProcess:
        env = {**os.environ, "PAPERBOT_DB": str(db)}
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)

    missing = backup(tmp_path / "nowhere.db")
    assert missing.returncode != 0 and "unable to open database" in missing.stderr
    assert not (tmp_path / "nowhere.db").exists() and not (tmp_path / "backup.db").exists()

    real = tmp_path / "paperbot.db"
    with sqlite3.connect(real) as db:
        db.execute("CREATE TABLE papers (title TEXT)")
        db.execute("INSERT INTO papers VALUES ('kept')")
    done = backup(real)
    assert done.returncode == 0 and str(real) in done.stdout
    assert sqlite3.connect(tmp_path / "backup.db").execute("SELECT title FROM papers").fetchall() == [("kept",)]


def test_the_postgresql_deployment_runs_two_replicas_behind_a_balancer_that_checks_healthz():
    """docs/deploy/: the compose file's replicas use one PostgreSQL URL, HAProxy balances every one of
    them with /healthz, and the systemd unit starts the installed console script."""
    import yaml

    deploy = ROOT / "docs" / "deploy"
    compose = yaml.safe_load((deploy / "compose.postgres.yml").read_text())
    services = compose["services"]
    replicas = [name for name, s in services.items() if s.get("command") == ["run"]]
    assert len(replicas) >= 2 and "postgres" in services
    assert {services[r]["environment"]["PAPERBOT_DB"] for r in replicas} == {
        "postgresql://paperbot:paperbot@postgres/paperbot"
    }
    haproxy = (deploy / "haproxy.cfg").read_text()
    assert "option httpchk GET /healthz" in haproxy
    assert all(f"server {r} {r}:3000 check" in haproxy for r in replicas)
    unit = (deploy / "paperbot@.service").read_text()
    assert "ExecStart=/opt/paperbot/bin/paperbot run" in unit and "Environment=PORT=300%i" in unit
    assert "compose.postgres.yml" in DOCS["docs/operations.md"]
