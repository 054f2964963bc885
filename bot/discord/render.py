"""Discord messages for every reply: pure functions from `bot.chat.replies` values to message bodies.

    render.message(Notice(text("Signed up: ", Mention("1300…"))))
    # {"content": "Signed up: <@1300…>", "allowed_mentions": {"parse": []}}

One style throughout: `content` and embeds, with buttons in action rows (not Components V2).
Everything a member wrote (titles, summaries, tags, ids, query words) goes through `escape`, and
every message carries `allowed_mentions` naming nobody, so a title such as `@everyone <@123>`
is shown as text and pings nobody. Each builder keeps within Discord's limits itself: 2,000
characters of content, 10 embeds and 6,000 characters across them, 5 rows of 5 buttons,
`custom_id` up to 100 characters.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from datetime import datetime
from functools import singledispatch

from bot.catalog.papers import Paper, read_byline
from bot.chat import paper_commands
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
from bot.discord import definition
from bot.rich_text import COMMAND, Bold, Button, ChannelRef, Code, Italic, Mention, PaperRef, Sep, Text, When
from bot.schedule.rows import (
    Reminder,
    SkippedWeek,
    TalkWeek,
    WeeklyPost,
    asked,
    by_month,
    given_text,
    slot_text,
    talk_text,
)

MAX_CONTENT, MAX_EMBEDS, MAX_EMBED_TOTAL, MAX_DESCRIPTION = 2000, 10, 6000, 4096
MAX_TITLE, MAX_FIELD, MAX_FOOTER = 256, 1024, 2048
MAX_ROWS, MAX_BUTTONS, MAX_CUSTOM_ID, MAX_LABEL = 5, 5, 100, 80
#: Room left for what Discord counts and we do not see (a field's name, a footer): never over.
EMBED_BUDGET = MAX_EMBED_TOTAL - 200
#: Tags one reply lists: 100 lines of at most 50 characters fit one embed's budget.
TAGS_PAGE = 100
NOBODY: dict = {"parse": []}
#: The weekly post's footer, which `find` looks for in the channel's history.
POST_FOOTER = "paper of the week · "
REMINDER_FOOTER = "paperbot reminder · "
#: Embed colour: the group's colour for cards and posts.
COLOUR = 0x5865F2

#: custom_id kinds: run a command and answer privately; a pager (update the message); the weekly
#: post's sign-up; a command kept here because it is too long for a custom_id.
RUN, PAGE, WEEKLY = "r", "p", "w"

#: Each character Discord's markdown reads, backslash-escaped (str.translate: one pass in C, the bulk of a list's work).
_MARKDOWN = str.maketrans({c: "\\" + c for c in "\\*_~`|>#-[]<"})
_EVERYONE = re.compile(r"@(everyone|here)")


def escape(raw: str) -> str:
    """Member text, inert in Discord's markdown: `\\ * _ ~ ` | > # - [ ]` (and `<`, so that no
    mention, channel or timestamp is formed) backslash-escaped; `@everyone`/`@here` broken with a
    zero-width space, as discord.py's escape_mentions does (allowed_mentions already stops the ping)."""
    if not raw:
        return raw
    out = raw.translate(_MARKDOWN)
    return _EVERYONE.sub("@\u200b\\1", out) if "@" in out else out


def clip(raw: str, limit: int) -> str:
    """`raw` escaped, cut so that the escaped form fits `limit` characters, never after a lone `\\`."""
    return fit(escape(raw), limit)


def fit(escaped: str, limit: int) -> str:
    """Text escaped already, cut to `limit` characters, never after a lone `\\`."""
    if len(escaped) <= limit:
        return escaped
    head = escaped[: limit - 1]
    if head.endswith("\\") and not head.endswith("\\\\"):
        head = head[:-1]
    return head + "…"


def cut(done: str, limit: int) -> str:
    """Markdown already made, cut to `limit` characters."""
    if len(done) <= limit:
        return done
    head = done[: limit - 1]
    if head.endswith("\\") and not head.endswith("\\\\"):
        head = head[:-1]
    return head + "…"


