"""The Bolt app: built in a factory, never at import (App() calls Slack's auth.test).

    bot = SlackBot(settings, store)
    app = build_app(bot)           # listeners registered; serve it over HTTP or Socket Mode

`SlackBot` is what the listeners share: settings, the store, the Web API
clients, the admin check, and a small pool for work that happens after the
reply (announcements, updating the weekly post, App Home), so that no reply
waits for a second Slack call. The outbox is sent by the core's OutboxSender
(bot.announcing.sender), with SlackPoster (bot.slack.announce) doing Slack's part.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from datetime import datetime

from slack_bolt import App, BoltResponse
from slack_bolt.authorization import AuthorizeResult
from slack_sdk import WebClient

from bot.announcing import changes as announce
from bot.announcing.sender import OutboxSender
from bot.calendar import Week
from bot.chat import commands
from bot.chat.context import NOT_HERE, Context, Place
from bot.chat.replies import Home, Notice
from bot.delivery.answer_time import ANSWER_SECONDS, Replies, answer_deadline, arrived_at
from bot.delivery.background import Background
from bot.delivery.sending import Rejected, Uncertain
from bot.rich_text import Code, Mention, Text, text
from bot.schedule import groups, notes, questions
from bot.schedule.signups import Change, Member, Refusal
from bot.slack import blocks
from bot.slack.announce import SlackPoster
from bot.slack.client import SlackTransport, answer_client, call, make_client, webhook
from bot.slack.listeners import actions, events, fallbacks, views
from bot.slack.listeners import commands as command_listeners
from bot.slack.listeners import questions as question_listeners
from bot.slack.members import PLATFORM
from bot.slack.settings import SlackSettings
from bot.store.connection import Store

log = logging.getLogger(__name__)

#: How long what Slack said of a member is trusted: an admin for 10 minutes, anyone else for one
#: (a member just made an admin waits a minute at most).
ADMIN_CACHE_SECONDS = 600
MEMBER_CACHE_SECONDS = 60
#: Calls made before a reply (users.info, views.open) must leave time within Slack's 3 seconds:
#: each waits at most QUICK_TIMEOUT, and all of a reply's together at most ANSWER_SECONDS.
QUICK_TIMEOUT = 2.0


#: Slackbot is no bot to users.info, and presents no paper.
SLACKBOT = "USLACKBOT"


class SlackBot:
    def __init__(
        self,
        settings: SlackSettings,
        store: Store,
        *,
        client: WebClient | None = None,
        delivery_client: WebClient | None = None,
        clock: Callable[[], datetime] | None = None,
        background: Background | None = None,
    ):
        """`background`: threads shared with other places' bots (a hosted install's: threads, and the
        database connections each holds, do not grow with the places); None: threads of its own."""
        self.settings = settings
        self.store = store
        self.group = settings.group
        self.env = groups.from_settings(settings)
        self.client = client or make_client(settings)
        self.quick = WebClient(  # slack_sdk annotates timeout as int; urllib takes a float
            token=self.client.token,
            base_url=self.client.base_url,
            timeout=QUICK_TIMEOUT,  # type: ignore[arg-type]
            retry_handlers=[],
        )
        # Answers to a click (App Home, a DM) give up soon and are not repeated: see client.answer_client.
        self.answers = answer_client(settings) if client is None else client
        # No client retries for the post, its updates or announcements: delivery decides about the
        # post, the outbox about the rest, and neither holds a thread to wait out a Retry-After.
        self.transport = SlackTransport(delivery_client or make_client(settings, retries=False))
        self._stopping = threading.Event()
        self.replies = Replies()
        self.clock = clock or settings.now
        # Answers to the person who clicked (a button, a form, App Home) have their own threads:
        # the channel's work (announcements, post updates) may sleep through a Retry-After.
        self._own_background = background is None
        self.background = background or Background({"answer": 8, "channel": 2})
        self._admins: dict[str, tuple[bool, float]] = {}
        self._home: tuple[str | None, bool] | None = None  # the install's workspace (or org), and is it an org
        self._bot_user: tuple[str | None, str | None] = (None, None)  # the bot's user id and bot id (auth.test)
        self.outbox = OutboxSender(
            store,
            SlackPoster(self),
            lambda fn, *args: self.later(fn, *args, lane="channel"),
            self.replies,
            self._stopping,
        )

    # -- where ---------------------------------------------------------------

    def learn_home(self) -> tuple[str | None, bool]:
        """Ask Slack (auth.test) whose workspace the bot token is: the install's own. Raises as call does."""
        said = call(self.client.auth_test)
        self._bot_user = said.get("user_id"), said.get("bot_id")
        grid = bool(said.get("is_enterprise_install"))
        # An app installed on an Enterprise Grid organisation serves every workspace in it: its place is the org.
        self._home = (said.get("enterprise_id") if grid else said.get("team_id")) or None, grid
        if self._home[0] is None:
            log.warning("auth.test named no workspace: requests are not told apart by workspace")
        return self._home

    def place(self, team: str | None, enterprise: str | None) -> Place:
        """Where a request from workspace `team` (of the Enterprise Grid organisation `enterprise`) comes
        from, beside the install's own; learned at the first request when `run` did not (a test's app)."""
        known = self._home
        if known is None:
            try:
                known = self.learn_home()
            except (Rejected, Uncertain) as e:
                log.warning("could not learn the bot token's workspace (%s): requests are refused until then", e)
                return Place(team or enterprise or "", None)
        home, grid = known
        if home is None:  # Slack named no workspace for the token (a proxy's answer): none to compare with
            return Place()
        return Place(enterprise if grid else team, home)

    def authorized(self, enterprise_id: str | None, team_id: str | None) -> AuthorizeResult:
        """Bolt's authorize in a hosted install: the token this bot sends with now (rotated, or a new
        install's) and who the bot is; auth.test asked here the first time (when Slack does not answer,
        whose_workspace asks again and refuses the request until it does)."""
        if self._home is None:
            with contextlib.suppress(Rejected, Uncertain):
                self.learn_home()
        user, bot_id = self._bot_user
        return AuthorizeResult(
            enterprise_id=enterprise_id, team_id=team_id, bot_token=self.client.token, bot_id=bot_id, bot_user_id=user
        )

    def use_token(self, token: str) -> None:
        """Send with `token` from now on (a hosted place's, rotated by Slack)."""
        for client in (self.client, self.quick, self.answers, self.transport.client):
            client.token = token

    # -- who and when --------------------------------------------------------

    def is_admin(self, user: str) -> bool:
        """PAPERBOT_ADMINS, or a workspace admin or owner (asked of Slack, remembered a while)."""
        if user in self.settings.admins:
            return True
        cached = self._admins.get(user)
        if cached and cached[1] > time.monotonic():
            return cached[0]
        try:
            info = call(self.quick_client().users_info, user=user)["user"]
        except (Rejected, Uncertain) as e:
            if isinstance(e, Rejected) and e.code == "user_not_found":
                raise Refusal(
                    "Slack knows no member ", Code(user), " in this workspace: nothing was changed."
                ) from None
            log.warning("users.info %s failed: %s", user, e)
            raise Refusal(
                "I couldn't check with Slack whether you are an admin just now. Try again in a minute."
            ) from None
        admin = bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))
        self._admins[user] = (admin, time.monotonic() + (ADMIN_CACHE_SECONDS if admin else MEMBER_CACHE_SECONDS))
        return admin

    def quick_client(self) -> WebClient:
        """The client for a call before a reply, waiting no longer than the answer's deadline allows."""
        left = answer_deadline() - time.monotonic()
        if left >= QUICK_TIMEOUT:
            return self.quick
        if left < 0.2:  # certainly not asked: a refusal, not a doubt
            raise Rejected("no time left to ask Slack before the answer is due")
        # slack_sdk annotates timeout as int; urllib takes a float.
        return WebClient(token=self.quick.token, base_url=self.quick.base_url, timeout=left, retry_handlers=[])  # type: ignore[arg-type]

    def vet_presenter(self, user: str, bot_user: str | None) -> None:
        """Refuse a presenter who is no member: Slackbot, this bot (a mention of @paperbot), another
        bot, someone who has left, or a user ID that Slack does not know (a typo). When Slack cannot
        be asked in time, the admin's word stands."""
        if user in (SLACKBOT, bot_user):
            raise Refusal(Mention(user), " is a bot and cannot present. Name a member of the group.")
        try:
            info = call(self.quick_client().users_info, user=user)["user"]
        except Rejected as e:
            if e.code == "user_not_found":
                raise Refusal(
                    "Slack knows no member ",
                    Code(user),
                    " in this workspace. Name the presenter with ",
                    Code("@"),
                    " and pick them from Slack's list.",
                ) from None
            log.warning("users.info %s failed, so the presenter was not checked: %s", user, e)
            return
        except Uncertain as e:
            log.warning("users.info %s did not answer, so the presenter was not checked: %s", user, e)
            return
        if info.get("deleted"):
            raise Refusal(Mention(user), " has left the workspace and cannot present. Name a member of the group.")
        if info.get("is_bot") or info.get("is_app_user"):
            raise Refusal(Mention(user), " is a bot and cannot present. Name a member of the group.")

    @contextmanager
    def answering(self, user: str, bot_user: str | None = None, where: str | None = None) -> Iterator[Context]:
        """The context to answer a request of `user`'s with, now: whatever the answer waits for
        (users.info, views.open, the database's write lock) ends by one deadline, Slack's 3 seconds
        counted from when the request came in (see answer_deadline)."""
        deadline = answer_deadline()
        with self.replies.one(), arrived_at(deadline - ANSWER_SECONDS), self.store.answering_by(deadline):
            yield self.context(user, bot_user, where)

    def context(self, user: str, bot_user: str | None = None, where: str | None = None) -> Context:
        """What a command needs (`bot_user`: this bot's user ID, which presents nothing; `where`: the
        channel it was typed in, a direct message's being none of a group's)."""
        s = self.settings
        if where is not None and not where.startswith(("C", "G")):
            where = None
        return Context(
            self.store,
            self.group,
            Member(user, lambda: self.is_admin(user)),
            self.clock(),
            s.focus_tag,
            s.channel,
            self.queue_change,
            lambda presenter: self.vet_presenter(presenter, bot_user),
            PLATFORM,
            rotation=s.rotation,
            lookups=s.lookups,
            tell=self.tell_later,
            notify=self.notes_later,
            public_url=s.public_url,
            where=where,
            env=self.env,
        )

    # -- after the reply ---------------------------------------------------------

    def later(self, fn: Callable, *args, lane: str = "answer") -> Future:
        """Run `fn` after the reply has gone, in `lane` ("answer" or "channel")."""
        return self.background.later(fn, *args, lane=lane)

    def drain(self, timeout: float = 10) -> None:
        """Wait for background work (tests, shutdown)."""
        self.background.drain(timeout)

    def close(self, timeout: float = 5) -> bool:
        """Stop: what is due is still sent, for up to `timeout` seconds; the rest stays in the outbox
        for the next start (a call that hangs is not waited for: see cli.cmd_run). True when no
        background work is left running, so that the store can be closed under nobody. A button
        pressed just before the stop is still answered."""
        self._stopping.set()
        if not self._own_background:  # its owner closes it
            return True
        return self.background.close(timeout, finish=("answer",))

    def queue_change(self, change: Change) -> None:
        """Context.on_change: the change's announcement (and post update) into the outbox, inside its
        transaction; `wake_outbox` sends them once the reply has gone."""
        if self.settings.channel:
            announce.queue(self.store, self.settings.channel, change)

    def wake_outbox(self) -> None:
        """Have the outbox sent soon, in the background (the scheduler's check calls this too)."""
        self.outbox.wake()

    def discuss(self) -> None:
        """Post what is due in the meetings' threads (a question just asked), in the channel's lane."""
        chosen = groups.posting(self.store, self.env, PLATFORM.name)
        self.later(questions.discuss, self.store, chosen, lambda g: self.transport, self.clock(), lane="channel")

    def send_outbox(self) -> None:
        """Send what the outbox has due, now, in this thread (see bot.announcing.sender)."""
        self.outbox.send()

    def refresh_post(self, week: Week) -> bool:
        """Bring the week's post, if it is out, up to date (see SlackPoster.refresh_post)."""
        return self.outbox.poster.refresh_post(week)

    def tell_admins(self, text: str) -> None:
        """A direct message to each of PAPERBOT_ADMINS (the operator's alarm bell)."""
        for admin in sorted(self.settings.admins):
            try:
                call(self.client.chat_postMessage, channel=admin, text=text)
            except (Rejected, Uncertain) as e:
                log.warning("could not tell %s: %s", admin, e)

    # -- App Home --------------------------------------------------------------

    def home(self, user: str, notice: Notice | None = None) -> Home:
        """What `user`'s App Home shows now (the core decides; blocks.home draws it)."""
        return commands.home(self.context(user), notice)

    def publish_home(self, user: str, notice: Notice | None = None) -> bool:
        """Re-draw `user`'s App Home, `notice` on top; False when Slack certainly did not take it."""
        try:
            call(self.answers.views_publish, user_id=user, view=blocks.home(self.home(user, notice)))
        except Rejected as e:
            log.warning("could not publish App Home for %s: %s", user, e)
            return False
        except Uncertain as e:  # it may be up: no second answer
            log.warning("App Home for %s may not be up to date: %s", user, e)
        return True

    def check_channel(self) -> None:
        """Say at start, in the log, when Slack will refuse PAPERBOT_CHANNEL (a mistyped ID, a channel
        the bot was not invited to): not at the first post. Anything else Slack answers says nothing
        (an archived channel's history can still be read: the first post says that one)."""
        channel = self.settings.channel
        if not channel:
            return
        try:
            call(self.client.conversations_history, channel=channel, limit=1)
        except Rejected as e:
            if e.code in CHANNEL_REFUSALS:
                log.warning(
                    "PAPERBOT_CHANNEL %s: %s; the weekly post and announcements wait until it is fixed", channel, e
                )
        except Uncertain:
            pass  # Slack did not answer now: the post will tell, if it comes to that

    def notes_later(self) -> None:
        """Context.notify: the notes a command left, sent once the reply has gone (in the channel's lane: a
        note waiting out the platform holds no reply back)."""
        self.later(self.send_notes, lane="channel")

    def send_notes(self) -> None:
        """Send the direct messages left to send once (a swap's offer, an open slot's call) in the groups
        this bot posts to (bot/schedule/notes.py)."""
        notes.send_due_for(self.store, self.env, PLATFORM.name, self.transport, self.clock(), sleep=self._stopping.wait)

    def tell_later(self, user: str, said: Text) -> None:
        """Tell `user` directly once the reply has gone (commands.Context.tell)."""
        self.later(self.tell_directly, user, blocks.message(Notice(said)))

    def tell_directly(self, user: str, message: dict) -> None:
        """A direct message from the app (its Messages tab)."""
        try:
            call(self.answers.chat_postMessage, channel=user, **message)
        except (Rejected, Uncertain) as e:
            log.warning("could not tell %s directly: %s", user, e)


