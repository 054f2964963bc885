"""The chat platforms an install can serve, found beside the core: a platform's package
(`bot/<name>/`) has a module `adapter` whose `ADAPTER` says how the verbs reach it.

    adapter = platforms.chosen(os.environ)   # the platform the environment asks for
    settings = adapter.settings.load(os.environ)
    adapter.transport(settings)              # exactly-once sending, for post-week and remind

A new platform is a new package with its adapter module: no core module, `bot/cli.py`
included, names it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import bot
from bot.settings import Settings


@dataclass(frozen=True)
class Adapter:
    #: The platform's name, as its users call it.
    name: str
    #: The setting that makes `run`, `post-week` and `remind` reach it.
    token: str
    #: Its settings: the core's, and its own names and id formats.
    settings: type[Settings]
    #: Does the environment (or `.env`) ask for this platform?
    wanted: Callable[[Mapping[str, str]], bool]
    #: Exactly-once sending for `post-week` and `remind` (a `delivery.Transport`).
    transport: Callable[[Any], Any]
    #: The module that serves it: `require_settings(settings)`, `run(settings, store, stop)`, `StartError`.
    serve: Callable[[], ModuleType]
    #: Loggers of its client libraries that log every failed try: paperbot says failures in its own words.
    quiet_loggers: tuple[str, ...] = ()
    #: Served when no other platform is asked for.
    fallback: bool = False
    #: A member's name as the platform shows it (member_names.Ask), for pages and calendars read
    #: outside the chat; made from the settings. None: the platform is not asked.
    member_names: Callable[[Any], Callable[[str], str | None]] | None = None


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
