"""Buttons. Every button's value is a /paper command, run as the person who clicked.

Paging buttons replace the list they sit on; other buttons answer the clicker
privately; buttons on App Home re-draw the Home tab with the answer on top. A
sign-up from the weekly post is a plain `signup`, and `SlackBot.after_change`
then brings the post up to date, as it does for every change to that week.
"""

from __future__ import annotations

import logging
import re

from bot import commands
from bot.replies import Notice, text
from bot.slack import blocks
from bot.slack.client import webhook
from bot.slack.listeners.commands import OOPS

log = logging.getLogger(__name__)

BUTTON = re.compile(rf"^({blocks.RUN}|{blocks.PAGE}|{blocks.WEEKLY}):")


def register(app, bot) -> None:
    @app.action(BUTTON)
    def on_button(ack, body, action):
        ack()
        bot.later(press, bot, body, action)


def press(bot, body: dict, action: dict) -> None:
    user = (body.get("user") or {}).get("id", "")
    command = action.get("value", "")
    kind = action.get("action_id", "").split(":", 1)[0]
    in_home = (body.get("container") or {}).get("type") == "view"
    try:
        answer = commands.run(bot.context(user), command)
    except Exception:
        log.exception("button %r from %s failed", command, user)
        answer = commands.Answer(Notice(text(OOPS), ok=False))
    if in_home:
        bot.publish_home(user, answer.reply if isinstance(answer.reply, Notice) else None)
    else:
        reply(body.get("response_url"), blocks.message(answer.reply), replace=kind == blocks.PAGE)
    if answer.change is not None:
        bot.after_change(answer.change)


def reply(response_url: str | None, payload: dict, *, replace: bool) -> None:
    if not response_url:
        return
    body = {**payload, "replace_original": replace}
    if not replace:
        body["response_type"] = "ephemeral"
    response = webhook(response_url).send_dict(body)
    if response.status_code != 200:
        log.warning("response_url answered %s: %s", response.status_code, response.body)
