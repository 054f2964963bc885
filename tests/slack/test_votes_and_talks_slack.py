"""Votes, archiving and talk links through Slack: slash commands in, Block Kit and channel posts out."""

from __future__ import annotations

import json

from bot.catalog import queries as catalog
from bot.runtime.scheduler import ScheduledChecks
from tests.support.clock import Clock, at
from tests.support.slack_group import CHANNEL
from tests.support.slack_standin import check_message, check_view

MONDAY = "2026-12-07 09:00"


def posts(slack):
    return [m for m in slack.messages(CHANNEL) if (m.get("metadata") or {}).get("event_type") == "paper_of_the_week"]


def _vote(h, paper: str, *users: str) -> None:
    for user in users:
        reply = h.command(f"vote {paper}", user=user)
        assert "You voted for" in reply["text"], reply


def _post_week(h, clock) -> dict:
    ScheduledChecks(h.bot.store, h.bot.settings, h.bot.transport, clock=clock).check_post()
    return posts(h.slack)[-1]


def test_with_rotation_votes_the_weekly_post_features_the_most_voted_paper(make_harness, slack):
    clock = Clock(at(MONDAY))
    h = make_harness(clock, PAPERBOT_ROTATION="votes")
    _vote(h, "12", "U1", "U2", "U3")
    _vote(h, "20", "U1", "U2")
    _vote(h, "5", "U4")
    post = _post_week(h, clock)
    check_message(post)
    assert post["metadata"]["event_payload"]["paper_number"] == 12
    assert catalog.find(h.bot.store, "12").title in post["text"]
    # The next week: #12 was featured, so the next most voted.
    clock.set(at("2026-12-14 09:00"))
    assert _post_week(h, clock)["metadata"]["event_payload"]["paper_number"] == 20


def test_with_the_default_rotation_votes_change_nothing(make_harness, slack):
    clock = Clock(at(MONDAY))
    h = make_harness(clock)
    _vote(h, "12", "U1", "U2")
    assert _post_week(h, clock)["metadata"]["event_payload"]["paper_number"] == 1


def test_an_archived_paper_leaves_the_rotation_and_restore_brings_it_back(make_harness, slack):
    clock = Clock(at(MONDAY))
    h = make_harness(clock, PAPERBOT_ROTATION="votes", PAPERBOT_ADMINS="UADMIN")
    _vote(h, "12", "U1", "U2")
    assert "Archived #12" in h.command("archive 12", user="UADMIN")["text"]
    assert _post_week(h, clock)["metadata"]["event_payload"]["paper_number"] == 1
    assert "Restored #12" in h.command("restore 12", user="UADMIN")["text"]
    clock.set(at("2026-12-14 09:00"))
    assert _post_week(h, clock)["metadata"]["event_payload"]["paper_number"] == 12


def test_votes_show_in_a_tag_list_and_on_the_card(make_harness, slack):
    h = make_harness(Clock(at(MONDAY)))
    _vote(h, "7", "U1", "U2")
    listed = h.command("tag parallelism-dp")
    shown = json.dumps(listed["blocks"], ensure_ascii=False)
    assert "2 votes" in shown and shown.count("vote") == 1
    assert "2 votes" in json.dumps(h.command("show 7")["blocks"], ensure_ascii=False)


def test_a_booked_talk_of_an_archived_paper_is_posted_and_says_so(make_harness, slack):
    clock = Clock(at("2026-12-01 10:00"))
    h = make_harness(clock, PAPERBOT_ADMINS="UADMIN")
    assert "signed up" in h.command("signup 7 2026-12-10", user="U1")["text"]
    h.command("archive 7", user="UADMIN")
    schedule = json.dumps(h.command("schedule")["blocks"], ensure_ascii=False)
    assert "(archived)" in schedule
    clock.set(at(MONDAY))
    post = _post_week(h, clock)
    assert post["metadata"]["event_payload"]["paper_number"] == 7 and "<@U1>" in json.dumps(post["blocks"])
    assert "Archived from the catalog" in post["text"]


def test_slides_by_the_presenter_show_in_past_and_in_the_next_weeks_post(make_harness, slack):
    clock = Clock(at("2026-12-01 10:00"))
    h = make_harness(clock)
    h.command("signup 7 2026-12-03", user="U1")
    clock.set(at("2026-12-04 10:00"))
    refused = h.command("slides 7 javascript:alert(1)", user="U1")
    assert refused["text"].startswith("A link must start with")
    link = "https://example.org/slides.pdf?a=1&b=2"
    assert h.command(f"slides 7 {link}", user="U2")["text"] == (
        "Only the presenter of that talk or an admin can change its links."
    )
    # Slack sends a pasted link as <https://…>: the link itself is kept.
    assert h.command(f"slides 7 <{link}>", user="U1")["text"].startswith("Added the link")
    past = h.command("past")
    blocks = json.dumps(past["blocks"])
    assert "https://example.org/slides.pdf?a=1&amp;b=2" in blocks and "&b=2" not in blocks
    clock.set(at(MONDAY))
    post = _post_week(h, clock)
    check_message(post)
    assert "Last week" in json.dumps(post["blocks"]) and "slides.pdf" in post["text"]


def test_edit_opens_the_add_form_filled_in_and_saving_keeps_the_number(make_harness, slack):
    h = make_harness(Clock(at(MONDAY)), PAPERBOT_ADMINS="UADMIN")
    h.command("signup 7 2026-12-10", user="U1")
    assert "Only admins" in h.command("edit 7", user="U1")["text"]
    assert h.command("edit 7", user="UADMIN") == {}  # the modal is the answer
    [opened] = slack.calls_to("views.open")
    view = opened.params["view"]
    check_view(view, kind="modal")
    before = catalog.find(h.bot.store, "7")
    initial = {b["block_id"]: b["element"].get("initial_value") for b in view["blocks"] if b["type"] == "input"}
    assert initial["title"] == before.title and initial["url"] == before.url and initial["tags"] == "parallelism-dp"
    metadata = view["private_metadata"]
    errors = h.submit("edit_paper", {**initial, "title": ""}, private_metadata=metadata)
    assert errors["response_action"] == "errors" and "title" in errors["errors"]
    ok = h.submit(
        "edit_paper", {**initial, "title": "AsyncDiff <!here> revised", "url": None}, private_metadata=metadata
    )
    assert ok == {}
    after = catalog.find(h.bot.store, "7")
    assert (after.number, after.id, after.title, after.url) == (7, before.id, "AsyncDiff <!here> revised", "")
    assert after.summary == before.summary
    assert "#7" in json.dumps(h.command("schedule")["blocks"]) and "revised" in h.command("show 7")["text"]
    [confirm] = slack.ephemerals
    assert confirm["text"].startswith("Saved #7") and "<!here>" not in str(confirm)


def test_app_home_lists_the_latest_talks_links(make_harness, slack):
    clock = Clock(at("2026-12-01 10:00"))
    h = make_harness(clock)
    h.command("signup 7 2026-12-03", user="U1")
    clock.set(at("2026-12-04 10:00"))
    h.command("slides 7 https://example.org/deck.pdf", user="U1")
    assert h.event({"type": "app_home_opened", "user": "U2", "tab": "home"}) == 200
    view = slack.home_views["U2"]
    check_view(view, kind="home")
    shown = json.dumps(view["blocks"])
    assert "Latest talks" in shown and "<https://example.org/deck.pdf|example.org/deck.pdf>" in shown
