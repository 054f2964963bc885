"""Each workspace of a hosted install is a place of its own: through every entry Slack has (commands,
buttons, forms, App Home, pages and feeds, the weekly post) a workspace sees, numbers and changes only
its own papers, and everything it is sent goes with its own token."""

from __future__ import annotations

import io
import json
import re
from urllib.parse import urlsplit

import pytest

from bot.catalog import files as papers_file
from bot.catalog import queries as catalog
from bot.catalog import votes
from bot.places.registry import open_place
from bot.runtime.hosting import EveryPlace
from tests.support.clock import Clock, at
from tests.support.processes import weekly_posts
from tests.support.slack_hosted import (
    ADMINS,
    CHANNELS,
    MEMBERS,
    PUBLIC,
    A,
    B,
    Running,
    as_run_has_them,
    hosted_settings,
    place_of,
    two_workspaces,
)
from tests.support.slack_standin import SlackStandin

#: The papers each workspace adds by the add form: A two, B one.
PAPERS = {
    A: [("Attention in Alpha", "alpha-only"), ("Another Alpha result", "alpha-only")],
    B: [("Bagging in Beta", "beta-only")],
}


@pytest.fixture
def slack():
    with SlackStandin() as standin:
        two_workspaces(standin)
        yield standin


@pytest.fixture
def hosted(tmp_path, slack, monkeypatch):
    from bot.announcing import sender as outbox_sender

    monkeypatch.setattr(outbox_sender, "ANNOUNCE_QUIET", 0.0)
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_LONGEST_HOLD", 0.0)
    as_run_has_them(monkeypatch)
    clock = Clock(at("2026-12-08 10:00"))  # a Tuesday
    running = Running(hosted_settings(tmp_path, slack.api_url), slack, clock)
    for team in (A, B):
        running.visit.install(team)
        channel, admin = CHANNELS[team], ADMINS[team]
        assert "started" in said(running.visit.command(team, channel, "group start", admin)).lower()
        running.visit.command(team, channel, "group set meeting thu 16:00", admin)
        for title, tag in PAPERS[team]:
            added = running.visit.submit(team, admin, "add_paper", {"title": title, "tags": tag}, channel)
            assert added.status == 200 and not added.body, added.body
    running.clock = clock
    yield running
    running.close()


def said(reply: dict) -> str:
    return reply.get("text", "")


def ask(h: Running, team: str, text: str) -> str:
    return said(h.visit.command(team, CHANNELS[team], text, MEMBERS[team]))


def test_each_workspace_numbers_its_papers_from_1(hosted):
    assert [(p.number, p.title) for p in catalog.all_papers(hosted.app.places.store(place_of(A)))] == [
        (1, "Attention in Alpha"),
        (2, "Another Alpha result"),
    ]
    assert [(p.number, p.title) for p in catalog.all_papers(hosted.app.places.store(place_of(B)))] == [
        (1, "Bagging in Beta")
    ]
    assert catalog.all_papers(hosted.house) != catalog.all_papers(hosted.app.places.store(place_of(B)))


def test_commands_see_only_their_own_workspaces_papers(hosted):
    h = hosted
    assert "Attention in Alpha" in ask(h, A, "show 1") and "Bagging in Beta" in ask(h, B, "show 1")
    assert "Another Alpha result" in ask(h, A, "show 2")
    assert "Alpha" not in ask(h, B, "show 2") and "no paper" in ask(h, B, "show 2").lower()
    assert "alpha-only" in ask(h, A, "tags") and "alpha-only" not in ask(h, B, "tags")
    assert "Attention in Alpha" in ask(h, A, "tag alpha-only")
    assert "Alpha" not in ask(h, B, "tag alpha-only")
    assert "Bagging in Beta" in ask(h, B, "search bagging") and "Beta" not in ask(h, A, "search bagging")
    assert "Attention in Alpha" in ask(h, A, "search attention") and "Alpha" not in ask(h, B, "search attention")


def test_an_export_of_a_workspace_holds_its_papers_only(hosted):
    for team, titles in ((A, ["Attention in Alpha", "Another Alpha result"]), (B, ["Bagging in Beta"])):
        store = open_place(hosted.settings.db_path, place_of(team), writes=False)
        try:
            out = io.StringIO()
            papers_file.write(catalog.all_papers(store), "json", out)
        finally:
            store.close()
        assert [p["title"] for p in json.loads(out.getvalue())] == titles


def test_a_button_acts_in_its_own_workspace(hosted, slack):
    h = hosted
    url = h.visit.click(B, CHANNELS[B], MEMBERS[B], "vote 1")
    assert slack.wait_for(lambda s: s.responses_to(url))
    assert "Bagging in Beta" in slack.responses_to(url)[0]["text"]
    assert votes_on(h, B, 1) == 1
    assert votes_on(h, A, 1) == 0
    url = h.visit.click(B, CHANNELS[B], MEMBERS[B], "vote 2")  # A has a #2; B has none
    assert slack.wait_for(lambda s: s.responses_to(url))
    assert "Alpha" not in slack.responses_to(url)[0]["text"]
    assert votes_on(h, A, 2) == 0


def votes_on(h: Running, team: str, number: int) -> int:
    store = h.app.places.store(place_of(team))
    return votes.count(store, catalog.by_number(store, number))


