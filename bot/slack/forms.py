"""Slack's modals (forms): adding and editing a paper, and a modal that only says something.

views_open(trigger_id=..., view=forms.add_form(channel, form))
"""

from __future__ import annotations

from bot.chat import paper_commands
from bot.chat.replies import AddForm, Notice
from bot.rich_text import COMMAND
from bot.slack.blocks import clip, context, mrkdwn, section

ADD_CALLBACK = "add_paper"
ADD_FIELDS = ("title", "authors", "year", "url", "summary", "tags")


def add_form(channel: str | None, form: AddForm | None = None, *, looking_up: str | None = None) -> dict:
    """The add modal: empty, filled in with `form.fields` from a look-up, or (`looking_up`: the link)
    open while the look-up runs, to be filled in by views.update."""
    values = (form.fields if form is not None else None) or {}

    def field(
        name: str,
        label: str,
        *,
        optional: bool = False,
        multiline: bool = False,
        hint: str = "",
        max_length: int = 300,
        placeholder: str = "",
    ) -> dict:
        element = {"type": "plain_text_input", "action_id": name, "max_length": max_length}
        if multiline:
            element["multiline"] = True
        if placeholder:
            element["placeholder"] = {"type": "plain_text", "text": placeholder}
        value = values.get(name)
        if isinstance(value, list | tuple):
            value = ", ".join(value)
        if value not in (None, ""):
            element["initial_value"] = str(value)[:max_length]
        block = {
            "type": "input",
            "block_id": name,
            "optional": optional,
            "element": element,
            "label": {"type": "plain_text", "text": label},
        }
        if hint:
            block["hint"] = {"type": "plain_text", "text": hint}
        return block

    top = []
    if looking_up:
        top.append(context(f"⏳ Looking up {clip(looking_up, 1000)} … the fields fill in when it answers."))
    elif form is not None and form.note:
        top.append(context(mrkdwn(form.note)[:2900]))
    return {
        "type": "modal",
        "callback_id": ADD_CALLBACK,
        "private_metadata": channel or "",
        "title": {"type": "plain_text", "text": "Add a paper"},
        "submit": {"type": "plain_text", "text": "Add"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": top
        + [
            field("title", "Title", placeholder="Streaming DiLoCo with Overlapping Communication"),
            field("authors", "Authors", optional=True, max_length=2000, placeholder="Ada Lovelace, Alan Turing"),
            field("year", "Year", optional=True, max_length=4, placeholder="2025"),
            field("url", "Link", optional=True, max_length=1000, placeholder="https://arxiv.org/abs/…"),
            field("summary", "Summary", optional=True, multiline=True, max_length=3000),
            field(
                "tags",
                "Tags",
                optional=True,
                hint="Separated by commas, e.g. parallelism-dp, moe",
                placeholder="parallelism-dp",
            ),
        ],
    }


EDIT_CALLBACK = "edit_paper"


#: The most characters a modal's plain_text_input holds.
INPUT_MOST = 3000


def edit_form(channel: str | None, paper) -> dict:
    """The add form, filled in with `paper` as it is: saving changes what the admin changed (its number
    and history stay). A field longer than an input holds is left out, kept as it is, and a note says so.
    private_metadata carries the channel, the paper's number and its form version, as `channel|number|version`."""
    view = add_form(channel)
    values = paper_commands.form_fields(paper, INPUT_MOST)
    blocks = [b for b in view["blocks"] if b["block_id"] in values]  # the add form's blocks are its inputs
    for block in blocks:
        name, element = block["block_id"], block["element"]
        if name in ("tags", "summary"):  # the others' inputs hold the longest a paper may have
            element["max_length"] = INPUT_MOST
        if values[name]:
            element["initial_value"] = values[name]
        block["optional"] = name != "title"  # emptied: the field is cleared
    kept = [paper_commands.FORM_FIELDS[k] for k in paper_commands.FORM_FIELDS if k not in values]
    if kept:
        many = len(kept) > 1
        said = f"{'are' if many else 'is'} longer than this form holds: kept as {'they are' if many else 'it is'}"
        again = f"{COMMAND} edit {paper.number} {kept[0]} …"
        blocks.insert(0, context(f"The {', '.join(kept)} {said}. `{again}` changes it."))
    return {
        **view,
        "blocks": blocks,
        "callback_id": EDIT_CALLBACK,
        "private_metadata": f"{channel or ''}|{paper.number}|{paper_commands.form_version(paper)}",
        "title": {"type": "plain_text", "text": f"Edit #{paper.number}"[:24]},
        "submit": {"type": "plain_text", "text": "Save"},
    }


def notice_view(notice: Notice) -> dict:
    """A modal that only says something (the paper a link names is in the catalog already)."""
    return {
        "type": "modal",
        "title": {"type": "plain_text", "text": "Add a paper"},
        "close": {"type": "plain_text", "text": "Close"},
        "blocks": [section(mrkdwn(notice.text)[:2900])],
    }
