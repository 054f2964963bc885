"""What the answers that list papers, weeks and talks share: the footer, the pager, the marks."""

from __future__ import annotations

from bot.catalog import queries as catalog
from bot.catalog import votes
from bot.chat.context import Context
from bot.rich_text import Button, command_code, text

#: Lists are compact, two lines a paper; the sign-up button is on `show`, the weekly post and App Home.
LIST_FOOTER = text(
    "Sign up: ", command_code("signup <number> [<date>]"), "  ·  a paper in full: ", command_code("show <number>")
)


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


def mark_archived(ctx: Context, lines: list) -> list:
    """Mark the lines whose paper was archived after its talk was booked: the talk stands, and says so."""
    archived = catalog.archived_among(ctx.store, {line.paper.number for line in lines if line.paper is not None})
    for line in lines:
        line.archived = line.paper is not None and line.paper.number in archived
    return lines
