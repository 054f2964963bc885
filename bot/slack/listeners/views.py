"""The add-a-paper modal: checked on submission, errors shown beside their fields."""

from __future__ import annotations

import logging

from bot import commands
from bot.catalog import InvalidPaper
from bot.delivery import Rejected, Uncertain
from bot.replies import Code, Notice, PaperRef, text
from bot.signups import Refusal
from bot.slack import blocks
from bot.slack.blocks import plain
from bot.slack.client import call
from bot.store import Busy, DiskFull

log = logging.getLogger(__name__)


def register(app, bot) -> None:
    @app.view(blocks.ADD_CALLBACK)
    def on_add(ack, body, view):
        user = (body.get("user") or {}).get("id", "")
        values = {}
        for name in blocks.ADD_FIELDS:
            state = ((view.get("state") or {}).get("values") or {}).get(name) or {}
            values[name] = (state.get(name) or {}).get("value")
        try:
            with bot.answering(user) as ctx:
                paper = commands.add_paper(ctx, values)
        except Refusal as refusal:  # not an admin, or their rights could not be checked
            ack(response_action="errors", errors={"title": plain(refusal.text)[:150]})
            return
        except Busy:
            ack(response_action="errors", errors={"title": "The catalog is busy just now. Submit again in a moment."})
            return
        except DiskFull:
            ack(response_action="errors", errors={"title": commands.DISK_FULL[:150]})
            return
        except InvalidPaper as e:
            field = e.field if e.field in blocks.ADD_FIELDS else "title"
            ack(response_action="errors", errors={field: str(e)[:150]})
            return
        ack()
        bot.later(confirm, bot, user, view.get("private_metadata") or "", paper)

    @app.view(blocks.EDIT_CALLBACK)
    def on_edit(ack, body, view):
        user = (body.get("user") or {}).get("id", "")
        state = (view.get("state") or {}).get("values") or {}
        values = {name: ((state.get(name) or {}).get(name) or {}).get("value") for name in state}
        channel, _, number = (view.get("private_metadata") or "").rpartition("|")
        if not number.isdigit():
            ack(response_action="errors", errors={"title": "This form lost the paper it edits: open it again."})
            return
        try:
            with bot.answering(user) as ctx:
                paper = commands.edit_paper(ctx, int(number), values)
        except Refusal as refusal:
            ack(response_action="errors", errors={"title": plain(refusal.text)[:150]})
            return
        except Busy:
            ack(response_action="errors", errors={"title": "The catalog is busy just now. Submit again in a moment."})
            return
        except DiskFull:
            ack(response_action="errors", errors={"title": commands.DISK_FULL[:150]})
            return
        except InvalidPaper as e:
            field = e.field if e.field in values else "title"
            ack(response_action="errors", errors={field: str(e)[:150]})
            return
        ack()
        bot.later(confirm, bot, user, channel, paper, "Saved")


def open_edit_form(bot, body, paper) -> dict:
    """Open the edit modal now (a trigger_id is good for 3 seconds): the add form, filled in."""
    try:
        call(
            bot.quick_client().views_open,
            trigger_id=body.get("trigger_id", ""),
            view=blocks.edit_form(body.get("channel_id"), paper),
        )
    except (Rejected, Uncertain) as e:
        log.warning("views.open of the edit form failed: %s", e)
        return {
            "response_type": "ephemeral",
            "text": f"I couldn't open the form just now. Please try `/paper edit {paper.number}` again.",
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
