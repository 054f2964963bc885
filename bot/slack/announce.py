"""What a change to the schedule sends to the group's channel, queued in the outbox with the change.

    signups.signup(..., then=lambda change: announce.queue(store, "C0PAPERS", change))

Called inside the change's write transaction (signups.Then), by the running bot and by the
console alike: the rows are saved with the change or not at all, and whichever `run` has
the outbox sends them.
"""

from __future__ import annotations

from bot import commands, outbox, weekly
from bot.signups import Change
from bot.slack import blocks
from bot.store import Store


def queue(store: Store, channel: str, change: Change) -> None:
    """Queue the change's one-line announcement, and an update of the week's post if that post is
    out or on its way (a post made later is planned from the saved change); and of other weeks'
    posts of the paper, whose sign-up button comes and goes with the paper's presenters."""
    week = change.line.week
    message = blocks.announcement(commands.announcement(change))
    items = [("announce", {"channel": channel, "message": message, "about": f"{change.action} of {week}"})]
    if weekly.post_begun(store, channel, week):
        items.append(("refresh", {"week": week.key}))
    papers = {line.paper.number for line in (change.line, change.before) if line is not None and line.paper}
    items += [("refresh", {"week": w.key}) for w in weekly.posts_showing(store, channel, papers) if w != week]
    outbox.queue(store.db, items)
