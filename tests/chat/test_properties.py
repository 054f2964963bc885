"""Any text a user types gets a reply: never an exception, never a search-engine error, always valid Block Kit."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.chat import commands
from bot.chat.commands import VERBS as DECLARED
from bot.chat.context import Context
from bot.chat.replies import AddForm
from bot.console.render import render
from bot.schedule.signups import Member
from bot.slack import blocks
from bot.slack.listeners.commands import from_slack
from tests.support.clock import TZ, at
from tests.support.slack_standin import check_message

VERBS = list(DECLARED)
words = st.one_of(
    st.sampled_from(
        [
            "7",
            "#7",
            "29",
            "streaming-diloco",
            "next",
            "2026-12-10",
            "2026-02-30",
            "@U2",
            "<@U2|ada>",
            "parallelism-dp",
            "数据并行",
            "并",
            '"',
            "*",
            "AND",
            "NOT",
            "(",
            ")",
            "--page",
            "0",
            "99999999999",
            "&amp;",
            "<!channel>",
            "\u200b",
            "ＧＰＵ",
            "-",
            "{title}:",
        ]
    ),
    st.text(max_size=30),
)
lines = st.builds(
    lambda verb, args, slash: ("/paper " if slash else "") + " ".join([verb, *args]),
    st.one_of(st.sampled_from(VERBS), st.text(max_size=10)),
    st.lists(words, max_size=5),
    st.booleans(),
)


@pytest.fixture(scope="module")
def ctx_factory(tmp_path_factory):
    from bot.catalog.queries import open_store

    store = open_store(tmp_path_factory.mktemp("props") / "paperbot.db")
    group = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))

    def make(user: str, admin: bool) -> Context:
        return Context(store, group, Member(user, lambda: admin), at("2026-12-02 10:00"))

    yield make
    store.close()


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=lines, admin=st.booleans(), user=st.sampled_from(["U1", "U2", "UADMIN"]))
def test_every_line_gets_a_valid_reply(ctx_factory, line, admin, user):
    answer = commands.run(ctx_factory(user, admin), from_slack(line))
    assert render(answer.reply).strip()
    if not isinstance(answer.reply, AddForm):
        message = blocks.message(answer.reply)
        check_message(message)
        assert message["text"].strip()


@given(st.text(max_size=300))
def test_from_slack_never_fails(text):
    assert isinstance(from_slack(text), str)


@pytest.mark.parametrize(
    "slack_text, typed",
    [
        ("assign <@U2|ada> 7 next", "assign @U2 7 next"),
        ("assign <@U2> 7", "assign @U2 7"),
        ("assign <@U2|ada>13 next", "assign @U2 13 next"),  # no space typed after the mention
        ("search a &amp; b &lt;c&gt;", "search a & b <c>"),
        ("search <https://arxiv.org/abs/1|arxiv.org/abs/1>", "search https://arxiv.org/abs/1"),
        ("tag <#C1|papers>", "tag #papers"),
    ],
)
def test_slack_escaped_text_is_read_as_typed(slack_text, typed):
    assert from_slack(slack_text) == typed


@pytest.mark.parametrize(
    "line, verb, args",
    [
        ("/paper tag x", "tag", "x"),
        ("tag x", "tag", "x"),
        ("/paper", "", ""),
        ("/PAPER   SHOW  7 ", "show", "7"),
        ("/papers", "/papers", ""),
        ("", "", ""),
    ],
)
def test_split(line, verb, args):
    assert commands.split(line) == (verb, args)
