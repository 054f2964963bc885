"""What the operator of a hosted install does with its places (bot/places/registry.py): `paperbot
places`, `paperbot forget ID`, and the place `--place ID` names for export, import, console,
post-week, remind and copy (its settings: bot/platforms.py's `for_place`).

    places = operators.opened(settings.db_path, "slack-T012AB")    # the install's list of places
    place = operators.named(places, "slack-T012AB")
    store = operators.store_of(places, place)
    print("\\n".join(operators.table(operators.rows(places, "C0PAPERS", "slack"))))
    held = operators.forget(places, place)                          # what it held, deleted

Asking for a place that is not there makes nothing: not its store, not PAPERBOT_DB. Every refusal is
registry.UnknownPlace, whose str() is the one line to show.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bot.catalog import opening
from bot.places.registry import HOME, PLACE_ID, Place, Places, UnknownPlace, is_url, open_place, place_file
from bot.store import copying
from bot.store.connection import NotADatabase, Store
from bot.store.postgres import schema_name

#: Where a place's last activity can be read off its own tables (each column UTC, ISO 8601): what
#: its members and its posts did. Group rows are left out: a migration stamps them when it runs.
ACTIVITY = (
    ("papers", "updated_at"),
    ("slots", "booked_at"),
    ("deliveries", "updated_at"),
    ("votes", "voted_at"),
    ("suggestions", "created_at"),
    ("talk_links", "added_at"),
    ("questions", "asked_at"),
    ("attendance", "said_at"),
    ("swap_offers", "offered_at"),
    ("openings", "opened_at"),
)
#: How `paperbot places` heads its columns (the last, the name, may hold spaces).
HEADER = ("ID", "PLATFORM", "STATE", "PAPERS", "GROUPS", "LAST_ACTIVITY", "CHANNELS", "NAME")
#: The environment's group (groups.ENV): a place's has no channel, HOME's is PAPERBOT_CHANNEL.
ENV_GROUP = 1
#: Why `forget home` is refused.
HOME_STAYS = (
    "forget: home is the install's own place, its database itself, and is never forgotten "
    "(to delete it, stop paperbot and delete PAPERBOT_DB)"
)


def opened(database: Path | str, place: str = HOME, *, said: str = "--place", writes: bool = True) -> Places:
    """The install's places on its database (PAPERBOT_DB), which must be there already when `place`
    is not the install's own."""
    if place != HOME and isinstance(database, Path) and not os.path.lexists(database):
        raise UnknownPlace(f"{said}: there is no place {place[:60]}: PAPERBOT_DB {database} does not exist")
    try:
        return Places(opening.open_database(database, writes=writes), database)
    except opening.CannotOpen as e:
        raise UnknownPlace(str(e)) from None


def named(places: Places, place: str, *, said: str = "--place") -> Place:
    """The place `place` names (HOME: the install's own)."""
    if not PLACE_ID.match(place):
        raise UnknownPlace(
            f"{said}: {place[:60]!r} is not a place id (home, slack-T…, slack-E… or discord-…): "
            "`paperbot places` lists them"
        )
    found = places.get(place)
    if found is None:
        raise UnknownPlace(f"{said}: there is no place {place}: `paperbot places` lists them")
    return found


def not_home(place: str) -> str:
    """`place`, unless it is HOME (for `forget`)."""
    if place == HOME:
        raise UnknownPlace(HOME_STAYS)
    return place


def store_of(places: Places, place: Place, *, writes: bool = True) -> Store:
    """The place's store (HOME: the house's), opened for this verb alone."""
    if place.id == HOME:
        return places.house
    return open_place(places.database, place.id, writes=writes)


# -- paperbot copy --place ------------------------------------------------------------------


def copy(
    source: str, target: str, place: str | None, *, show: Callable[[str | Path], str]
) -> tuple[list[str], str | None]:
    """`paperbot copy [--place ID] FROM TO`: what it says, and a note for stderr (or None). A place
    other than HOME is copied alone: its tables become TO's, a one-place install of their own."""
    within, shown = None, show(source)
    if place not in (None, HOME):
        if not PLACE_ID.match(place):
            raise UnknownPlace(f"--place: {place[:60]!r} is not a place id: `paperbot places` lists them")
        url = is_url(source)
        file = None if url else place_file(Path(source), place)
        within = copying.Within(place, file, schema_name(place) if url else None)
        shown = f"{shown} (place {place})"
    try:
        copied = copying.copy(source, target, show=show, within=within)
    except copying.CannotCopy as e:
        raise UnknownPlace(str(e)) from None
    note = None
    if copied.places:
        names = ", ".join(copied.places[:5]) + (", …" if len(copied.places) > 5 else "")
        note = (
            f"FROM serves {_count(len(copied.places), 'place')} besides home ({names}), whose tables are not "
            "copied (TO lists them, empty): `paperbot copy --place ID FROM TO` copies one into a database of its own"
        )
    return copied.lines(shown, show(target)), note


