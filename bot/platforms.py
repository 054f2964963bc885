"""The chat platforms an install can serve, found beside the core: a platform's package
(`bot/<name>/`) has a module `adapter` whose `ADAPTER` says how the verbs reach it.

    adapter = platforms.chosen(os.environ)   # the platform the environment asks for
    settings = adapter.settings.load(os.environ)
    adapter.transport(settings)              # exactly-once sending, for post-week and remind

    every = platforms.served(os.environ)     # with both tokens set: each platform's, group 1's first

A new platform is a new package with its adapter module: no core module, `bot/cli.py`
included, names it. With the tokens of several platforms set, one process serves them all
(bot/runtime/both_platforms.py); PAPERBOT_CHANNEL's form says which one group 1 is on.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from dotenv import dotenv_values

import bot
from bot.settings import PlatformSettings, SettingError, Settings

if TYPE_CHECKING:  # the verbs load a platform's delivery only when they use it
    from bot.delivery.sending import Transport
    from bot.places.registry import Place, Places


@dataclass(frozen=True)
class Adapter:
    #: The platform's name, as its users call it.
    name: str
    #: The setting that makes `run`, `post-week` and `remind` reach it.
    token: str
    #: Its settings: the core's, and its own names and id formats.
    settings: type[PlatformSettings]
    #: Does the environment (or `.env`) ask for this platform?
    wanted: Callable[[Mapping[str, str]], bool]
    #: Exactly-once sending for `post-week` and `remind`, made from an instance of `settings`.
    transport: Callable[[Any], Transport]
    #: The module that serves it: `require_settings(settings)`, `run(settings, store, stop)`,
    #: raising bot.web.http_door.StartError.
    serve: Callable[[], ModuleType]
    #: Loggers of its client libraries that log every failed try: paperbot says failures in its own words.
    quiet_loggers: tuple[str, ...] = ()
    #: Served when no other platform is asked for.
    fallback: bool = False
    #: A member's name as the platform shows it (member_names.Ask), for pages and calendars read
    #: outside the chat; made from the settings. None: the platform is not asked.
    member_names: Callable[[Any], Callable[[str], str | None]] | None = None
    #: The setting that makes `run` serve the platform's install flow without a token of the install's
    #: own (a hosted install: bot/places/); None when the platform has none.
    installs: str | None = None
    #: The settings that reach one place of a hosted install (bot/places/), made from the install's:
    #: `place_settings(settings, places, place_id, sending=...)`, with the place's token when `sending`
    #: (raising SettingError or bot.places.registry.UnknownPlace, one line, when there is none: `for_place`);
    #: None when the platform serves no places.
    place_settings: Callable[..., Any] | None = None


def adapters() -> list[Adapter]:
    """Every platform this install has, by its package's name."""
    found = []
    for module in pkgutil.iter_modules(bot.__path__):
        if module.ispkg:
            try:
                adapter = importlib.import_module(f"bot.{module.name}.adapter")
            except ModuleNotFoundError as e:
                if e.name != f"bot.{module.name}.adapter":
                    raise
                continue
            found.append(adapter.ADAPTER)
    return sorted(found, key=lambda a: a.name)


def chosen(environ: Mapping[str, str]) -> Adapter:
    """The platform the environment asks for, else the fallback."""
    every = adapters()
    for adapter in every:
        if not adapter.fallback and adapter.wanted(environ):
            return adapter
    return next(a for a in every if a.fallback)


def of(settings: Settings) -> Adapter:
    """The platform whose settings these are."""
    return next(a for a in adapters() if type(settings) is a.settings)


@functools.cache
def of_channel(channel: str) -> Adapter | None:
    """The platform whose channel IDs have `channel`'s form (each settings class's `is_channel`), or
    None when no platform's or several platforms' do."""
    homes = [a for a in adapters() if a.settings.is_channel(channel)]
    return homes[0] if len(homes) == 1 else None


def id_forms(kind: str, among: list[Adapter] | None = None) -> str:
    """How each platform's `kind` ("channel" or "member") ids look, for a message: "a Slack channel ID
    like C012ABCDEF, a Discord channel ID of digits"."""
    return ", ".join(getattr(a.settings, f"{kind.upper()}_FORM") for a in (among or adapters()))


def token_set(environ: Mapping[str, str], name: str, dotenv: str | Path | None = ".env") -> bool:
    """Is the setting `name` given a value, in the environment or in `.env`?"""
    if (environ.get(name) or "").strip():
        return True
    if dotenv is None or not Path(dotenv).is_file():
        return False
    try:
        values = dotenv_values(Path(dotenv))
    except (OSError, UnicodeDecodeError):
        return False  # the settings' loader says what is wrong with the file
    return bool((values.get(name) or "").strip())


def asked(environ: Mapping[str, str], dotenv: str | Path | None = ".env") -> list[Adapter]:
    """The platforms whose token is set (none, one, or several)."""
    return [
        a
        for a in adapters()
        if token_set(environ, a.token, dotenv) or (a.installs is not None and token_set(environ, a.installs, dotenv))
    ]


