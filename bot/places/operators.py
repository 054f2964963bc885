"""What the operator of a hosted install does with its places (bot/places/registry.py): `paperbot
places`, `paperbot forget ID`, and the place `--place ID` names for export, import, console,
post-week, remind and copy.

    places = operators.opened(settings)                         # the install's list of places
    settings, store = operators.chosen(settings, "slack-T012AB", served, os.environ, sending=True)
    print("\\n".join(operators.table(operators.rows(places, settings, "slack"))))
    held = operators.forget(places, operators.named(places, "slack-T012AB"))   # what it held

Asking for a place that is not there makes nothing: not its store, not PAPERBOT_DB. Every refusal is
NoPlace, whose str() is the one line to show.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from bot import platforms
from bot.catalog import opening
from bot.places.registry import HOME, PLACE_ID, Place, Places, UnknownPlace, is_url, open_place, place_file
from bot.schedule import groups
from bot.settings import PlatformSettings
from bot.store import copying
from bot.store.connection import Store
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
#: Why `forget home` is refused.
HOME_STAYS = (
    "forget: home is the install's own place, its database itself, and is never forgotten "
    "(to delete it, stop paperbot and delete PAPERBOT_DB)"
)


class NoPlace(Exception):
    """No place of that id, or it cannot be reached as asked; str() is the one line to show."""


def opened(settings: PlatformSettings, place: str = HOME, *, said: str = "--place", writes: bool = True) -> Places:
    """The install's places on its database (PAPERBOT_DB), which must be there already when `place`
    is not the install's own."""
    database = settings.db_path
    if place != HOME and isinstance(database, Path) and not os.path.lexists(database):
        raise NoPlace(f"{said}: there is no place {place[:60]}: PAPERBOT_DB {database} does not exist")
    try:
        return Places(opening.open_database(database, writes=writes), database)
    except opening.CannotOpen as e:
        raise NoPlace(str(e)) from None


def named(places: Places, place: str, *, said: str = "--place") -> Place:
    """The place `place` names (HOME: the install's own)."""
    if not PLACE_ID.match(place):
        raise NoPlace(
            f"{said}: {place[:60]!r} is not a place id (home, slack-T…, slack-E… or discord-…): "
            "`paperbot places` lists them"
        )
    found = places.get(place)
    if found is None:
        raise NoPlace(f"{said}: there is no place {place}: `paperbot places` lists them")
    return found


def not_home(place: str) -> str:
    """`place`, unless it is HOME (for `forget`)."""
    if place == HOME:
        raise NoPlace(HOME_STAYS)
    return place


def chosen(
    settings: PlatformSettings,
    place: str,
    served: list[PlatformSettings],
    environ: Mapping[str, str],
    *,
    writes: bool = True,
    sending: bool = False,
) -> tuple[PlatformSettings, Store]:
    """The settings and store a verb uses for `--place place` (not HOME). `served`: each platform's
    settings of the install; `sending` (post-week, remind): with the token that reaches the place."""
    places = opened(settings, place, writes=writes)
    found = named(places, place)
    return settings_of(found, served, places, environ, sending=sending), store_of(places, found, writes=writes)


