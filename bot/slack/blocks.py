"""Block Kit for every reply: pure functions from `bot.chat.replies` values to Slack payloads.

    blocks.message(Notice(text("Signed up: ", Mention("U1"))))
    # {"text": "Signed up: <@U1>", "blocks": [{"type": "section", "text": {"type": "mrkdwn", ...}}]}

Everything a user wrote (titles, summaries, tags, urls, query words) goes
through `escape`, in the blocks and in the `text` fallback alike, so a title
such as `<!channel>` is shown, never obeyed. Each builder keeps within Slack's
limits itself (50 blocks a message, 100 a view, 3000 characters a section),
because nothing checks plain dicts before Slack does.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache, singledispatch

from bot.catalog.papers import MAX_LINK
from bot.chat.replies import (
    AddForm,
    EditForm,
    Help,
    Home,
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
from bot.schedule import rows
from bot.schedule.rows import Reminder, SkippedWeek, TalkLinks, TalkWeek, WeeklyPost, by_month, slot_text, talk_text

MAX_BLOCKS = 50
#: Tags one reply lists: a few sections of them, well within MAX_BLOCKS even for 50-character tags.
TAGS_PAGE = 500
#: Papers one list reply holds: packed a few to a section, 40 take about 8 of MAX_BLOCKS.
PAPERS_PAGE = 40
MAX_VIEW_BLOCKS = 100
HOME_SLOTS = 15  # of your own, each with its Withdraw button
SECTION = 3000
MAX_TEXT = 39_000
BUTTON_LABEL = 75

POST_EVENT = "paper_of_the_week"
REMINDER_EVENT = "paper_reminder"
NOTE_EVENT = "paperbot_note"  # a direct message sent once (bot/schedule/notes.py), by its delivery key
ANNOUNCE_EVENT = "paperbot_announcement"  # a change to the schedule, in one line

#: action_id prefixes: every button's value is a /paper command line.
RUN, PAGE, WEEKLY = "run", "page", "weekly"


def escape(raw: str) -> str:
    """Make user text inert in mrkdwn: `&`, `<`, `>` (ampersand first)."""
    if "&" not in raw and "<" not in raw and ">" not in raw:
        return raw  # most text: no copies
    return raw.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_SLACK_USER = re.compile(r"[UW][A-Z0-9]+")


def is_slack_user(user: str) -> bool:
    """A Slack user ID, not a name such as the console operator's `console`."""
    return _SLACK_USER.fullmatch(user) is not None


@lru_cache(maxsize=4096)  # the same presenters, week after week, in every schedule
def who(user: str) -> str:
    """A mention of a Slack user; anyone else (the console's operator, `console`) by name."""
    return f"<@{user}>" if is_slack_user(user) else f"@{escape(user)}"


def clip(raw: str, limit: int) -> str:
    """`raw` escaped, cut so that the escaped form fits in `limit` characters."""
    escaped = escape(raw)
    if len(escaped) <= limit:
        return escaped
    out, used = [], 0
    for ch in raw:
        piece = escape(ch)
        if used + len(piece) > limit - 1:
            out.append("…")
            break
        out.append(piece)
        used += len(piece)
    return "".join(out)


def cut(escaped: str, limit: int) -> str:
    """Text already escaped (or mrkdwn), cut to `limit` characters, never inside an entity or a `<…>`."""
    if len(escaped) <= limit:
        return escaped
    head = escaped[: limit - 1]
    amp, lt = head.rfind("&"), head.rfind("<")
    if amp > head.rfind(";"):  # inside &amp; &lt; &gt;
        head = head[:amp]
    if lt > head.rfind(">"):  # inside <@U1> or <url|title>
        head = head[:lt]
    return head + "…"


@lru_cache(maxsize=4096)  # meetings recur in every schedule: format each once
def date_token(moment: datetime, with_time: bool = True) -> str:
    """A date each reader sees in their own zone, with the group's wall time as fallback."""
    if with_time:
        fallback = f"{moment:%a %d %b %Y %H:%M} {moment.tzname()}"
        return f"<!date^{int(moment.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"
    return f"<!date^{int(moment.timestamp())}^{{date_short_pretty}}|{moment:%a %d %b %Y}>"