_SNOWFLAKE = re.compile(r"[0-9]{15,21}")


def is_discord_user(user: str) -> bool:
    return _SNOWFLAKE.fullmatch(user) is not None


def who(user: str) -> str:
    """A mention of a Discord member (shown as their name, never pinged: allowed_mentions); anyone
    else (the console's operator) by name."""
    return f"<@{user}>" if is_discord_user(user) else f"@{escape(user)}"


def when(moment: datetime, with_time: bool = True) -> str:
    """A moment each reader sees in their own zone."""
    return f"<t:{int(moment.timestamp())}:{'f' if with_time else 'D'}>"


def code(words: str) -> str:
    if words.startswith(COMMAND + " "):  # a command to type: as Discord lists it (`manage archive 7`)
        words = f"{COMMAND} {definition.as_shown(words[len(COMMAND) + 1 :])}"
    return "`" + words.replace("`", "ˋ").replace("\n", " ") + "`"


def _linkable(url: str) -> bool:
    return bool(url) and len(url) <= 512 and re.fullmatch(r"https?://[^\s()<>\[\]]+", url) is not None


def paper_title(paper, limit: int = 200) -> str:
    title = clip(paper.title, limit)
    return f"[{title}]({paper.url})" if _linkable(paper.url) else title


def paper_ref(paper, limit: int = 200) -> str:
    return f"**#{paper.number}** {paper_title(paper, limit)}"


def _segment(seg) -> str:
    if isinstance(seg, str):
        return escape(seg)
    if isinstance(seg, Mention):
        return who(seg.user)
    if isinstance(seg, When):
        return when(seg.moment, seg.with_time)
    if isinstance(seg, Code):
        return code(seg.text)
    if isinstance(seg, Bold):
        return f"**{_segment(seg.text)}**"
    if isinstance(seg, Italic):
        return f"_{escape(seg.text)}_"
    if isinstance(seg, Sep):
        return " · "
    if isinstance(seg, PaperRef):
        return paper_ref(seg.paper, 120 if seg.brief else 200)  # 120 in a list's line: embeds' budget
    if isinstance(seg, ChannelRef):
        return f"<#{seg.channel}>" if seg.channel.isdigit() else escape(seg.channel)
    raise TypeError(f"not a text segment: {seg!r}")


def markdown(t: Text) -> str:
    return "".join(_segment(s) for s in t)


# -- buttons --------------------------------------------------------------------------

#: Commands too long for a custom_id, by a short key: kept for the process's life (a click after a
#: restart on such a button is answered with a line saying to type the command).
_LONG: OrderedDict[str, str] = OrderedDict()
_LONG_LOCK = threading.Lock()
LONG_KEPT = 10_000


def custom_id(kind: str, index: int, command: str, place: str | None = None) -> str:
    """A button's custom_id: its kind, index and command; with `place` (a hosted install's server, on a
    button sent in a direct message, which carries no server) that server's id too."""
    head = f"{kind}{index}" + (f"@{place}" if place else "")
    cid = f"{head}:{command}"
    if len(cid) <= MAX_CUSTOM_ID:
        return cid
    key = hashlib.sha256(command.encode()).hexdigest()[:24]
    with _LONG_LOCK:
        _LONG[key] = command
        _LONG.move_to_end(key)
        while len(_LONG) > LONG_KEPT:
            _LONG.popitem(last=False)
    return f"{head}:#{key}"


def command_of(cid: str) -> tuple[str, str | None]:
    """(kind, command) of a custom_id; the command is None when it is not known (any more)."""
    head, _, command = cid.partition(":")
    kind = head[:1]
    if command.startswith("#"):
        with _LONG_LOCK:
            return kind, _LONG.get(command[1:])
    return kind, command or None


def place_of(cid: str) -> str | None:
    """The server a custom_id names (`custom_id`'s `place`), or None."""
    head = cid.partition(":")[0]
    place = head.partition("@")[2]
    return place if place.isdigit() else None


def button(b: Button, kind: str, index: int, place: str | None = None) -> dict:
    return {
        "type": 2,
        "style": 1 if b.primary else 2,
        "label": b.label[:MAX_LABEL],
        "custom_id": custom_id(kind, index, b.command, place),
    }


