"""Replies drawn as plain text for a terminal.

    print(render(answer.reply))

Buttons are shown as the command they would run, so everything a button does
can be typed here too.
"""

from __future__ import annotations

from datetime import datetime
from functools import singledispatch

from bot.chat.replies import (
    AddForm,
    EditForm,
    Help,
    Mine,
    Notice,
    PaperCard,
    PaperList,
    PastTalks,
    Schedule,
    Stats,
    SuggestionList,
    TagCounts,
    WeekCard,
)
from bot.rich_text import COMMAND, Bold, Button, ChannelRef, Code, Italic, Mention, PaperRef, Sep, Text, When
from bot.schedule.rows import Reminder, SkippedWeek, WeeklyPost, asked, by_month, given_text, slot_text, talk_text


def when(moment: datetime, with_time: bool = True) -> str:
    if with_time:
        return f"{moment:%a %d %b %Y %H:%M} {moment.tzname()}"
    return f"{moment:%a %d %b %Y}"


def inline(t: Text) -> str:
    out = []
    for seg in t:
        if isinstance(seg, str):
            out.append(seg)
        elif isinstance(seg, Mention):
            out.append(f"@{seg.user}")
        elif isinstance(seg, When):
            out.append(when(seg.moment, seg.with_time))
        elif isinstance(seg, Code):
            out.append(f"`{seg.text}`")
        elif isinstance(seg, Bold):
            out.append(inline((seg.text,)))
        elif isinstance(seg, Italic):
            out.append(seg.text)
        elif isinstance(seg, Sep):
            out.append("  —  ")
        elif isinstance(seg, PaperRef):
            out.append(f"#{seg.paper.number} {seg.paper.title}")
        elif isinstance(seg, ChannelRef):
            out.append(f"#{seg.channel}")
    return "".join(out)


def _buttons(buttons: list[Button]) -> list[str]:
    return [f"  [{b.label}] → {b.command}" for b in buttons]


def _votes(n: int) -> str:
    return f"{n} vote{'s' if n != 1 else ''}"


@singledispatch
def render(reply) -> str:
    raise TypeError(f"no console rendering for {type(reply).__name__}")


@render.register
def _(reply: Notice) -> str:
    return "\n".join([("" if reply.ok else "✗ ") + inline(reply.text), *_buttons(reply.buttons)])


@render.register
def _(reply: PaperList) -> str:
    lines = [inline(reply.heading)]
    for p in reply.papers:
        votes = reply.votes.get(p.number)
        lines.append(f"#{p.number:<4} {p.id}  {p.title}" + (f"  ({_votes(votes)})" if votes else ""))
        if p.line:
            lines.append(f"      {p.line}")
    if reply.footer:
        lines.append(inline(reply.footer))
    lines += _buttons(reply.pager)
    return "\n".join(lines)


@render.register
def _(reply: PaperCard) -> str:
    p = reply.paper
    lines = [f"#{p.number} {p.title}" + ("  [archived]" if reply.archived else ""), f"id: {p.id}"]
    if p.byline:
        lines.append(f"by: {p.byline}")
    if p.url:
        lines.append(p.url)
    if p.summary:
        lines += ["", p.summary, ""]
    lines.append("tags: " + (", ".join(p.tags) or "(none)"))
    if reply.votes:
        lines.append(f"votes: {reply.votes}")
    for slot in reply.presented:
        lines.append(f"presented: {inline(talk_text(slot))}")
        lines += [f"  link: {url}" for url in reply.links_of(slot)]
        lines += [f"  {inline(reply.asked_of(slot)).strip()}"] if reply.asked_of(slot) else []
    for slot in reply.coming:
        lines.append(f"coming up: {inline(talk_text(slot))}")
        lines += [f"  link: {url}" for url in reply.links_of(slot)]
        lines += [f"  {inline(reply.asked_of(slot)).strip()}"] if reply.asked_of(slot) else []
    if not reply.presented and not reply.coming:
        lines.append("nobody has presented it yet")
    lines += [f"related: #{r.number} {r.title}" for r in reply.related]
    if reply.note:
        lines.append(inline(reply.note))
    if reply.button:
        lines += _buttons([reply.button])
    return "\n".join(lines)


@render.register
def _(reply: WeekCard) -> str:
    line, paper = reply.line, reply.paper
    lines = [f"Week {line.week.key}" + ("" if isinstance(line, SkippedWeek) else f": meeting {when(line.meeting)}")]
    if paper:
        lines.append(f"Paper of the week: #{paper.number} {paper.title}" + (" (archived)" if reply.archived else ""))
        if paper.line:
            lines.append(f"  {paper.line}")
    if reply.presenter:
        lines.append(f"Presenter: @{reply.presenter}")
    if reply.note:
        lines.append(inline(reply.note))
    if reply.button:
        lines += _buttons([reply.button])
    return "\n".join(lines)


@render.register
def _(reply: Schedule) -> str:
    lines = [inline(reply.heading)]
    for month, line in by_month(reply.lines):
        lines += [f"  {month}"] if month else []
        lines.append(f"    {inline(slot_text(line))}")
    if not reply.lines:
        lines.append("  (nothing planned)")
    if reply.footer:
        lines.append(inline(reply.footer))
    return "\n".join(lines)