# -- paperbot places ----------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    place: Place
    platform: str
    papers: int
    #: Its groups' channels, a stopped group's marked so.
    channels: list[str]
    last: datetime | None
    #: False: its tables cannot be read (a broken file): its counts are "?".
    readable: bool = True

    def cells(self) -> tuple[str, ...]:
        last = self.last.strftime("%Y-%m-%dT%H:%M:%SZ") if self.last else "-"
        channels = ",".join(self.channels) or "-"
        place = self.place
        return (
            place.id,
            self.platform,
            place.state,
            str(self.papers) if self.readable else "?",
            str(len(self.channels)) if self.readable else "?",
            last,
            channels,
            place.name,
        )


def rows(places: Places, channel: str | None, platform: str) -> list[Row]:
    """Each place, the install's own first: `channel` is its group 1's (PAPERBOT_CHANNEL), `platform`
    the platforms it serves."""
    found = [_row(places.house, places.every()[0], platform or "-", channel)]
    for place in places.every()[1:]:
        try:
            store = open_place(places.database, place.id, writes=False)
        except NotADatabase:  # one place's broken file hides no other place
            found.append(Row(place, place.platform, 0, [], _utc(place.seen_at), readable=False))
            continue
        try:  # a place's group 1 is the environment's, which it has none of: no channel
            found.append(_row(store, place, place.platform, None))
        finally:
            store.close()
    return found


def table(found: list[Row]) -> list[str]:
    """The rows as `paperbot places` prints them: a header, then a line a place, in aligned columns
    with no space inside a cell but the last (the name)."""
    cells = [HEADER, *(r.cells() for r in found)]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER) - 1)]
    return ["  ".join([*(c[i].ljust(widths[i]) for i in range(len(widths))), c[-1]]).rstrip() for c in cells]


def _row(store: Store, place: Place, platform: str, channel: str | None) -> Row:
    channels = []
    for gid, own, stopped in store.db.execute("SELECT id, channel, stopped FROM groups ORDER BY id").fetchall():
        where = channel if gid == ENV_GROUP else own
        if where:
            channels.append(f"{where}(stopped)" if stopped else where)
    return Row(place, platform, _papers(store), channels, _last_activity(store, place))


def _papers(store: Store) -> int:
    return int(store.db.execute("SELECT count(*) FROM papers").fetchone()[0])


def _last_activity(store: Store, place: Place) -> datetime | None:
    """The latest a request came from the place (its seen_at) or its members and posts wrote its
    tables, in UTC."""
    union = " UNION ALL ".join(f"SELECT max({column}) FROM {table}" for table, column in ACTIVITY)
    moments = [_utc(r[0]) for r in store.db.execute(union).fetchall()]
    known = [m for m in [*moments, _utc(place.seen_at)] if m is not None]
    return max(known) if known else None


def _utc(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


# -- paperbot forget ------------------------------------------------------------------------


@dataclass(frozen=True)
class Held:
    """What a place holds, as `forget` names it before and after."""

    papers: int
    groups: int
    #: False: its tables cannot be read (a broken file), which `forget` deletes all the same.
    readable: bool = True

    def __str__(self) -> str:
        if not self.readable:
            return "its tables, which could not be read"
        return f"{_count(self.papers, 'paper')} and {_count(self.groups, 'group')}"


def held(places: Places, place: Place) -> Held:
    """The papers and groups (those with a channel) of `place`, not HOME."""
    try:
        store = store_of(places, place, writes=False)
    except NotADatabase:
        return Held(0, 0, readable=False)
    try:
        started = store.db.execute("SELECT count(*) FROM groups WHERE channel IS NOT NULL").fetchone()[0]
        return Held(_papers(store), int(started))
    finally:
        store.close()


def confirmed(places: Places, place: Place) -> bool:
    """Does the operator, asked on stderr, answer yes on stdin to deleting `place` for good?"""
    asked = f"Delete place {place.id} ({place.name or place.platform}): {held(places, place)}"
    print(f"{asked}, and everything else of its own, for good? [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def forget(places: Places, place: Place) -> Held:
    """Delete `place`'s data for good (Places.forget): what it held."""
    not_home(place.id)
    what = held(places, place)
    places.forget(place.id)
    return what


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"
