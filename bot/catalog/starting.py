"""A group's own start: the starter list emptied (`paperbot init --empty` over it) while nobody used it.

The starter list is untouched when its papers are as seeded (none added, edited, archived or
deleted) and no member did anything with them: no sign-up, vote, suggestion, talk link, post or
reminder, Discord event, or group started in chat. What the operator tried in the console (as its
user `console`, as README's session does) is a try-out, not a member's doing: it goes with the list.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from bot.catalog.search_index import SEARCH_TABLES
from bot.store.connection import Store

#: The console's own user: the operator trying paperbot out (bot/cli.py's `console`).
OPERATOR = "console"


class Used(Exception):
    """The database holds what members did or changed; str() names it, for a one-line refusal."""


#: Members' doings, counted: the query (`:operator` the operator, whose try-outs do not count), and its words.
_DOINGS = (
    (
        "SELECT count(*) FROM slots WHERE kind = 'presenter' AND (presenter != :operator OR booked_by != :operator)",
        "sign-up",
        "sign-ups",
    ),
    ("SELECT count(*) FROM slots WHERE kind = 'skipped' AND booked_by != :operator", "skipped week", "skipped weeks"),
    ("SELECT count(*) FROM votes WHERE member != :operator", "vote", "votes"),
    ("SELECT count(*) FROM suggestions WHERE suggested_by != :operator", "suggestion", "suggestions"),
    ("SELECT count(*) FROM talk_links WHERE added_by != :operator", "talk link", "talk links"),
    ("SELECT count(*) FROM deliveries", "post or reminder", "posts and reminders"),
    ("SELECT count(*) FROM discord_events", "Discord event", "Discord events"),
    ("SELECT count(*) FROM groups WHERE id != 1", "group started in chat", "groups started in chat"),
)


def digest(db) -> str:
    """The catalog's papers and tags, hashed: kept at seeding, so that any later change shows."""
    h = hashlib.sha256()
    for sql in ("SELECT * FROM papers ORDER BY number", "SELECT paper, tag FROM paper_tags ORDER BY paper, tag"):
        for row in db.execute(sql):
            h.update(repr(tuple(row)).encode())
    return h.hexdigest()


def _members_doing(db) -> list[str]:
    """What members did or changed, in words ("2 sign-ups", "1 vote"): empty when nothing."""
    seeded = int((db.execute("SELECT value FROM meta WHERE key = 'seeded'").fetchone() or ["0"])[0])
    kept, added, edited, archived = db.execute(
        "SELECT count(*) FILTER (WHERE number <= ?1), count(*) FILTER (WHERE number > ?1),"
        " count(*) FILTER (WHERE updated_at != added_at), count(archived_at) FROM papers",
        [seeded],
    ).fetchone()
    seeded_as = db.execute("SELECT value FROM meta WHERE key = 'seeded_digest'").fetchone()
    if not edited and seeded_as is not None and seeded_as[0] != digest(db) and not added and kept == seeded:
        edited = 1  # changed within the second it was seeded in: its times do not show it
    counts = [(added, "paper added", "papers added"), (seeded - kept, "paper deleted", "papers deleted")]
    counts += [(edited, "paper edited", "papers edited"), (archived, "paper archived", "papers archived")]
    counts += [(db.execute(sql, {"operator": OPERATOR}).fetchone()[0], one, many) for sql, one, many in _DOINGS]
    return [f"{n} {one if n == 1 else many}" for n, one, many in counts if n > 0]


def empty(store: Store, where: Path) -> str:
    """Empty an untouched starter list, with the operator's try-outs on it: the line saying so.
    Raises Used, naming what members did, and then changes nothing."""
    with store.write() as db:
        done = _members_doing(db)
        if done:
            raise Used(
                f"holds what members did ({', '.join(done)}); init --empty would lose it, so it was left as it is"
            )
        gone = db.execute("SELECT count(*) FROM papers").fetchone()[0]
        for table in ("outbox", "calendar_weeks", "talk_links", "slots", "votes", "suggestions", "paper_tags"):
            db.execute(f"DELETE FROM {table}")  # noqa: S608 (the tables are named above)
        for table in (*SEARCH_TABLES, "search_vocab", "papers", "tags"):
            db.execute(f"DELETE FROM {table}")  # noqa: S608
        db.execute("UPDATE meta SET value = '0' WHERE key = 'seeded'")  # never seeded again
    return f"Emptied the catalog at {where}: the {gone} starter papers are gone; it has 0 papers."
