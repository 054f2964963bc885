"""Editing a paper on Discord: the add form as a modal, filled in with the paper as it is."""

from __future__ import annotations

from bot.catalog import queries as catalog
from bot.chat import commands
from bot.chat.context import Context
from bot.schedule.signups import Member
from tests.support.discord_door import post
from tests.support.discord_group import ADMIN, MEMBER, respond
from tests.support.discord_standin import pings, slash, submit


def test_edit_opens_the_form_filled_in_and_saving_changes_the_paper(make_bot, discord):  # noqa: F811
    bot = make_bot()
    refused = respond(bot, discord, slash("edit", MEMBER, paper="7"))
    assert refused["type"] == 4 and "Only admins" in refused["data"]["content"]
    opened = respond(bot, discord, slash("edit", ADMIN, paper="7"))
    assert opened["type"] == 9
    form = opened["data"]
    before = catalog.find(bot.store, "7")
    filled = {c["components"][0]["custom_id"]: c["components"][0].get("value") for c in form["components"]}
    assert filled["title"] == before.title and filled["url"] == before.url and filled["tags"] == "parallelism-dp"
    values = {**filled, "title": "AsyncDiff, revised @everyone", "tags": "diffusion, parallelism-dp"}
    saved = respond(bot, discord, submit(form, ADMIN, values))["data"]
    assert saved["content"].startswith("Saved **#7**") and pings(saved) == set()
    after = catalog.find(bot.store, "7")
    assert (after.number, after.id, after.title) == (7, before.id, "AsyncDiff, revised @everyone")
    assert set(after.tags) == {"diffusion", "parallelism-dp"} and after.summary == before.summary
    bad = respond(bot, discord, submit(form, ADMIN, {**values, "title": ""}))["data"]
    assert bad["content"].startswith("⚠️") and "\n" not in bad["content"]
    stranger = respond(bot, discord, submit(form, MEMBER, {**values, "title": "Sneaky"}))["data"]
    assert "Only admins" in stranger["content"] and catalog.find(bot.store, "7").title != "Sneaky"


def _opened(bot, discord, number: str = "7") -> dict:
    opened = post(bot, discord, slash("edit", ADMIN, paper=number))
    assert opened["type"] == 9
    return opened["data"]


def _inputs(form: dict) -> dict[str, str | None]:
    return {c["components"][0]["custom_id"]: c["components"][0].get("value") for c in form["components"]}


def test_saving_the_title_keeps_the_authors_and_year(make_bot, discord):
    bot = make_bot()
    before = catalog.find(bot.store, "7")
    catalog.edit(
        bot.store,
        before,
        catalog.validate({"id": before.id, "authors": "Ada Lovelace, Alan Turing", "year": "2024"}, new=False),
    )
    form = _opened(bot, discord)
    assert _inputs(form)["by"] == "Ada Lovelace, Alan Turing (2024)"
    saved = post(bot, discord, submit(form, ADMIN, {**_inputs(form), "title": "AsyncDiff, fixed"}))["data"]
    assert saved["content"].startswith("Saved **#7**")
    after = catalog.find(bot.store, "7")
    assert (after.title, after.authors, after.year) == ("AsyncDiff, fixed", "Ada Lovelace, Alan Turing", 2024)


def test_authors_that_read_like_a_byline_survive_a_save_of_the_title(make_bot, discord):
    # One input holds authors and year ("Ada (2024)"); authors that end in a year in brackets, or that
    # are four digits, with no year, read back as a year: a save of the title must not move them.
    bot = make_bot()
    for number, authors in (("7", "Event Horizon Telescope Collaboration (2019)"), ("8", "2001")):
        before = catalog.find(bot.store, number)
        catalog.edit(bot.store, before, catalog.validate({"id": before.id, "authors": authors}, new=False))
        form = _opened(bot, discord, number)
        saved = post(bot, discord, submit(form, ADMIN, {**_inputs(form), "title": f"Retitled {number}"}))
        assert saved["data"]["content"].startswith(f"Saved **#{number}**")
        after = catalog.find(bot.store, number)
        assert (after.title, after.authors, after.year) == (f"Retitled {number}", authors, None)


def test_a_summary_and_tags_longer_than_the_form_holds_are_kept_whole(make_bot, discord):
    bot = make_bot()
    tags = [f"topic-number-{i:02d}-with-a-long-name" for i in range(12)]
    long = ("A summary sentence that goes on. " * 160)[:4999]
    before = catalog.find(bot.store, "7")
    catalog.edit(bot.store, before, catalog.validate({"id": before.id, "summary": long, "tags": tags}, new=False))
    form = _opened(bot, discord)
    shown = _inputs(form)
    assert "summary" not in shown and "summary kept" in form["title"]  # not offered: kept as it is
    assert set((shown["tags"] or "").split(", ")) == set(tags)  # every tag, none cut
    saved = post(bot, discord, submit(form, ADMIN, {**shown, "title": "AsyncDiff, retitled"}))["data"]
    assert saved["content"].startswith("Saved **#7**")
    after = catalog.find(bot.store, "7")
    assert after.title == "AsyncDiff, retitled" and after.summary == long and set(after.tags) == set(tags)


def test_a_form_saved_over_a_console_edit_is_refused_naming_the_change(make_bot, discord):
    bot = make_bot()
    form = _opened(bot, discord)
    console = Context(bot.store, bot.group, Member("console", lambda: True), bot.clock())
    assert commands.run(console, "edit 7 summary Rewritten at the console.").reply.ok
    refused = post(bot, discord, submit(form, ADMIN, {**_inputs(form), "title": "AsyncDiff, from the old form"}))
    said = refused["data"]["content"]
    assert said.startswith("⚠️") and "changed since this form opened" in said and "summary" in said and "\n" not in said
    after = catalog.find(bot.store, "7")
    assert after.summary == "Rewritten at the console." and after.title != "AsyncDiff, from the old form"