@lru_cache(maxsize=4096)
def _plain_date(moment: datetime, with_time: bool = True) -> str:
    return f"{moment:%a %d %b %Y %H:%M} {moment.tzname()}" if with_time else f"{moment:%a %d %b %Y}"


def paper_title(paper, limit: int = 400) -> str:
    """The title, cut to `limit`, linked to the paper's url when the url fits (see catalog.MAX_LINK)."""
    title = clip(paper.title, limit)
    url = escape(paper.url) if paper.url else ""
    return f"<{url}|{title}>" if url and len(url) <= MAX_LINK else title


def _segment(seg, rich: bool) -> str:
    if isinstance(seg, str):
        return escape(seg)
    if isinstance(seg, Mention):
        return who(seg.user)
    if isinstance(seg, When):
        return date_token(seg.moment, seg.with_time) if rich else _plain_date(seg.moment, seg.with_time)
    if isinstance(seg, Code):
        return f"`{escape(seg.text)}`" if rich else escape(seg.text)
    if isinstance(seg, Bold):
        return f"*{_segment(seg.text, rich)}*" if rich else _segment(seg.text, rich)
    if isinstance(seg, Italic):
        return f"_{escape(seg.text)}_" if rich else escape(seg.text)
    if isinstance(seg, Sep):
        return "  ·  "
    if isinstance(seg, PaperRef):
        p = seg.paper
        return (
            f"*#{p.number}* {paper_title(p, 200 if seg.brief else 400)}" if rich else f"#{p.number} {escape(p.title)}"
        )
    if isinstance(seg, ChannelRef):
        return f"<#{seg.channel}>" if re.fullmatch(r"[A-Z0-9]{1,40}", seg.channel) else escape(seg.channel)
    raise TypeError(f"not a text segment: {seg!r}")


def mrkdwn(t: Text) -> str:
    return "".join(_segment(seg, rich=True) for seg in t)


def plain(t: Text) -> str:
    """The `text` fallback: no formatting, still escaped (Slack parses it too)."""
    return "".join(_segment(seg, rich=False) for seg in t)


def section(body: str, accessory: dict | None = None) -> dict:
    if len(body) > SECTION:
        raise ValueError("section text over Slack's limit: clip it before building")
    block: dict = {"type": "section", "text": {"type": "mrkdwn", "text": body or " "}}
    if accessory:
        block["accessory"] = accessory
    return block


def context(body: str) -> dict:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": body[:SECTION]}]}


def button(b: Button, action_id: str) -> dict:
    element = {
        "type": "button",
        "text": {"type": "plain_text", "text": b.label[:BUTTON_LABEL], "emoji": True},
        "action_id": action_id,
        "value": b.command[:2000],
    }
    if b.primary:
        element["style"] = "primary"
    return element


def actions(buttons: list[Button], prefix: str = RUN) -> dict:
    return {"type": "actions", "elements": [button(b, f"{prefix}:{i}") for i, b in enumerate(buttons[:25])]}


def _sections(lines: list[str], limit: int = SECTION, separator: str = "\n") -> list[dict]:
    """Lines packed into as few sections as fit, `separator` between them."""
    blocks: list[dict] = []
    chunk: list[str] = []
    size, gap = 0, len(separator)
    for line in lines:
        line = cut(line, limit)
        if chunk and size + len(line) + gap > limit:
            blocks.append(section(separator.join(chunk)))
            chunk, size = [], 0
        chunk.append(line)
        size += len(line) + gap
    if chunk:
        blocks.append(section(separator.join(chunk)))
    return blocks


def _long_text(raw: str, max_sections: int = 4) -> list[dict]:
    """A long user text (a summary) over several sections, escaped, cut in the last one."""
    blocks: list[dict] = []
    chunk: list[str] = []
    used = 0
    for ch in raw:
        piece = escape(ch)
        if used + len(piece) > SECTION - 1:
            if len(blocks) == max_sections - 1:
                blocks.append(section("".join(chunk) + "…"))
                return blocks
            blocks.append(section("".join(chunk)))
            chunk, used = [], 0
        chunk.append(piece)
        used += len(piece)
    if chunk:
        blocks.append(section("".join(chunk)))
    return blocks


def _message(text: str, blocks: list[dict]) -> dict:
    return {"text": cut(text or " ", MAX_TEXT), "blocks": blocks[:MAX_BLOCKS]}  # never inside an &amp; or a <@U1>


