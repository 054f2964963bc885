"""What a change to the schedule tells the group's channel, queued in the outbox with the change.

    signups.signup(..., then=lambda change: announce.queue(store, "C0PAPERS", change))

Called inside the change's write transaction (signups.OnChange), by the running bot and by the
console alike: the rows are saved with the change or not at all, and whichever `run` has the
outbox sends them. The outbox keeps what happened (`record`), not a platform's message: the
platform's adapter draws the line when it sends it (`change_of`, then commands.announcement).

A member's changes made close together go out as one `Announcement` (the sender decides which:
outbox_sender.plan), of what stands (`net`): a sign-up withdrawn at once announces nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.calendar import Week
from bot.catalog import queries as catalog
from bot.catalog.papers import Paper
from bot.delivery import outbox
from bot.delivery.outbox import ItemKind
from bot.rich_text import Bold, ChannelRef, Code, Mention, Text, When
from bot.schedule import weekly
from bot.schedule.rows import OpenWeek, SkippedWeek, SlotLine, TalkWeek
from bot.schedule.signups import Change
from bot.store.connection import Store


def _line_record(line: SlotLine) -> dict:
    if isinstance(line, TalkWeek):
        return {"state": line.state, "presenter": line.presenter, "paper": line.paper.number if line.paper else None}
    return {"state": line.state, "presenter": None, "paper": None}


def _note_record(note: Text) -> list:
    """A note's segments as JSON can hold them (a note names no paper)."""
    out: list = []
    for seg in note:
        if isinstance(seg, str):
            out.append(["text", seg])
        elif isinstance(seg, Code):
            out.append(["code", seg.text])
        elif isinstance(seg, Bold):
            out.append(["bold", seg.text])
        elif isinstance(seg, Mention):
            out.append(["mention", seg.user])
        elif isinstance(seg, ChannelRef):
            out.append(["channel", seg.channel])
        elif isinstance(seg, When):
            out.append(["when", seg.moment.isoformat(), seg.with_time])
    return out


def _note_of(kept: list, tz: ZoneInfo) -> Text:
    kinds = {"text": str, "code": Code, "bold": Bold, "mention": Mention, "channel": ChannelRef}
    return tuple(
        When(datetime.fromisoformat(part[1]).astimezone(tz), part[2]) if part[0] == "when" else kinds[part[0]](part[1])
        for part in kept
    )


def record(change: Change) -> dict:
    """The change as the outbox keeps it: action, week, meeting, who, and the paper's number."""
    if change.action == "note":
        return {
            "action": "note",
            "week": change.line.week.key,
            "meeting": change.line.meeting.isoformat(),
            "by": change.by,
            "line": _line_record(change.line),
            "before": None,
            "note": _note_record(change.note),
        }
    kept = {
        "action": change.action,
        "week": change.line.week.key,
        "meeting": change.line.meeting.isoformat(),
        "by": change.by,
        "line": _line_record(change.line),
        "before": _line_record(change.before) if change.before is not None else None,
    }
    return {**kept, "opening": True} if change.opening else kept


#: A week before a sign-up, an assignment or a skip (which `record` keeps without a `before`).
_OPEN = {"state": "open", "presenter": None, "paper": None}


def _same(a: dict, b: dict) -> bool:
    return (a["state"], a["presenter"], a["paper"]) == (b["state"], b["presenter"], b["paper"])


def _action(before: dict, after: dict, by: str) -> str:
    """The action that takes a week from `before` to `after` in one step, as `record` names it."""
    if after["state"] == "presenter":
        return "signup" if after["presenter"] == by else "assign"
    if after["state"] == "skipped":
        return "skip"
    return "withdraw" if before["presenter"] == by else "unassign"