def test_a_form_edits_its_own_workspaces_paper(hosted, slack):
    h = hosted
    slack.reset()
    h.visit.command(B, CHANNELS[B], "edit 1", ADMINS[B])  # opens the form, filled in with B's #1
    (opened,) = slack.calls_to("views.open")
    assert slack.team_of(opened.token) == B
    view = opened.params["view"]
    assert view["blocks"] and "Bagging in Beta" in json.dumps(view)
    values = {"title": "Bagging, revisited"}
    saved = h.visit.submit(B, ADMINS[B], view["callback_id"], values, view["private_metadata"])
    assert saved.status == 200 and not saved.body, saved.body
    assert catalog.by_number(h.app.places.store(place_of(B)), 1).title == "Bagging, revisited"
    assert catalog.by_number(h.app.places.store(place_of(A)), 1).title == "Attention in Alpha"
    # A's admin is nobody in B: Slack's B knows no such member, so B's form refuses them.
    refused = h.visit.submit(B, ADMINS[A], "add_paper", {"title": "From Alpha's admin"}, CHANNELS[B])
    assert "errors" in refused.json()
    assert [p.title for p in catalog.all_papers(h.app.places.store(place_of(B)))] == ["Bagging, revisited"]


def test_app_home_shows_its_own_workspaces_papers(hosted, slack):
    h = hosted
    for team, mine, theirs in ((A, "Attention in Alpha", "Bagging"), (B, "Bagging in Beta", "Alpha")):
        slack.reset()
        assert h.visit.home_opened(team, MEMBERS[team]).status == 200
        assert slack.wait_for(lambda s: s.calls_to("views.publish"))
        (published,) = slack.calls_to("views.publish")
        assert slack.team_of(published.token) == team
        home = json.dumps(published.params["view"])
        assert mine in home and theirs not in home


def test_pages_and_feeds_are_each_workspaces_own(hosted, slack):
    h = hosted
    pages = {}
    for team in (A, B):
        reply = ask(h, team, "calendar")
        pages[team] = re.search(r"(https://paperbot\.example/club/p/[^/\s`]+/g/[^/\s`]+/)", reply)[1]
        assert f"/p/{place_of(team)}/" in pages[team]
    assert "signed up" in ask(h, A, "signup 1").lower()
    slack.reset()
    page = h.visit.page(pages[A])
    assert page.status == 200 and "Attention in Alpha" in page.body and "Bagging" not in page.body
    # The presenter by the name Slack gives (the stand-in's real_name is the id), asked with A's token.
    assert MEMBERS[A] in page.body
    assert [slack.team_of(c.token) for c in slack.calls_to("users.info")] == [A]
    found = h.visit.page(pages[A], "bagging")
    assert found.status == 200 and "Bagging" not in found.body
    page = h.visit.page(pages[B])
    assert page.status == 200 and "Bagging in Beta" in page.body and "Alpha" not in page.body
    assert h.visit.page(pages[B] + "calendar.ics").status == 200
    # A proxy in front may hand the addresses on without PAPERBOT_PUBLIC_URL's path.
    bare = h.visit.get(urlsplit(pages[A]).path.removeprefix(urlsplit(PUBLIC).path))
    assert bare.status == 200 and "Attention in Alpha" in bare.body
    # One workspace's secret under another's address: nothing there.
    crossed = pages[A].replace(place_of(A), place_of(B))
    assert h.visit.page(crossed).status == 404
    assert h.visit.page(crossed + "calendar.ics").status == 404


def test_each_weekly_post_goes_with_its_own_workspaces_token(hosted, slack):
    h = hosted
    h.clock.set(at("2026-12-14 11:00"))  # Monday, past both groups' 09:00 UTC slot
    slack.reset()
    every = EveryPlace(h.app.checks)
    try:
        every.check_post()
        assert every.wait_idle(15)
    finally:
        every.shutdown()
    for team, paper in ((A, "attention-in-alpha"), (B, "bagging-in-beta")):
        (post,) = weekly_posts(slack, CHANNELS[team])
        assert post["metadata"]["event_payload"]["paper_id"] == paper
        sent = [c for c in slack.calls_to("chat.postMessage") if c.params.get("channel") == CHANNELS[team]]
        assert sent and {slack.team_of(c.token) for c in sent} == {team}


def test_announcements_and_reminders_go_with_their_own_workspaces_token(hosted, slack):
    h = hosted
    slack.reset()
    for team in (A, B):
        assert "signed up" in ask(h, team, "signup 1").lower()
    for team in (A, B):  # each sign-up announced in its own group's channel
        assert slack.wait_for(
            lambda s, team=team: any(f"<@{MEMBERS[team]}>" in m["text"] for m in s.messages(CHANNELS[team]))
        )
    h.clock.set(at("2026-12-08 17:30"))  # the meetings are on Thursday at 16:00 UTC: reminders are due
    every = EveryPlace(h.app.checks)
    try:
        every.check_reminders()
        assert every.wait_idle(15)
    finally:
        every.shutdown()
    for team in (A, B):
        (reminder,) = slack.messages(f"D{MEMBERS[team]}")
        assert {A: "Attention in Alpha", B: "Bagging in Beta"}[team] in json.dumps(reminder)
    posts = [c for c in slack.calls_to("chat.postMessage") if c.response["ok"]]
    assert len(posts) >= 4
    for call in posts:
        where = call.params["channel"]
        team = A if where in (CHANNELS[A], f"D{MEMBERS[A]}", MEMBERS[A]) else B
        assert slack.team_of(call.token) == team, (where, call.token)


def test_a_workspaces_flood_holds_its_share_of_the_threads_and_another_is_answered(hosted):
    from contextlib import ExitStack

    from bot.places.fairness import BUSY

    with ExitStack() as held:  # workspace A's share of the answering threads, all in use
        for _ in range(hosted.app.inflight.share):
            assert held.enter_context(hosted.app.inflight.one(place_of(A)))
        assert ask(hosted, A, "tags") == BUSY
        assert "beta-only" in ask(hosted, B, "tags")  # B is answered meanwhile
    assert "alpha-only" in ask(hosted, A, "tags")  # A's share back once its requests are answered
