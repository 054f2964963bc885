"""`related <paper>` and the related papers under `show`, as members meet them in replies."""

from __future__ import annotations

import json

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.catalog import queries as catalog
from bot.chat import commands, context
from bot.console.render import render as console_text
from bot.discord.render import message as discord_message
from bot.schedule.signups import Member
from bot.slack.blocks import message as slack_message
from tests.support.clock import TZ, at

GROUP = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))


def reply(store, line: str):
    ctx = context.Context(store, GROUP, Member("U1", lambda: False), at("2026-12-02 10:00"))
    return commands.run(ctx, line).reply


def listed(text: str) -> list[str]:
    return [line.split()[0] for line in text.splitlines() if line.startswith("#")]


def test_related_lists_the_papers_sharing_the_rarer_words_best_first(store):
    # #24 Decoupled DiLoCo: the DiLoCo papers that are distributed too share its two rarest title words.
    text = console_text(reply(store, "related decoupled-diloco"))
    assert text.startswith("Papers closest to #24 Decoupled DiLoCo")
    found = listed(text)
    assert 1 <= len(found) <= 5 and "#24" not in found
    assert set(found[:2]) == {"#29", "#32"}, text
    # Speculative decoding papers lead for one of them, not the DiLoCo ones.
    assert set(listed(console_text(reply(store, "related 25")))[:2]) <= {"#14", "#19"}


def test_related_refuses_a_paper_that_is_not_there_and_says_how_to_find_one(store):
    assert console_text(reply(store, "related nope")).startswith("✗ There is no paper `nope`")
    assert console_text(reply(store, "related")).startswith("✗ Usage:")


def test_related_leaves_out_archived_papers(store):
    catalog.set_archived(store, catalog.find(store, "32"), True)
    assert "#32" not in listed(console_text(reply(store, "related 24")))


def test_show_lists_the_three_closest_papers_on_every_platform(store):
    card = reply(store, "show 24")
    lines = [line for line in console_text(card).splitlines() if line.startswith("related: ")]
    assert len(lines) == 3 and {"#29", "#32"} == {line.split()[1] for line in lines[:2]}, lines
    slack = json.dumps(slack_message(card), ensure_ascii=False)
    assert "Related: *#" in slack and "Streaming DiLoCo" in slack
    [embed] = discord_message(card)["embeds"]
    [field] = [f for f in embed["fields"] if f["name"] == "Related"]
    assert field["value"].count("**#") == 3