def rows(buttons: list[Button], kind: str = RUN, place: str | None = None) -> list[dict]:
    buttons = buttons[: MAX_ROWS * MAX_BUTTONS]
    made = [button(b, kind, i, place) for i, b in enumerate(buttons)]
    return [{"type": 1, "components": made[i : i + MAX_BUTTONS]} for i in range(0, len(made), MAX_BUTTONS)]


# -- message bodies ----------------------------------------------------------------------


def _body(content: str = "", embeds: list[dict] | None = None, components: list[dict] | None = None) -> dict:
    body: dict = {"content": cut(content, MAX_CONTENT), "allowed_mentions": NOBODY}
    if embeds:
        body["embeds"] = embeds[:MAX_EMBEDS]
    body["components"] = components or []
    if not body["content"] and not embeds:
        body["content"] = "\u200b"
    return body


def _pack(lines: list[str], budget: int, separator: str = "\n") -> tuple[list[dict], int]:
    """Lines packed into as few embeds as fit, within `budget` characters in all: (embeds, lines used)."""
    embeds: list[dict] = []
    chunk: list[str] = []
    size = used = 0
    for line in lines:
        line = cut(line, MAX_DESCRIPTION)
        if used + len(line) + len(separator) > budget:
            break
        if chunk and size + len(line) + len(separator) > MAX_DESCRIPTION:
            if len(embeds) == MAX_EMBEDS - 1:
                break
            embeds.append({"description": separator.join(chunk), "color": COLOUR})
            chunk, size = [], 0
        chunk.append(line)
        size += len(line) + len(separator)
        used += len(line) + len(separator)
    if chunk:
        embeds.append({"description": separator.join(chunk), "color": COLOUR})
    return embeds, sum(e["description"].count(separator) + 1 for e in embeds) if separator == "\n" else used


def talk_link(url: str) -> str:
    """A talk's link, by its address without the scheme; a link Discord would not draw is shown as text."""
    shown = clip(url.split("://", 1)[-1], 60)
    return f"[{shown}]({url})" if _linkable(url) else escape(url)


def _links(links: tuple[str, ...]) -> str:
    return "🔗 " + " · ".join(talk_link(url) for url in links)


def _votes(n: int) -> str:
    return f"{n} vote{'s' if n != 1 else ''}"


@singledispatch
def message(reply) -> dict:
    """The message body (content, embeds, components, allowed_mentions) for a command's reply."""
    raise TypeError(f"no Discord message for {type(reply).__name__}")


@message.register
def _(reply: Notice) -> dict:
    prefix = "" if reply.ok else "⚠️ "
    return _body(prefix + markdown(reply.text), components=rows(reply.buttons))


@message.register
def _(reply: PaperList) -> dict:
    # Each title and summary escaped once: the forms below only cut them (most of a list's work).
    papers = [(p, escape(p.title), escape(p.line), _linkable(p.url)) for p in reply.papers]

    def entries(title: int, summary: bool, ids: bool) -> list[str]:
        out = []
        for p, name, line, linked in papers:
            name = fit(name, title)
            head = f"**#{p.number}** " + (f"[{name}]({p.url})" if linked else name)
            head += f" · {code(p.id)}" if ids else ""
            head += f" · {_votes(reply.votes[p.number])}" if reply.votes.get(p.number) else ""
            line = fit(line, 160) if summary else ""
            out.append(f"{head}\n{line}" if line else head)
        return out

    # Each paper as a block of its own: in full when the page fits, else shorter, down to a short
    # title alone (about 80 characters a paper: a 40-paper page in about 3,200).
    for title, summary, ids in ((200, True, True), (120, False, True), (60, False, False)):
        lines = entries(title, summary, ids)
        if sum(len(x) + 2 for x in lines) <= EMBED_BUDGET:
            break
    embeds, shown = _pack_blocks(lines, EMBED_BUDGET)
    content = markdown(reply.heading)
    if shown < len(lines):
        content += f"\n_…and {len(lines) - shown} more on this page than a message holds: narrow it with "
        content += code(f"{COMMAND} search <words>") + "_"
    if reply.footer:
        content += "\n" + markdown(reply.footer)
    return _body(content, embeds, rows(reply.pager, PAGE))


