"""README's command table and the Slack manifest's usage hint, drawn from the verbs' declarations.

    python -m bot.chat.reference           # says whether README.md and manifest.json are in step
    python -m bot.chat.reference --write   # rewrites README's table and the manifest's usage hint

Both files are read by people who never run the code, so they are written out rather than drawn at
run time; tests/unit/test_docs.py fails when a declaration changed and they were not rewritten.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from bot.chat.registry import Verb, usages
from bot.rich_text import COMMAND

ROOT = Path(__file__).resolve().parents[2]
HEADER = "| command | what it does |\n| --- | --- |\n"
_TABLE = re.compile(re.escape(HEADER) + r"(?:\|[^\n]*\|\n)*")


def readme_table(verbs: dict[str, Verb]) -> str:
    """The command table of README's "The `/paper` command" section: a row a verb, in help's order."""
    rows = (f"| `{COMMAND} {v.usage}` | {v.reference or v.summary} |\n" for v in verbs.values())
    return HEADER + "".join(rows)


def usage_hint(verbs: dict[str, Verb]) -> str:
    """What Slack shows under `/paper` as it is typed: every verb's usage."""
    return " | ".join(usages(verbs))


def in_readme(readme: str, verbs: dict[str, Verb]) -> str:
    """`readme` with its command table drawn from `verbs`."""
    if not _TABLE.search(readme):
        raise ValueError("README.md has no command table (a '| command | what it does |' header)")
    return _TABLE.sub(lambda _: readme_table(verbs), readme, count=1)


def in_manifest(manifest: dict, verbs: dict[str, Verb]) -> dict:
    """`manifest` with its slash command's usage hint drawn from `verbs`."""
    for slash in manifest["features"]["slash_commands"]:
        if slash["command"] == COMMAND:
            slash["usage_hint"] = usage_hint(verbs)
    return manifest


def main(argv: list[str]) -> int:
    from bot.chat.commands import VERBS  # noqa: PLC0415 (commands imports every verb module: only when run)

    readme_path, manifest_path = ROOT / "README.md", ROOT / "manifest.json"
    readme = readme_path.read_text()
    manifest = json.loads(manifest_path.read_text())
    new_readme = in_readme(readme, VERBS)
    new_manifest = json.dumps(in_manifest(json.loads(json.dumps(manifest)), VERBS), indent=2, ensure_ascii=False) + "\n"
    stale = [
        p.name
        for p, old, new in ((readme_path, readme, new_readme), (manifest_path, manifest_path.read_text(), new_manifest))
        if old != new
    ]
    if "--write" in argv:
        readme_path.write_text(new_readme)
        manifest_path.write_text(new_manifest)
        print("rewrote " + ", ".join(stale) if stale else "README.md and manifest.json were in step")
        return 0
    print(("out of step: " + ", ".join(stale) + " (python -m bot.chat.reference --write)") if stale else "in step")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
