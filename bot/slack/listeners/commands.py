"""The /paper slash command: parse, run the command, reply in the HTTP response itself."""

from __future__ import annotations

import html
import logging
import re

from bot import commands
from bot.delivery import Rejected, Uncertain
from bot.replies import COMMAND, AddForm
from bot.slack import blocks
from bot.slack.client import call

log = logging.getLogger(__name__)

OOPS = "Something went wrong on my side (it is logged). Please try again in a minute."

# With should_escape, Slack sends <@U123|name>, <#C123|name>, <https://x|x> and &amp; &lt; &gt;.
_ENTITY = re.compile(r"<([@#!]?)([^<>|]*)(?:\|([^<>]*))?>")


def from_slack(text: str) -> str:
    """Slack's escaped command text as the user typed it: `<@U1|ada>` -> `@U1`."""

    def plain(m: re.Match) -> str:
        sigil, target, label = m[1], m[2], m[3]
        if sigil == "@":
            glued = m.string[m.end() : m.end() + 1].isalnum()  # `<@U2|bo>13`: a mention, then 13, not @U213
            return f"@{target} " if glued else f"@{target}"
        if sigil == "#":
            return f"#{label or target}"
        if sigil == "!":
            return f"@{label or target}"
        return label if label and not target.startswith(("http://", "https://")) else target

    return html.unescape(_ENTITY.sub(plain, text or ""))


def register(app, bot) -> None:
    @app.command(COMMAND)
    def on_paper(ack, body, context):
        user = body.get("user_id", "")
        line = from_slack(body.get("text", ""))
        try:
            # users.info, the lock, views.open: 3 s
            with bot.answering(user, context.bot_user_id, body.get("channel_id")) as ctx:
                answer = commands.run(ctx, line)
                if isinstance(answer.reply, AddForm):
                    reply = open_add_form(bot, body)
                else:
                    reply = {"response_type": "ephemeral", **blocks.message(answer.reply)}
        except Exception:
            log.exception("%s %r from %s failed", COMMAND, line, user)
            ack(response_type="ephemeral", text=OOPS)
            return
        ack(**reply)
        if answer.change is not None:
            bot.wake_outbox()  # its announcement was queued with the change


def open_add_form(bot, body) -> dict:
    """Open the add modal now: its trigger_id is only good for 3 seconds."""
    try:
        call(
            bot.quick_client().views_open,
            trigger_id=body.get("trigger_id", ""),
            view=blocks.add_form(body.get("channel_id")),
        )
    except Rejected as e:
        log.warning("views.open failed: %s", e)
        return {
            "response_type": "ephemeral",
            "text": f"I couldn't open the form just now. Please try `{COMMAND} add` again.",
        }
    except Uncertain as e:  # Slack may have opened it after all
        log.warning("views.open did not answer: %s", e)
        return {
            "response_type": "ephemeral",
            "text": f"Slack was slow to open the form: if it did not open, try `{COMMAND} add` again.",
        }
    return {}
