"""A verb declared once, through the registry, is typed, clicked, listed and offered on Discord."""

from __future__ import annotations

import pytest

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.chat import commands, context, reference, registry
from bot.chat.context import Answer, notice
from bot.console.render import render as console_text
from bot.discord import definition
from bot.rich_text import PaperRef
from bot.schedule import signups
from bot.schedule.signups import Member
from tests.support.clock import TZ, at
from tests.support.discord_standin import check_commands
from tests.support.repo import ROOT

GROUP = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))


@pytest.fixture
def retire(monkeypatch):
    """`retire <paper> [<date>]`, for the install's admins: declared in a test, as a new verb would be."""
    monkeypatch.setattr(commands, "VERBS", dict(commands.VERBS))

    @registry.verb(
        commands.VERBS,
        "retire",
        "retire a paper from the reading list",
        "retire 7 next",
        registry.Arg("paper", registry.PAPER),
        registry.Arg("date", registry.DATE, optional=True),
        rights=registry.catalog_admins("retire papers"),
    )
    def body(ctx: context.Context, paper: str, date: str | None) -> Answer:
        found = signups.find_paper(ctx.store, paper)
        return notice("Retired ", PaperRef(found), f" from {date or 'now'}.")


def say(store, line: str, admin: bool = True) -> str:
    ctx = context.Context(store, GROUP, Member("U1", lambda: admin), at("2026-12-02 10:00"))
    return console_text(commands.run(ctx, line).reply)


def test_a_declared_verb_is_in_help_and_runs_with_its_arguments_read(store, retire):
    shown = console_text(commands.run(None, "help").reply)
    assert "retire <paper> [<date>]" in shown and "/paper retire 7 next" in shown
    assert "Retired #7" in say(store, "retire 7 next") and "from next" in say(store, "retire #7 next")
    assert say(store, "retire").startswith("✗ Usage: `/paper retire <paper> [<date>]`, for example ")
    assert say(store, "retire 7 next week").startswith("✗ Usage:")
    assert say(store, "retire 7", admin=False).startswith("✗ Only admins can retire papers.")
    assert say(store, "retir 7").startswith("✗ I don't know `retir`. Did you mean `retire`?")


def test_a_declared_verb_is_a_discord_subcommand_with_its_options(retire):
    body = definition.definition()
    check_commands(body)
    [sub] = [o for o in body[0]["options"] if o["name"] == "retire"]
    assert sub["description"] == "retire a paper from the reading list (admins)"
    assert [(o["name"], o["required"], o.get("autocomplete", False)) for o in sub["options"]] == [
        ("paper", True, True),
        ("date", False, False),
    ]
    data = {"name": "paper", "options": [{"name": "retire", "type": 1, "options": [{"name": "paper", "value": "7"}]}]}
    assert definition.line_of(data) == "retire 7"


def test_a_declared_verb_has_its_row_in_readmes_table_and_the_manifests_hint(retire):
    readme = (ROOT / "README.md").read_text()
    drawn = reference.in_readme(readme, commands.VERBS)
    row = "| `/paper retire <paper> [<date>]` | retire a paper from the reading list |"
    assert row in drawn.splitlines() and row not in readme.splitlines()
    assert drawn.index("/paper groups`") < drawn.index(row) < drawn.index("## ", drawn.index("/paper groups`"))
    assert reference.usage_hint(commands.VERBS).endswith(" | groups | retire <paper> [<date>]")
