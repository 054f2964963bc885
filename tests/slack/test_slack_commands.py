"""/paper through real Bolt request handling: signed requests in, Block Kit out, checked as Slack would."""

from __future__ import annotations

import html
import json
import re
import time
from dataclasses import replace
from urllib.parse import urlencode

import pytest

from bot.catalog import queries as catalog
from bot.catalog.papers import PaperInput
from bot.chat.commands import VERBS
from bot.console.render import render as console_text
from tests.support.block_kit import blocks_text, buttons, nodes, valid
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL
from tests.support.slack_harness import sign
from tests.support.slack_standin import check_message


@pytest.fixture
def clock():
    return Clock(at("2026-12-02 10:00"))  # a Wednesday; this week's meeting is Thu 3 Dec 16:00


@pytest.fixture
def h(make_harness, clock):
    return make_harness(clock)


def test_tag_lists_all_32_seed_papers_with_folded_spelling(h):
    for spelling in ("parallelism-dp", "Parallelism_DP", "#parallelism-dp", "PARALLELISM DP"):
        reply = valid(h.command(f"tag {spelling}"))
        shown = blocks_text(reply)
        assert "32 papers tagged *parallelism-dp*" in shown
        assert "streaming-diloco" in shown and "Streaming DiLoCo" in shown
        assert shown.count("*#") == 32


def test_unknown_tag_suggests_the_closest(h):
    reply = valid(h.command("tag paralelism-db"))
    assert "No paper is tagged" in reply["text"]
    assert "parallelism-dp" in blocks_text(reply)


def test_search_english_and_chinese(h):
    reply = valid(h.command("search diloco"))
    shown = blocks_text(reply)
    assert "Streaming DiLoCo" in shown and "DiLoCo: Distributed Low-Communication" in shown
    reply = valid(h.command("search 数据并行"))  # inside 全分片数据并行 and 混合分片数据并行
    shown = blocks_text(reply)
    assert "PyTorch FSDP" in shown and "Fault Tolerant HSDP" in shown
    reply = valid(h.command("search 推测解码"))
    assert "MineDraft" in blocks_text(reply)


@pytest.mark.parametrize(
    "query", ['"', "*", "AND", "NOT OR", "(((", "a:b", "-", "^", "NEAR(a b)", "{title}: x", "\x00", "😀"]
)
def test_search_never_errors(h, query):
    reply = valid(h.command(f"search {query}"))
    assert reply["text"]


@pytest.mark.parametrize("query", ["😀", "*", "&", '" -'])
def test_a_query_of_only_symbols_finds_nothing_and_says_so(h, query):
    said = valid(h.command(f"search {query}"))["text"]
    assert said.startswith(f"No paper matches “{html.escape(query, quote=False)}”: search looks for words")


def test_search_without_words_asks_for_one(h):
    assert valid(h.command("search"))["text"].startswith("Give me a word to look for")


def test_show_has_full_summary_link_tags_and_signup_button(h):
    reply = valid(h.command("show streaming-diloco"))
    shown = blocks_text(reply)
    paper = catalog.find(h.bot.store, "streaming-diloco")
    assert paper.summary in shown
    assert f"<{paper.url}|Streaming DiLoCo" in shown
    assert "`parallelism-dp`" in shown
    assert [b["value"] for b in buttons(reply)] == [f"signup {paper.number}"]
    assert blocks_text(valid(h.command("show #29"))) == shown
    assert blocks_text(valid(h.command("show 29"))) == shown


def test_show_tells_who_presented_from_who_will_present(h, clock):
    h.command("signup 7 2026-12-03", user="U1")  # this week's meeting, Thu 3 Dec 16:00
    h.command("assign <@U2|bo> 7 2027-01-14", user="UADMIN")
    card = blocks_text(valid(h.command("show 7")))
    assert "Presented" not in card
    assert "*Coming up*" in card and "<@U1>" in card and "<@U2>" in card
    clock.now = at("2026-12-03 17:00")  # the first meeting is over
    card = blocks_text(valid(h.command("show 7")))
    presented, coming = card.split("*Coming up*")
    assert "*Presented*" in presented and "<@U1>" in presented and "<@U2>" in coming