def talk_link(url: str) -> str:
    """A talk's link (slides, a recording), shown by its address without the scheme, cut short."""
    shown = url.split("://", 1)[-1]
    return f"<{escape(url)}|{clip(shown, 60)}>"


def _links(links: tuple[str, ...]) -> str:
    return "🔗 " + "  ·  ".join(talk_link(url) for url in links)


def _votes(n: int) -> str:
    return f"{n} vote{'s' if n != 1 else ''}"


# -- replies to commands -------------------------------------------------------


@singledispatch
def message(reply) -> dict:
    """`{"text": ..., "blocks": [...]}` for a command's reply."""
    raise TypeError(f"no Block Kit for {type(reply).__name__}")


@message.register
def _(reply: Notice) -> dict:
    body = mrkdwn(reply.text)
    blocks = [section(body if len(body) <= SECTION else cut(plain(reply.text), SECTION))]
    if reply.buttons:
        blocks.append(actions(reply.buttons))
    return _message(plain(reply.text), blocks)


@message.register
def _(reply: PaperList) -> dict:
    """The papers packed a few to a section: a 40-paper page is about 8 blocks, not 40."""
    lines, fallback = [], [plain(reply.heading)]
    for p in reply.papers:
        head = f"*#{p.number}* {paper_title(p, 600)}  `{escape(p.id)}`"
        if reply.votes.get(p.number):
            head += f"  ·  {_votes(reply.votes[p.number])}"
        line = escape(p.line)
        lines.append(f"{head}\n{line}" if line else head)
        fallback.append(f"#{p.number} {escape(p.title)}")
    blocks = [section(mrkdwn(reply.heading)), *_sections(lines, separator="\n\n")]
    if reply.footer:
        blocks.append(context(mrkdwn(reply.footer)))
    if reply.pager:
        blocks.append(actions(reply.pager, PAGE))
    return _message("\n".join(fallback), blocks)


@message.register
def _(reply: PaperCard) -> dict:
    p = reply.paper
    archived = " _(archived)_" if reply.archived else ""
    blocks = [section(f"*#{p.number}* *{paper_title(p, 1200)}*{archived}")]
    if p.byline:
        blocks.append(context(clip(p.byline, 2000)))
    if p.summary:
        blocks += _long_text(p.summary)
    tags = "  ".join(f"`{escape(t)}`" for t in p.tags) or "_no tags_"
    votes = f"  ·  {_votes(reply.votes)}" if reply.votes else ""
    blocks.append(context(clip(f"id {p.id}", 200) + votes + "  ·  tags: " + tags[:2500]))

    def with_links(lines: list[TalkWeek]) -> list[str]:
        out = []
        for s in lines:
            links = reply.links_of(s)
            out.append(mrkdwn(talk_text(s)) + (f"\n{_links(links)}" if links else "") + mrkdwn(reply.asked_of(s)))
        return out

    if reply.presented:
        blocks += _sections(["*Presented*"] + with_links(reply.presented[-20:]))
    if reply.coming:
        blocks += _sections(["*Coming up*"] + with_links(reply.coming[:20]))
    if not reply.presented and not reply.coming:
        blocks.append(section("_Nobody has presented it yet._"))
    if reply.related:
        close = "  ·  ".join(f"*#{r.number}* {paper_title(r, 300)}" for r in reply.related)
        blocks.append(context("Related: " + close))
    if reply.note:
        blocks.append(context(mrkdwn(reply.note)))
    if reply.button:
        blocks.append(actions([reply.button]))
    fallback = f"#{p.number} {escape(p.title)}\n{escape(p.summary)}"
    return _message(fallback, blocks)


@message.register
def _(reply: WeekCard) -> dict:
    line, paper = reply.line, reply.paper
    skipped = isinstance(line, SkippedWeek)  # its note says so; no meeting time to show
    head = f"*This week* ({line.week.key})" + ("" if skipped else f": meeting {date_token(line.meeting)}")
    blocks = [section(head)]
    fallback = [f"This week ({line.week.key})" + ("" if skipped else f": meeting {_plain_date(line.meeting)}")]
    if paper:
        label = "Paper of the week" + (" (posted)" if reply.posted else "")
        body = f"{label}: *#{paper.number}* {paper_title(paper, 600)}"
        if reply.archived:
            body += " _(archived)_"
        if paper.line:
            body += "\n" + clip(paper.line, 600)
        blocks.append(section(body))
        fallback.append(f"#{paper.number} {escape(paper.title)}")
    if reply.presenter:
        blocks.append(section(f"Presenter: {who(reply.presenter)}"))
        fallback.append(f"Presenter: {who(reply.presenter)}")
    if reply.note:
        blocks.append(context(mrkdwn(reply.note)))
        fallback.append(plain(reply.note))
    if reply.button:
        blocks.append(actions([reply.button]))
    return _message("\n".join(fallback), blocks)