def _pack_blocks(blocks: list[str], budget: int) -> tuple[list[dict], int]:
    """Multi-line blocks (a paper each) packed into embeds, a blank line between: (embeds, blocks shown)."""
    embeds: list[dict] = []
    chunk: list[str] = []
    size = used = shown = 0
    for block in blocks:
        block = cut(block, 1000)
        cost = len(block) + 2
        if used + cost > budget:
            break
        if chunk and size + cost > MAX_DESCRIPTION:
            if len(embeds) == MAX_EMBEDS - 1:
                break
            embeds.append({"description": "\n\n".join(chunk), "color": COLOUR})
            chunk, size = [], 0
        chunk.append(block)
        size += cost
        used += cost
        shown += 1
    if chunk:
        embeds.append({"description": "\n\n".join(chunk), "color": COLOUR})
    return embeds, shown


def _field(name: str, lines: list[str]) -> dict:
    value = ""
    for line in lines:
        line = cut(line, MAX_FIELD)
        if len(value) + len(line) + 1 > MAX_FIELD:
            break
        value += ("\n" if value else "") + line
    return {"name": name, "value": value or "—", "inline": False}


@message.register
def _(reply: PaperCard) -> dict:
    p = reply.paper
    archived = " (archived)" if reply.archived else ""
    embed: dict = {
        "title": cut(f"#{p.number} {escape(p.title)}", MAX_TITLE - len(archived)) + archived,
        "color": COLOUR,
    }
    if _linkable(p.url):
        embed["url"] = p.url
    if p.summary:
        embed["description"] = clip(p.summary, 3000)
    tags = "  ".join(code(t) for t in p.tags) or "_no tags_"
    fields = [_field("id", [code(p.id)]), _field("tags", [tags])]
    if reply.votes:
        fields.append(_field("votes", [str(reply.votes)]))
    if p.byline:
        fields.insert(0, _field("by", [escape(p.byline)]))

    def with_links(lines: list[TalkWeek]) -> list[str]:
        return [
            markdown(talk_text(s))
            + (f"\n{_links(reply.links_of(s))}" if reply.links_of(s) else "")
            + markdown(reply.asked_of(s))
            for s in lines
        ]

    if reply.presented:
        fields.append(_field("Presented", with_links(reply.presented[-10:])))
    if reply.coming:
        fields.append(_field("Coming up", with_links(reply.coming[:10])))
    if not reply.presented and not reply.coming:
        fields.append(_field("Presenters", ["_Nobody has presented it yet._"]))
    if reply.related:
        fields.append(_field("Related", [paper_ref(r) for r in reply.related]))
    embed["fields"] = fields
    content = markdown(reply.note) if reply.note else ""
    return _body(content, [embed], rows([reply.button] if reply.button else []))


@message.register
def _(reply: WeekCard) -> dict:
    line, paper = reply.line, reply.paper
    skipped = isinstance(line, SkippedWeek)
    lines = [f"**This week** ({line.week.key})" + ("" if skipped else f": meeting {when(line.meeting)}")]
    if paper:
        label = "Paper of the week" + (" (posted)" if reply.posted else "")
        lines.append(f"{label}: {paper_ref(paper)}" + (" _(archived)_" if reply.archived else ""))
        if paper.line:
            lines.append(clip(paper.line, 600))
    if reply.presenter:
        lines.append(f"Presenter: {who(reply.presenter)}")
    if reply.note:
        lines.append(markdown(reply.note))
    embed = {"description": cut("\n".join(lines), MAX_DESCRIPTION), "color": COLOUR}
    return _body("", [embed], rows([reply.button] if reply.button else []))


