"""Votes for papers: one a member, for the whole install (not per group).

    voted = votes.toggle(store, paper, "U1")     # True: counted; False: taken back
    votes.counts(store, [7, 9])                  # {7: 3}: papers with no votes are left out

With PAPERBOT_ROTATION=votes the paper of the week is the most-voted paper not yet
featured (weekly.next_in_rotation reads the votes table itself).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from bot.catalog.papers import Paper
from bot.store.connection import Store


def toggle(store: Store, paper: Paper, member: str) -> bool:
    """A vote by `member` for `paper`, or their vote taken back when they had one: True when it now counts."""
    with store.write() as db:
        gone = db.execute("DELETE FROM votes WHERE paper = ? AND member = ?", [paper.number, member]).rowcount
        if gone:
            return False
        db.execute(
            "INSERT INTO votes (paper, member, voted_at) VALUES (?, ?, ?)",
            [paper.number, member, datetime.now(UTC).isoformat(timespec="seconds")],
        )
        return True


def count(store: Store, paper: Paper) -> int:
    return store.db.execute("SELECT count(*) FROM votes WHERE paper = ?", [paper.number]).fetchone()[0]


def counts(store: Store, numbers: Iterable[int]) -> dict[int, int]:
    """The votes of each of `numbers` that has any, in one query (a list's page)."""
    numbers = list(numbers)
    if not numbers:
        return {}
    marks = ",".join("?" * len(numbers))
    rows = store.db.execute(
        f"SELECT paper, count(*) FROM votes WHERE paper IN ({marks}) GROUP BY paper", numbers
    ).fetchall()
    return {paper: n for paper, n in rows}


def has_voted(store: Store, paper: Paper, member: str) -> bool:
    row = store.db.execute("SELECT 1 FROM votes WHERE paper = ? AND member = ?", [paper.number, member]).fetchone()
    return row is not None
