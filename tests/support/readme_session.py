"""README's console session ("## A session"), replayed at its moment: Thursday 3 December 2026,
21:44 in Shanghai, as the console's operator (or as another member)."""

from __future__ import annotations

import io
import re
import shlex
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.chat import context
from bot.console.session import serve as console_serve
from bot.schedule.signups import Member
from bot.settings import Settings
from tests.support.repo import ROOT

MOMENT = datetime(2026, 12, 3, 21, 44, tzinfo=ZoneInfo("Asia/Shanghai"))


def session() -> tuple[dict[str, str], str, str]:
    """README's session: its environment, the lines typed, and what the console printed."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## A session", 1)[1].split("```console\n", 1)[1].split("```", 1)[0]
    export, piped, shown = block.split("\n", 2)
    environ = dict(assignment.split("=", 1) for assignment in shlex.split(export.removeprefix("$ export ")))
    [typed] = re.fullmatch(r"\$ printf '([^']*)' \| paperbot console", piped).groups()
    return environ, typed.replace("\\n", "\n"), shown


def replay(store, typed: str | None = None, user: str = "console") -> str:
    """What the console prints for README's lines (or `typed`) in README's environment, as `user`."""
    environ, readme_typed, _ = session()
    settings = Settings.load(environ, dotenv=None)
    out = io.StringIO()
    make = lambda: context.Context(store, settings.group, Member(user, lambda: user == "console"), MOMENT)  # noqa: E731
    console_serve(make, io.StringIO(readme_typed if typed is None else typed), out)
    return out.getvalue()
