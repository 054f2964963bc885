"""Members' names as people read them, asked of the platform once a day and kept in the database.

    name = member_names.display_name(store, "U012AB", ask)   # "Ada Lovelace"

Pages and calendars are read outside the chat, where a member id means nothing: `ask` is the
adapter's look-up (Slack's users.info, Discord's user), None when the platform does not say.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable, Sequence

from bot.store.connection import Store

log = logging.getLogger(__name__)

#: An adapter's look-up of a member's name: the name, or None when the platform does not give one.
Ask = Callable[[str], "str | None"]

#: A name is asked again after this long: members rename themselves.
FRESH_SECONDS = 24 * 3600
#: After the platform failed to answer, it is not asked again for this long (a page must not wait
#: out one timeout per presenter).
QUIET_SECONDS = 600
_failed_at: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # ask -> when it last failed

#: What a page shows for a member whose name nobody could tell: never their raw id.
UNKNOWN = "a member"


class ByPlatform:
    """Several platforms' look-ups, each asked only for the members whose ids have its form
    (`is_member`): each is quiet on its own after it fails, the others still asked."""

    def __init__(self, asks: Sequence[tuple[Callable[[str], bool], Ask]]):
        self.asks = list(asks)

    def of(self, member: str) -> Ask | None:
        """The look-up of the platform whose ids have `member`'s form; None when no platform's do."""
        return next((ask for is_member, ask in self.asks if is_member(member)), None)

    def __call__(self, member: str) -> str | None:
        ask = self.of(member)
        return ask(member) if ask is not None else None


def as_typed(member: str) -> str:
    """The console's look-up: a member there is the name the operator typed."""
    return member


def display_name(store: Store, member: str, ask: Ask | None, clock: Callable[[], float] = time.time) -> str:
    """`member`'s name: the kept one while fresh, else asked (and kept); the kept one, however old,
    when the platform cannot be asked."""
    if isinstance(ask, ByPlatform):  # each platform's failures quiet its own look-up only
        ask = ask.of(member)
    row = store.db.execute("SELECT name, asked_at FROM member_names WHERE member = ?", [member]).fetchone()
    if row is not None and (ask is None or clock() - row[1] < FRESH_SECONDS):
        return row[0]
    name = None
    if ask is not None and clock() - _failed_at.get(ask, 0.0) > QUIET_SECONDS:
        try:
            name = ask(member)
        except Exception as e:  # a page is still drawn: with the old name, or none
            _failed_at[ask] = clock()
            log.warning("could not ask the platform for %s's name: %s: %s", member, type(e).__name__, e)
    if name:
        name = " ".join(name.split())[:80]
        with store.write() as db:
            db.execute(
                "INSERT INTO member_names (member, name, asked_at) VALUES (?, ?, ?) "
                "ON CONFLICT (member) DO UPDATE SET name = excluded.name, asked_at = excluded.asked_at",
                [member, name, clock()],
            )
        return name
    return row[0] if row is not None else UNKNOWN