@message.register
def _(reply: Schedule) -> dict:
    lines = []
    for month, line in by_month(reply.lines):
        lines += [f"__{month}__"] if month else []
        lines.append(markdown(slot_text(line)))
    lines = lines or ["_Nothing planned yet._"]
    embeds, shown = _pack(lines, EMBED_BUDGET)
    content = f"**{markdown(reply.heading)}**"
    if reply.footer:
        content += "\n" + markdown(reply.footer)
    return _body(content, embeds)


@message.register
def _(reply: PastTalks) -> dict:
    lines = [
        markdown(given_text(t))
        + (f"\n{_links(t.links)}" if t.links else "")
        + (f"\n{markdown(asked(t))}" if t.questions else "")
        for t in reply.talks
    ]
    embeds, _ = _pack(lines, EMBED_BUDGET)
    content = "**Talks given**, newest first"
    if reply.footer:
        content += "\n" + markdown(reply.footer)
    return _body(content, embeds, rows(reply.pager, PAGE))


#: The history's picture, attached to the `stats` answer (bot/discord/app.py) as its embed's image.
STATS_PNG = "stats.png"


@message.register
def _(reply: Stats) -> dict:
    """The history in words, in an embed; its picture is attached as the embed's image (bot/discord/app.py)."""
    embed = {"title": "The group's history", "description": markdown(reply.summary)[:MAX_DESCRIPTION]}
    return _body("", [{**embed, "color": COLOUR}])


@message.register
def _(reply: Mine) -> dict:
    lines = ["**Your coming slots**"] + [markdown(slot_text(s)) for s in reply.upcoming]
    if not reply.upcoming:
        lines.append(f"_None yet: {code(COMMAND + ' signup <paper>')} takes the first open week._")
    if reply.past:
        lines += ["**Your past slots**"] + [markdown(slot_text(s)) for s in reply.past[:30]]
    embeds, _ = _pack(lines, EMBED_BUDGET)
    return _body("", embeds)


@message.register
def _(reply: TagCounts) -> dict:
    if not reply.counts:
        return _body("No tags yet.")
    heading = "**Tags** (papers)"
    if reply.total > len(reply.counts):
        heading += f" · {reply.first + 1}–{reply.first + len(reply.counts)} of {reply.total}"
    lines = [f"{code(tag)} {n}" for tag, n in reply.counts]
    embeds, shown = _pack(lines, EMBED_BUDGET)
    if shown < len(lines):
        heading += f" · _{len(lines) - shown} more on this page not shown_"
    return _body(heading, embeds, rows(reply.pager, PAGE))


@message.register
def _(reply: Help) -> dict:
    lines = [
        f"{code(COMMAND + ' ' + h.usage)} {escape(h.summary)}{' _(admins)_' if h.admin else ''}" for h in reply.lines
    ]
    lines.append(
        f"{code('<paper>')} is an id such as {code('streaming-diloco')} or a number such as {code('7')}; "
        f"{code('<date>')} is {code('YYYY-MM-DD')} or {code('next')}."
    )
    embeds, _ = _pack(lines, EMBED_BUDGET)
    return _body(markdown(reply.intro), embeds)


@message.register
def _(reply: EditForm) -> dict:  # only reached when the form cannot be opened (a deferred answer)
    return _body(
        "The form could not be opened in time: " + code(f"{COMMAND} edit {reply.paper.number}") + " again opens it."
    )


@message.register
def _(reply: AddForm) -> dict:
    if reply.fields is None:  # only reached when the form cannot be opened (a deferred answer)
        note = markdown(reply.note) + "\n" if reply.note else ""
        return _body(note + "The form could not be opened in time: " + code(f"{COMMAND} add") + " again opens it.")
    f = reply.fields
    embed: dict = {"title": cut(escape(f["title"]), MAX_TITLE), "color": COLOUR}
    if _linkable(f.get("url") or ""):
        embed["url"] = f["url"]
    if f.get("summary"):
        embed["description"] = clip(f["summary"], 1500)
    fields = []
    byline = Paper(0, "", f["title"], "", "", (), f.get("authors") or "", f.get("year")).byline
    if byline:
        fields.append(_field("by", [escape(byline)]))
    fields.append(_field("tags", ["  ".join(code(t) for t in f.get("tags") or ()) or "_none proposed_"]))
    embed["fields"] = fields
    content = (markdown(reply.note) + " " if reply.note else "") + "Nothing is added until you submit the form."
    return _body(content, [embed], rows([Button("Open the add form", reply.again, primary=True)]))


