"""The few places where SQLite and PostgreSQL need different SQL, outside search and the store's
internals (docs/architecture.md lists them all).

    if engine.is_postgres(db): ...
    next_number = engine.highest_paper_number(db) + 1
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any


def shown(database: Path | str) -> str:
    """PAPERBOT_DB for logs and answers: a PostgreSQL URL without its password."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", str(database))


def is_postgres(db_or_store: Any) -> bool:
    """Is this database (a Store or its `db`) PostgreSQL's?"""
    return getattr(db_or_store, "engine", "sqlite") == "postgresql"


def highest_paper_number(db: Any) -> int:
    """The highest paper number ever handed out (numbers are never reused, even after a deletion)."""
    if is_postgres(db):
        sql = (
            "SELECT greatest((SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM papers_number_seq), "
            "coalesce((SELECT max(number) FROM papers), 0))"
        )
    else:  # AUTOINCREMENT's sqlite_sequence follows explicit numbers too
        sql = (
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'papers'), 0), "
            "coalesce((SELECT max(number) FROM papers), 0))"
        )
    return int(db.execute(sql).fetchone()[0])


def numbers_given(db: Any, highest: int) -> None:
    """After papers were inserted with numbers of their own up to `highest`: the next paper added
    without one is numbered above them (SQLite's AUTOINCREMENT does this by itself)."""
    if is_postgres(db) and highest > 0:
        db.execute(
            "SELECT setval('papers_number_seq', greatest(?, "
            "(SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM papers_number_seq)))",
            [highest],
        )
