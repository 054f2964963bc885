"""The weekly post's Ask a question button: a form (a modal) whose question is saved as `ask` saves one."""

from __future__ import annotations

import logging

from bot.chat import commands
from bot.chat.replies import Notice
from bot.delivery.sending import Rejected, Uncertain
from bot.rich_text import text
from bot.slack import discussion
from bot.slack.blocks import context, plain, section
from bot.slack.client import call

log = logging.getLogger(__name__)

FIELD = "question"


def form(channel: str, date: str) -> dict:
    """The form: one question for the meeting of `date` (the post's), kept with the channel."""
    return {
        "type": "modal",
        "callback_id": discussion.ASK_FORM,
        "private_metadata": f"{channel}|{date}",
        "title": {"type": "plain_text", "text": "Ask a question"},
        "submit": {"type": "plain_text", "text": "Ask"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            context(f"For the meeting of {date}: it goes in the thread of the week's post."),
            {
                "type": "input",
                "block_id": FIELD,
                "element": {"type": "plain_text_input", "action_id": FIELD, "multiline": True, "max_length": 500},
                "label": {"type": "plain_text", "text": "Your question"},
            },
        ],
    }


def register(app, bot) -> None:
    @app.action(discussion.ASK)
    def on_ask(ack, body, action):
        ack()
        channel = (body.get("channel") or {}).get("id") or ""
        date = action.get("value", "").removeprefix("ask").strip()[:10]
        try:  # the trigger_id is good for 3 seconds: open it now
            call(bot.quick_client().views_open, trigger_id=body.get("trigger_id", ""), view=form(channel, date))
        except (Rejected, Uncertain) as e:
            log.warning("views.open of the question form failed: %s", e)

    @app.view(discussion.ASK_FORM)
    def on_question(ack, body, view):
        user = (body.get("user") or {}).get("id", "")
        channel, _, date = (view.get("private_metadata") or "").partition("|")
        state = ((view.get("state") or {}).get("values") or {}).get(FIELD) or {}
        said = ((state.get(FIELD) or {}).get("value") or "").strip()
        try:
            with bot.answering(user, None, channel or None) as ctx:
                answer = commands.run(ctx, f"ask {date} {said}".strip() if said else "ask")
        except Exception:
            log.exception("the question form of %s failed", user)
            ack(response_action="errors", errors={FIELD: "Something went wrong on my side. Try again in a minute."})
            return
        reply = answer.reply
        if not isinstance(reply, Notice):  # `ask` answers in a Notice; anything else is no question saved
            reply = Notice(text("Something went wrong on my side. Try again in a minute."), ok=False)
        if not reply.ok:
            ack(response_action="errors", errors={FIELD: plain(reply.text)[:150]})
            return
        done = {
            "type": "modal",
            "title": {"type": "plain_text", "text": "Ask a question"},
            "close": {"type": "plain_text", "text": "Close"},
            "blocks": [section(plain(reply.text)[:2900])],
        }
        ack(response_action="update", view=done)
        if answer.discussion:
            bot.discuss()