@message.register
def _(reply: Schedule) -> dict:
    lines, fallback = [f"*{mrkdwn(reply.heading)}*"], [plain(reply.heading)]
    for month, line in by_month(reply.lines):
        lines += [f"_{month}_"] if month else []
        fallback += [month] if month else []
        lines.append(mrkdwn(slot_text(line)))
        fallback.append(plain(slot_text(line)))
    if not reply.lines:
        lines.append("_Nothing planned yet._")
    blocks = _sections(lines)
    if reply.footer:
        blocks.append(context(mrkdwn(reply.footer)))
    return _message("\n".join(fallback), blocks)


@message.register
def _(reply: PastTalks) -> dict:
    lines, fallback = ["*Talks given*, newest first"], ["Talks given, newest first"]
    for talk in reply.talks:
        said = rows.given_text(talk) + (("\n", *rows.asked(talk)) if talk.questions else ())
        lines.append(mrkdwn(said) + (f"\n{_links(talk.links)}" if talk.links else ""))
        fallback.append(plain(said) + "".join(f" {escape(url)}" for url in talk.links))
    blocks = _sections(lines)
    if reply.footer:
        blocks.append(context(mrkdwn(reply.footer)))
    if reply.pager:
        blocks.append(actions(reply.pager, PAGE))
    return _message("\n".join(fallback), blocks)


@message.register
def _(reply: Stats) -> dict:  # the history in words, and its picture where the bot serves one (a PNG)
    body = message(Notice(reply.summary))
    image = [{"type": "image", "image_url": reply.image_url, "alt_text": "The group's history in bar charts"}]
    return {**body, "blocks": body["blocks"] + (image if reply.image_url else [])}


@message.register
def _(reply: Mine) -> dict:
    lines = ["*Your coming slots*"] + [mrkdwn(slot_text(s)) for s in reply.upcoming]
    if not reply.upcoming:
        lines.append(f"_None yet: `{COMMAND} signup &lt;paper&gt;` takes the first open week._")
    if reply.past:
        lines += ["*Your past slots*"] + [mrkdwn(slot_text(s)) for s in reply.past[:30]]
    blocks = _sections(lines)
    fallback = ["Your coming slots:"] + ([plain(slot_text(s)) for s in reply.upcoming] or ["none yet"])
    if reply.past:
        fallback += ["Your past slots:"] + [plain(slot_text(s)) for s in reply.past[:30]]
    return _message("\n".join(fallback), blocks)


@message.register
def _(reply: TagCounts) -> dict:
    if not reply.counts:
        return _message("No tags yet.", [section("No tags yet.")])
    lines = [f"`{escape(tag)}`  {n}" for tag, n in reply.counts]
    heading = "*Tags* (papers)"
    if reply.total > len(reply.counts):
        heading += f"  ·  {reply.first + 1}–{reply.first + len(reply.counts)} of {reply.total}"
    room = MAX_BLOCKS - 2  # the heading, and the pager or the "more" line
    blocks = [section(heading)] + _sections(lines)
    if len(blocks) > room:
        shown = sum(b["text"]["text"].count("\n") + 1 for b in blocks[1:room])
        blocks = blocks[:room] + [context(f"…and {len(lines) - shown} more tags on this page")]
    if reply.pager:
        blocks.append(actions(reply.pager, PAGE))
    fallback = ", ".join(f"{escape(tag)} ({n})" for tag, n in reply.counts)
    return _message(fallback, blocks)


