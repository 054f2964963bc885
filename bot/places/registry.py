"""The places an install serves, and each place's store.

    places = Places(house, settings.db_path)      # house: the install's own store (PAPERBOT_DB)
    place = places.join("slack-T012AB", "slack", "Lab group")
    store = places.store(place.id)               # that place's catalog, groups, votes, ...

A place is a Slack workspace (or Enterprise Grid organisation) or a Discord server. The self-hosted
install is one place, HOME, whose tables are the install's own database: upgrading keeps all of it as
that place. Every other place's tables are apart, at one level below every query: a SQLite file of
its own beside PAPERBOT_DB, or a PostgreSQL schema of its own in the same database. So a statement
that forgot a WHERE still reads one place's rows: there are no others where it looks, and paper
numbers, names and every unique rule are each place's own without a column to say so.
"""

from __future__ import annotations

import re
import shutil
import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

from bot.store.connection import Store

#: The self-hosted place: the install's own database, from the bot token in `.env`.
HOME = "home"
#: A place's id: its platform's name and the platform's id of the workspace or server (`slack-T012AB`,
#: `discord-81234567890`: each adapter makes its own).
PLACE_ID = re.compile(r"^(home|[a-z]{2,10}-[A-Za-z0-9]{2,20})\Z")  # \Z: a newline at its end is no id
#: Where a place's pages and feeds are: under PAPERBOT_PUBLIC_URL's path, `/p/<place>/...`.
PAGES_PREFIX = "/p/"
#: How often a place's last activity is written (a request a second must not be a write a second).
SEEN_EVERY = timedelta(minutes=1)


@dataclass(frozen=True)
class Place:
    id: str
    platform: str
    name: str = ""
    state: str = "active"
    joined_at: str = ""
    seen_at: str | None = None

    @property
    def active(self) -> bool:
        return self.state == "active"


S = TypeVar("S")


def place_settings(settings: S, place: str, **own: object) -> S:
    """A hosted place's settings (a platform's, `own` its platform's own fields): the install's, with the
    place's pages under their own path and none of the install's own group (channel, admins, focus tag,
    name): the place starts its groups in chat."""
    public_url = getattr(settings, "public_url", None)
    return replace(  # type: ignore[type-var]  # every platform's settings are a dataclass
        settings,
        channel=None,
        admins=frozenset(),
        focus_tag=None,
        group_name=None,
        public_url=f"{public_url}{PAGES_PREFIX}{place}" if public_url else None,
        **own,
    )


class UnknownPlace(LookupError):
    """No such place: str() is the line to show."""


