"""Time in tests: the test group's zone, moments written as text, and a clock moved by hand."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

TZ = ZoneInfo("Europe/Berlin")


class Clock:
    """A clock that tests move by hand: no test sleeps until something is due."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def set(self, moment: datetime) -> None:
        self.now = moment


def at(text: str, tz: ZoneInfo = TZ) -> datetime:
    """`at("2026-12-07 09:00")` in the test group's zone."""
    return datetime.fromisoformat(text).replace(tzinfo=tz)