@message.register
def _(reply: Help) -> dict:
    lines = [
        f"`{COMMAND} {escape(h.usage)}`  {escape(h.summary)}{' _(admins)_' if h.admin else ''}"
        f"  ·  e.g. `{COMMAND} {escape(h.example)}`"
        for h in reply.lines
    ]
    blocks = []
    if reply.intro:
        blocks.append(section(mrkdwn(reply.intro)))
    blocks += _sections(lines)
    blocks.append(
        context(
            "`&lt;paper&gt;` is an id such as `streaming-diloco` or a number such as `7`; "
            "`&lt;date&gt;` is `YYYY-MM-DD` (any day of the week) or `next`."
        )
    )
    fallback = (plain(reply.intro) + "\n" if reply.intro else "") + "\n".join(
        f"{COMMAND} {escape(h.usage)}: {escape(h.summary)}{' (admins)' if h.admin else ''}" for h in reply.lines
    )
    return _message(fallback, blocks)


@message.register
def _(reply: EditForm) -> dict:  # only reached when the form cannot be opened
    said = f"Use the form to edit #{reply.paper.number}: `{COMMAND} edit {reply.paper.number}`"
    return _message(said.replace("`", ""), [section(said)])


@message.register
def _(reply: AddForm) -> dict:  # only reached when a form cannot be opened
    return _message("Use the form to add a paper.", [section("Use the form to add a paper.")])


@message.register
def _(reply: SuggestionList) -> dict:
    blocks = [section(mrkdwn(reply.heading))]
    fallback = [plain(reply.heading)]
    for i, s in enumerate(reply.lines[:23]):  # two blocks each, within a message's 50
        title = clip(s.title, 600)
        if s.url and len(s.url) <= MAX_LINK:
            title = f"<{s.url.replace('&', '&amp;').replace('<', '%3C').replace('>', '%3E')}|{title}>"
        body = f"*{s.number}.* {title}" + (f"\n{clip(s.byline, 600)}" if s.byline else "")
        blocks.append(section(f"{body}\nsuggested by {who(s.by)}"))
        blocks.append({"type": "actions", "elements": [button(b, f"{RUN}:g{i}.{j}") for j, b in enumerate(s.buttons)]})
        fallback.append(f"{s.number}. {escape(s.title)}")
    if reply.footer:
        blocks.append(context(mrkdwn(reply.footer)))
    return _message("\n".join(fallback), blocks)


# -- messages the bot sends on its own -------------------------------------------


def weekly_post(post: WeeklyPost) -> dict:
    """The channel post: chat.postMessage / chat.update arguments, metadata included."""
    p = post.paper
    blocks: list[dict] = [
        {
            "type": "header",
            "text": {"type": "plain_text", "text": f"📄 Paper of the week · {post.week.key}", "emoji": True},
        },
        *([context(f"📚 *{escape(post.group_name)}*")] if post.group_name else []),
        section(f"*#{p.number}* *{paper_title(p, 1200)}*"),
    ]
    if p.summary:
        blocks += _long_text(p.summary, max_sections=3)
    tags = "  ".join(f"`{escape(t)}`" for t in p.tags)
    blocks.append(context((f"Tags: {tags}  ·  " if tags else "") + f"`{COMMAND} show {escape(p.id)}`"))
    meeting = f"🗓 Meeting: *{date_token(post.meeting)}*"
    named = f"{escape(post.group_name)} · " if post.group_name else ""  # a group with no name: as before
    fallback = f"{named}Paper of the week {post.week.key}: #{p.number} {escape(p.title)}."
    if post.archived:
        blocks.append(context("_Archived from the catalog since its talk was booked: the talk stands._"))
        fallback += " (Archived from the catalog; the talk stands.)"
    if post.skipped:  # skipped after it was posted: no meeting to show
        blocks.append(section("🚫 No meeting this week."))
        fallback += " No meeting this week."
    elif post.presenter:
        blocks.append(section(f"{meeting}\n🎤 Presenter: {who(post.presenter)}"))
        fallback += f" Meeting {_plain_date(post.meeting)}. Presenter: {who(post.presenter)}."
    elif post.signup_button:
        blocks.append(section(f"{meeting}\n🙋 {post.nobody}", button(post.signup_button, f"{WEEKLY}:signup")))
        fallback += f" Meeting {_plain_date(post.meeting)}. {post.nobody}"
    elif post.elsewhere:  # nobody presents it this week, and its presenter is another week's
        note = post.elsewhere_note()
        blocks.append(section(f"{meeting}\n🎤 {mrkdwn(note)}"))
        fallback += f" Meeting {_plain_date(post.meeting)}. {plain(note)}"
    if post.attendance_buttons:  # who comes: the count, and a button each way
        blocks.append(context(mrkdwn(post.counts())))
        blocks.append(actions(post.attendance_buttons))
        fallback += f" {plain(post.counts())}."
    if post.last_week is not None and (last := _last_week(post.last_week)):
        blocks.append(context(last))
        fallback += " Last week's talk: " + "  ".join(escape(url) for url in post.last_week.links)
    if p.summary:
        fallback += f"\n{escape(p.summary)}"
    return {
        **_message(fallback, blocks),
        "metadata": {
            "event_type": POST_EVENT,
            "event_payload": {"week": post.week.key, "paper_id": p.id, "paper_number": p.number},
        },
        "unfurl_links": False,
        "unfurl_media": False,
    }


