"""The /paper slash command: parse, run the command, reply in the HTTP response itself."""

from __future__ import annotations

import html
import logging
import re
from dataclasses import replace

from bot.chat import commands, paper_commands
from bot.chat.replies import AddForm, EditForm, Notice
from bot.delivery.sending import Rejected, Uncertain
from bot.intake import lookup
from bot.rich_text import COMMAND, text
from bot.schedule import groups
from bot.slack import blocks, forms
from bot.slack.client import NETWORK_ERRORS, call, webhook
from bot.slack.listeners import views

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
        looking_up = None
        try:
            # users.info, the lock, views.open: 3 s
            with bot.answering(user, context.bot_user_id, body.get("channel_id")) as ctx:
                bot.later(groups.saw_channel_name, bot.store, bot.env, body.get("channel_id"), body.get("channel_name"))
                looking_up = commands.to_look_up(ctx, line)
                if looking_up is not None:  # a look-up may outlast the 3 s: the answer follows
                    ack(response_type="ephemeral", **blocks.message(Notice(text(f"Looking up {looking_up}…"))))
                    bot.later(suggest_later, bot, user, body.get("channel_id"), body.get("response_url"), line)
                    return
                answer = commands.run(ctx, line)
                if isinstance(answer.reply, EditForm):
                    reply = views.open_edit_form(bot, body, answer.reply.paper)
                elif isinstance(answer.reply, AddForm):
                    reply = open_add_form(bot, body, answer.reply)
                else:
                    reply = {"response_type": "ephemeral", **blocks.message(answer.reply)}
        except Exception:
            log.exception("%s %r from %s failed", COMMAND, line, user)
            if looking_up is None:  # else acknowledged already
                ack(response_type="ephemeral", text=OOPS)
            return
        ack(**reply)
        if answer.wakes_outbox:
            bot.wake_outbox()  # its announcement was queued with the change
        if answer.discussion:
            bot.discuss()


def open_add_form(bot, body, form: AddForm | None = None) -> dict:
    """Open the add modal now: its trigger_id is only good for 3 seconds. With a link to look up, it
    opens saying so, and fills in (views.update) when the look-up returns, after the reply."""
    channel = body.get("channel_id") or (body.get("channel") or {}).get("id")
    looking_up = form.lookup if form is not None else None
    try:
        opened = call(
            bot.quick_client().views_open,
            trigger_id=body.get("trigger_id", ""),
            view=forms.add_form(channel, form, looking_up=looking_up),
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
    if looking_up:
        user = body.get("user_id") or (body.get("user") or {}).get("id", "")
        view = opened.get("view") or {}
        bot.later(fill_add_form, bot, user, channel, view.get("id", ""), form)
    return {}


def fill_add_form(bot, user: str, channel: str | None, view_id: str, form: AddForm) -> None:
    """The open modal, filled in with what the look-up found; or, when it failed, the empty form with
    the one line saying why; or a note that the catalog has the paper already."""
    try:
        filled = paper_commands.fill_add_form(bot.context(user), form)
    except Exception:  # the modal must never stay at "Looking up…": the empty form, saying so
        log.exception("filling in the add form failed")
        filled = Notice(text("The look-up failed: nothing was saved. Fill the form in by hand."), ok=False)
    if isinstance(filled, AddForm):
        view = forms.add_form(channel, filled)
    elif filled.ok:
        view = forms.notice_view(filled)
    else:
        view = forms.add_form(channel, AddForm(note=filled.text))
    try:
        call(bot.answers.views_update, view_id=view_id, view=view)
    except (Rejected, Uncertain) as e:  # closed meanwhile, most likely
        log.info("could not fill in the add form %s: %s", view_id, e)


def suggest_later(bot, user: str, where: str | None, response_url: str | None, line: str) -> None:
    """The answer to a `suggest` acknowledged at once, once its look-up returns: privately, through
    the command's response_url."""
    try:
        answer = commands.run(replace(bot.context(user, None, where), lookup_wait=lookup.LATER_WAIT), line)
        payload = blocks.message(answer.reply)
    except Exception:
        log.exception("%s %r from %s failed", COMMAND, line, user)
        payload = {"text": OOPS}
    if not response_url:
        log.warning("could not answer %r from %s: the command had no response_url", line, user)
        return
    try:
        response = webhook(response_url).send_dict({"response_type": "ephemeral", **payload})
    except NETWORK_ERRORS as e:
        log.warning("could not answer %r from %s: %s", line, user, e)
        return
    if response.status_code != 200:
        log.warning("could not answer %r from %s: response_url answered %s", line, user, response.status_code)
