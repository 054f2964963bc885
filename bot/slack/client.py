"""Web API clients, and the Slack side of exactly-once delivery.

    client = make_client(settings)                 # views, DMs to admins: retries hiccups
    answers = answer_client(settings)              # answers to a click: gives up within seconds
    transport = SlackTransport(make_client(settings, retries=False))

Every call goes to SLACK_API_URL (slack_sdk has no environment variable for
it). The everyday client retries rate limits after Retry-After, server errors
(500, 503) with backoff, and dropped connections. The transport's client
retries nothing by itself: the weekly post must never be posted twice, so
`bot.delivery.sending` decides, after looking at the channel's history; announcements
and the post's updates are retried by the outbox, which waits without holding
a thread.
"""

from __future__ import annotations

import http.client
import logging
import socket
import urllib.error
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.webhook import WebhookClient

from bot.announcing.sender import FOREIGN_CHANNEL
from bot.chat.replies import Notice
from bot.delivery.sending import Delivery, RateLimited, Rejected, Sent, Uncertain, Unreachable
from bot.schedule.notes import Note
from bot.schedule.questions import Digest, InThread
from bot.schedule.rows import Reminder, WeeklyPost
from bot.slack import blocks, discussion

log = logging.getLogger(__name__)

TIMEOUT = 20
#: An answer to someone who clicked (response_url, App Home) that Slack has not taken in this
#: long is told another way, or dropped: it must not hold a thread that the next click needs.
ANSWER_TIMEOUT = 5

#: Errors after which Slack may still have done what was asked.
_UNCERTAIN_ERRORS = {"internal_error", "fatal_error", "service_unavailable", "request_timeout"}

#: Messages a page of history or replies: Slack's most for apps outside its Marketplace (which may read
#: one page a minute), and few enough that the look before a re-send reads little more than it needs.
HISTORY_PAGE = 15
#: What an operator should do about Slack's refusals, in words.
ADVICE = {
    "not_in_channel": "the bot is not in the channel: invite it with /invite @paperbot",
    "channel_not_found": "no such channel, or a private one the bot was not invited to: check PAPERBOT_CHANNEL",
    "is_archived": "the channel is archived",
    "invalid_auth": "Slack refused the token: check SLACK_BOT_TOKEN",
    "not_authed": "no token was sent: check SLACK_BOT_TOKEN",
    "account_inactive": "the token belongs to a deleted app or user: check SLACK_BOT_TOKEN",
    "token_revoked": "the token was revoked: reinstall the app and update SLACK_BOT_TOKEN",
    "missing_scope": "the app lacks a permission: reinstall it from manifest.json",
    "cannot_dm_bot": "that user is a bot",
    "user_not_found": "no such user",
}


def _hiccups() -> list:
    """Retries for Slack's passing failures: dropped connections, 429 (after Retry-After), 500 and 503."""
    return [
        ConnectionErrorRetryHandler(max_retry_count=2),
        RateLimitErrorRetryHandler(max_retry_count=3),
        ServerErrorRetryHandler(max_retry_count=2),
    ]


def make_client(settings, *, retries: bool = True, timeout: float = TIMEOUT) -> WebClient:
    handlers = _hiccups() if retries else []
    # slack_sdk annotates timeout as int, yet hands it to urllib, which takes a float.
    return WebClient(token=settings.bot_token, base_url=settings.api_url, timeout=timeout, retry_handlers=handlers)  # type: ignore[arg-type]


def _answer_retries() -> list:
    """For an answer to someone waiting: one more try after a 500 or 503, Slack's own failure (a
    rare second answer beats none there). Not after a dropped connection, which comes after Slack
    took the answer as often as before, nor waiting out a Retry-After."""
    return [ServerErrorRetryHandler(max_retry_count=1)]


def answer_client(settings) -> WebClient:
    """The client for answers to a click (App Home, a private message): see ANSWER_TIMEOUT."""
    return WebClient(
        token=settings.bot_token, base_url=settings.api_url, timeout=ANSWER_TIMEOUT, retry_handlers=_answer_retries()
    )