def test_a_number_typed_with_a_space_after_the_hash_names_the_paper(h):
    assert blocks_text(valid(h.command("show # 29"))) == blocks_text(valid(h.command("show 29")))
    assert valid(h.command("signup ＃ 29", user="U1"))["text"].startswith("You're signed up: you present #29")


def test_a_command_typed_in_full_width_or_pasted_with_invisible_marks_reads_as_typed(h, clock):
    # An input method in full-width mode types every letter, digit and hyphen full width.
    assert blocks_text(valid(h.command("ｓｈｏｗ　＃２９"))) == blocks_text(valid(h.command("show 29")))
    assert blocks_text(valid(h.command("show 29\u200b"))) == blocks_text(valid(h.command("show 29")))
    reply = valid(h.command("signup 29 ２０２７－０１－１４", user="U1"))
    assert reply["text"].startswith("You're signed up: you present #29") and "2027-01-14" in reply["text"]


@pytest.mark.parametrize(
    "line, instead",
    [
        ("week next", "/paper schedule"),
        ("schedule 2027-06-01", "coming weeks"),
        ("mine <@U2|bo>", "your own slots"),
        ("tags parallelism-dp", "/paper tag parallelism-dp"),
    ],
)
def test_words_after_a_command_that_takes_none_are_not_ignored_in_silence(h, line, instead):
    reply = valid(h.command(line))
    verb = line.split()[0]
    assert f"/paper {verb} takes nothing after it" in reply["text"] and instead in reply["text"]
    assert len(reply["blocks"]) == 1  # one line, not the week, schedule or slots it did not ask for


@pytest.mark.parametrize("space", ["\u00a0", "\t", "\n", "\u3000"])
def test_any_space_after_the_verb_will_do(h, space):
    assert blocks_text(valid(h.command(f"show{space}29"))) == blocks_text(valid(h.command("show 29")))


def test_help_for_empty_unknown_and_help(h):
    for text in ("", "help", "frobnicate"):
        reply = valid(h.command(text))
        shown = blocks_text(reply)
        for verb in ("tag <tag>", "search <words>", "show <paper>", "signup <paper>", "schedule", "assign"):
            assert verb in shown
    assert "I don't know `frobnicate`" in blocks_text(h.command("frobnicate"))


def test_escaped_title_never_pings(h):
    catalog.upsert(
        h.bot.store,
        [
            PaperInput(
                id="ping",
                title="<!channel> & <@U999> <https://evil|click>",
                summary="<!here> 总结 <b>",
                tags=("<!subteam^S1>",),
            )
        ],
    )
    for text in ("tag <!subteam^S1>", "search channel", "show ping", "search 总结"):
        reply = valid(h.command(text))
        raw = json.dumps(reply)
        for live in ("<!channel>", "<!here>", "<@U999>", "<https://evil", "<!subteam"):
            assert live not in raw
        assert "&lt;!channel&gt;" in raw or text.startswith("tag")


def test_a_text_fallback_cut_to_slacks_limit_is_never_cut_inside_an_escape(h):
    # 40 titles of 300 characters, each & shown as &amp;: the fallback is 60,000 characters, cut to under 40,000.
    catalog.upsert(h.bot.store, [PaperInput(id=f"amp-{i}", title="&" * 300, tags=("worst",)) for i in range(40)])
    fallback = valid(h.command("tag worst"))["text"]
    assert 38_000 < len(fallback) < 40_000 and fallback.endswith("…")
    assert html.unescape(fallback[:-1]).endswith("&") and not re.search(r"&[a-z]*$", fallback[:-1])


