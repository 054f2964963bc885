"""The add and edit forms (modals): checked on submission, errors shown beside their fields."""

from __future__ import annotations

import logging

from bot.catalog.papers import InvalidPaper
from bot.chat import commands, paper_commands
from bot.chat.replies import Notice
from bot.delivery.sending import Rejected, Uncertain
from bot.rich_text import COMMAND, Code, PaperRef, text
from bot.schedule.signups import Refusal
from bot.slack import blocks, forms
from bot.slack.blocks import plain
from bot.slack.client import call
from bot.store.connection import Busy, DiskFull, Unavailable

log = logging.getLogger(__name__)


def register(app, bot) -> None:
    @app.view(forms.ADD_CALLBACK)
    def on_add(ack, body, view):
        user = (body.get("user") or {}).get("id", "")
        values = {}
        for name in forms.ADD_FIELDS:
            state = ((view.get("state") or {}).get("values") or {}).get(name) or {}
            values[name] = (state.get(name) or {}).get("value")
        paper = _saved(ack, bot, user, lambda ctx: paper_commands.add_paper(ctx, values), forms.ADD_FIELDS)
        if paper is None:
            return
        ack()
        bot.later(confirm, bot, user, view.get("private_metadata") or "", paper)

    @app.view(forms.EDIT_CALLBACK)
    def on_edit(ack, body, view):
        user = (body.get("user") or {}).get("id", "")
        state = (view.get("state") or {}).get("values") or {}
        values = {name: ((state.get(name) or {}).get(name) or {}).get("value") for name in state}
        channel, _, rest = (view.get("private_metadata") or "").partition("|")
        number, _, was = rest.partition("|")
        if not number.isdigit() or len(number) > 12:
            ack(response_action="errors", errors={"title": "This form lost the paper it edits: open it again."})
            return
        paper = _saved(ack, bot, user, lambda ctx: paper_commands.save_form(ctx, int(number), values, was), values)
        if paper is None:
            return
        ack()
        bot.later(confirm, bot, user, channel, paper, "Saved")


def _saved(ack, bot, user: str, save, fields):
    """The paper `save(ctx)` saved from a submitted form; None when it was refused, after the refusal
    was shown beside its field (or the title) and nothing was saved."""
    try:
        with bot.answering(user) as ctx:
            return save(ctx)
    except Refusal as refusal:  # not an admin, or their rights could not be checked
        said = {"title": plain(refusal.text)}
    except Busy:
        said = {"title": "The catalog is busy just now. Submit again in a moment."}
    except DiskFull:
        said = {"title": commands.DISK_FULL}
    except Unavailable:
        said = {"title": commands.AWAY}
    except InvalidPaper as e:
        said = {e.field if e.field in fields else "title": str(e)}
    ack(response_action="errors", errors={k: v[:150] for k, v in said.items()})
    return None


def open_edit_form(bot, body, paper) -> dict:
    """Open the edit modal now (a trigger_id is good for 3 seconds): the add form, filled in."""
    try:
        call(
            bot.quick_client().views_open,
            trigger_id=body.get("trigger_id", ""),
            view=forms.edit_form(body.get("channel_id"), paper),
        )
    except (Rejected, Uncertain) as e:
        log.warning("views.open of the edit form failed: %s", e)
        return {
            "response_type": "ephemeral",
            "text": f"I couldn't open the form just now. Please try `{COMMAND} edit {paper.number}` again.",
        }
    return {}


def confirm(bot, user: str, channel: str, paper, done: str = "Added") -> None:
    """Tell the admin privately where they typed /paper add (or edit); in a direct message when the bot
    cannot post there (a channel it is not in)."""
    message = blocks.message(Notice(text(done, " ", PaperRef(paper), " (", Code(paper.id), ").")))
    if channel:
        try:
            call(bot.answers.chat_postEphemeral, channel=channel, user=user, **message)
            return
        except Rejected as e:
            log.info("could not confirm the new paper in %s (%s); telling %s directly", channel, e, user)
        except Uncertain as e:
            log.warning("could not confirm the new paper to %s: %s", user, e)
            return
    bot.tell_directly(user, message)