def webhook(response_url: str) -> WebhookClient:
    """A client for one response_url (a button's answer)."""
    return WebhookClient(response_url, timeout=ANSWER_TIMEOUT, retry_handlers=_answer_retries())


def may_have_arrived(exc: Exception) -> bool:
    """A failed call that Slack may still have carried out (a timeout, a 5xx): answer no second time."""
    return isinstance(_classify(exc), Uncertain)


def describe(error: str) -> str:
    advice = ADVICE.get(error)
    return f"{error} ({advice})" if advice else error


def _classify(exc: Exception) -> Exception:
    """A Slack or network failure as Rejected (certainly not done) or Uncertain."""
    if isinstance(exc, SlackApiError):
        status = exc.response.status_code
        error = (exc.response.data or {}).get("error", "") if isinstance(exc.response.data, dict) else ""
        if status == 429:
            retry_after = exc.response.headers.get("Retry-After") or exc.response.headers.get("retry-after") or "30"
            if isinstance(retry_after, list):
                retry_after = retry_after[0]
            try:
                return RateLimited(float(retry_after))
            except ValueError:
                return RateLimited(30.0)
        if status >= 500:
            return Uncertain(f"Slack answered HTTP {status}")
        if error in _UNCERTAIN_ERRORS:
            return Uncertain(f"Slack answered {error}")
        return Rejected(describe(error or f"HTTP {status}"), code=error or None)
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, ConnectionRefusedError | socket.gaierror):
        return Unreachable(f"cannot reach Slack ({reason})")
    if isinstance(reason, TimeoutError | ConnectionError | http.client.HTTPException | OSError):
        return Uncertain(f"no answer from Slack ({reason.__class__.__name__}: {reason})")
    return Uncertain(f"{exc.__class__.__name__}: {exc}")


#: What a Web API or response_url call raises when Slack or the network fails.
NETWORK_ERRORS = (SlackApiError, urllib.error.URLError, OSError, http.client.HTTPException)


def slack_channel(channel: str) -> str:
    """`channel`, unless it is another platform's (a Discord id is digits, a Slack one never is):
    Rejected, never sent to here."""
    if channel.isdigit():
        raise Rejected(f"{channel[:40]} is not a Slack channel ID (another platform's channel)", code=FOREIGN_CHANNEL)
    return channel


def call(fn, /, **kwargs) -> Any:
    """A Web API call whose failure is Rejected or Uncertain, never a raw exception."""
    try:
        return fn(**kwargs)
    except NETWORK_ERRORS as e:
        raise _classify(e) from e


