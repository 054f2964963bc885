"""The Discord side of exactly-once delivery: the weekly post and reminders, sent with a nonce,
found again in the channel's history; and the outbox's announcements (see bot.announcing.sender).

    transport = DiscordTransport(rest, admins=settings.admins)
    delivery.deliver(store, Delivery("post", channel, "2026-W49"), build, transport)

Discord has no message metadata. A post goes with `nonce` + `enforce_nonce` (a second post with
the same nonce within a few minutes returns the first), and carries its week in its embed's footer
(`paper of the week · 2026-W49`), which `find` looks for among the bot's own messages in the
channel's history after an attempt whose answer was lost.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from bot.announcing import changes as announce
from bot.announcing.changes import Announcement
from bot.announcing.sender import FOREIGN_CHANNEL
from bot.calendar import Week
from bot.chat import commands
from bot.chat.replies import Notice
from bot.delivery.sending import CLOCK_MARGIN, Delivery, Rejected, Sent
from bot.discord import discussion, render
from bot.discord.rest import Rest
from bot.discord.settings import DiscordSettings
from bot.schedule import groups, weekly
from bot.schedule.notes import Note
from bot.schedule.questions import Digest, InThread
from bot.schedule.rows import Reminder, WeeklyPost

log = logging.getLogger(__name__)

#: Discord's refusal of a direct message to a member who takes none from the bot.
NO_DMS = "50007"
#: Discord's refusal of a second thread on one message: the thread is there already.
THREAD_EXISTS = "160004"
#: Discord's answer for a channel (a thread) that does not exist.
UNKNOWN_CHANNEL = "10003"
#: Pages of 100 messages read in the channel's history since an attempt began, at most.
HISTORY_PAGES = 10
#: Discord's epoch (2015-01-01 UTC) in unix milliseconds: a snowflake's top bits count from it.
DISCORD_EPOCH_MS = 1_420_070_400_000


def nonce(*parts: str) -> str:
    """A nonce (at most 25 characters) for what `parts` name: the same message, the same nonce."""
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:25]


def discord_channel(channel: str) -> str:
    """`channel`, if it is a Discord channel's id; else Rejected: another platform's, never sent to here."""
    if not DiscordSettings.is_channel(channel):
        raise Rejected(f"{channel[:40]} is not a Discord channel ID (another platform's channel)", code=FOREIGN_CHANNEL)
    return channel


def snowflake(at: float) -> str:
    """The smallest snowflake of unix time `at`: `after` it, Discord gives the messages sent since."""
    return str(max(int(at * 1000) - DISCORD_EPOCH_MS, 0) << 22)


class DiscordTransport:
    """delivery.Transport for Discord."""

    def __init__(self, rest: Rest, admins=frozenset(), place: str | None = None):
        """`place`: a hosted install's server, named in the buttons of direct messages (which carry none)."""
        self.rest = rest
        self.admins = frozenset(admins)
        self.place = place
        self._bot_id: str | None = None
        self._dms: dict[str, str] = {}
        self._threads: set[str] = set()  # posts whose thread is there (made here, or found made)

    def bot_id(self) -> str:
        if self._bot_id is None:
            self._bot_id = str(self.rest.me()["id"])
        return self._bot_id

    def reaches(self, user: str) -> bool:
        """A Discord member (a snowflake), not the console's operator."""
        return render.is_discord_user(user)

    def dm_channel(self, user: str) -> str:
        if user not in self._dms:
            self._dms[user] = str(self.rest.dm_channel(user)["id"])
        return self._dms[user]

    def post(self, channel: str, body: dict, key: str | None = None) -> dict:
        """Post `body` in `channel`; with `key`, once: Discord returns the first message for a nonce it saw."""
        discord_channel(channel)
        if key is not None:
            body = {**body, "nonce": nonce(channel, key), "enforce_nonce": True}
        return self.rest.post(channel, body)

    def _payload(self, message: Any) -> dict:
        if isinstance(message, WeeklyPost):
            return discussion.weekly_post(message)
        if isinstance(message, Reminder):
            return discussion.reminder(message)
        if isinstance(message, InThread):
            return discussion.in_thread(message)
        if isinstance(message, Digest):
            return discussion.digest(message)
        if isinstance(message, Note):  # sent directly: its buttons say whose server they are of
            body = render.message(Notice(message.said))
            return {**body, "components": render.rows(list(message.buttons), place=self.place)}
        raise TypeError(f"cannot send {type(message).__name__}")

    def open_thread(self, channel: str, post: str, name: str) -> str:
        """The thread on message `post` of `channel`, made the first time: its id is the post's."""
        discord_channel(channel)
        if post in self._threads:
            return post
        try:
            self.rest.create_thread(channel, post, name)
        except Rejected as e:
            if e.code != THREAD_EXISTS:
                raise
        self._threads.add(post)
        return post

    def send(self, delivery: Delivery, message: Any) -> Sent:
        body = self._payload(message)
        if delivery.thread:
            week = message.question.week.key if isinstance(message, InThread) else delivery.key
            thread = self.open_thread(delivery.dest, delivery.thread, discussion.thread_name(week))
            sent = self.post(thread, body, f"{delivery.kind} {delivery.key}")
            return Sent(thread, str(sent["id"]))
        if delivery.kind == "post":
            sent = self.post(delivery.dest, body, f"post {delivery.key}")
            return Sent(delivery.dest, str(sent["id"]))
        try:
            channel = self.dm_channel(delivery.dest)
            sent = self.post(channel, body, f"{delivery.kind} {delivery.key}")
        except Rejected as e:
            if e.code != NO_DMS:
                raise
            # The member takes no DMs from the bot: the admins are told instead, and that is the
            # delivery, so that they hear it once.
            self.tell_admins_instead(delivery, message)
            return Sent("admins", f"no-dms:{delivery.dest}")
        return Sent(channel, str(sent["id"]))

    def tell_admins_instead(self, delivery: Delivery, message: Reminder | Note) -> None:
        if isinstance(message, Note):  # a swap's offer or an open slot's call, its buttons left out
            said = render.markdown(message.said)
            text = f"{render.who(message.to)} takes no direct messages from me, so could not hear: {said}"
        else:
            text = (
                f"⏰ {render.who(message.presenter)} presents {render.paper_ref(message.paper)} on "
                f"**{render.when(message.meeting)}**, but takes no direct messages from me, so I could not remind "
                "them. Could you?"
            )
        told = 0
        for admin in sorted(self.admins):
            try:
                body = {"content": render.cut(text, render.MAX_CONTENT), "allowed_mentions": render.NOBODY}
                self.post(self.dm_channel(admin), body, f"nodm {delivery.key} {delivery.dest}")
                told += 1
            except Rejected as e:
                log.warning("could not tell admin %s that %s takes no DMs: %s", admin, delivery.dest, e)
        if not told:
            raise Rejected(f"{delivery.dest} takes no direct messages from the bot, and no admin could be told")

    def update(self, sent: Sent, message: Any) -> None:
        body = self._payload(message)
        self.rest.edit(sent.channel, sent.ref, body)

    def find(self, delivery: Delivery, since: float) -> Sent | None:
        if delivery.thread:
            head = discussion.QUESTION_FOOTER if delivery.kind == "question" else discussion.DIGEST_FOOTER
            footer = f"{head}{delivery.key}"
            try:
                found = self.find_message(
                    delivery.thread,
                    since,
                    lambda m: any((e.get("footer") or {}).get("text") == footer for e in m.get("embeds") or []),
                )
            except Rejected as e:
                if e.code != UNKNOWN_CHANNEL:
                    raise
                return None  # no thread yet: nothing of an earlier try is in it
            return Sent(delivery.thread, str(found["id"])) if found else None
        if delivery.kind == "note":
            # Not looked for: sent again with the same nonce, Discord hands back the first message.
            return None
        if delivery.kind == "post":
            channel, footer = delivery.dest, f"{render.POST_FOOTER}{delivery.key}"
        else:
            channel, footer = self.dm_channel(delivery.dest), f"{render.REMINDER_FOOTER}{delivery.key}"
        found = self.find_message(
            channel, since, lambda m: any((e.get("footer") or {}).get("text") == footer for e in m.get("embeds") or [])
        )
        return Sent(channel, str(found["id"])) if found else None

    def find_message(self, channel: str, since: float, matches) -> dict | None:
        """The bot's own message in `channel` since unix time `since` that `matches`, reading only the
        messages since then, oldest first; Rejected when HISTORY_PAGES do not hold them all."""
        discord_channel(channel)
        ours = self.bot_id()
        after = snowflake(since)
        for _ in range(HISTORY_PAGES):
            page = self.rest.history(channel, 100, after=after)
            for m in page:
                if str((m.get("author") or {}).get("id")) == ours and matches(m):
                    return m
            if len(page) < 100:
                return None
            after = page[-1]["id"]
        raise Rejected(f"{channel} has over {HISTORY_PAGES * 100} messages since the attempt began, not all read")