#: Slack's refusals of PAPERBOT_CHANNEL itself, as opposed to its passing failures.
CHANNEL_REFUSALS = ("channel_not_found", "not_in_channel")


def build_app(bot: SlackBot) -> App:
    """The Bolt app with every listener registered."""

    settings = bot.settings
    bolt_log = logging.getLogger("bot.slack.bolt")
    if not bolt_log.filters:
        # Bolt reads SLACK_BOT_TOKEN from the environment even when handed a client, then warns; and it
        # quotes a whole unsigned body in the log (serve.wsgi logs one line of its own instead). In a
        # hosted install it says of every place's app that it found SLACK_CLIENT_ID (see below).
        bolt_log.addFilter(
            lambda record: (
                not record.getMessage().startswith("Invalid request signature detected")
                and "will be unused" not in record.getMessage()
                and "Bolt has enabled the file-based" not in record.getMessage()
            )
        )
    if settings.installs or _bolt_installs():
        # With SLACK_CLIENT_ID in the environment (a hosted install's, or one PAPERBOT_HOSTED=false turned
        # down) Bolt would make any app an install flow's, authorised from files of its own: each app is
        # authorised by its bot instead, with the token it holds at each request (a hosted place's is
        # rotated, or a new install's). Its auth.test waits for the first request, which asks it anyway.
        def authorize(enterprise_id, team_id):  # Bolt passes what a function's parameters name (not `self`)
            return bot.authorized(enterprise_id, team_id)

        how: dict = {"client": WebClient(base_url=bot.client.base_url), "authorize": authorize}
    else:
        how = {"client": bot.client}
    app = App(
        signing_secret=settings.signing_secret or "",
        # The listener runs in the request's thread and the reply leaves when it
        # returns; Bolt's default would poll for ack() every 10 ms instead.
        # Anything slow after the reply goes to SlackBot.later().
        process_before_response=True,
        request_verification_enabled=not settings.socket_mode,
        logger=bolt_log,
        **how,
    )

    @app.use
    def whose_workspace(body, context, next):  # noqa: A002 (Bolt hands the rest of the chain by this name)
        """The one door of every request: another workspace's gets one line, and nothing runs."""
        if not bot.place(context.team_id, context.enterprise_id).foreign:
            return next()
        return not_here(bot.later, body)

    command_listeners.register(app, bot)
    actions.register(app, bot)
    views.register(app, bot)
    question_listeners.register(app, bot)
    events.register(app, bot)
    fallbacks.register(app, bot)  # last: the first listener that matches runs

    @app.error
    def on_error(error, body, logger):  # Bolt calls this for anything a listener did not catch
        logger.exception(
            "unhandled error for %s", (body or {}).get("type") or (body or {}).get("command"), exc_info=error
        )

    return app


def _bolt_installs() -> bool:
    """Would Bolt make an App an install flow's of its own (as it does when the environment holds both)?"""
    return os.environ.get("SLACK_CLIENT_ID") is not None and os.environ.get("SLACK_CLIENT_SECRET") is not None


def not_here(later: Callable, body: dict, line: str = NOT_HERE) -> BoltResponse:
    """The answer to a request from another workspace: one line where its kind can show one (`later`
    runs a call after the answer, as SlackBot.later)."""
    said = blocks.message(Notice(text(line), ok=False))
    if body.get("command"):
        return _json({"response_type": "ephemeral", **said})
    if body.get("type") == "view_submission":
        return _json({"response_action": "errors", "errors": {"title": line[:150]}})
    if body.get("type") == "block_actions" and body.get("response_url"):
        later(lambda url: call(webhook(url).send, response_type="ephemeral", **said), body["response_url"])
    return BoltResponse(status=200, body="")


def _json(payload: dict) -> BoltResponse:
    return BoltResponse(status=200, body=json.dumps(payload), headers={"content-type": "application/json"})
