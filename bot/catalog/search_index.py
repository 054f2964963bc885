"""The catalog's search indexes: which FTS5 tables hold them, and how they merge their segments.

    set_merging(db, MERGING_DEFERRED)   # while a big import writes; MERGING again at its end

Three indexes, read in this order for "best first": titles, tags, everything (see catalog.search).
"""

from __future__ import annotations

import sqlite_utils

from bot.store import engine

SEARCH_TABLES = ("paper_titles", "paper_tag_words", "paper_search")
#: As FTS5 merges by default, and not at all while a big import writes (its end merges each index
#: once, see importing.optimize).
MERGING = {"automerge": 4, "crisismerge": 16}
MERGING_DEFERRED = {"automerge": 0, "crisismerge": 1000}


def set_merging(db: sqlite_utils.Database, settings: dict[str, int]) -> None:
    for table in SEARCH_TABLES:
        for key, value in settings.items():
            db.execute(f"INSERT INTO {table} ({table}, rank) VALUES (?, ?)", [key, value])


def merging_left_off(db: sqlite_utils.Database) -> bool:
    """Did an import that was killed leave merging off? Searches slow down as segments pile up."""
    if engine.is_postgres(db):  # GIN indexes have no segments to merge
        return False
    return db.execute("SELECT v FROM paper_search_config WHERE k = 'automerge'").fetchone() == (0,)