class DiscordPoster:
    """bot.announcing.sender.Poster for Discord: announcements as one line a change, marked by a nonce
    from their outbox row, and found again by their text among the bot's messages."""

    def __init__(self, bot):
        self.bot = bot

    def _body(self, announcement: Announcement) -> tuple[dict, str]:
        """The message of what stands of the announcement's changes, and a key of its outbox rows."""
        tz = self.bot.group.tz
        changes = [announce.change_of(self.bot.store, k, tz) for k in announcement.changes]
        lines = [render.markdown(commands.announcement(change)) for change in changes]
        buttons = [b for change in changes for b in commands.announcement_buttons(change)]
        rows = ",".join(str(r) for r in announcement.rows)
        body = {"content": render.cut("\n".join(lines), render.MAX_CONTENT), "allowed_mentions": render.NOBODY}
        return ({**body, "components": render.rows(buttons)} if buttons else body), f"{rows} {announcement.queued}"

    def announce(self, announcement: Announcement) -> None:
        body, key = self._body(announcement)
        if body["content"]:
            self.bot.transport.post(announcement.channel, body, f"outbox {key}")

    def announced(self, announcement: Announcement) -> bool:
        body, _ = self._body(announcement)
        found = self.bot.transport.find_message(
            announcement.channel, announcement.queued - CLOCK_MARGIN, lambda m: m.get("content") == body["content"]
        )
        return found is not None

    def refresh_post(self, week: Week, channel: str | None = None) -> bool:
        bot = self.bot
        group = groups.of_channel(bot.store, bot.env, channel) if channel else bot.env
        if group is None or not group.channel:
            return True
        channel = group.channel
        sent = weekly.posted(bot.store, channel, week)
        if sent is None:
            if weekly.post_in_flight(bot.store, channel, week):
                return False
            sent = weekly.posted(bot.store, channel, week)
            if sent is None:
                return True
        post = weekly.plan(bot.store, group.calendar, week, group.focus_tag, channel, bot.clock(), group.rotation)
        if post is not None:
            bot.transport.update(sent, post)
            weekly.features(bot.store, channel, week, post.paper)
        return True

    def channel_refused(self, channel: str, error: Rejected) -> None:
        self.bot.tell_admins(
            f"I couldn't announce a change to the schedule in <#{channel}>: {error}. The change is saved; "
            "its announcement, and any after it, go out once I can post there."
        )