class SlackTransport:
    """Sends weekly posts and reminders, and finds them again by their metadata."""

    #: Pages of HISTORY_PAGE messages read back to an attempt's start, at most.
    HISTORY_PAGES = 10

    def __init__(self, client: WebClient):
        self.client = client
        self._bot_id: str | None = None
        #: Looks stopped by a rate limit: (method, channel[, thread], since) -> (next cursor, pages read).
        self._looks: dict[tuple, tuple[str | None, int]] = {}

    def reaches(self, user: str) -> bool:
        """Can `user` get a direct message? Not the console's operator (`console`), signed up from a terminal."""
        return blocks.is_slack_user(user)

    def _payload(self, message: Any) -> dict:
        if isinstance(message, WeeklyPost):
            return discussion.weekly_post(message)
        if isinstance(message, Reminder):
            return discussion.reminder(message)
        if isinstance(message, InThread):
            return discussion.in_thread(message)
        if isinstance(message, Digest):
            return discussion.digest(message)
        if isinstance(message, Note):  # marked with its key, so that an attempt that reached Slack is found again
            return {
                **blocks.message(Notice(message.said, buttons=list(message.buttons))),
                "metadata": {"event_type": blocks.NOTE_EVENT, "event_payload": {"key": message.key}},
                "unfurl_links": False,
            }
        raise TypeError(f"cannot send {type(message).__name__}")

    def send(self, delivery: Delivery, message: Any) -> Sent:
        slack_channel(delivery.dest)
        thread = {"thread_ts": delivery.thread} if delivery.thread else {}
        try:
            response = call(self.client.chat_postMessage, channel=delivery.dest, **thread, **self._payload(message))
        except Rejected as e:
            if delivery.kind in ("reminder", "note") and e.code in ("channel_not_found", "user_not_found"):
                # Not PAPERBOT_CHANNEL's fault: the DM to the presenter could not be opened.
                raise Rejected(
                    f"{e.code} (cannot send {delivery.dest} a direct message: are they still in the workspace?)",
                    code=e.code,
                ) from None
            raise
        return Sent(response["channel"], response["ts"])

    def update(self, sent: Sent, message: Any) -> None:
        payload = self._payload(message)
        payload.pop("unfurl_links", None)
        payload.pop("unfurl_media", None)
        call(self.client.chat_update, channel=sent.channel, ts=sent.ref, **payload)

    def bot_id(self) -> str | None:
        if self._bot_id is None:
            self._bot_id = call(self.client.auth_test).get("bot_id")
        return self._bot_id

    def find(self, delivery: Delivery, since: float) -> Sent | None:
        if delivery.thread:
            return self.find_reply(delivery, since)
        if delivery.kind == "post":
            return self.find_message(delivery.dest, since, blocks.POST_EVENT, lambda p: p.get("week") == delivery.key)
        channel = call(self.client.conversations_open, users=delivery.dest)["channel"]["id"]
        if delivery.kind == "note":
            return self.find_message(channel, since, blocks.NOTE_EVENT, lambda p: p.get("key") == delivery.key)
        return self.find_message(channel, since, blocks.REMINDER_EVENT, lambda p: p.get("week") == delivery.key)

    def find_reply(self, delivery: Delivery, since: float) -> Sent | None:
        """Our reply in the delivery's thread since unix time `since` that carries its key."""
        channel = slack_channel(delivery.dest)

        def matches(meta: dict) -> bool:
            payload = meta.get("event_payload") or {}
            return meta.get("event_type") == discussion.QUESTION_EVENT and payload.get("key") == delivery.key

        where = {"channel": channel, "ts": delivery.thread}
        too_long = f"the thread of {delivery.thread} has over {self.HISTORY_PAGES * HISTORY_PAGE} replies since then"
        return self._look(self.client.conversations_replies, where, since, matches, too_long)

    def find_message(self, channel: str, since: float, event: str, matches) -> Sent | None:
        """Our message in `channel` since unix time `since` whose metadata is `event` with a
        payload that `matches`; raises Rejected when the history is too long to read to then."""
        slack_channel(channel)

        def ours(meta: dict) -> bool:
            return meta.get("event_type") == event and matches(meta.get("event_payload") or {})

        too_long = f"{channel} has over {self.HISTORY_PAGES * HISTORY_PAGE} messages since then, not all read"
        return self._look(self.client.conversations_history, {"channel": channel}, since, ours, too_long)

    def _look(self, method, where: dict, since: float, matches, too_long: str) -> Sent | None:
        """Our message among `method`'s pages since unix time `since` (history: newest first; a thread's
        replies: oldest first) whose metadata `matches`, or None. Rejected (`too_long`) when
        HISTORY_PAGES do not read back to `since`: saying "not there" could post a second time, and
        asking again at once would read the same pages; it is tried again later, the admins told.
        A rate limit (RateLimited) keeps the place reached: the same look asked again reads on from
        there, so that a look of several pages, one a minute, gets to its end."""
        ours = self.bot_id()
        key = (method.__name__, *where.values(), since)
        cursor, pages = self._looks.pop(key, (None, 0))
        while pages < self.HISTORY_PAGES:
            asked = {**where, "oldest": f"{max(since, 0):.6f}", "inclusive": True, "limit": HISTORY_PAGE}
            try:
                page = call(method, **asked, include_all_metadata=True, **({"cursor": cursor} if cursor else {}))
            except (RateLimited, Uncertain):
                self._looks[key] = (cursor, pages)
                raise
            pages += 1
            for m in page.get("messages", []):
                if matches(m.get("metadata") or {}) and (ours is None or m.get("bot_id") in (None, ours)):
                    return Sent(where["channel"], m["ts"])
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return None
        raise Rejected(too_long)
