"""What the answers that list papers, weeks and talks share: the footer, the pager, the marks."""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from bot.catalog import queries as catalog
from bot.catalog import votes
from bot.chat.context import Answer, Context, notice
from bot.rich_text import Button, command_code, text
from bot.schedule.rows import SlotLine, TalkWeek

#: Lists are compact, two lines a paper; the sign-up button is on `show`, the weekly post and App Home.
LIST_FOOTER = text(
    "Sign up: ", command_code("signup <number> [<date>]"), "  ·  a paper in full: ", command_code("show <number>")
)


#: What a command that lists papers says of a catalog with none at all, rather than nothing: how to begin.
EMPTY_CATALOG = text(
    "The catalog is empty: add a paper with ",
    command_code("add <link>"),
    " (admins), or suggest one with ",
    command_code("suggest <link>"),
    ".",
)


def if_empty(ctx: Context) -> Answer | None:
    """The hint on adding papers when the catalog has none at all, else None."""
    return notice(*EMPTY_CATALOG) if catalog.empty(ctx.store) else None


def pager(command: str, page: int, has_more: bool, size: int) -> list[Button]:
    buttons = []
    if page > 1:
        buttons.append(Button(f"◀ Previous {size}", f"{command} --page {page - 1}"))
    if has_more:
        buttons.append(Button(f"Next {size} ▶", f"{command} --page {page + 1}"))
    return buttons


def shown_range(page: catalog.Page, size: int) -> str:
    first = (page.page - 1) * size + 1
    return f"{first}–{first + len(page.papers) - 1}"


def votes_of(ctx: Context, papers: list[catalog.Paper]) -> dict[int, int]:
    return votes.counts(ctx.store, [p.number for p in papers])


#: A line of the schedule, or a talk: `mark_archived` gives back what it was given.
Line = TypeVar("Line", bound=SlotLine)


def mark_archived(ctx: Context, lines: list[Line]) -> list[Line]:
    """The lines, those whose paper was archived after its talk was booked marked: the talk stands, and says so."""
    numbers = {line.paper.number for line in lines if isinstance(line, TalkWeek) and line.paper is not None}
    archived = catalog.archived_among(ctx.store, numbers)
    return [
        replace(line, archived=True)
        if isinstance(line, TalkWeek) and line.paper and line.paper.number in archived
        else line
        for line in lines
    ]