@message.register
def _(reply: SuggestionList) -> dict:
    lines, buttons = [], []
    for s in reply.lines[: MAX_ROWS * MAX_BUTTONS // 2]:  # two buttons each
        title = f"[{clip(s.title, 300)}]({s.url})" if _linkable(s.url) else clip(s.title, 300)
        line = f"**{s.number}.** {title}" + (f"\n{clip(s.byline, 300)}" if s.byline else "")
        lines.append(f"{line}\nsuggested by {who(s.by)}")
        buttons += [Button(f"{b.label} {s.number}", b.command, b.primary) for b in s.buttons]
    embeds, _ = _pack(lines, MAX_EMBED_TOTAL - 200, separator="\n\n")
    content = markdown(reply.heading) + ("\n" + markdown(reply.footer) if reply.footer else "")
    return _body(content, embeds, rows(buttons))


ADD_FORM = "add"
#: The add form's inputs (Discord allows five; labels up to 45 characters): name, label, placeholder,
#: paragraph, required, most characters. Authors and year share one ("by"), written as a byline.
ADD_FIELDS = (
    ("title", "Title", "Streaming DiLoCo with Overlapping Communication", False, True, 300),
    ("by", "Authors (year)", "Ada Lovelace, Alan Turing (2025)", False, False, 2010),
    ("url", "Link", "https://arxiv.org/abs/…", False, False, 1000),
    ("summary", "Summary", "", True, False, 3000),
    ("tags", "Tags, separated by commas", "parallelism-dp, moe", False, False, 300),
)


def add_form(form: AddForm | None = None) -> dict:
    """The add form as a Discord modal (the first answer to `/paper add`, or to its button), filled in
    with a look-up's fields when `form` has them."""
    f = dict((form.fields if form is not None else None) or {})
    if f:
        f["by"] = Paper(0, "", f.get("title", ""), "", "", (), f.get("authors") or "", f.get("year")).byline
        f["tags"] = ", ".join(f.get("tags") or ())
    rows_ = []
    for name, label, placeholder, paragraph, required, most in ADD_FIELDS:
        item = {
            "type": 4,
            "custom_id": name,
            "label": label,
            "style": 2 if paragraph else 1,
            "required": required,
            "max_length": most,
            **({"placeholder": placeholder} if placeholder else {}),
        }
        value = f.get(name)
        if value not in (None, ""):
            item["value"] = str(value)[:most]
        rows_.append({"type": 1, "components": [item]})
    return {"custom_id": ADD_FORM, "title": "Add a paper", "components": rows_}


#: The edit form's custom_id: this prefix, the paper's number, ":" and the paper's form version.
EDIT_FORM = "edit:"
#: The most characters a modal's text input holds.
INPUT_MOST = 4000


def edit_form(paper) -> dict:
    """The add form as a modal, filled in with `paper` as it is; saving changes what the admin changed.
    A field longer than an input holds is left out (kept as it is), and the title says so."""
    modal = add_form()
    values = paper_commands.form_fields(paper, INPUT_MOST)
    values[paper_commands.BYLINE] = paper_commands.form_byline(values)
    kept = [paper_commands.FORM_FIELDS[k] for k in paper_commands.FORM_FIELDS if k not in values]
    rows_ = []
    for row in modal["components"]:
        item = row["components"][0]
        name = item["custom_id"]
        if name not in values:
            continue
        item["max_length"] = INPUT_MOST if name != "title" else item["max_length"]
        if values[name]:
            item["value"] = values[name]
        if name != "title":
            item["required"] = False  # emptied: the field is cleared
        rows_.append(row)
    title = f"Edit #{paper.number}" + (f" ({', '.join(kept)} kept as is)" if kept else "")
    custom_id = f"{EDIT_FORM}{paper.number}:{paper_commands.form_version(paper)}"
    return {**modal, "components": rows_, "custom_id": custom_id, "title": title[:45]}


def edited(custom_id: object) -> tuple[int, str] | None:
    """The paper an edit form's custom_id names and its version when the form opened; None for any other form."""
    if not isinstance(custom_id, str) or not custom_id.startswith(EDIT_FORM):
        return None
    number, _, version = custom_id[len(EDIT_FORM) :].partition(":")
    return (int(number), version) if number.isdigit() and len(number) < 12 else None


def form_values(data: dict) -> dict[str, str | None]:
    """The values of a submitted modal, by input ("by": authors and year in one; save_form reads it back)."""
    values: dict[str, str | None] = {}
    for row in data.get("components") or []:
        for item in (row or {}).get("components") or [] if isinstance(row, dict) else []:
            if isinstance(item, dict) and isinstance(item.get("custom_id"), str):
                value = item.get("value")
                values[item["custom_id"]] = value if isinstance(value, str) else None
    return values


def added_values(data: dict) -> dict[str, str | None]:
    """The values of a submitted add form, "by" read back as authors and year."""
    values = form_values(data)
    if paper_commands.BYLINE in values:
        values["authors"], values["year"] = read_byline(values.pop(paper_commands.BYLINE))
    return values


# -- messages the bot sends on its own ---------------------------------------------------


def weekly_post(post: WeeklyPost) -> dict:
    """The channel post: an embed whose footer names its ISO week (found again by `find`)."""
    p = post.paper
    embed: dict = {
        "title": cut(f"📄 #{p.number} {escape(p.title)}", MAX_TITLE),
        "color": COLOUR,
        "footer": {"text": f"{POST_FOOTER}{post.week.key}"},
    }
    if _linkable(p.url):
        embed["url"] = p.url
    lines = []
    if p.summary:
        lines.append(clip(p.summary, 3000))
    tags = "  ".join(code(t) for t in p.tags)
    lines.append((f"Tags: {tags} · " if tags else "") + code(f"{COMMAND} show {p.id}"))
    meeting = f"🗓 Meeting: **{when(post.meeting)}**"
    if post.skipped:
        lines.append("🚫 No meeting this week.")
    elif post.presenter:
        lines.append(f"{meeting}\n🎤 Presenter: {who(post.presenter)}")
    elif post.signup_button:
        lines.append(f"{meeting}\n🙋 {escape(post.nobody)}")
    elif post.elsewhere:
        lines.append(f"{meeting}\n🎤 {markdown(post.elsewhere_note())}")
    if post.attendance_buttons:
        lines.append(markdown(post.counts()))
    if post.archived:
        lines.append("_Archived from the catalog since its talk was booked: the talk stands._")
    last = post.last_week
    if last is not None and last.line.paper is not None and last.links:
        lines.append(f"Last week: {paper_ref(last.line.paper, 120)}\n{_links(last.links)}")
    embed["description"] = cut("\n\n".join(lines), MAX_DESCRIPTION)
    named = f"📚 {escape(post.group_name)} · " if post.group_name else ""  # a group with no name: as before
    content = f"{named}**Paper of the week** · {post.week.key}"
    components: list[dict] = []
    if post.signup_button and not post.skipped:
        components = [{"type": 1, "components": [button(post.signup_button, WEEKLY, 0)]}]
    components += rows(post.attendance_buttons)  # who comes: a button each way
    return _body(content, [embed], components)


def reminder(r: Reminder) -> dict:
    withdraw = f"{COMMAND} withdraw {r.meeting.date().isoformat()}"
    at = f" at {escape(r.group_name)}" if r.group_name else ""
    body = (
        f"⏰ Reminder: you present {paper_ref(r.paper)} on **{when(r.meeting)}**{at}.\n"
        f"Can't make it? {code(withdraw)} opens the week for someone else."
    )
    embed = {
        "description": cut(body, MAX_DESCRIPTION),
        "color": COLOUR,
        "footer": {"text": f"{REMINDER_FOOTER}{r.week.key}"},
    }
    return _body("", [embed])


def announcement(t: Text) -> dict:
    return _body(markdown(t))
