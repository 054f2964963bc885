"""Whatever else Slack sends: a button from an older reply, a closed modal, a shortcut, an event,
a slash command or a menu's options request paperbot does not declare. Each is acknowledged, so
that Slack shows the user no error and does not send it again, and logged in one line.
Registered last: Bolt runs the first listener that matches.
"""

from __future__ import annotations

import logging
import re

from bot.chat.context import Answer
from bot.chat.replies import Notice
from bot.rich_text import COMMAND, command_code, text
from bot.slack.listeners import actions

log = logging.getLogger(__name__)

ANYTHING = re.compile(".*")


#: The answer to a button paperbot no longer has (from a message an older version wrote).
OUTDATED = text(
    "That button is from an older paperbot and no longer works. ", command_code("help"), " shows what does."
)


def register(app, bot) -> None:
    @app.action(ANYTHING)
    def on_other_action(ack, body):
        ack()
        log.info("ignored a button paperbot does not know: %s", [a.get("action_id") for a in body.get("actions", [])])
        if (body.get("actions") or [{}])[0].get("type") == "button":  # a click, not a menu's choice
            bot.later(actions.answer_press, bot, body, {}, Answer(Notice(OUTDATED, ok=False)))

    @app.view_closed(ANYTHING)
    def on_view_closed(ack):
        ack()

    @app.view(ANYTHING)
    def on_other_view(ack, body):
        ack()
        log.info("ignored a form paperbot does not know: %s", (body.get("view") or {}).get("callback_id"))

    @app.shortcut(ANYTHING)
    def on_shortcut(ack, body):
        ack()
        log.info("ignored a shortcut paperbot does not declare: %s", body.get("callback_id"))

    @app.event(ANYTHING)
    def on_other_event(ack, event):
        ack()
        log.debug("ignored a %s event", event.get("type"))

    @app.command(ANYTHING)
    def on_other_command(ack, body):
        command = body.get("command")
        ack(response_type="ephemeral", text=f"paperbot answers `{COMMAND}` only, not `{command}`.")
        log.info("ignored a slash command paperbot does not declare: %s", command)

    @app.options(ANYTHING)
    def on_options(ack):
        ack(options=[])  # paperbot offers no menus that load their options
