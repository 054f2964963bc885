"""Opening PAPERBOT_DB for a verb: the store, or one line saying why it cannot be.

store = opening.open_database(settings.db_path, writes=False)   # raises CannotOpen(line)
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from bot.catalog import queries as catalog
from bot.store.connection import BUSY_TIMEOUT_MS, DiskFull, NotADatabase, Store
from bot.store.engine import shown

#: The one line for a write that found no room on the disk (store.DiskFull).
DISK_FULL = "the disk holding the database is full: nothing was changed. Free some space and try again."


class CannotOpen(Exception):
    """The database cannot be used; str() is the one line to show."""


def open_database(
    database: Path | str, *, writes: bool = True, seed: bool = True, quiet_when_new: bool = False
) -> Store:
    """The store at `database` (a path or a PostgreSQL URL), made when missing (with the first list
    unless `seed` is False), said on stderr when new unless `quiet_when_new`."""
    path = shown(database)
    try:
        store = catalog.open_store(database, writes=writes, **({} if seed else {"seed": None}))
    except NotADatabase as e:
        left = "" if isinstance(database, str) else " (only a missing file is made)"
        raise CannotOpen(f"PAPERBOT_DB: {path} {e}; it was left as it is{left}: {e.remedy}") from None
    except DiskFull:
        raise CannotOpen(f"PAPERBOT_DB: {DISK_FULL}") from None
    except OSError as e:
        raise CannotOpen(f"PAPERBOT_DB: cannot open {path} ({e.strerror or e})") from None
    except sqlite3.DatabaseError as e:
        if isinstance(database, str):  # PostgreSQL: refused, unreachable, or no such database
            raise CannotOpen(f"PAPERBOT_DB: cannot use the PostgreSQL database {path} ({e})") from None
        if "unable to open" in str(e) or "readonly" in str(e):
            raise CannotOpen(f"PAPERBOT_DB: cannot write {path} or its folder ({e})") from None
        if "locked" in str(e):  # the file is fine: another process held it all the while
            raise CannotOpen(
                f"PAPERBOT_DB: {path} is busy: another process kept it locked for "
                f"{BUSY_TIMEOUT_MS / 1000:g} s ({e}); try again when it is done"
            ) from None
        raise CannotOpen(f"PAPERBOT_DB: {path} is not a usable SQLite file ({e})") from None
    if store.created and not quiet_when_new:
        say_new_database(database, catalog.count(store))
    return store


def say_new_database(database: Path | str, papers: int) -> None:
    """A new database is news: said on stderr with its full path, loudly when the path depends on
    where paperbot was started (a `run` started in another folder gets a database of its own)."""
    if isinstance(database, str):
        line = f"paperbot: made a new database in {shown(database)} ({papers} papers)"
    else:
        line = f"paperbot: made a new database at {database.resolve()} ({papers} papers)"
        if not database.is_absolute():
            line += (
                f"; PAPERBOT_DB ({database}) is relative to the current folder, so paperbot started elsewhere uses"
                " another database: set PAPERBOT_DB to an absolute path"
            )
        elif not sys.stderr.isatty():  # a path given in full was meant; a script reads the outcome alone
            return
    if isinstance(database, str) and not sys.stderr.isatty():
        return
    print(line, file=sys.stderr)