class Places:
    """The install's places (the house store's `places` table) and their stores, opened once each."""

    def __init__(self, house: Store, database: Path | str):
        self.house = house
        self.database = database
        self._stores: dict[str, Store] = {}
        self._lock = threading.Lock()
        self._seen: dict[str, datetime] = {}

    # -- the list ---------------------------------------------------------------

    def get(self, place: str) -> Place | None:
        if place == HOME:
            return Place(HOME, "", "this install's own")
        rows = list(self.house.db.query("SELECT * FROM places WHERE id = ?", [place]))
        return _place(rows[0]) if rows else None

    def every(self) -> list[Place]:
        """Every place, the install's own first, then as they joined."""
        rows = self.house.db.query("SELECT * FROM places ORDER BY joined_at, id")
        return [Place(HOME, "", "this install's own"), *(_place(r) for r in rows)]

    def active(self) -> list[Place]:
        return [p for p in self.every() if p.active and p.id != HOME]

    def join(self, place: str, platform: str, name: str = "") -> Place:
        """Add `place` (or bring it back, when it had left), named `name`; its store is made now."""
        if not PLACE_ID.match(place) or place == HOME:
            raise UnknownPlace(f"{place!r} is not a place id")
        if self.get(place) is None:  # new, or forgotten by another process: a store kept open is of deleted tables
            self.release(place)
        now = _now()
        with self.house.write() as db:
            db.execute(
                "INSERT INTO places (id, platform, name, joined_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET state = 'active', left_at = NULL, "
                "name = CASE WHEN excluded.name = '' THEN places.name ELSE excluded.name END",
                [place, platform, name[:200], now],
            )
        self.store(place)
        found = self.get(place)
        assert found is not None
        return found

    def leave(self, place: str) -> None:
        """The place uninstalled the app or removed the bot: its groups stop; its data stays until `forget`."""
        with self.house.write() as db:
            db.execute("UPDATE places SET state = 'gone', left_at = ? WHERE id = ?", [_now(), place])

    def seen(self, place: str) -> None:
        """A request came from `place`: its last activity, written at most once a minute."""
        now = datetime.now(UTC)
        last = self._seen.get(place)
        if place == HOME or (last is not None and now - last < SEEN_EVERY):
            return
        self._seen[place] = now
        with self.house.write() as db:
            db.execute("UPDATE places SET seen_at = ? WHERE id = ?", [now.isoformat(timespec="seconds"), place])

    # -- each place's store --------------------------------------------------------

    def store(self, place: str) -> Store:
        """`place`'s store, opened once (made, empty, the first time); the house's for HOME."""
        if place == HOME:
            return self.house
        with self._lock:
            store = self._stores.get(place)
            if store is None:
                store = self._stores[place] = open_place(self.database, place)
            return store

    def release(self, place: str) -> None:
        """Close `place`'s store, if it is open: the next `store(place)` opens it afresh."""
        with self._lock:
            store = self._stores.pop(place, None)
        if store is not None:
            store.close()

    def forget(self, place: str) -> None:
        """Delete `place`'s data for good: its tables, its tokens, its row."""
        if place == HOME:
            raise UnknownPlace("the install's own place is its database: delete PAPERBOT_DB to forget it")
        if self.get(place) is None:
            raise UnknownPlace(f"no place {place!r}: `paperbot places` lists them")
        self.release(place)
        drop_place(self.database, place)
        with self.house.write() as db:
            db.execute("DELETE FROM places WHERE id = ?", [place])

    def close(self) -> None:
        with self._lock:
            stores, self._stores = list(self._stores.values()), {}
        for store in stores:
            store.close()


def is_url(database: Path | str) -> bool:
    """Is PAPERBOT_DB a PostgreSQL URL (psycopg is imported only then)?"""
    return isinstance(database, str) and database.startswith(("postgresql://", "postgres://"))


def place_file(database: Path, place: str) -> Path:
    """Where a place's SQLite file is: a folder beside PAPERBOT_DB, `<name>-places/<place>.db`."""
    return database.with_name(database.name + "-places") / f"{place}.db"


def open_place(database: Path | str, place: str, *, writes: bool = True) -> Store:
    """A place's store on the install's database: made empty (no starter list) the first time."""
    from bot.catalog import queries as catalog  # noqa: PLC0415 - the catalog imports the store, not the other way

    if is_url(database):
        from bot.store.postgres import schema_name  # noqa: PLC0415 - psycopg only for a URL

        return catalog.open_store(str(database), seed=None, writes=writes, schema=schema_name(place))
    return catalog.open_store(place_file(Path(database), place), seed=None, writes=writes)


def drop_place(database: Path | str, place: str) -> None:
    """Delete a place's tables (its file and journals, or its schema)."""
    if is_url(database):
        from bot.store.postgres import PgStore, schema_name  # noqa: PLC0415 - psycopg only for a URL

        house = PgStore(str(database))
        try:
            with house.write() as db:
                db.execute(f'DROP SCHEMA IF EXISTS "{schema_name(place)}" CASCADE')
        finally:
            house.close()
        return
    path = place_file(Path(database), place)
    for leftover in (path, *(path.with_name(path.name + end) for end in ("-wal", "-shm", "-journal"))):
        leftover.unlink(missing_ok=True)
    owners = path.with_name(path.name + "-owners")
    if owners.is_dir():
        shutil.rmtree(owners, ignore_errors=True)


def _place(row: dict) -> Place:
    return Place(row["id"], row["platform"], row["name"], row["state"], row["joined_at"], row["seen_at"])


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
