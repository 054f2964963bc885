"""The outbox's work on Slack: announcements drawn in Block Kit and marked with their row in
message metadata, and week posts brought up to date (see bot.outbox_sender for the policy).

    sender = OutboxSender(store, SlackPoster(bot), ...)
"""

from __future__ import annotations

import logging

from bot import announce, commands, outbox, weekly
from bot.calendar import Week
from bot.delivery import Rejected
from bot.slack import blocks
from bot.slack.client import call

log = logging.getLogger(__name__)


def announcement_key(item: outbox.Item) -> dict:
    """What the announcement's metadata says of its outbox row, to find it again."""
    return {"outbox": item.id, "queued": round(item.created_at, 3)}


def message(bot, item: outbox.Item) -> dict:
    """The announcement's Slack message: drawn from the change the outbox keeps, or, for a row an
    older paperbot queued, its Block Kit message as it was kept."""
    if "message" in item.payload:
        return item.payload["message"]
    change = announce.change_of(bot.store, item.payload["change"], bot.group.tz)
    return blocks.announcement(commands.announcement(change))


class SlackPoster:
    """bot.outbox_sender.Poster for Slack, on the SlackBot's clients."""

    def __init__(self, bot):
        self.bot = bot

    def announce(self, item: outbox.Item) -> None:
        marked = {"event_type": blocks.ANNOUNCE_EVENT, "event_payload": announcement_key(item)}
        transport = self.bot.transport
        call(
            transport.client.chat_postMessage,
            channel=item.payload["channel"],
            metadata=marked,
            **message(self.bot, item),
        )

    def announced(self, item: outbox.Item) -> bool:
        key = announcement_key(item)
        found = self.bot.transport.find_message(
            item.payload["channel"], item.created_at - 600, blocks.ANNOUNCE_EVENT, lambda payload: payload == key
        )
        return found is not None

    def refresh_post(self, week: Week) -> bool:
        """Bring the week's post, if it is out, up to date with the database; raises Rejected or Uncertain.

        False while the post is being sent: it may have been planned before the latest change, so
        it is updated once it is out.

        Planned afresh on every try: the outbox's retry of an update held off by a rate limit must
        not put back what a later change (a withdrawal) has undone. One sender a process sends
        the outbox, so a week's updates take turns.
        """
        bot = self.bot
        channel = bot.settings.channel
        if not channel:
            return True
        sent = weekly.posted(bot.store, channel, week)
        if sent is None:
            if weekly.post_in_flight(bot.store, channel, week):
                return False
            sent = weekly.posted(bot.store, channel, week)  # recorded between the two looks?
            if sent is None:
                return True  # not out: whenever it is, it is planned from the database as it is then
        post = weekly.plan(bot.store, bot.group, week, bot.settings.focus_tag, channel, bot.clock())
        if post is not None:
            bot.transport.update(sent, post)
            weekly.features(bot.store, channel, week, post.paper)  # the rotation counts what the post shows
        return True

    def channel_refused(self, channel: str, error: Rejected) -> None:
        self.bot.tell_admins(
            f"I couldn't announce a change to the schedule in <#{channel}>: {error}. The change is saved; "
            "its announcement, and any after it, go out once I can post there (I keep trying for over an hour)."
        )