def test_forged_or_stale_signature_gets_401_and_changes_nothing(h):
    body = urlencode(
        {
            "team_id": "T0TEST",
            "channel_id": CHANNEL,
            "user_id": "U1",
            "command": "/paper",
            "text": "signup streaming-diloco",
            "response_url": h.slack.response_url(),
            "trigger_id": "t",
        }
    )
    forged = sign(body, secret="not-the-secret")
    stale = sign(body, timestamp=int(time.time()) - 600)
    for headers in (forged, stale, {"content-type": "application/x-www-form-urlencoded"}):
        assert h.dispatch(body, headers).status == 401
    assert "Nobody has presented it yet" in blocks_text(h.command("show streaming-diloco"))
    assert h.bot.store.db.execute("SELECT count(*) FROM slots").fetchone()[0] == 0
    assert h.dispatch(body).status == 200  # the same body, signed, goes through
    assert h.bot.store.db.execute("SELECT count(*) FROM slots").fetchone()[0] == 1


def test_paging_beyond_40(h):
    catalog.upsert(
        h.bot.store,
        [PaperInput(id=f"extra-{i}", title=f"Extra paper {i}", tags=("parallelism-dp",)) for i in range(60)],
    )
    reply = valid(h.command("tag parallelism-dp"))
    assert "92 papers tagged" in blocks_text(reply) and "(1–40)" in blocks_text(reply)
    page = catalog.tagged(h.bot.store, "parallelism-dp")[1].papers
    shown = blocks_text(reply)
    assert len(page) == 40 and all(f"*#{p.number}* " in shown and f"`{p.id}`" in shown for p in page)
    assert len(reply["blocks"]) <= 15  # a few papers a section, not a block each
    nxt = [b for b in buttons(reply) if b["action_id"].startswith("page:")]
    assert [b["value"] for b in nxt] == ["tag parallelism-dp --page 2"]
    url = h.click(nxt[0])
    [page2] = h.slack.responses_to(url)
    check_message(page2)
    assert page2["replace_original"] is True
    assert "(41–80)" in blocks_text(page2)
    assert len([b for b in buttons(page2) if b["action_id"].startswith("page:")]) == 2


def test_every_tag_can_be_reached_page_by_page(h):
    tags = [f"topic-{i:04d}" for i in range(1200)]
    catalog.upsert(
        h.bot.store,
        [PaperInput(id=f"many-{k}", title=f"Many tags {k}", tags=tuple(tags[k * 20 : k * 20 + 20])) for k in range(60)],
    )
    seen: list[str] = []
    reply = valid(h.command("tags"))
    for first, last in ((1, 500), (501, 1000), (1001, 1201)):
        shown = blocks_text(reply)
        assert f"{first}–{last} of 1201" in shown, shown[:200]
        seen += re.findall(r"`(topic-\d{4})`", shown)
        nxt = [b for b in buttons(reply) if b["action_id"].startswith("page:") and b["value"].startswith("tags")]
        if last == 1201:
            assert [b["text"]["text"] for b in nxt] == ["◀ Previous 500"]
            break
        [reply] = h.slack.responses_to(h.click([b for b in nxt if "Next" in b["text"]["text"]][0]))
        check_message(reply)
    assert sorted(seen) == tags  # each once: parallelism-dp is the 1201st
    assert "no page 4" in blocks_text(h.command("tags --page 4"))


def test_the_next_page_of_a_very_long_search_is_the_next_page(h):
    catalog.upsert(h.bot.store, [PaperInput(id=f"extra-{i}", title=f"Extra paper {i}") for i in range(60)])
    query = " ".join(["extra"] * 340)  # 2,040 characters: longer than a button's value may be
    reply = valid(h.command(f"search {query}"))
    assert "(1–40)" in blocks_text(reply)
    [nxt] = [b for b in buttons(reply) if b["action_id"].startswith("page:")]
    [page2] = h.slack.responses_to(h.click(nxt))
    assert "(41–60)" in blocks_text(page2)


@pytest.mark.parametrize("command", VERBS.values(), ids=list(VERBS))
def test_every_command_through_a_signed_request(h, command):
    """Each command's own help example, as an admin would type it, answered with valid Block Kit."""
    reply = h.command(command.example, user="UADMIN")
    if command.name == "add":
        assert reply == {} and h.slack.calls_to("views.open")
        return
    valid(reply)
    assert reply["text"].strip() and "Something went wrong" not in reply["text"]


