"""What a change to the schedule tells the group's channel, queued in the outbox with the change.

    signups.signup(..., then=lambda change: announce.queue(store, "C0PAPERS", change))

Called inside the change's write transaction (signups.OnChange), by the running bot and by the
console alike: the rows are saved with the change or not at all, and whichever `run` has the
outbox sends them. The outbox keeps what happened (`record`), not a platform's message: the
platform's adapter draws the line when it sends it (`change_of`, then commands.announcement).
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bot import catalog, outbox, weekly
from bot.calendar import Week
from bot.catalog import Paper
from bot.outbox import ItemKind
from bot.replies import SlotLine
from bot.signups import Change
from bot.store import Store


def _line_record(line: SlotLine) -> dict:
    return {"state": line.state, "presenter": line.presenter, "paper": line.paper.number if line.paper else None}


def record(change: Change) -> dict:
    """The change as the outbox keeps it: action, week, meeting, who, and the paper's number."""
    return {
        "action": change.action,
        "week": change.line.week.key,
        "meeting": change.line.meeting.isoformat(),
        "by": change.by,
        "line": _line_record(change.line),
        "before": _line_record(change.before) if change.before is not None else None,
    }


def change_of(store: Store, kept: dict, tz: ZoneInfo) -> Change:
    """The change that `record` kept, with its papers as they are now, its meeting in `tz`."""
    week = Week.from_key(kept["week"])
    meeting = datetime.fromisoformat(kept["meeting"]).astimezone(tz)

    def line(part: dict) -> SlotLine:
        number = part["paper"]
        paper = None
        if number is not None:  # a paper removed since is still named by its number
            paper = catalog.by_number(store, number) or Paper(number, "", f"paper {number}", "", "")
        return SlotLine(week, meeting, part["state"], paper, part["presenter"])

    before = kept.get("before")
    return Change(kept["action"], line(kept["line"]), kept["by"], line(before) if before else None)


def queue(store: Store, channel: str, change: Change) -> None:
    """Queue the change's announcement, and an update of the week's post if that post is out or on
    its way (a post made later is planned from the saved change); and of other weeks' posts of the
    paper, whose sign-up button comes and goes with the paper's presenters."""
    week = change.line.week
    items = [(ItemKind.ANNOUNCE, {"channel": channel, "change": record(change), "about": f"{change.action} of {week}"})]
    if weekly.post_begun(store, channel, week):
        items.append((ItemKind.REFRESH, {"week": week.key}))
    papers = {line.paper.number for line in (change.line, change.before) if line is not None and line.paper}
    items += [(ItemKind.REFRESH, {"week": w.key}) for w in weekly.posts_showing(store, channel, papers) if w != week]
    outbox.queue(store.db, items)
