"""Buttons. Every button's value is a /paper command, run as the person who clicked.

Paging buttons replace the list they sit on; other buttons answer the clicker
privately; buttons on App Home re-draw the Home tab with the answer on top.
A button's response_url works for 30 minutes and 5 answers; on a list that
was left open longer, the answer comes as a new private message instead (a
direct message where the bot cannot post). A sign-up from the weekly post is a
plain `signup`, and `SlackBot.queue_change` then brings the post up to date, as
it does for every change to that week.
"""

from __future__ import annotations

import logging
import re

from bot.chat import commands
from bot.chat.context import Answer, Context
from bot.chat.replies import AddForm, Notice
from bot.delivery.sending import Rejected, Uncertain
from bot.rich_text import text
from bot.schedule import groups
from bot.slack import blocks
from bot.slack.client import NETWORK_ERRORS, call, may_have_arrived, webhook
from bot.slack.listeners.commands import OOPS, open_add_form

log = logging.getLogger(__name__)

BUTTON = re.compile(rf"^({blocks.RUN}|{blocks.PAGE}|{blocks.WEEKLY}):")


def register(app, bot) -> None:
    @app.action(BUTTON)
    def on_button(ack, body, action, context):
        # The click's change is made before Slack hears back: an acked click is never lost to a
        # restart. Only the answer to the clicker comes after, from the pool.
        user = (body.get("user") or {}).get("id", "")
        where = (body.get("channel") or {}).get("id") if isinstance(body.get("channel"), dict) else None
        with bot.answering(user, context.bot_user_id, where) as ctx:  # saved in time, or refused as busy
            bot.later(groups.saw_channel_name, bot.store, bot.env, where, (body.get("channel") or {}).get("name"))
            answer = press(ctx, action)
            if isinstance(answer.reply, AddForm):  # "Open the empty form": a modal needs the click's trigger_id now
                failed = open_add_form(bot, body, answer.reply)
                ack()
                if failed:
                    bot.later(answer_press, bot, body, action, Answer(Notice(text(failed["text"]), ok=False)))
                return
        ack()
        if answer.wakes_outbox:
            bot.wake_outbox()  # its announcement was queued with the change
        if answer.discussion:
            bot.discuss()
        bot.later(answer_press, bot, body, action, answer)


def press(context: Context, action: dict) -> Answer:
    """Run the button's command as the person who clicked; its Answer (never raises)."""
    user = context.member.id
    command = action.get("value", "")
    kind = action.get("action_id", "").split(":", 1)[0]
    try:
        if kind == blocks.WEEKLY:
            command = commands.post_button(context, command)
        return commands.run(context, command)
    except Exception:
        log.exception("button %r from %s failed", command, user)
        return Answer(Notice(text(OOPS), ok=False))


def answer_press(bot, body: dict, action: dict, answer) -> None:
    """Tell the clicker: on App Home by re-drawing it, elsewhere privately (a pager replaces its list)."""
    user = (body.get("user") or {}).get("id", "")
    kind = action.get("action_id", "").split(":", 1)[0]
    container = body.get("container") or {}
    notice = answer.reply if isinstance(answer.reply, Notice) else None
    if container.get("type") == "view":
        if not bot.publish_home(user, notice) and notice is not None:
            bot.tell_directly(user, blocks.message(notice))  # the click's answer must reach them somehow
    else:
        payload = blocks.message(answer.reply)
        # Only a private list is replaced: never the channel's weekly post, whatever a payload says.
        replace = kind == blocks.PAGE and container.get("is_ephemeral") is not False
        if not reply(body.get("response_url"), payload, replace=replace):
            tell_privately(bot, body, user, payload)


def reply(response_url: str | None, payload: dict, *, replace: bool) -> bool:
    """Answer through the button's response_url; False when Slack certainly did not take it."""
    if not response_url:
        return False
    body = {**payload, "replace_original": replace}
    if not replace:
        body["response_type"] = "ephemeral"
    try:
        response = webhook(response_url).send_dict(body)
    except NETWORK_ERRORS as e:
        log.warning("response_url did not answer: %s", e)
        return may_have_arrived(e)  # a late answer is no reason for a second one
    if response.status_code != 200:
        log.warning("response_url answered %s: %s", response.status_code, response.body)
        return False
    return True


def tell_privately(bot, body: dict, user: str, payload: dict) -> None:
    """The answer as a new message only the clicker sees, in the channel of the button; where the bot
    cannot post (a private channel it is not in, a DM between two people), as a direct message."""
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
    if channel:
        try:
            call(bot.answers.chat_postEphemeral, channel=channel, user=user, **payload)
            return
        except Uncertain as e:  # it may have arrived: no second answer
            log.warning("could not answer %s's button in %s: %s", user, channel, e)
            return
        except Rejected as e:
            log.warning("could not answer %s's button in %s (%s): telling them directly", user, channel, e)
    bot.tell_directly(user, payload)  # a click that was saved must never go unanswered
