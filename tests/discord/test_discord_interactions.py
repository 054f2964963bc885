"""The Discord adapter in process: the door, rendering within Discord's limits, autocomplete,
deferred answers, admins, reminders by DM; the stand-in as Discord's REST API."""

from __future__ import annotations

import io
import json
import sqlite3
import threading
import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.catalog.papers import Paper
from bot.chat.replies import Help, HelpLine, Notice, PaperCard, PaperList, Schedule, TagCounts, WeekCard
from bot.delivery import sending as delivery
from bot.discord import render
from bot.discord.door import DiscordDoor
from bot.rich_text import Button, text
from bot.schedule import reminders, weekly
from bot.schedule.rows import TalkWeek, WeeklyPost
from bot.web.http_door import Refused
from tests.support.discord_group import ADMIN, CHANNEL, MEMBER, SHY, respond
from tests.support.discord_standin import (
    PUBLIC_KEY,
    check_message,
    click,
    ping,
    pings,
    sign,
    slash,
)

TZ = ZoneInfo("Europe/Berlin")


# -- the door --------------------------------------------------------------------------


def environ(body: bytes, headers: dict) -> dict:
    env = {"CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body), "REQUEST_METHOD": "POST"}
    for k, v in headers.items():
        env["HTTP_" + k.upper().replace("-", "_")] = v
    return env


def test_the_door_admits_what_discord_signed_once():
    door = DiscordDoor(PUBLIC_KEY)
    body = json.dumps(slash("week", MEMBER)).encode()
    headers = sign(body)
    assert door.admit(environ(body, headers))["type"] == 2
    with pytest.raises(Refused) as replay:
        door.admit(environ(body, headers))
    assert replay.value.status == 401 and "replay" in str(replay.value)


@pytest.mark.parametrize(
    "change",
    [
        lambda h: h.pop("X-Signature-Ed25519"),
        lambda h: h.pop("X-Signature-Timestamp"),
        lambda h: h.update({"X-Signature-Ed25519": "zz" * 64}),
        lambda h: h.update(
            {
                "X-Signature-Ed25519": h["X-Signature-Ed25519"][:-1]
                + "0123456789abcdef"[("0123456789abcdef".index(h["X-Signature-Ed25519"][-1]) + 1) % 16]
            }
        ),
        lambda h: h.update({"X-Signature-Timestamp": str(int(time.time()) - 3600)}),
        lambda h: h.update({"X-Signature-Timestamp": "１２３"}),
    ],
)
def test_the_door_refuses_a_bad_signature_with_401(change):
    body = json.dumps(ping()).encode()
    headers = sign(body)
    change(headers)
    with pytest.raises(Refused) as e:
        DiscordDoor(PUBLIC_KEY).admit(environ(body, headers))
    assert e.value.status == 401


def test_a_stale_but_validly_signed_request_is_refused():
    body = json.dumps(ping()).encode()
    headers = sign(body, timestamp=str(int(time.time()) - 600))
    with pytest.raises(Refused) as e:
        DiscordDoor(PUBLIC_KEY).admit(environ(body, headers))
    assert e.value.status == 401 and "too old" in str(e.value)


@pytest.mark.parametrize(
    "body",
    [
        b"[1, 2]",
        b'{"type": "2"}',
        b'{"type": 99}',
        json.dumps({**slash("week", MEMBER), "member": {"user": {"id": "ada"}}}).encode(),
        json.dumps({**slash("week", MEMBER), "data": []}).encode(),
        json.dumps({**slash("week", MEMBER), "token": "a b"}).encode(),
        json.dumps({**click("r0:week", MEMBER), "data": {"custom_id": 7}}).encode(),
        json.dumps({**slash("week", MEMBER), "member": {"user": {"id": MEMBER}, "permissions": 8}}).encode(),
        b"\xff\xfe",
    ],
)
def test_a_signed_body_of_a_shape_discord_does_not_send_is_a_400(body):
    with pytest.raises(Refused) as e:
        DiscordDoor(PUBLIC_KEY).admit(environ(body, sign(body)))
    assert e.value.status == 400


# -- rendering within Discord's limits -------------------------------------------------------


def chinese_papers(n: int, title_len: int = 250) -> list[Paper]:
    return [
        Paper(
            i,
            f"paper-{i}-" + "x" * 60,
            ("数据并行训练的通信压缩" * 40)[:title_len] + " *_`|>#-[]",
            "数据并行与流水线并行的结合，以及梯度压缩对收敛的影响。" * 30,
            f"https://arxiv.org/abs/2501.{i:05d}",
            ("parallelism-dp", "通信"),
        )
        for i in range(1, n + 1)
    ]


@pytest.mark.parametrize("title_len", [20, 120, 250])
def test_a_40_paper_page_with_chinese_text_fits_discord_and_shows_every_paper(title_len):
    papers = chinese_papers(40, title_len)
    reply = PaperList(
        text("40 papers tagged ", "parallelism-dp"),
        papers,
        text("Sign up: ", "x"),
        [Button("◀ Previous 40", "tag x --page 1"), Button("Next 40 ▶", "tag x --page 3")],
    )
    message = render.message(reply)
    check_message(message)
    shown = "\n".join(e["description"] for e in message["embeds"])
    assert all(f"**#{p.number}**" in shown for p in papers)
    assert pings(message) == set()


def test_every_reply_renders_within_discords_limits():
    week = datetime(2026, 12, 7, 9, tzinfo=TZ)
    from bot.calendar import Week

    w = Week.from_key("2026-W50")
    papers = chinese_papers(3)
    line = TalkWeek(w, week + timedelta(days=3, hours=7), papers[0], MEMBER)
    replies = [
        Notice(text("x" * 3000), ok=False, buttons=[Button(str(i), f"show {i}") for i in range(30)]),
        PaperCard(papers[0], [line] * 30, [line] * 30, Button("Sign up", "signup 1")),
        WeekCard(line, featured=True, posted=True, button=Button("Sign up", "signup 1 2026-12-07")),
        Schedule(text("Coming weeks"), [line] * 200, text("footer")),
        TagCounts([(f"tag-{'x' * 40}-{i}", i) for i in range(100)], 1000, 0, [Button("Next", "tags --page 2")]),
        Help([HelpLine("signup <paper> [<date>]", "present a paper " * 5, "signup 7", False)] * 40),
    ]
    for reply in replies:
        message = render.message(reply)
        check_message(message)
        assert message["allowed_mentions"] == {"parse": []}
    post = WeeklyPost(w, papers[0], line.meeting, None)
    check_message(render.weekly_post(post))


def test_a_long_command_still_fits_a_custom_id():
    command = "search " + "数据并行 " * 40 + "--page 2"
    [row] = render.rows([Button("Next", command)], render.PAGE)
    cid = row["components"][0]["custom_id"]
    assert len(cid) <= 100 and render.command_of(cid) == (render.PAGE, command)


def test_member_text_is_escaped_for_markdown():
    assert render.escape("**x** _y_ ~z~ `c` |s| > q # h - l [a](b) \\") == (
        "\\*\\*x\\*\\* \\_y\\_ \\~z\\~ \\`c\\` \\|s\\| \\> q \\# h \\- l \\[a\\](b) \\\\"
    )
    assert render.escape("@everyone <@123>") == "@\u200beveryone \\<@123\\>"


# -- commands, clicks, autocomplete ---------------------------------------------------------


def test_a_ping_is_ponged_and_autocomplete_offers_papers_and_tags(make_bot, discord):
    bot = make_bot()
    assert bot.handle(ping()) == {"type": 1}
    response = respond(bot, discord, slash("show", MEMBER, focused="paper", paper="diloco"))
    choices = response["data"]["choices"]
    assert response["type"] == 8 and 0 < len(choices) <= 25
    assert any("DiLoCo" in c["name"] for c in choices) and all(c["value"].isdigit() for c in choices)
    everything = respond(bot, discord, slash("show", MEMBER, focused="paper", paper=""))["data"]["choices"]
    assert len(everything) == 25
    by_number = respond(bot, discord, slash("show", MEMBER, focused="paper", paper="29"))["data"]["choices"]
    assert by_number[0]["value"] == "29"
    tags = respond(bot, discord, slash("tag", MEMBER, focused="tag", tag="parallel"))["data"]["choices"]
    assert tags and all("parallel" in t["value"] for t in tags)


def test_autocomplete_finds_a_chinese_title(make_bot, discord, tmp_path):
    bot = make_bot()
    from bot.catalog import queries as catalog

    catalog.add(bot.store, catalog.validate({"title": "大规模数据并行训练", "tags": ["通信"]}, new=True))
    choices = respond(bot, discord, slash("show", MEMBER, focused="paper", paper="数据并行"))["data"]["choices"]
    assert any(c["name"].endswith("大规模数据并行训练") for c in choices)


def test_admin_commands_follow_admins_and_server_permissions(make_bot, discord):
    bot = make_bot()
    refused = respond(bot, discord, slash("skip", MEMBER, date="next"))["data"]
    assert "Only admins" in refused["content"]
    manager = respond(bot, discord, slash("skip", MEMBER, permissions=1 << 5, date="next"))["data"]
    assert "No meeting" in manager["content"]
    assigned = respond(bot, discord, slash("assign", ADMIN, user=MEMBER, paper="7"))["data"]
    assert f"<@{MEMBER}> presents" in assigned["content"] and pings(assigned) == set()


def test_a_pager_click_updates_the_message(make_bot, discord):
    bot = make_bot()
    from bot.catalog import queries as catalog

    for i in range(45):
        catalog.add(bot.store, catalog.validate({"title": f"Bulk paper {i}", "tags": ["bulk"]}, new=True))
    first = respond(bot, discord, slash("tag", MEMBER, tag="bulk"))["data"]
    assert "45 papers tagged" in first["content"] and first["content"].count("(1–40)") == 1
    [row] = first["components"]
    [more] = row["components"]
    assert more["label"].startswith("Next")
    second = respond(bot, discord, click(more["custom_id"], MEMBER, first))
    assert second["type"] == 7 and "(41–45)" in second["data"]["content"]
    labels = [b["label"] for r in second["data"]["components"] for b in r["components"]]
    assert labels == ["◀ Previous 40"]


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_an_answer_that_waits_for_the_database_is_deferred_then_edited(make_bot, discord, tmp_path):
    bot = make_bot()
    holder = sqlite3.connect(tmp_path / "paperbot.db", timeout=10, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the catalog until the bot has deferred
    interaction = slash("signup", MEMBER, paper="7")
    started = time.monotonic()
    response = respond(bot, discord, interaction)
    # Deferred while the write waits, well before the store's 15 s busy timeout; Discord's 3 s on a
    # loaded machine is measured by bench/discord_bench.py.
    assert time.monotonic() - started < 10
    assert response == {"type": 5, "data": {"flags": 64}}
    holder.rollback()
    assert discord.wait_for(lambda d: "signed up" in (d.original(interaction["token"]) or {}).get("content", ""), 10)


# -- reminders and the weekly post ---------------------------------------------------------


def test_a_reminder_is_a_dm_and_a_member_without_dms_is_named_to_the_admins_once(make_bot, discord):
    bot = make_bot()
    group = bot.group
    now = datetime.now(TZ)
    week = group.week_of(now).plus(1)
    respond(bot, discord, slash("assign", ADMIN, user=MEMBER, paper="3", date=week.monday.isoformat()))
    respond(bot, discord, slash("assign", ADMIN, user=SHY, paper="4", date=week.plus(1).monday.isoformat()))
    at = group.meeting_of(week.plus(1)) - timedelta(hours=1)
    for _ in range(2):
        sent = reminders.send_due(bot.store, group, bot.transport, at, force=True)
        assert all(s.result.delivered for s in sent)
    member_dm = discord.messages(discord.dm_channel(MEMBER)) if discord.dm_channel(MEMBER) else []
    assert member_dm == []  # its meeting is over by `at`: only the shy member's is due
    admin_dm = discord.messages(discord.dm_channel(ADMIN))
    assert len(admin_dm) == 1 and f"<@{SHY}>" in admin_dm[0]["content"] and pings(admin_dm[0]) == set()


def test_a_weekly_post_after_a_lost_answer_is_found_not_posted_again(make_bot, discord):
    bot = make_bot()
    now = bot.group.slot_of(bot.group.coming(datetime.now(TZ)))  # the slot of a meeting still ahead
    discord.fail_next("create_message", accept_then="hang", seconds=3)
    bot.transport.rest.timeout = 0.5
    first = weekly.post_week(bot.store, bot.group, bot.transport, CHANNEL, now, force=True, sleep=lambda s: False)
    assert first.status in ("sent", "found"), first
    assert len(discord.messages(CHANNEL)) == 1
    again = weekly.post_week(bot.store, bot.group, bot.transport, CHANNEL, now, force=True)
    assert again.status == "done" and len(discord.messages(CHANNEL)) == 1


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_rate_limited_post_waits_as_discord_asks(make_bot, discord):
    bot = make_bot()
    discord.fail_next("create_message", 429, retry_after=1.5)
    waits = []

    def sleep(seconds: float) -> bool:  # really waits: hikari's bucket holds the limit on this side too
        waits.append(seconds)
        return threading.Event().wait(seconds)

    at = bot.group.slot_of(bot.group.coming(datetime.now(TZ)))  # the slot of a meeting still ahead
    outcome = weekly.post_week(bot.store, bot.group, bot.transport, CHANNEL, at, force=True, sleep=sleep)
    assert outcome.status == "sent" and len(waits) == 1 and 1.4 <= waits[0] <= 1.5
    assert len(discord.messages(CHANNEL)) == 1 and len(discord.calls_to("create_message")) == 2
    assert delivery.sent_message(bot.store, "post", CHANNEL, outcome.week.key)


def test_add_opens_a_modal_for_admins_and_its_submission_adds_the_paper(make_bot, discord):
    from bot.catalog import queries as catalog
    from tests.support.discord_standin import submit

    bot = make_bot()
    refused = respond(bot, discord, slash("add", MEMBER))
    assert refused["type"] == 4 and "Only admins" in refused["data"]["content"]
    opened = respond(bot, discord, slash("add", ADMIN))
    assert opened["type"] == 9
    form = opened["data"]
    values = {"title": "Loud **paper** @everyone", "url": "https://arxiv.org/abs/2612.00001", "tags": "moe, 通信"}
    added = respond(bot, discord, submit(form, ADMIN, values))["data"]
    assert added["content"].startswith("Added **#") and pings(added) == set()
    paper = catalog.find(bot.store, "https://arxiv.org/abs/2612.00001") or catalog.find(
        bot.store, "loud-paper-everyone"
    )
    assert paper is not None and set(paper.tags) == {"moe", "通信"}
    bad = respond(bot, discord, submit(form, ADMIN, {"title": ""}))["data"]
    assert bad["content"].startswith("⚠️") and "\n" not in bad["content"]
    stranger = respond(bot, discord, submit(form, MEMBER, {"title": "Sneaky"}))["data"]
    assert "Only admins" in stranger["content"]
    assert catalog.find(bot.store, "sneaky") is None


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_deferred_answer_that_discord_rate_limits_is_sent_after_the_wait(make_bot, discord, tmp_path):
    bot = make_bot()
    holder = sqlite3.connect(tmp_path / "paperbot.db", timeout=10, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # held until the bot has deferred
    discord.fail_next("edit_original", 429, retry_after=0.5)
    interaction = slash("signup", MEMBER, paper="8")
    assert respond(bot, discord, interaction)["type"] == 5
    holder.rollback()
    assert discord.wait_for(lambda d: "signed up" in (d.original(interaction["token"]) or {}).get("content", ""), 10)
    assert [c.status for c in discord.calls_to("edit_original")] == [429, 200]


def test_a_bot_cannot_be_assigned(make_bot, discord):
    bot = make_bot()
    interaction = slash("assign", ADMIN, user="1400000000000000001", paper="7")
    interaction["data"]["resolved"]["users"]["1400000000000000001"]["bot"] = True
    refused = respond(bot, discord, interaction)["data"]
    assert "is a bot and cannot present" in refused["content"]
    assert bot.store.db.execute("SELECT count(*) FROM slots").fetchone()[0] == 0


def test_every_verb_of_the_core_is_a_subcommand_and_reads_back_as_its_line(monkeypatch):
    from bot.chat import commands, registry
    from bot.discord import definition
    from tests.support.discord_standin import check_commands

    monkeypatch.setattr(commands, "VERBS", dict(commands.VERBS))
    paper = registry.Arg("paper", registry.PAPER)
    registry.verb(commands.VERBS, "retire", "retire a paper", "retire 7", paper)(lambda ctx, paper: None)
    body = definition.definition()
    check_commands(body)
    subs = {o["name"]: o for o in body[0]["options"]}
    # `groups` is `group list`; edit, archive, restore and delete are in `manage`; going, cantgo, ask,
    # questions, swap and due in `meeting`.
    assert set(subs) == set(commands.VERBS) - definition.IN_GROUP | {"manage", "meeting"}
    assert [o["name"] for o in subs["meeting"]["options"]][:4] == ["going", "cantgo", "ask", "questions"]
    ask = {"name": "ask", "type": 1, "options": [{"name": "question", "type": 3, "value": "Why 4 bits?"}]}
    data = {"name": "paper", "options": [{"name": "meeting", "type": 2, "options": [ask]}]}
    assert definition.line_of(data) == "ask Why 4 bits?"
    assert "retire" in subs and subs["retire"]["options"][0]["name"] == "paper"
    assert [o["name"] for o in subs["group"]["options"]] == ["show", "start", "set", "stop", "list"]
    assert [o["name"] for o in subs["manage"]["options"]] == ["edit", "archive", "restore", "delete"]
    archive = {"name": "archive", "type": 1, "options": [{"name": "paper", "type": 3, "value": " 7 "}]}
    data = {"name": "paper", "options": [{"name": "manage", "type": 2, "options": [archive]}]}
    assert definition.line_of(data) == "archive 7"
    setting = {
        "name": "set",
        "type": 1,
        "options": [{"name": "setting", "value": "meeting"}, {"name": "value", "value": "thu  16:00"}],
    }
    data = {"name": "paper", "options": [{"name": "group", "type": 2, "options": [setting]}]}
    assert definition.line_of(data) == "group set meeting thu 16:00"
    data = {"name": "paper", "options": [{"name": "group", "type": 2, "options": [{"name": "list", "type": 1}]}]}
    assert definition.line_of(data) == "groups"
    assert definition.line_of(slash("retire", MEMBER, paper="7")["data"]) == "retire 7"
    data = slash("assign", MEMBER, user=ADMIN, paper="7", date="next")["data"]
    assert definition.line_of(data) == f"assign <@{ADMIN}> 7 next"
    data = slash("search", MEMBER, words="  数据   并行 ")["data"]
    assert definition.line_of(data) == "search 数据 并行"


def _json_values():
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers(-3, 10**20) | st.text(max_size=30) | st.floats(allow_nan=False)
    return st.recursive(
        scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=10), c, max_size=4), max_leaves=12
    )


def test_whatever_a_signed_body_holds_the_answer_is_a_response_or_a_400(make_bot, discord):
    """Never a 500: the door refuses a shape Discord does not send, and the bot answers every shape it admits."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from bot.discord.door import check

    bot = make_bot()
    base = slash("signup", MEMBER, paper="7")
    fields = st.sampled_from(["type", "data", "member", "token", "id", "application_id", "message", "user"])

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.dictionaries(fields, _json_values(), max_size=3), st.sampled_from([1, 2, 3, 4, 5]))
    def run(changes, kind):
        interaction = {**base, "type": kind, **changes}
        if kind == 3 and "data" not in changes:
            interaction["data"] = {"custom_id": "r0:week"}
        try:
            admitted = check(interaction)
        except Refused as e:
            assert e.status == 400
            return
        response = bot.handle(admitted, time.monotonic())
        assert response["type"] in (1, 4, 5, 6, 7, 8, 9)

    run()
