"""Slack's edit form saves what the admin changed: fields it cannot hold stay whole, and a save over a
paper changed since the form opened is refused."""

from __future__ import annotations

from bot.catalog import queries as catalog
from tests.support.clock import Clock, at
from tests.support.slack_standin import check_view


def _open(h, slack) -> tuple[dict, dict]:
    assert h.command("edit 7", user="UADMIN") == {}  # the modal is the answer
    view = slack.calls_to("views.open")[-1].params["view"]
    check_view(view, kind="modal")
    initial = {b["block_id"]: b["element"].get("initial_value") for b in view["blocks"] if b["type"] == "input"}
    return view, initial


def test_a_long_summary_and_many_tags_are_kept_whole(make_harness, slack):
    h = make_harness(Clock(at("2026-12-07 10:00")), PAPERBOT_ADMINS="UADMIN")
    before = catalog.find(h.bot.store, "7")
    tags = [f"topic-number-{i:02d}-with-a-long-name" for i in range(12)]
    long = ("A summary sentence that goes on. " * 160)[:4999]
    catalog.edit(h.bot.store, before, catalog.validate({"id": before.id, "summary": long, "tags": tags}, new=False))
    view, initial = _open(h, slack)
    assert "summary" not in initial and "summary is longer than this form holds" in str(view["blocks"][0])
    assert set(initial["tags"].split(", ")) == set(tags)
    assert (
        h.submit("edit_paper", {**initial, "title": "AsyncDiff, retitled"}, private_metadata=view["private_metadata"])
        == {}
    )
    after = catalog.find(h.bot.store, "7")
    assert after.title == "AsyncDiff, retitled" and after.summary == long and set(after.tags) == set(tags)


def test_a_save_over_a_console_edit_is_refused_naming_the_change(make_harness, slack):
    h = make_harness(Clock(at("2026-12-07 10:00")), PAPERBOT_ADMINS="UADMIN")
    view, initial = _open(h, slack)
    assert "Saved" in h.command("edit 7 tags moe", user="UADMIN")["text"]  # another edit meanwhile
    refused = h.submit(
        "edit_paper", {**initial, "title": "From the old form"}, private_metadata=view["private_metadata"]
    )
    said = refused["errors"]["title"]
    assert refused["response_action"] == "errors" and "changed since this form opened" in said and "tags" in said
    after = catalog.find(h.bot.store, "7")
    assert after.tags == ("moe",) and after.title != "From the old form"
