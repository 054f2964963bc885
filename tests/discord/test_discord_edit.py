"""Editing a paper on Discord: the add form as a modal, filled in with the paper as it is."""

from __future__ import annotations

from bot.catalog import queries as catalog
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