@render.register
def _(reply: Mine) -> str:
    lines = ["Your coming slots:"] + [f"  {inline(slot_text(s))}" for s in reply.upcoming]
    if not reply.upcoming:
        lines.append(f"  none — sign up with {COMMAND} signup <paper>")
    if reply.past:
        lines += ["Your past slots:"] + [f"  {inline(slot_text(s))}" for s in reply.past]
    return "\n".join(lines)


@render.register
def _(reply: TagCounts) -> str:
    if not reply.counts:
        return "No tags yet."
    width = max(len(tag) for tag, _ in reply.counts)
    heading = "Tags:"
    if reply.total > len(reply.counts):
        heading = f"Tags {reply.first + 1}–{reply.first + len(reply.counts)} of {reply.total}:"
    lines = [heading] + [f"  {tag:<{width}}  {n}" for tag, n in reply.counts]
    return "\n".join(lines + _buttons(reply.pager))


@render.register
def _(reply: Help) -> str:
    lines = [inline(reply.intro)] if reply.intro else []
    lines.append(f"{COMMAND} commands:")
    width = max(len(line.usage) for line in reply.lines)
    for line in reply.lines:
        admin = " (admins)" if line.admin else ""
        lines.append(f"  {line.usage:<{width}}  {line.summary}{admin}  e.g. {COMMAND} {line.example}")
    lines.append("<paper> is an id such as streaming-diloco or a number such as 7; <date> is YYYY-MM-DD or next.")
    return "\n".join(lines)


@render.register
def _(reply: AddForm) -> str:
    if reply.fields is None:
        return (
            "`add` opens a form in the chat. Here, add a paper by its link (add 2501.18512 [tags]),"
            " or put papers in a file and run: paperbot import FILE"
        )
    f = reply.fields
    lines = [inline(reply.note)] if reply.note else []
    lines += [f"{name}: {f[name]}" for name in ("title", "authors", "year", "url", "summary") if f.get(name)]
    lines.append("tags: " + (", ".join(f.get("tags") or ()) or "(none)"))
    return "\n".join(lines)


@render.register
def _(reply: SuggestionList) -> str:
    lines = [inline(reply.heading)]
    for s in reply.lines:
        lines.append(f"{s.number}. {s.title}  (suggested by @{s.by})")
        lines += [f"   {part}" for part in (s.byline, s.url) if part]
        lines += _buttons(s.buttons)
    if reply.footer:
        lines.append(inline(reply.footer))
    return "\n".join(lines)


@render.register
def _(reply: WeeklyPost) -> str:
    p = reply.paper
    named = f"{reply.group_name} · " if reply.group_name else ""  # a group with no name: as before
    archived = " (archived)" if reply.archived else ""
    lines = [f"📄 {named}Paper of the week {reply.week.key}: #{p.number} {p.title}{archived}"]
    if p.url:
        lines.append(p.url)
    if p.summary:
        lines.append(p.summary)
    lines.append("tags: " + (", ".join(p.tags) or "(none)"))
    lines.append(f"Meeting: {when(reply.meeting)}")
    if reply.presenter:
        lines.append(f"Presenter: @{reply.presenter}")
    elif reply.signup_button:
        lines.append(reply.nobody)
        lines += _buttons([reply.signup_button])
    elif reply.elsewhere:
        lines.append(inline(reply.elsewhere_note()))
    if reply.attendance_buttons:
        lines.append(inline(reply.counts()))
        lines += _buttons(reply.attendance_buttons)
    if reply.last_week is not None and reply.last_week.line.paper is not None:
        last = reply.last_week.line.paper
        lines.append(f"Last week's talk (#{last.number} {last.title}): " + "  ".join(reply.last_week.links))
    return "\n".join(lines)


@render.register
def _(reply: EditForm) -> str:
    p = reply.paper
    summary = p.summary.strip().splitlines()[0] if p.summary.strip() else ""
    lines = [
        f"Editing #{p.number} {p.title} (id {p.id})",
        f"  title:   {p.title}",
        f"  link:    {p.url}",
        f"  authors: {p.authors}",
        f"  year:    {p.year or ''}",
        f"  tags:    {', '.join(p.tags)}",
        f"  summary: {summary}" + (" …" if summary != p.summary.strip() else ""),
        f"Change one field: {COMMAND} edit {p.number} <field> <value>  (title, link, summary, tags, authors, year;"
        " an empty value clears it)",
    ]
    return "\n".join(lines)


@render.register
def _(reply: Stats) -> str:
    return inline(reply.summary)


@render.register
def _(reply: PastTalks) -> str:
    lines = ["Talks given, newest first"]
    for talk in reply.talks:
        lines.append(f"  {inline(given_text(talk))}")
        lines += [f"      link: {url}" for url in talk.links]
        if talk.questions:
            lines.append(f"      {inline(asked(talk))}")
    if reply.footer:
        lines.append(inline(reply.footer))
    return "\n".join(lines + _buttons(reply.pager))


@render.register
def _(reply: Reminder) -> str:
    return (
        f"Reminder: you present #{reply.paper.number} {reply.paper.title} on {when(reply.meeting)}"
        + (f" at {reply.group_name}" if reply.group_name else "")
        + f". Can't make it? {COMMAND} withdraw {reply.meeting.date().isoformat()}"
    )