def require_a_token(environ: Mapping[str, str], dotenv: str | Path | None = ".env") -> None:
    """Raise SettingError (one line naming every platform's token) when no platform's token is set:
    `run` serves the platform whose token it has, so with none the fallback's alone is not what is missing."""
    if asked(environ, dotenv):
        return
    every = sorted(adapters(), key=lambda a: not a.fallback)  # the fallback (Slack) first
    ways = ", ".join(f"{a.name}'s at {_where(a)}" if _where(a) else a.name for a in every)
    none = "neither is" if len(every) == 2 else "none is"
    raise SettingError(
        " or ".join(a.token for a in every), f"{none} set: run needs one, and serves that platform ({ways})"
    )


def _where(adapter: Adapter) -> str:
    """Where the platform shows its token (its settings module's WHERE), or ''."""
    return getattr(importlib.import_module(adapter.settings.__module__), "WHERE", {}).get(adapter.token, "")


def served(environ: Mapping[str, str], dotenv: str | Path | None = ".env") -> list[PlatformSettings]:
    """The settings of each platform this install serves, group 1's first: one platform's, or with
    several tokens set, each one's. Raises SettingError (one line) when they do not fit together.

    PAPERBOT_CHANNEL holds one platform's id, and its form says which (`is_channel` of each
    platform's settings): that platform serves group 1 and its settings have it. The
    others' settings carry the same channel unchecked, so that a change to group 1 made from them
    is announced there (through the outbox, by the channel's platform). PAPERBOT_ADMINS may mix
    ids of every platform: each platform's settings get the ids of its own form.
    """
    every = asked(environ, dotenv)
    if len(every) < 2:
        return [chosen(environ).settings.load(environ, dotenv)]
    tokens = " and ".join(a.token for a in every)
    forms = " or ".join(f"{a.name}'s" for a in every)
    core = Settings.load(environ, dotenv)  # the ids as given, each platform checks its own
    channel = core.channel
    if channel is None:
        raise SettingError(
            "PAPERBOT_CHANNEL",
            f"is not set: with {tokens} both set, group 1's channel ID also says which platform it is on "
            f"({forms}: {id_forms('channel', every)})",
        )
    homes = [a for a in every if a.settings.is_channel(channel)]
    if len(homes) != 1:
        raise SettingError(
            "PAPERBOT_CHANNEL",
            f"{channel[:40]!r} is not a channel ID of exactly one platform: with {tokens} both set, its form says "
            f"which platform group 1 is on ({id_forms('channel', every)})",
        )
    home = homes[0]
    admins: dict[str, list[str]] = {a.name: [] for a in every}
    for admin in sorted(core.admins):
        owners = [a for a in every if a.settings.is_member(admin)]
        if not owners:
            raise SettingError(
                "PAPERBOT_ADMINS",
                f"{admin[:40]!r} is no platform's user ID ({id_forms('member', every)})",
            )
        admins[owners[0].name].append(admin)
    found = []
    for adapter in [home, *(a for a in every if a is not home)]:
        own = {
            **environ,
            # Blank is unset, and the environment wins over `.env`: each platform checks only its own ids.
            "PAPERBOT_CHANNEL": channel if adapter is home else "",
            "PAPERBOT_ADMINS": ",".join(admins[adapter.name]),
        }
        settings = adapter.settings.load(own, dotenv)
        found.append(settings if adapter is home else replace(settings, channel=channel))
    return found


def for_place(
    place: Place, served: list[PlatformSettings], places: Places, environ: Mapping[str, str], *, sending: bool
) -> PlatformSettings:
    """The settings a verb uses for a hosted install's `place` (not HOME): its platform's, as `run`
    makes them for it (Adapter.place_settings); `sending` (post-week, remind): with the token that
    reaches it. `served`: the install's settings of each platform. Raises UnknownPlace (one line)."""
    from bot.places.registry import UnknownPlace  # noqa: PLC0415 - the store, for the verbs that ask alone

    adapter = next((a for a in adapters() if a.name.lower() == place.platform), None)
    if adapter is None or adapter.place_settings is None:
        raise UnknownPlace(
            f"place {place.id} is on {place.platform or 'no platform'}, whose places paperbot serves not"
        )
    if sending and not place.active:
        raise UnknownPlace(
            f"place {place.id} is gone (the app was uninstalled or the bot removed): nothing is sent there; "
            f"`paperbot forget {place.id}` deletes its data"
        )
    own = next((s for s in served if of(s) is adapter), None)
    if own is None:  # the install's own place is on another platform: the environment's, but for its group
        own = adapter.settings.load({**environ, "PAPERBOT_CHANNEL": "", "PAPERBOT_ADMINS": ""})
    made: PlatformSettings = adapter.place_settings(own, places, place.id, sending=sending)
    return made


def home(environ: Mapping[str, str], dotenv: str | Path | None = ".env") -> PlatformSettings:
    """The settings of group 1's platform: those every verb reads (see `served`)."""
    return served(environ, dotenv)[0]
