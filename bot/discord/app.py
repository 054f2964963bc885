"""What Discord's interactions get: `/paper` commands, button clicks and autocomplete, answered.

    bot = DiscordBot(settings, store)
    response = bot.handle(interaction, arrived)   # the interaction response, within Discord's 3 s

A command runs in a worker; its answer goes back as the HTTP response when it is ready within
DEFER_AFTER seconds of the request's arrival (type 4, or 7 for a pager), else the response defers
(type 5, or 6) and the answer replaces `@original` through the REST API when it is ready.
Replies are ephemeral. Announcements and the post's updates go through the core's outbox.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime

from bot.announcing import changes as announce
from bot.announcing.sender import OutboxSender
from bot.catalog import queries as catalog
from bot.catalog.papers import InvalidPaper
from bot.chat import commands, paper_commands
from bot.chat.context import Context, Place, Platform
from bot.chat.registry import PAPER, TAG, kinds_of
from bot.chat.replies import AddForm, EditForm, Notice, Stats
from bot.delivery.answer_time import Replies
from bot.delivery.background import Background
from bot.delivery.sending import RateLimited, Rejected, Uncertain
from bot.discord import definition, discussion, door, render
from bot.discord.rest import FILES, Rest
from bot.discord.settings import DiscordSettings
from bot.discord.transport import NO_DMS, DiscordPoster, DiscordTransport
from bot.rich_text import Code, Mention, PaperRef, Text, command_code, text
from bot.schedule import groups, notes, questions
from bot.schedule.signups import Change, Member, Refusal
from bot.store.connection import Busy, DiskFull, Store, Unavailable
from bot.web import chart_png, charts, feeds, member_names
from bot.web.http_door import Refused

log = logging.getLogger(__name__)

#: Interaction response types.
PONG, MESSAGE, DEFERRED_MESSAGE, DEFERRED_UPDATE, UPDATE, CHOICES, MODAL_FORM = 1, 4, 5, 6, 7, 8, 9
#: The key under which a worker hands back a modal instead of a message.
MODAL = "modal"
EPHEMERAL = 1 << 6
MANAGE_GUILD, ADMINISTRATOR = 1 << 5, 1 << 3
#: An answer not ready this long after the request came in is deferred: Discord allows 3 seconds.
DEFER_AFTER = 2.0
#: Discord's error code for an interaction's answer it does not know (yet).
UNKNOWN_WEBHOOK = "10015"
CHOICES_MAX = 25
#: A deferred answer that Discord rate-limits is tried once more after a wait this short at most.
ANSWER_RETRY_SECONDS = 5.0
#: How long Discord may take to say which server a channel is in, or whether a user is a member of it.
HOME_TIMEOUT = 2.0
#: While Discord has not said which server PAPERBOT_CHANNEL is in, it is asked again this often at most.
HOME_ASK_AGAIN = 30.0
#: Whether a user who writes directly is a member of the install's server is asked again after this.
MEMBER_KNOWN_FOR = 600.0
MEMBERS_KEPT = 10_000


def read_member(word: str) -> str | None:
    """The member a word of a command names: `<@123…>`, `<@!123…>` or the bare id."""
    w = word.strip()
    if w.startswith("<@") and w.endswith(">"):
        w = w[2:-1].lstrip("!")
    return w if render.is_discord_user(w) else None


PLATFORM = Platform(read_member, member_example="123456789012345678", tags_page=render.TAGS_PAGE, name="discord")


def _saved(save: Callable[[], catalog.Paper], done: str, again: str) -> Notice:
    """The paper `save()` added or saved from a submitted form, `done` ("Added", "Saved"); or why
    not, in one line naming the command (`again`) that opens the form again."""
    try:
        paper = save()
    except Refusal as refusal:
        return Notice(refusal.text, ok=False)
    except Busy:
        return Notice(text(commands.BUSY), ok=False)
    except DiskFull:
        return Notice(text(commands.DISK_FULL), ok=False)
    except Unavailable:
        return Notice(text(commands.AWAY), ok=False)
    except InvalidPaper as e:
        why = text(str(e), f" Nothing was {done.lower()}: ", command_code(again), " opens the form again.")
        return Notice(why, ok=False)
    return Notice(text(done, " ", PaperRef(paper), " (", Code(paper.id), ")."))


class DiscordBot:
    def __init__(
        self,
        settings: DiscordSettings,
        store: Store,
        *,
        clock: Callable[[], datetime] | None = None,
        rest: Rest | None = None,
        answers: Rest | None = None,
        background: Background | None = None,
    ):
        """`rest`, `answers`: the REST clients, when a hosted install's servers share them (Discord's
        rate limits are the bot's, whichever server a call is for); else the bot's own. `background`:
        the threads that answer, shared with other servers' bots (threads, and the database connections
        each holds, do not grow with the servers); its owner closes it."""
        self.settings = settings
        self.store = store
        self.group = settings.group
        self.env = groups.from_settings(settings)
        self.clock = clock or settings.now
        self.rest = rest or Rest(settings.api_url, settings.token)
        self.answers = answers or Rest(settings.api_url, settings.token, timeout=5)
        # A hosted install's server is named in the buttons of direct messages: a click there carries no server.
        self.transport = DiscordTransport(self.rest, settings.admins, settings.guild if settings.hosted else None)
        self.app_id: str | None = None
        self._home: str | None = None  # the server of PAPERBOT_CHANNEL, once Discord said it
        self._home_again = 0.0  # when to ask Discord for it again, while it is not known
        self._members: dict[str, tuple[bool, float]] = {}  # member of the install's server? until when
        self._names: member_names.Ask | None = None  # members' names for pictures, made when first drawn
        self.replies = Replies()
        self._stopping = threading.Event()
        # "work" answers an interaction, "answer" sends what comes after it; Gateway interactions each
        # wait for their worker's answer in "gateway"; "channel" sends the outbox.
        self._own_background = background is None
        self.background = background or Background({"work": 8, "answer": 4, "gateway": 8, "channel": 2})
        # The channel's lane is the bot's own even when answers share threads: the outbox waits out its
        # channel's quiet moments and Retry-After there, which must hold up no other server's.
        self._channel = self.background if background is None else Background({"channel": 2})
        self.outbox = OutboxSender(
            store, DiscordPoster(self), lambda fn, *a: self.later(fn, *a, lane="channel"), self.replies, self._stopping
        )

    # -- where -----------------------------------------------------------------------

    def home_server(self) -> str | None:
        """The install's own server: DISCORD_GUILD, else the server of PAPERBOT_CHANNEL, asked of Discord
        once (at start, by check_channel; again, every HOME_ASK_AGAIN, until it answers). None while it is not known."""
        if self.settings.guild:
            return self.settings.guild
        channel = self.settings.channel
        # With both platforms, PAPERBOT_CHANNEL may be group 1's Slack channel: Discord has no server for it.
        if (
            self._home is None
            and channel
            and self.settings.is_channel(channel)
            and time.monotonic() >= self._home_again
        ):
            self._home_again = time.monotonic() + HOME_ASK_AGAIN  # not a slow call on every request meanwhile
            try:
                found = self.rest.call("GET", f"/channels/{channel}", timeout=HOME_TIMEOUT)
            except (Rejected, Uncertain) as e:
                log.warning("could not learn the server of PAPERBOT_CHANNEL (%s): requests are refused until then", e)
                return None
            self._home = found.get("guild_id")
        return self._home

    def place(self, interaction: dict) -> Place:
        """Where `interaction` comes from. A direct message has no server: it is taken as the install's
        from a member of the install's server (or PAPERBOT_ADMINS), asked of Discord once a while."""
        home = self.home_server()
        guild = interaction.get("guild_id")
        if guild:
            if home is None and (self._from_a_group_channel(interaction) or self._from_an_install_admin(interaction)):
                # Discord signed it: a group's channel is in that server only, and PAPERBOT_ADMINS name the
                # install's own people, so where they first use paperbot is the install's server.
                self._home = home = str(guild)
                log.info("the install's server is %s", home)
            return Place(str(guild), home)
        user = door.user_of(interaction) or ""
        return Place(None, home, stranger=not self._at_home(home, user))

    def _from_a_group_channel(self, interaction: dict) -> bool:
        """Was `interaction` sent from PAPERBOT_CHANNEL or a chat group's channel? Learning the install's
        server so needs no REST route: Discord may not have answered `GET /channels/{id}` yet."""
        channel = interaction.get("channel_id") or (interaction.get("channel") or {}).get("id")
        return groups.of_channel(self.store, self.env, channel) is not None

    def _from_an_install_admin(self, interaction: dict) -> bool:
        """Sent by one of PAPERBOT_ADMINS: with both platforms and group 1 on Slack, no Discord channel
        is known until an admin starts a group on Discord."""
        return (door.user_of(interaction) or "") in self.settings.admins

    def _at_home(self, home: str | None, user: str) -> bool:
        if user in self.settings.admins:
            return True
        if home is None or not render.is_discord_user(user):
            return False
        known = self._members.get(user)
        if known is not None and known[1] > time.monotonic():
            return known[0]
        try:
            self.rest.call("GET", f"/guilds/{home}/members/{user}", timeout=HOME_TIMEOUT)
            member = True
        except Rejected:  # 10007: not a member of the install's server
            member = False
        except Uncertain:
            return False
        if len(self._members) > MEMBERS_KEPT:  # a bound on what strangers' messages may make it hold
            self._members.clear()
        self._members[user] = (member, time.monotonic() + MEMBER_KNOWN_FOR)
        return member

    # -- who -------------------------------------------------------------------------

    def context(self, interaction: dict) -> Context:
        user = door.user_of(interaction) or ""
        member = interaction.get("member") or {}
        try:
            permissions = int(member.get("permissions") or 0)
        except (TypeError, ValueError):
            permissions = 0
        admins = self.settings.admins

        def is_admin() -> bool:
            return user in admins or bool(permissions & (MANAGE_GUILD | ADMINISTRATOR))

        resolved = ((interaction.get("data") or {}).get("resolved") or {}).get("users") or {}

        def vet(presenter: str) -> None:
            known = resolved.get(presenter)
            if presenter == self.app_id or (isinstance(known, dict) and known.get("bot")):
                raise Refusal(Mention(presenter), " is a bot and cannot present. Name a member of the group.")

        s = self.settings
        return Context(
            self.store,
            self.group,
            Member(user, is_admin),
            self.clock(),
            s.focus_tag,
            s.channel,
            self.queue_change,
            vet,
            PLATFORM,
            rotation=s.rotation,
            lookups=s.lookups,
            tell=self.tell_later,
            notify=self.notes_later,
            public_url=s.public_url,
            # The channel it was typed in; a direct message (no server) is no group's.
            where=(interaction.get("channel_id") or (interaction.get("channel") or {}).get("id"))
            if interaction.get("guild_id")
            else None,
            env=self.env,
            place=self.place(interaction),
        )

    def queue_change(self, change: Change) -> None:
        if self.settings.channel:
            announce.queue(self.store, self.settings.channel, change)

    # -- interactions ------------------------------------------------------------------

    def handle(self, interaction: dict, arrived: float | None = None) -> dict:
        """The response to a verified interaction (door.parse checked its shape)."""
        kind = interaction["type"]
        if kind == door.PING:
            return {"type": PONG}
        if kind == door.AUTOCOMPLETE:  # it changes nothing, but another server learns nothing of the catalog
            at_home = not self.place(interaction).foreign
            return {"type": CHOICES, "data": {"choices": self.choices(interaction["data"]) if at_home else []}}
        update = False
        line: str | None
        if kind == door.COMMAND:
            if interaction["data"].get("name") != "paper":
                return self._private(Notice(text("I only know ", Code("/paper"), "."), ok=False))
            try:
                line, weekly = definition.line_of(interaction["data"]), False
            except definition.UnknownSubcommand as e:
                return self._private(Notice(e.said, ok=False))
        elif kind == door.COMPONENT:
            asking = discussion.date_of(interaction["data"]["custom_id"])
            if asking is not None:  # the post's Ask a question: its form
                return {"type": MODAL_FORM, "data": discussion.ask_form(asking)}
            which, line = render.command_of(interaction["data"]["custom_id"])
            if line is None:
                return self._private(
                    Notice(text("That button is from before a restart: type the command instead."), ok=False)
                )
            weekly, update = which == render.WEEKLY, which == render.PAGE
        else:  # the add form submitted, or a question's
            line, weekly = "", False
            asking = discussion.date_of(interaction["data"].get("custom_id"))
            if asking is not None:
                said = " ".join((render.form_values(interaction["data"]).get(discussion.FIELD) or "").split())
                line = f"ask {asking} {said}" if said else "ask"

        future = self.background.submit(self._answer, interaction, line, weekly, lane="work")
        left = (arrived if arrived is not None else time.monotonic()) + DEFER_AFTER - time.monotonic()
        try:
            body = future.result(timeout=max(left, 0.05))
        except FutureTimeout:
            token = interaction["token"]
            future.add_done_callback(lambda f: self._when_ready(token, f))
            return {"type": DEFERRED_UPDATE} if update else {"type": DEFERRED_MESSAGE, "data": {"flags": EPHEMERAL}}
        if FILES in body:  # files go with an edit of the answer, never in an HTTP response: deferred
            self.later(self._edit_original, interaction["token"], future)
            return {"type": DEFERRED_MESSAGE, "data": {"flags": EPHEMERAL}}
        if MODAL in body:
            return {"type": MODAL_FORM, "data": body[MODAL]}
        if update:
            return {"type": UPDATE, "data": body}
        return {"type": MESSAGE, "data": {**body, "flags": EPHEMERAL}}

    def _answer(self, interaction: dict, line: str, weekly: bool) -> dict:
        """The answer's message body (or {MODAL: the form} for the add form)."""
        try:
            with self.replies.one():
                ctx = self.context(interaction)
                seen = interaction.get("channel") or {}  # the partial channel Discord sends: its name
                if ctx.where is not None and seen.get("id") == ctx.where:
                    self.later(groups.saw_channel_name, self.store, self.env, ctx.where, seen.get("name"))
                if interaction["type"] == door.MODAL_SUBMIT and not line:
                    return render.message(self._submitted(ctx, interaction["data"]))
                if weekly:
                    line = commands.post_button(ctx, line)
                answer = commands.run(ctx, line)
            if answer.wakes_outbox:
                self.wake_outbox()
            if answer.discussion:
                self.discuss()
            if isinstance(answer.reply, EditForm):
                return {MODAL: render.edit_form(answer.reply.paper), "message": render.message(answer.reply)}
            if isinstance(answer.reply, AddForm):
                return self._add_form(ctx, answer.reply)
            if isinstance(answer.reply, Stats):
                return self._with_picture(answer.reply)
            return render.message(answer.reply)
        except Exception:
            log.exception("answering %r failed", line[:80])
            return render.message(Notice(text("Something went wrong while answering that. Try again."), ok=False))

    def _add_form(self, ctx: Context, form: AddForm) -> dict:
        """The add form as the answer: filled in from the look-up of `add <link>` first. A modal can only
        be the first answer, so a look-up that outlasts it (DEFER_AFTER) is answered with the paper
        found and a button that opens the filled-in form (the look-up is kept for it)."""
        if form.lookup is not None:
            filled = paper_commands.fill_add_form(ctx, form)
            if not isinstance(filled, AddForm):
                return render.message(filled)
            return {MODAL: render.add_form(filled), "message": render.message(filled)}
        return {MODAL: render.add_form(form)}

    def _with_picture(self, stats: Stats) -> dict:
        """The history in words, and its picture attached (as the page draws it, names as the page shows
        them); the words alone when the picture cannot be drawn."""
        body = render.message(stats)
        try:
            if self._names is None:
                self._names = feeds.names_of(self.settings)
            ask = self._names
            name = lambda member: member_names.display_name(self.store, member, ask)  # noqa: E731
            return {**body, FILES: [(render.STATS_PNG, chart_png.png(charts.of_history(stats.history, name)))]}
        except Exception:
            log.exception("could not draw the history's picture")
            return body

    def notes_later(self) -> None:
        """Context.notify: the notes a command left, sent once the reply has gone (in the channel's lane: a
        note waiting out the platform holds no reply back)."""
        self.later(self.send_notes, lane="channel")

    def send_notes(self) -> None:
        """Send the direct messages left to send once (a swap's offer, an open slot's call) in the groups
        this bot posts to (bot/schedule/notes.py)."""
        notes.send_due_for(self.store, self.env, PLATFORM.name, self.transport, self.clock(), sleep=self._stopping.wait)

    def tell_later(self, user: str, said: Text) -> None:
        """Tell `user` directly once the answer has gone (commands.Context.tell)."""
        self.later(self.tell_directly, user, said)

    def tell_directly(self, user: str, said: Text) -> None:
        """A direct message to `user` (a suggestion's outcome); for a member who takes none, the admins
        hear it instead, naming them."""
        try:
            channel = self.transport.dm_channel(user)
            self.rest.call("POST", f"/channels/{channel}/messages", render.message(Notice(said)))
        except Rejected as e:
            if e.code != NO_DMS:
                log.warning("could not tell %s directly: %s", user, e)
                return
            self.tell_admins(
                f"{render.who(user)} takes no direct messages from me, so could not hear: " + render.markdown(said)
            )
        except Uncertain as e:
            log.warning("could not tell %s directly: %s", user, e)

    def from_gateway(self, interaction, arrived: float) -> None:
        """An INTERACTION_CREATE from the Gateway: answered through the callback route, in the
        background (the Gateway's reader must not wait for it)."""
        try:
            checked = door.check(interaction)
        except Refused as refusal:  # the Gateway is Discord's own, but nothing here trusts a shape
            log.warning("ignored an interaction from the Gateway of a shape Discord does not send (%s)", refusal)
            return
        self.later(self.answer_callback, checked, arrived, lane="gateway")

    def answer_callback(self, interaction: dict, arrived: float) -> None:
        """Answer a checked interaction through the callback route (the Gateway's way), in this thread."""
        response = self.handle(interaction, arrived)
        path = f"/interactions/{interaction['id']}/{interaction['token']}/callback"
        try:
            self.answers.call("POST", path, response, auth=False)
        except (Rejected, Uncertain) as e:
            log.warning("could not answer an interaction: %s", e)

    def _submitted(self, ctx: Context, data: dict) -> Notice:
        """The add (or edit) form, filled in: the paper added (or saved), or why not, in one line."""
        form = render.edited(data.get("custom_id"))
        if form is not None:
            number, was = form
            values = render.form_values(data)
            return _saved(lambda: paper_commands.save_form(ctx, number, values, was), "Saved", f"edit {number}")
        if data.get("custom_id") != render.ADD_FORM:
            return Notice(text("That form is not paperbot's any more. Try the command again."), ok=False)
        return _saved(lambda: paper_commands.add_paper(ctx, render.added_values(data)), "Added", "add")

    def _when_ready(self, token: str, future: Future) -> None:
        try:
            self.later(self._edit_original, token, future)
        except RuntimeError:  # stopping: the pools take nothing more
            log.warning("stopped before a deferred answer was sent")

    def _edit_original(self, token: str, future: Future) -> None:
        body = future.result()
        if MODAL in body:  # a modal can only be the first answer: the paper found, and a button to the form
            body = body.get("message") or render.message(AddForm())
        path = f"/webhooks/{self.app_id}/{token}/messages/@original"
        for last in (False, True):
            try:
                self._edit_when_deferred(path, body)
                return
            except RateLimited as e:  # the member is waiting: one more try, if Discord asks for a short wait
                if last or e.retry_after > ANSWER_RETRY_SECONDS or self._stopping.wait(e.retry_after):
                    log.warning("could not send a deferred answer: %s", e)
                    return
            except (Rejected, Uncertain) as e:  # an edit twice is harmless, but a 5xx may well repeat
                log.warning("could not send a deferred answer: %s", e)
                return

    def _edit_when_deferred(self, path: str, body: dict) -> None:
        """Edit the answer; while Discord has not yet taken the deferral that went as the HTTP response
        (Unknown Webhook), try again a few times a moment later."""
        for wait in (0.2, 0.5, 1.0, None):
            try:
                self.answers.call("PATCH", path, body, auth=False)
                return
            except Rejected as e:
                if e.code != UNKNOWN_WEBHOOK or wait is None or self._stopping.wait(wait):
                    raise

    def _private(self, notice: Notice) -> dict:
        return {"type": MESSAGE, "data": {**render.message(notice), "flags": EPHEMERAL}}

    def choices(self, data: dict) -> list[dict]:
        """Up to 25 autocomplete choices for a `paper` or `tag` option, from the catalog."""
        found = definition.focused(data)
        if found is None:
            return []
        _, option, typed = found
        typed = typed.strip()
        kind = kinds_of(commands.VERBS).get(option)
        if kind is TAG:
            folded = catalog.fold_tag(typed) if typed else ""
            tags = catalog.tag_counts(self.store)
            starts = [t for t in tags if t[0].startswith(folded)]
            inside = [t for t in tags if folded in t[0] and not t[0].startswith(folded)]
            return [{"name": f"{t} ({n})"[:100], "value": t[:100]} for t, n in (starts + inside)[:CHOICES_MAX]]
        if kind is not PAPER:
            return []
        papers: list = []
        if not typed:
            for p in catalog.all_papers(self.store, batch=CHOICES_MAX):
                papers.append(p)
                if len(papers) == CHOICES_MAX:
                    break
        else:
            exact = catalog.find(self.store, typed.lstrip("#＃"), with_tags=False)
            if exact is not None:
                papers.append(exact)
            page = catalog.search(self.store, typed, 1)
            if page is not None:
                papers += [p for p in page.papers if exact is None or p.number != exact.number]
        return [{"name": f"#{p.number} {p.title}"[:100], "value": str(p.number)} for p in papers[:CHOICES_MAX]]

    # -- background ----------------------------------------------------------------------

    def later(self, fn: Callable, *args, lane: str = "answer") -> Future:
        """Run `fn` in `lane` after the answer; failures are logged, never shown as tracebacks."""
        return (self._channel if lane == "channel" else self.background).later(fn, *args, lane=lane)

    def wake_outbox(self) -> None:
        self.outbox.wake()

    def discuss(self) -> None:
        """Post what is due in the meetings' threads (a question just asked), in the channel's lane."""
        chosen = groups.posting(self.store, self.env, PLATFORM.name)
        self.later(questions.discuss, self.store, chosen, lambda g: self.transport, self.clock(), lane="channel")

    def tell_admins(self, message: str) -> None:
        for admin in sorted(self.settings.admins):
            try:
                channel = self.transport.dm_channel(admin)
                self.rest.call(
                    "POST",
                    f"/channels/{channel}/messages",
                    {"content": message[:2000], "allowed_mentions": render.NOBODY},
                )
            except (Rejected, Uncertain) as e:
                log.warning("could not tell %s: %s", admin, e)

    def check_channel(self) -> None:
        """Say at start, in the log, when Discord will refuse PAPERBOT_CHANNEL (a mistyped id, a channel
        the bot cannot see or read): not at the first post."""
        channel = self.settings.channel
        if not channel:
            return
        self.home_server()
        try:
            self.rest.call("GET", f"/channels/{channel}/messages", query={"limit": 1}, timeout=10)
        except Rejected as e:
            log.warning("PAPERBOT_CHANNEL %s: %s; the weekly post and announcements wait until it is fixed", channel, e)
        except Uncertain:
            pass  # Discord did not answer now: the post will tell, if it comes to that

    def close(self, timeout: float = 5) -> bool:
        """Stop: what is under way gets `timeout` seconds; True when nothing is left running."""
        self._stopping.set()
        if not self._own_background:  # its owner closes the answers' threads
            return self._channel.close(timeout)
        return self.background.close(timeout)
