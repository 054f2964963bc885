"""The Bolt app: built in a factory, never at import (App() calls Slack's auth.test).

    bot = SlackBot(settings, store)
    app = build_app(bot)           # listeners registered; serve it over HTTP or Socket Mode

`SlackBot` is what the listeners share: settings, the store, the Web API
clients, the admin check, and a small pool for work that happens after the
reply (announcements, updating the weekly post, App Home), so that no reply
waits for a second Slack call.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from datetime import datetime

from slack_bolt import App
from slack_sdk import WebClient

from bot import outbox, signups, weekly
from bot.calendar import Week
from bot.commands import Context
from bot.delivery import RETRY_AFTER_REFUSAL, RateLimited, Rejected, Uncertain, Unreachable
from bot.replies import Button, Code, Home, Mention, Notice, PaperEntry
from bot.signups import Change, Member, Refusal
from bot.slack import announce, blocks
from bot.slack.client import SlackTransport, answer_client, call, make_client
from bot.slack.members import PLATFORM
from bot.slack.settings import Settings
from bot.store import Store

log = logging.getLogger(__name__)

#: How long what Slack said of a member is trusted: an admin for 10 minutes, anyone else for one
#: (a member just made an admin waits a minute at most).
ADMIN_CACHE_SECONDS = 600
MEMBER_CACHE_SECONDS = 60
#: An outbox item Slack asks us to hold off for at most this long is tried again by a short
#: wait in the background; a longer hold is left to the scheduler's next check (30 s).
OUTBOX_SOON = 30
#: While Slack cannot be reached, the outbox tries again this often.
UNREACHABLE_WAIT = 10.0
#: A round of the sender that failed on our side (the database) is tried again after this long,
#: doubled for each further failure in a row.
OUTBOX_AFTER_FAILURE = 1.0
#: An announcement the channel refused (the bot not invited yet) is tried again after this long,
#: doubled for each further refusal, up to RETRY_AFTER_REFUSAL: once someone invites the bot, the
#: line and those after it (which wait their turn) follow within a minute or two.
REFUSED_ANNOUNCEMENT_WAIT = 60.0
#: A post update waits this long (and again) while the post itself is being sent.
POST_IN_FLIGHT_WAIT = 2.0
#: Calls made before a reply (users.info, views.open) must leave time within Slack's 3 seconds:
#: each waits at most QUICK_TIMEOUT, and all of a reply's together at most ANSWER_SECONDS.
QUICK_TIMEOUT = 2.0
ANSWER_SECONDS = 2.5
#: The channel's work (announcements, post updates) lets replies go first: it waits until no reply
#: has been under way for QUIET_GAP seconds, but an item waits no longer than QUIET_LONGEST.
QUIET_GAP = 0.02
QUIET_LONGEST = 1.0
_arrival = threading.local()


class Replies:
    """Replies under way, so that background work can wait for a quiet moment.

    Under CPython's GIL a thread posting an announcement (its HTTP call and JSON, about a
    millisecond of CPU) slows every reply made meanwhile; Slack gives a reply 3 seconds and the
    channel's line can come a moment later.
    """

    def __init__(self, gap: float = QUIET_GAP, longest: float = QUIET_LONGEST):
        self.gap, self.longest = gap, longest
        self._lock = threading.Lock()
        self._under_way = 0
        self._last_end = 0.0  # monotonic

    @contextmanager
    def one(self) -> Iterator[None]:
        with self._lock:
            self._under_way += 1
        try:
            yield
        finally:
            with self._lock:
                self._under_way -= 1
                self._last_end = time.monotonic()

    def wait_for_quiet(self, since: float, stop: threading.Event) -> None:
        """Wait until no reply has been under way for `gap` seconds, or until `longest` seconds after
        `since` (monotonic), or until `stop`: a bot that is never quiet still sends, a moment later."""
        while True:
            now = time.monotonic()
            with self._lock:
                quiet_for = None if self._under_way else now - self._last_end
            if quiet_for is not None and quiet_for >= self.gap:
                return
            left = since + self.longest - now
            if left <= 0 or stop.wait(min(left, self.gap - (quiet_for or 0.0))):
                return


@contextmanager
def arrived_at(moment: float | None) -> Iterator[None]:
    """The request this thread answers meanwhile came in at `moment` (monotonic), perhaps well
    before a thread was free to take it: see answer_deadline."""
    before = getattr(_arrival, "at", None)
    _arrival.at = moment
    try:
        yield
    finally:
        _arrival.at = before


def answer_deadline() -> float:
    """When what the reply to this thread's request waits for must end: Slack's 3 seconds run from
    when the request came in (serve.http_server and the Socket Mode handler say when), not from
    when a thread took it."""
    return (getattr(_arrival, "at", None) or time.monotonic()) + ANSWER_SECONDS


#: Slackbot is no bot to users.info, and presents no paper.
SLACKBOT = "USLACKBOT"


class SlackBot:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        client: WebClient | None = None,
        delivery_client: WebClient | None = None,
        clock: Callable[[], datetime] | None = None,
    ):
        self.settings = settings
        self.store = store
        self.group = settings.group
        self.client = client or make_client(settings)
        self.quick = WebClient(
            token=self.client.token, base_url=self.client.base_url, timeout=QUICK_TIMEOUT, retry_handlers=[]
        )
        # Answers to a click (App Home, a DM) give up soon and are not repeated: see client.answer_client.
        self.answers = answer_client(settings) if client is None else client
        # No client retries for the post, its updates or announcements: delivery decides about the
        # post, the outbox about the rest, and neither holds a thread to wait out a Retry-After.
        self.transport = SlackTransport(delivery_client or make_client(settings, retries=False))
        self._outbox_lock = threading.Lock()
        self._outbox_state = threading.Lock()
        self._outbox_wanted = False
        self._outbox_sending = False  # a sender holds _outbox_lock and will look at _outbox_wanted again
        self._outbox_failures = 0  # rounds of the sender that failed in a row
        self._outbox_held_until = 0.0  # monotonic: Slack asked to hold off until then, for every item
        self._refusing: set[str] = set()  # channels that refused an announcement, admins told, none posted since
        self._outbox_wake: float | None = None  # monotonic: when the sender is to go round again
        self._stopping = threading.Event()
        self.replies = Replies()
        self.clock = clock or settings.now
        # Answers to the person who clicked (a button, a form, App Home) have their own threads:
        # the channel's work (announcements, post updates) may sleep through a Retry-After.
        self._pools = {
            "answer": ThreadPoolExecutor(max_workers=8, thread_name_prefix="paperbot-answer"),
            "channel": ThreadPoolExecutor(max_workers=2, thread_name_prefix="paperbot-channel"),
        }
        self._pending: set[Future] = set()
        self._pending_lock = threading.Lock()
        self._admins: dict[str, tuple[bool, float]] = {}

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
        return WebClient(token=self.quick.token, base_url=self.quick.base_url, timeout=left, retry_handlers=[])

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
    def answering(self, user: str, bot_user: str | None = None) -> Iterator[Context]:
        """The context to answer a request of `user`'s with, now: whatever the answer waits for
        (users.info, views.open, the database's write lock) ends by one deadline, Slack's 3 seconds
        counted from when the request came in (see answer_deadline)."""
        deadline = answer_deadline()
        with self.replies.one(), arrived_at(deadline - ANSWER_SECONDS), self.store.answering_by(deadline):
            yield self.context(user, bot_user)

    def context(self, user: str, bot_user: str | None = None) -> Context:
        """What a command needs (`bot_user`: this bot's user ID, which presents nothing)."""
        s = self.settings
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
        )

    # -- after the reply ---------------------------------------------------------

    def later(self, fn: Callable, *args, lane: str = "answer") -> Future:
        """Run `fn` after the reply has gone, in `lane` ("answer" or "channel"); failures are logged,
        never shown as tracebacks."""

        def guarded():
            try:
                fn(*args)
            except Exception:
                log.exception("background %s failed", getattr(fn, "__name__", fn))

        future = self._pools[lane].submit(guarded)
        with self._pending_lock:
            self._pending.add(future)
        future.add_done_callback(self._forget)
        return future

    def _forget(self, future: Future) -> None:
        with self._pending_lock:
            self._pending.discard(future)

    def drain(self, timeout: float = 10) -> None:
        """Wait for background work (tests, shutdown)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._pending_lock:
                pending = set(self._pending)
            if not pending or time.monotonic() > deadline:
                return
            wait(pending, timeout=max(0.0, deadline - time.monotonic()))

    def close(self, timeout: float = 5) -> bool:
        """Stop: what is due is still sent, for up to `timeout` seconds; the rest stays in the outbox
        for the next start (a call that hangs is not waited for: see cli.cmd_run). True when no
        background work is left running, so that the store can be closed under nobody."""
        self._stopping.set()
        self.drain(timeout)
        self._pools["channel"].shutdown(wait=False, cancel_futures=True)  # its work is in the outbox
        self._pools["answer"].shutdown(wait=False)  # a button pressed just before the stop is still answered
        with self._pending_lock:
            return not self._pending

    def queue_change(self, change: Change) -> None:
        """Context.on_change: the change's announcement (and post update) into the outbox, inside its
        transaction; `wake_outbox` sends them once the reply has gone."""
        if self.settings.channel:
            announce.queue(self.store, self.settings.channel, change)

    def wake_outbox(self) -> None:
        """Have the outbox sent soon, in the background (the scheduler's check calls this too)."""
        if self._stopping.is_set():  # stopping: what is left waits for the next start
            return
        with self._outbox_state:
            self._outbox_wanted = True
            if self._outbox_sending:  # the sender goes round again before it stops: no second thread
                return
        self.later(self.send_outbox, lane="channel")

    def send_outbox(self) -> None:
        """Send what the outbox has due, oldest first, once replies under way have gone (see
        Replies); one sender in a process at a time."""
        woken = time.monotonic()
        with self._outbox_state:
            self._outbox_wanted = True
        if not self._outbox_lock.acquire(blocking=False):
            return  # the sender that holds it sees the wish and goes round again
        try:
            while True:
                with self._outbox_state:
                    self._outbox_sending = self._outbox_wanted
                    if not self._outbox_wanted:
                        break
                    self._outbox_wanted = False
                self.replies.wait_for_quiet(woken, self._stopping)
                # While Slack holds the channel off, every line waits its turn, in order.
                while time.monotonic() >= self._outbox_held_until and (items := outbox.take(self.store)):
                    for i, item in enumerate(items):
                        self.replies.wait_for_quiet(woken, self._stopping)
                        self._send(item)
                        if time.monotonic() < self._outbox_held_until:
                            for rest in items[i + 1 :]:
                                outbox.release(self.store, rest)
                            break
        except Exception:
            # A round that failed (the database held past its busy timeout, say) leaves its lines in
            # the outbox, and wakes that came meanwhile found this sender running: go round again soon,
            # and less often while it keeps failing (up to the scheduler's check).
            self._outbox_failures += 1
            if not self._stopping.is_set():
                wait = min(OUTBOX_AFTER_FAILURE * 2 ** min(self._outbox_failures - 1, 5), OUTBOX_SOON)
                self.later(self._send_outbox_after, wait, lane="channel")
            raise
        else:
            self._outbox_failures = 0
        finally:
            with self._outbox_state:
                self._outbox_sending = False
            self._outbox_lock.release()
        self._wake_for_next()

    def _wake_for_next(self) -> None:
        """Have the sender go round again when the next item is due, if that is soon; one such wait
        at a time. Later ones are left to the scheduler's 30-second check."""
        if self._stopping.is_set():
            return
        due = outbox.next_due(self.store)
        if due is None:
            return
        seconds = max(due - time.time(), self._outbox_held_until - time.monotonic(), 0.0)
        if seconds > OUTBOX_SOON:
            return
        wake_at = time.monotonic() + seconds
        with self._outbox_state:
            if self._outbox_wake is not None and self._outbox_wake <= wake_at + 0.01:
                return  # an earlier (or the same) wake is coming
            self._outbox_wake = wake_at
        self.later(self._send_outbox_after, seconds, lane="channel")

    def _send_outbox_after(self, seconds: float) -> None:
        if self._stopping.wait(seconds):
            return
        with self._outbox_state:
            self._outbox_wake = None
        self.send_outbox()

    def _send(self, item: outbox.Item) -> None:
        """Send one item; on failure put it back for later. A rate limit or a Slack failure holds
        every item off (`_outbox_held_until`); a refusal only this one."""
        week, channel = item.payload.get("week"), item.payload.get("channel")
        if item.kind == "refresh":
            what = f"update the post of {week}"
        else:
            what = f"announce {item.payload['about']} in {channel}"
        try:
            if item.kind == "refresh":
                if not self.refresh_post(Week.from_key(week)):
                    # Being sent now, perhaps planned before the change: updated once it is out (not a try).
                    outbox.postpone(self.store, item, time.time() + POST_IN_FLIGHT_WAIT, "the post is being sent")
                    return
            else:
                if item.tried and self._announced(channel, item):
                    log.info("the announcement of %s was in %s already", item.payload["about"], channel)
                    outbox.done(self.store, item)
                    return
                marked = {"event_type": blocks.ANNOUNCE_EVENT, "event_payload": _announcement_key(item)}
                call(
                    self.transport.client.chat_postMessage, channel=channel, metadata=marked, **item.payload["message"]
                )
        except RateLimited as e:  # not a failure of the line: it waits as long as Slack asks, never dropped
            wait = max(e.retry_after, 1.0)
            self._outbox_held_until = time.monotonic() + wait
            outbox.postpone(self.store, item, time.time() + wait, str(e))
            log.warning("could not %s yet: %s", what, e)
            return
        except Unreachable as e:  # certainly not sent, and Slack will be back: every line waits, none is dropped
            self._outbox_held_until = time.monotonic() + UNREACHABLE_WAIT
            outbox.postpone(self.store, item, time.time() + UNREACHABLE_WAIT, str(e))
            log.warning("could not %s yet: %s", what, e)
            return
        except Uncertain as e:  # it may have been posted: the next try looks in the channel first
            error, wait = e, float(min(2**item.attempts, 300))
            self._outbox_held_until = time.monotonic() + wait
        except Rejected as e:
            if item.kind == "refresh":  # the post is gone or cannot be edited: trying again will not help
                log.warning("could not %s: %s", what, e)
                outbox.done(self.store, item)
                return
            # not_in_channel and the like: it is tried again later, the lines after it waiting their
            # turn (not each refused in turn), and the admins are told in words, once until a line gets through.
            error, wait = e, min(REFUSED_ANNOUNCEMENT_WAIT * 2**item.attempts, float(RETRY_AFTER_REFUSAL))
            self._outbox_held_until = time.monotonic() + wait
            if channel not in self._refusing:
                self._refusing.add(channel)
                self.tell_admins(
                    f"I couldn't announce a change to the schedule in <#{channel}>: {e}. The change is saved; "
                    "its announcement, and any after it, go out once I can post there (I keep trying for over an hour)."
                )
        else:
            outbox.done(self.store, item)
            self._refusing.discard(channel)
            return
        if outbox.retry(self.store, item, time.time() + wait, str(error)):
            log.warning("could not %s yet: %s", what, error)
        else:
            log.error("could not %s, and gave up after %d tries: %s", what, outbox.MAX_ATTEMPTS, error)

    def _announced(self, channel: str, item: outbox.Item) -> bool:
        """Is the announcement already in `channel` (an earlier try that Slack took, then no answer)?
        When the channel cannot be read at all, no: it is posted (again); when Slack fails to
        answer for now, that is raised, and the line waits."""
        key = _announcement_key(item)
        try:
            found = self.transport.find_message(
                channel, item.created_at - 600, blocks.ANNOUNCE_EVENT, lambda payload: payload == key
            )
        except (RateLimited, Unreachable):
            raise  # the line waits its turn, as a post held off by Slack does
        except Rejected as e:  # the channel cannot be read at all (a scope): post, rather than lose it
            log.warning("could not look for an earlier announcement in %s: %s", channel, e)
            return False
        # Uncertain (a 500, a timeout) passes: raised, so the line is tried again later, looking first.
        return found is not None

    def refresh_post(self, week: Week) -> bool:
        """Bring the week's post, if it is out, up to date with the database; raises Rejected or Uncertain.

        False while the post is being sent: it may have been planned before the latest change, so
        it is updated once it is out.

        Planned afresh on every try: the outbox's retry of an update held off by a rate limit must
        not put back what a later change (a withdrawal) has undone. One sender a process sends
        the outbox, so a week's updates take turns.
        """
        channel = self.settings.channel
        if not channel:
            return True
        sent = weekly.posted(self.store, channel, week)
        if sent is None:
            if weekly.post_in_flight(self.store, channel, week):
                return False
            sent = weekly.posted(self.store, channel, week)  # recorded between the two looks?
            if sent is None:
                return True  # not out: whenever it is, it is planned from the database as it is then
        post = weekly.plan(self.store, self.group, week, self.settings.focus_tag, channel, self.clock())
        if post is not None:
            self.transport.update(sent, post)
            weekly.features(self.store, channel, week, post.paper)  # the rotation counts what the post shows
        return True

    def tell_admins(self, text: str) -> None:
        """A direct message to each of PAPERBOT_ADMINS (the operator's alarm bell)."""
        for admin in sorted(self.settings.admins):
            try:
                call(self.client.chat_postMessage, channel=admin, text=text)
            except (Rejected, Uncertain) as e:
                log.warning("could not tell %s: %s", admin, e)

    # -- App Home --------------------------------------------------------------

    def home(self, user: str, notice: Notice | None = None) -> Home:
        now = self.clock()
        coming = signups.schedule(self.store, self.group, now)[:12]
        upcoming, _ = signups.mine(self.store, self.group, now, user)
        waiting = [
            PaperEntry(p, Button("Sign up", f"signup {p.number}"))
            for p in signups.waiting_papers(self.store, 20, self.settings.focus_tag)
        ]
        return Home(user, coming, upcoming, waiting, notice)

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

    def tell_directly(self, user: str, message: dict) -> None:
        """A direct message from the app (its Messages tab)."""
        try:
            call(self.answers.chat_postMessage, channel=user, **message)
        except (Rejected, Uncertain) as e:
            log.warning("could not tell %s directly: %s", user, e)


#: Slack's refusals of PAPERBOT_CHANNEL itself, as opposed to its passing failures.
CHANNEL_REFUSALS = ("channel_not_found", "not_in_channel")


def _announcement_key(item: outbox.Item) -> dict:
    """What the announcement's metadata says of its outbox row, to find it again."""
    return {"outbox": item.id, "queued": round(item.created_at, 3)}


def build_app(bot: SlackBot) -> App:
    """The Bolt app with every listener registered."""
    from bot.slack.listeners import actions, events, others, views
    from bot.slack.listeners import commands as command_listeners

    settings = bot.settings
    bolt_log = logging.getLogger("bot.slack.bolt")
    if not bolt_log.filters:
        # Bolt reads SLACK_BOT_TOKEN from the environment even when handed a client, then warns; and it
        # quotes a whole unsigned body in the log (serve.wsgi logs one line of its own instead).
        bolt_log.addFilter(
            lambda record: (
                not record.getMessage().startswith("Invalid request signature detected")
                and "will be unused" not in record.getMessage()
            )
        )
    app = App(
        client=bot.client,
        signing_secret=settings.signing_secret or "",
        # The listener runs in the request's thread and the reply leaves when it
        # returns; Bolt's default would poll for ack() every 10 ms instead.
        # Anything slow after the reply goes to SlackBot.later().
        process_before_response=True,
        request_verification_enabled=not settings.socket_mode,
        logger=bolt_log,
    )

    command_listeners.register(app, bot)
    actions.register(app, bot)
    views.register(app, bot)
    events.register(app, bot)
    others.register(app, bot)  # last: the first listener that matches runs

    @app.error
    def on_error(error, body, logger):  # Bolt calls this for anything a listener did not catch
        logger.exception(
            "unhandled error for %s", (body or {}).get("type") or (body or {}).get("command"), exc_info=error
        )

    return app
