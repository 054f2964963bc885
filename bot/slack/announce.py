"""The outbox's work on Slack: announcements drawn in Block Kit (one line a change) and marked with
their rows in message metadata, and week posts brought up to date (see bot.announcing.sender for the
policy).

    sender = OutboxSender(store, SlackPoster(bot), ...)
"""

from __future__ import annotations

import logging

from bot.announcing import changes as announce
from bot.announcing.changes import Announcement
from bot.calendar import Week
from bot.chat import commands
from bot.delivery.sending import CLOCK_MARGIN, Rejected
from bot.schedule import groups, weekly
from bot.slack import blocks
from bot.slack.client import call, slack_channel

log = logging.getLogger(__name__)


def announcement_key(announcement: Announcement) -> dict:
    """What the announcement's metadata says of its outbox rows, to find it again: its first row
    (a row is in one message only) and how many (one row: as an older paperbot marked it, so that
    its lines are found after an upgrade)."""
    key = {"outbox": announcement.rows[0], "queued": round(announcement.queued, 3)}
    return key if len(announcement.rows) == 1 else {**key, "rows": len(announcement.rows)}


def message(bot, announcement: Announcement) -> dict:
    """The announcement's Slack message, a line a change, drawn from the changes the outbox keeps;
    or, for a row an older paperbot queued, its Block Kit message as it was kept."""
    if announcement.message is not None:
        return announcement.message
    changes = [announce.change_of(bot.store, kept, bot.group.tz) for kept in announcement.changes]
    lines = [commands.announcement(change) for change in changes]
    buttons = [b for change in changes for b in commands.announcement_buttons(change)]
    if len(lines) == 1:
        return blocks.announcement(lines[0], buttons)
    # Lines packed into sections, each within Slack's 3000 characters: some fifty lines to a section.
    sections: list[str] = []
    for line in (blocks.cut(blocks.mrkdwn(line), blocks.SECTION) for line in lines):
        if sections and len(sections[-1]) + 1 + len(line) <= blocks.SECTION:
            sections[-1] += "\n" + line
        else:
            sections.append(line)
    text = blocks.cut("\n".join(blocks.plain(line) for line in lines), blocks.MAX_TEXT)
    drawn = [blocks.section(body) for body in sections][: blocks.MAX_BLOCKS - 1]
    return {"text": text, "blocks": drawn + ([blocks.actions(buttons)] if buttons else [])}


class SlackPoster:
    """bot.announcing.sender.Poster for Slack, on the SlackBot's clients."""

    def __init__(self, bot):
        self.bot = bot

    def announce(self, announcement: Announcement) -> None:
        marked = {"event_type": blocks.ANNOUNCE_EVENT, "event_payload": announcement_key(announcement)}
        transport = self.bot.transport
        call(
            transport.client.chat_postMessage,
            channel=slack_channel(announcement.channel),
            metadata=marked,
            **message(self.bot, announcement),
        )

    def announced(self, announcement: Announcement) -> bool:
        key = announcement_key(announcement)
        since = announcement.queued - CLOCK_MARGIN  # posted after it was queued, by the platform's clock
        found = self.bot.transport.find_message(
            announcement.channel, since, blocks.ANNOUNCE_EVENT, lambda payload: payload == key
        )
        return found is not None

    def refresh_post(self, week: Week, channel: str | None = None) -> bool:
        """Bring the week's post, if it is out, up to date with the database; raises Rejected or Uncertain.

        False while the post is being sent: it may have been planned before the latest change, so
        it is updated once it is out.

        Planned afresh on every try: the outbox's retry of an update held off by a rate limit must
        not put back what a later change (a withdrawal) has undone. One sender a process sends
        the outbox, so a week's updates take turns.
        """
        bot = self.bot
        group = groups.of_channel(bot.store, bot.env, channel) if channel else bot.env
        if group is None or not group.channel:
            return True
        channel = group.channel
        sent = weekly.posted(bot.store, channel, week)
        if sent is None:
            if weekly.post_in_flight(bot.store, channel, week):
                return False
            sent = weekly.posted(bot.store, channel, week)  # recorded between the two looks?
            if sent is None:
                return True  # not out: whenever it is, it is planned from the database as it is then
        post = weekly.plan(bot.store, group.calendar, week, group.focus_tag, channel, bot.clock(), group.rotation)
        if post is not None:
            bot.transport.update(sent, post)
            weekly.features(bot.store, channel, week, post.paper)  # the rotation counts what the post shows
        return True

    def channel_refused(self, channel: str, error: Rejected) -> None:
        self.bot.tell_admins(
            f"I couldn't announce a change to the schedule in <#{channel}>: {error}. The change is saved; "
            "its announcement, and any after it, go out once I can post there (I keep trying for over an hour)."
        )