@pytest.mark.parametrize("command", [c for c in VERBS.values() if c.name != "add"], ids=lambda c: c.name)
def test_every_help_example_still_works_years_later(h, clock, command):
    """help is read long after it was written: each example, typed by an admin, is answered, not refused."""
    from bot.chat import commands

    clock.set(at("2031-03-05 10:00"))
    if command.name == "withdraw":
        h.command("signup 7 2031-04-07", user="UADMIN")  # a slot of their own to give up
    if command.name == "unassign":
        h.command("signup 7 next", user="U1")  # a week to clear
    if command.name == "slides":
        h.command("signup 29 next", user="U1")  # a talk to attach slides to
    if command.name == "swap":
        h.command("signup 7 next", user="U2")  # a talk to trade for, and one of their own to offer
        h.command("signup 8 2031-04-07", user="UADMIN")
    example = command.example.replace("@ada", "@U2")  # a mention Slack completed, as the listener reads it
    answer = commands.run(h.bot.context("UADMIN"), example)
    assert getattr(answer.reply, "ok", True), console_text(answer.reply)


def test_help_says_which_commands_are_for_admins_in_its_text_fallback_too(h):
    reply = valid(h.command("help"))
    admin_lines = [line for line in reply["text"].splitlines() if line.endswith("(admins)")]
    assert len(admin_lines) == sum(c.rights.admins_only for c in VERBS.values()) and any(
        "/paper skip" in x for x in admin_lines
    )


def test_the_next_page_of_a_search_shows_the_query_as_it_was_typed(h):
    catalog.upsert(h.bot.store, [PaperInput(id=f"extra-{i}", title=f"Extra paper {i}") for i in range(60)])
    reply = valid(h.command("search Extra PAPER"))
    [nxt] = [b for b in buttons(reply) if b["action_id"].startswith("page:")]
    [page2] = h.slack.responses_to(h.click(nxt))
    assert "“*Extra PAPER*”, best first (41–60)" in blocks_text(page2)


def test_a_title_that_pings_is_inert_everywhere(h):
    from bot.schedule import reminders, weekly

    catalog.upsert(
        h.bot.store,
        [PaperInput(id="ping", title="<!channel> look & <@U999>", summary="<!here>", tags=("parallelism-dp",))],
    )
    number = catalog.find(h.bot.store, "ping").number
    h.command(f"signup {number} next", user="U1")  # announcement in the channel
    replies = [h.command(t, user="U1") for t in ("schedule", "mine", f"show {number}", "tag parallelism-dp --page 1")]
    weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at("2026-12-07 09:00"))  # U1's paper
    reminders.send_due(h.bot.store, h.bot.group, h.bot.transport, at("2026-12-08 16:00"))
    h.event({"type": "app_home_opened", "user": "U1", "tab": "home"})
    sent = h.slack.messages(CHANNEL) + h.slack.messages("DU1") + [h.slack.home_views["U1"]] + replies
    assert len(h.slack.messages(CHANNEL)) == 2 and len(h.slack.messages("DU1")) == 1
    for message in sent:
        raw = json.dumps(message)
        assert "<!channel>" not in raw and "<!here>" not in raw and "<@U999>" not in raw
        assert "&lt;!channel&gt;" in raw