def _last_week(talk: TalkLinks) -> str:
    """The weekly post's line on last week's talk and its links ('' when it had none)."""
    if talk.line.paper is None or not talk.links:
        return ""
    paper = talk.line.paper
    return cut(f"Last week: *#{paper.number}* {paper_title(paper, 200)}  {_links(talk.links)}", 2900)


def reminder(r: Reminder) -> dict:
    withdraw = f"{COMMAND} withdraw {r.meeting.date().isoformat()}"
    at = f" at {escape(r.group_name)}" if r.group_name else ""
    body = (
        f"⏰ Reminder: you present *#{r.paper.number}* {paper_title(r.paper, 1000)} "
        f"on *{date_token(r.meeting)}*{at}.\nCan't make it? `{withdraw}` opens the week for someone else."
    )
    fallback = (
        f"Reminder: you present #{r.paper.number} {escape(r.paper.title)} on {_plain_date(r.meeting)}{at}. "
        f"Can't make it? {withdraw}"
    )
    return {
        **_message(fallback, [section(body)]),
        "metadata": {
            "event_type": REMINDER_EVENT,
            "event_payload": {"week": r.week.key, "paper_id": r.paper.id, "presenter": r.presenter},
        },
        "unfurl_links": False,
    }


def announcement(t: Text, buttons: list[Button] | None = None) -> dict:
    return _message(plain(t), [section(mrkdwn(t)[:SECTION]), *([actions(buttons)] if buttons else [])])


def home(view: Home) -> dict:
    blocks: list[dict] = [{"type": "header", "text": {"type": "plain_text", "text": "📚 Reading group"}}]
    if view.notice:
        blocks.append(section(("" if view.notice.ok else "⚠️ ") + mrkdwn(view.notice.text)[: SECTION - 4]))
    blocks.append(section("*Coming weeks*"))
    blocks += _sections([mrkdwn(slot_text(s)) for s in view.coming] or ["_Nothing planned yet._"])
    blocks.append({"type": "divider"})
    blocks.append(section("*Your slots*"))
    if not view.mine:
        blocks.append(section("_None yet: pick a paper below._"))
    for i, line in enumerate(view.mine[:HOME_SLOTS]):
        blocks.append(
            section(
                mrkdwn(slot_text(line)),
                button(Button("Withdraw", f"withdraw {line.week.monday.isoformat()}"), f"{RUN}:w{i}"),
            )
        )
    if len(view.mine) > HOME_SLOTS:
        blocks.append(context(f"…and {len(view.mine) - HOME_SLOTS} more: `{COMMAND} mine` lists them all"))
    if view.recent:
        blocks.append(section("*Latest talks' slides and recordings*"))
        blocks += _sections([mrkdwn(slot_text(t.line)) + f"\n{_links(t.links)}" for t in view.recent])
    blocks.append({"type": "divider"})
    blocks.append(section("*Papers waiting for a presenter* (sign-up takes the first open week)"))
    room = MAX_VIEW_BLOCKS - len(blocks) - 1
    for i, entry in enumerate(view.waiting[:room]):
        p = entry.paper
        body = f"*#{p.number}* {paper_title(p, 600)}" + (f"\n{clip(p.line, 600)}" if p.line else "")
        blocks.append(section(body, button(entry.button, f"{RUN}:s{i}") if entry.button else None))
    blocks.append(context(f"Everything here works as `{COMMAND}` commands too: `{COMMAND} help`."))
    return {"type": "home", "blocks": blocks[:MAX_VIEW_BLOCKS]}
