"""The add-a-paper modal: checked on submission, errors shown beside their fields."""

from __future__ import annotations

import logging

from bot import catalog
from bot.catalog import InvalidPaper
from bot.delivery import Rejected, Uncertain
from bot.signups import Refusal
from bot.slack import blocks
from bot.slack.client import call

log = logging.getLogger(__name__)


def register(app, bot) -> None:
    @app.view(blocks.ADD_CALLBACK)
    def on_add(ack, body, view):
        user = (body.get("user") or {}).get("id", "")
        try:
            allowed = bot.is_admin(user)
        except Refusal:
            allowed = None
        if not allowed:
            why = (
                "Only admins can add papers." if allowed is False else "I couldn't check your admin rights; try again."
            )
            ack(response_action="errors", errors={"title": why})
            return
        values = {}
        for name in blocks.ADD_FIELDS:
            state = ((view.get("state") or {}).get("values") or {}).get(name) or {}
            values[name] = (state.get(name) or {}).get("value")
        try:
            paper = catalog.add(bot.store, catalog.validate(values, new=True))
        except InvalidPaper as e:
            field = e.field if e.field in blocks.ADD_FIELDS else "title"
            ack(response_action="errors", errors={field: str(e)[:150]})
            return
        ack()
        bot.later(confirm, bot, user, view.get("private_metadata") or "", paper)


def confirm(bot, user: str, channel: str, paper) -> None:
    message = f"Added *#{paper.number}* {blocks.paper_title(paper)} (`{blocks.escape(paper.id)}`)."
    fallback = f"Added #{paper.number} {blocks.escape(paper.title)}"
    try:
        if channel:
            call(
                bot.client.chat_postEphemeral,
                channel=channel,
                user=user,
                text=fallback,
                blocks=[blocks.section(message)],
            )
        else:
            call(bot.client.chat_postMessage, channel=user, text=fallback, blocks=[blocks.section(message)])
    except (Rejected, Uncertain) as e:
        log.warning("could not confirm the new paper to %s: %s", user, e)