def settings_of(
    place: Place,
    served: list[PlatformSettings],
    places: Places,
    environ: Mapping[str, str],
    *,
    sending: bool = False,
) -> PlatformSettings:
    """The settings for `place` (not HOME): its platform's, as `run` makes them for it; `sending`:
    with the token that reaches it."""
    adapter = next((a for a in platforms.adapters() if a.name.lower() == place.platform), None)
    if adapter is None or adapter.place_settings is None:
        raise NoPlace(
            f"place {place.id} is on {place.platform or 'no platform'}, which this paperbot serves no places of"
        )
    if sending and not place.active:
        raise NoPlace(
            f"place {place.id} is gone (the app was uninstalled or the bot removed): nothing is sent there; "
            f"`paperbot forget {place.id}` deletes its data"
        )
    own = next((s for s in served if platforms.of(s) is adapter), None)
    if own is None:  # the install's own place is on another platform: the environment, but for its group
        own = adapter.settings.load({**environ, "PAPERBOT_CHANNEL": "", "PAPERBOT_ADMINS": ""})
    try:
        made: PlatformSettings = adapter.place_settings(own, places, place.id, sending=sending)
    except UnknownPlace as e:
        raise NoPlace(str(e)) from None
    return made


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
            raise NoPlace(f"--place: {place[:60]!r} is not a place id: `paperbot places` lists them")
        url = is_url(source)
        within = copying.Within(
            place, None if url else place_file(Path(source), place), schema_name(place) if url else None
        )
        shown = f"{shown} (place {place})"
    try:
        copied = copying.copy(source, target, show=show, within=within)
    except copying.CannotCopy as e:
        raise NoPlace(str(e)) from None
    note = None
    if copied.places:
        named = ", ".join(copied.places[:5]) + (", …" if len(copied.places) > 5 else "")
        note = (
            f"FROM serves {len(copied.places)} place{'s' * (len(copied.places) != 1)} besides home ({named}), "
            "whose tables are not copied (TO lists them, empty): `paperbot copy --place ID FROM TO` copies one "
            "into a database of its own"
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

    def cells(self) -> tuple[str, ...]:
        last = self.last.strftime("%Y-%m-%dT%H:%M:%SZ") if self.last else "-"
        channels = ",".join(self.channels) or "-"
        return (
            self.place.id,
            self.platform,
            self.place.state,
            str(self.papers),
            str(len(self.channels)),
            last,
            channels,
            self.place.name,
        )


def rows(places: Places, settings: PlatformSettings, platform: str) -> list[Row]:
    """Each place, the install's own first: `settings` are the install's, `platform` its own place's."""
    env = groups.from_settings(settings)
    found = []
    for place in places.every():
        if place.id == HOME:
            found.append(_row(place, platform, places.house, env))
            continue
        # A place's group 1 is no group of the install's environment: it has no channel but its own.
        store = open_place(places.database, place.id, writes=False)
        try:
            found.append(_row(place, place.platform, store, replace(env, channel=None)))
        finally:
            store.close()
    return found


def table(found: list[Row]) -> list[str]:
    """The rows as `paperbot places` prints them: a header, then a line a place, in aligned columns
    with no space inside a cell but the last (the name)."""
    cells = [HEADER, *(r.cells() for r in found)]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER) - 1)]
    return ["  ".join([*(c[i].ljust(widths[i]) for i in range(len(widths))), c[-1]]).rstrip() for c in cells]


def _row(place: Place, platform: str, store: Store, env: groups.Group) -> Row:
    channels = [f"{g.channel}(stopped)" if g.stopped else str(g.channel) for g in groups.every(store, env) if g.channel]
    return Row(place, platform or "-", _papers(store), channels, _last_activity(store, place))


def _papers(store: Store) -> int:
    return int(store.db.execute("SELECT count(*) FROM papers").fetchone()[0])


def _last_activity(store: Store, place: Place) -> datetime | None:
    """The latest a request came from the place (its seen_at) or its tables were written by its members
    and posts, in UTC."""
    union = " UNION ALL ".join(f"SELECT max({column}) FROM {table}" for table, column in ACTIVITY)
    moments = [_utc(r[0]) for r in store.db.execute(union).fetchall()]
    moments.append(_utc(place.seen_at))
    known = [m for m in moments if m is not None]
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

    def __str__(self) -> str:
        return f"{_count(self.papers, 'paper')} and {_count(self.groups, 'group')}"


def held(places: Places, place: Place) -> Held:
    """The papers and groups of `place` (not HOME: its group 1 is the environment's)."""
    store = store_of(places, place, writes=False)
    try:
        # A place's group 1 has no channel of its own (it is the environment's, which a place has none of).
        started = store.db.execute("SELECT count(*) FROM groups WHERE channel IS NOT NULL").fetchone()[0]
        return Held(_papers(store), int(started))
    finally:
        store.close()


def forget(places: Places, place: Place) -> Held:
    """Delete `place`'s data for good (Places.forget): what it held."""
    not_home(place.id)
    what = held(places, place)
    try:
        places.forget(place.id)
    except UnknownPlace as e:
        raise NoPlace(f"forget: {e}") from None
    return what


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"