def test_a_paper_with_the_longest_text_and_link_fits_everywhere_slack_shows_it(h):
    """Each & of a title or url is five characters once escaped: every reply and the post must still fit."""
    from bot.schedule import weekly

    amps = "https://x.co/?" + "&" * 237  # the most & the add form takes in a url of this length
    assert catalog.validate({"title": "A", "url": amps}, new=True).url == amps
    with pytest.raises(catalog.InvalidPaper, match="too many & characters"):
        catalog.validate({"title": "A", "url": amps + "&"}, new=True)
    assert catalog.validate({"id": "amps", "url": amps + "&" * 700}, new=False)  # an import keeps it
    worst = [
        PaperInput(id=f"worst-{i}", title=f"W{i} " + "&" * 290, summary="&" * 139 + "\n" + "<" * 5000, url=amps)
        for i in range(45)
    ]
    # ... and a url stored before that rule, far longer once escaped: shown without its link.
    worst.append(PaperInput(id="older", title="Older " + "&" * 290, url="https://x.co/?" + "&" * 985))
    catalog.upsert(h.bot.store, [replace(p, tags=("worst",)) for p in worst])
    older = catalog.find(h.bot.store, "older").number
    h.command("signup worst-0 next", user="U1")
    h.command(f"signup {older} 2026-12-14", user="U2")
    for text in ("show worst-0", f"show {older}", "tag worst", "search w0", "schedule", "mine", "week"):
        reply = valid(h.command(text, user="U1"))
        assert "Something went wrong" not in reply["text"], text
        for section in nodes(reply["blocks"]):  # no entity or link cut in half
            if section.get("type") == "mrkdwn":
                assert not re.search(r"&(a|am|amp|l|lt|g|gt)?$|&(a|am|l|g)[^a-z;]", section["text"]), text
                assert section["text"].count("<") == section["text"].count(">"), text
    assert "<https://x.co/?&amp;" in json.dumps(valid(h.command("show worst-0")))
    assert "<https://" not in json.dumps(valid(h.command(f"show {older}")))
    for monday in ("2026-12-07", "2026-12-14"):
        outcome = weekly.post_week(h.bot.store, h.bot.group, h.bot.transport, CHANNEL, at(f"{monday} 09:00"))
        assert outcome.status == "sent", outcome.detail
    for post in h.slack.messages(CHANNEL):
        check_message(post)


def test_a_long_reply_about_what_the_user_typed_is_escaped_once(h):
    reply = valid(h.command("tag " + "&" * 800))
    assert "No paper is tagged" in reply["blocks"][0]["text"]["text"] and "&amp;amp;" not in json.dumps(reply)


def test_help_and_mine_show_their_placeholders_and_every_slot(h, clock):
    shown = json.dumps(valid(h.command("help"))["blocks"]) + json.dumps(valid(h.command("mine"))["blocks"])
    assert "<paper>" not in shown and "<date>" not in shown  # Slack would read them as links
    assert "&lt;paper&gt;" in shown
    h.command("signup 5 2026-12-07", user="U1")
    clock.set(at("2026-12-21 10:00"))
    h.command("signup 6 next", user="U1")
    reply = valid(h.command("mine", user="U1"))
    assert "Your coming slots:" in reply["text"] and "Your past slots:" in reply["text"]
    assert reply["text"].index("#6") < reply["text"].index("Your past slots:") < reply["text"].index("#5")


def test_what_cannot_be_seen_or_typed_never_reaches_the_catalog(h):
    row = {
        "id": "ctl",
        "title": "Bold\x1b[31m move\x00 \u202eevil\u202c zero\u200bwidth 👩\u200d🔬",
        "summary": "a\x07b\ufeff",
        "tags": ["rtl\u200b", "b\x07ell"],
    }
    catalog.upsert(h.bot.store, [catalog.validate(row, new=False)])
    paper = catalog.find(h.bot.store, "ctl")
    assert (paper.title, paper.summary) == ("Bold[31m move evil zerowidth 👩\u200d🔬", "ab")  # joiners stay
    assert sorted(paper.tags) == ["bell", "rtl"]
    assert "1 paper tagged" in blocks_text(h.command("tag rtl"))
    assert "#7" in blocks_text(h.command("show ＃７"))


def test_a_request_that_names_no_user_books_nobody(h):
    reply = valid(h.command("signup 20", user=""))
    assert "did not say who sent it" in reply["text"]
    assert h.slack.messages(CHANNEL) == [] and "#20" not in blocks_text(h.command("schedule"))


def test_a_member_slack_does_not_know_is_named_not_told_slack_could_not_be_asked(h):
    """An admin command from a user ID Slack knows nothing of: the reply says who is unknown, and nothing changes."""
    reply = valid(h.command("skip next", user="UNOBODY"))
    assert reply["text"] == "Slack knows no member UNOBODY in this workspace: nothing was changed.", reply["text"]
    assert "couldn't check" not in reply["text"]
    assert h.slack.messages(CHANNEL) == []