def net(kept: list[dict]) -> list[dict]:
    """One member's changes, as `record` keeps them and in their order, as they stand: a week's
    changes become one, from how it was before the first to how it is after the last, or none when
    it ends as it began. In the order of the weeks' first changes; a lone change stays as it is."""
    weeks: dict[str, list[dict]] = {}
    for i, change in enumerate(kept):  # a note stands alone: it changed no week
        weeks.setdefault(f"note {i}" if change["action"] == "note" else change["week"], []).append(change)
    stands = []
    for changes in weeks.values():
        first, last = changes[0], changes[-1]
        if len(changes) == 1:
            stands.append(first)
            continue
        before, after = first.get("before") or _OPEN, last["line"]
        if _same(before, after):
            continue
        stands.append(
            {
                "action": _action(before, after, last["by"]),
                "week": last["week"],
                "meeting": last["meeting"],
                "by": last["by"],
                "line": after,
                "before": before if after["state"] == "open" else None,
                **({"opening": True} if after["state"] == "open" and last.get("opening") else {}),
            }
        )
    return stands


@dataclass(frozen=True)
class Announcement:
    """One message to a channel: what stands of one member's changes, for the outbox rows it stands for."""

    channel: str
    rows: tuple[int, ...]  # outbox ids, in order: the message's mark, to find it again
    queued: float  # when the first row was queued (unix time)
    tried: bool  # tried before: it may be in the channel already
    changes: tuple[dict, ...]  # what stands, as `record` keeps a change; none: nothing to say
    about: str  # for the log
    message: dict | None = None  # a row an older paperbot queued: its message as the platform drew it then

    @classmethod
    def of(cls, items: list[outbox.Item]) -> Announcement:
        first = items[0]
        payload = first.payload
        changes = tuple(net([i.payload["change"] for i in items])) if "change" in payload else ()
        about = payload["about"] if len(items) == 1 else f"{len(items)} changes by {payload['change']['by']}"
        return cls(
            payload["channel"],
            tuple(i.id for i in items),
            first.created_at,
            any(i.tried for i in items),
            changes,
            about,
            payload.get("message"),
        )


def change_of(store: Store, kept: dict, tz: ZoneInfo) -> Change:
    """The change that `record` kept, with its papers as they are now, its meeting in `tz`."""
    week = Week.from_key(kept["week"])
    meeting = datetime.fromisoformat(kept["meeting"]).astimezone(tz)

    def line(part: dict) -> SlotLine:
        if part["state"] == "skipped":
            return SkippedWeek(week, meeting)
        if part["state"] != "presenter":
            return OpenWeek(week, meeting)
        number = part["paper"]
        paper = None
        if number is not None:  # a paper removed since is still named by its number
            paper = catalog.by_number(store, number) or Paper(number, "", f"paper {number}", "", "")
        return TalkWeek(week, meeting, paper, part["presenter"])

    before = kept.get("before")
    note = _note_of(kept.get("note") or [], tz)
    was = line(before) if before else None
    return Change(kept["action"], line(kept["line"]), kept["by"], was, note, bool(kept.get("opening")))


def queue_note(store: Store, channel: str, note: Text, week: Week, meeting: datetime, by: str) -> Change:
    """Queue a line for the group's channel that no week's change makes (its settings changed); the
    'note' Change it is."""
    change = Change("note", OpenWeek(week, meeting), by, note=note)
    outbox.queue(store.db, [(ItemKind.ANNOUNCE, {"channel": channel, "change": record(change), "about": "a note"})])
    return change


def queue(store: Store, channel: str, change: Change) -> None:
    """Queue the change's announcement, and an update of the week's post if that post is out or on
    its way (a post made later is planned from the saved change); and of other weeks' posts of the
    paper, whose sign-up button comes and goes with the paper's presenters."""
    week = change.line.week
    items = [(ItemKind.ANNOUNCE, {"channel": channel, "change": record(change), "about": f"{change.action} of {week}"})]
    for touched in dict.fromkeys((week, *change.weeks)):
        if weekly.post_begun(store, channel, touched):
            items.append((ItemKind.REFRESH, {"week": touched.key, "channel": channel}))
    papers = {line.paper.number for line in (change.line, change.before) if isinstance(line, TalkWeek) and line.paper}
    items += [
        (ItemKind.REFRESH, {"week": w.key, "channel": channel})
        for w in weekly.posts_showing(store, channel, papers)
        if w != week and w not in change.weeks
    ]
    outbox.queue(store.db, items)
