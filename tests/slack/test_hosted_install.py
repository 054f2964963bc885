"""A hosted install on Slack: workspaces install the app through Slack's install flow (/slack/install,
Slack's consent, /slack/oauth_redirect, against the stand-in's oauth.v2.access); the tokens are kept
sealed, rotated when they expire, and deleted when a workspace removes the app."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography.fernet import Fernet

from bot.catalog import queries as catalog
from bot.chat.commands import AWAY
from bot.places import operators
from bot.places.registry import open_place
from bot.runtime.hosting import EveryPlace
from bot.slack.hosted import NOT_INSTALLED
from tests.support.clock import Clock, at
from tests.support.databases import ON_POSTGRES, db_rows
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
from tests.support.slack_standin import APP_ID, CLIENT_ID, SlackStandin


@pytest.fixture
def slack():
    with SlackStandin() as standin:
        two_workspaces(standin)
        yield standin


@pytest.fixture
def hosted(tmp_path, slack, monkeypatch):
    as_run_has_them(monkeypatch)
    made: list[Running] = []

    def start(clock=None, **env) -> Running:
        running = Running(hosted_settings(tmp_path, slack.api_url, **env), slack, clock)
        made.append(running)
        return running

    yield start
    for running in made:
        running.close()


#: A new place starts empty, and says how to begin.
EMPTY = "The catalog is empty: add a paper with"


def said(reply: dict) -> str:
    return reply.get("text", "")


def start_group(h: Running, team: str) -> None:
    """The workspace's admin makes its channel a group meeting on Thursdays, and adds a paper by the form."""
    channel, admin = CHANNELS[team], ADMINS[team]
    assert "started" in said(h.visit.command(team, channel, "group start", admin)).lower()
    h.visit.command(team, channel, "group set meeting thu 16:00", admin)
    title = {A: "Attention in Alpha", B: "Bagging in Beta"}[team]
    added = h.visit.submit(team, admin, "add_paper", {"title": title, "tags": "lab"}, channel)
    assert added.status == 200 and not added.body, added.body


def test_two_workspaces_install_through_slacks_flow_each_with_a_token_of_its_own(hosted, slack):
    h = hosted()
    for team, name, path in ((A, "Alpha lab", "/slack/install"), (B, "Beta lab", "/club/slack/install")):
        begun = h.visit.begin(path)  # with or without PAPERBOT_PUBLIC_URL's path, as a proxy hands it on
        asked = parse_qs(urlsplit(begun.link).query)
        assert asked["client_id"] == [CLIENT_ID] and "commands" in asked["scope"][0].split(",")
        assert asked["redirect_uri"] == [f"{PUBLIC}/slack/oauth_redirect"]
        page = h.visit.finish(slack.authorize(team), begun.state, begun.cookie)
        assert page.status == 200 and f"paperbot is installed in {name}" in page.body, page.body
    assert [c.response["ok"] for c in slack.calls_to("oauth.v2.access")] == [True, True]
    installers = h.house.db.execute("SELECT place, installer FROM slack_installs ORDER BY place").fetchall()
    assert [tuple(row) for row in installers] == [(place_of(A), ADMINS[A]), (place_of(B), ADMINS[B])]
    assert [(p.id, p.name) for p in h.app.places.active()] == [(place_of(A), "Alpha lab"), (place_of(B), "Beta lab")]
    for team in (A, B):
        slack.reset()
        assert said(h.visit.command(team, CHANNELS[team], "tags", MEMBERS[team])).startswith(EMPTY)
        # Slack was asked (auth.test: whose workspace) with that workspace's own token, and no other.
        assert slack.calls and {slack.team_of(c.token) for c in slack.calls} == {team}
        assert {c.token for c in slack.calls} == set(slack.tokens(team))


def test_an_install_link_is_good_once_and_only_in_the_browser_that_began_it(hosted, slack):
    h = hosted()
    begun = h.visit.begin()
    assert h.visit.finish(slack.authorize(A), begun.state, begun.cookie).status == 200
    again = h.visit.finish(slack.authorize(B), begun.state, begun.cookie)
    assert again.status == 400 and "expired or was used already" in again.body
    forged = h.visit.finish(slack.authorize(B), "not-a-state-it-gave", "slack-app-oauth-state=not-a-state-it-gave")
    assert forged.status == 400 and "expired or was used already" in forged.body
    elsewhere = h.visit.finish(slack.authorize(B), h.visit.begin().state, None)
    assert elsewhere.status == 400 and "another browser" in elsewhere.body
    assert len(slack.calls_to("oauth.v2.access")) == 1  # no code of B's was exchanged
    assert [p.id for p in h.app.places.active()] == [place_of(A)]
    assert said(h.visit.command(B, CHANNELS[B], "tags", MEMBERS[B])) == NOT_INSTALLED
    late = h.visit.begin()
    with h.house.write() as db:  # the admin took longer than a state lasts on Slack's consent page
        db.execute("UPDATE oauth_states SET expires_at = ?", [0])
    assert "expired or was used already" in h.visit.finish(slack.authorize(B), late.state, late.cookie).body
    assert h.visit.install(B).status == 200  # a fresh link works


def test_an_install_that_slack_does_not_confirm_says_so_in_a_page(hosted, slack):
    h = hosted()
    for _ in range(2):  # Slack's answer lost, and again when slack_sdk asks once more
        slack.fail_next("oauth.v2.access", accept_then="drop")
    page = h.visit.install(A)
    assert page.status == 503 and "paperbot was not installed" in page.body and "/slack/install" in page.body
    slack.fail_next("oauth.v2.access", error="invalid_code")
    page = h.visit.install(A)
    assert page.status == 401 and "Slack did not confirm the install" in page.body
    assert h.app.places.active() == []
    assert h.visit.install(A).status == 200


def test_a_cancelled_install_says_so_and_keeps_nothing(hosted, slack):
    h = hosted()
    begun = h.visit.begin()
    page = h.visit.get(f"/slack/oauth_redirect?error=access_denied&state={begun.state}", {"Cookie": begun.cookie})
    assert "cancelled in Slack" in page.body and "/slack/install" in page.body
    assert h.app.places.active() == []


def test_the_tokens_are_sealed_in_the_database_and_useless_without_the_key(hosted, slack, tmp_path):
    h = hosted()
    for team in (A, B):
        h.visit.install(team)
    tokens = slack.tokens(A) + slack.tokens(B)
    kept = db_rows(tmp_path, "SELECT place, bot_token FROM slack_installs ORDER BY place")
    assert [place for place, _ in kept] == [place_of(A), place_of(B)]
    assert not any("xoxb-" in sealed or any(t in sealed for t in tokens) for _, sealed in kept)
    if not ON_POSTGRES:  # the files themselves: the database, its journal, every place's file
        h.close()
        for path in (p for p in tmp_path.rglob("*") if p.is_file()):
            assert b"xoxb-" not in path.read_bytes(), path
    h.close()
    # Under another key the kept tokens open to nothing: each workspace is told to install again.
    other = hosted(PAPERBOT_SECRET_KEY=Fernet.generate_key().decode())
    assert said(other.visit.command(A, CHANNELS[A], "tags", MEMBERS[A])) == NOT_INSTALLED
    other.close()
    assert said(hosted().visit.command(A, CHANNELS[A], "tags", MEMBERS[A])).startswith(EMPTY)


def test_an_uninstall_stops_that_workspace_and_no_other(hosted, slack):
    clock = Clock(at("2026-12-08 10:00"))  # a Tuesday
    h = hosted(clock)
    for team in (A, B):
        h.visit.install(team)
        start_group(h, team)
    assert h.visit.event(slack.uninstall(A)).status == 200
    assert db_rows_of_installs(h) == [place_of(B)]
    assert [p.id for p in h.app.places.active()] == [place_of(B)]
    for text in ("tags", "show 1", "group stop"):
        assert said(h.visit.command(A, CHANNELS[A], text, ADMINS[A])) == NOT_INSTALLED
    assert "Bagging in Beta" in said(h.visit.command(B, CHANNELS[B], "show 1", MEMBERS[B]))
    refused = h.visit.submit(A, ADMINS[A], "add_paper", {"title": "After the uninstall"}, CHANNELS[A])
    assert NOT_INSTALLED in refused.json()["errors"]["title"]

    clock.set(at("2026-12-14 11:00"))  # Monday, past both groups' 09:00 UTC slot
    slack.reset()
    every = EveryPlace(h.app.checks)
    every.check_post()
    assert every.wait_idle(15)
    every.shutdown()
    assert [p["metadata"]["event_payload"]["paper_id"] for p in weekly_posts(slack, CHANNELS[B])] == ["bagging-in-beta"]
    assert weekly_posts(slack, CHANNELS[A]) == []
    assert not any(slack.team_of(c.token) == A for c in slack.calls)  # nothing more went out with its tokens

    # An admin adds it again: its papers and groups were kept.
    h.visit.install(A)
    assert "Attention in Alpha" in said(h.visit.command(A, CHANNELS[A], "show 1", MEMBERS[A]))


def test_revoked_tokens_stop_that_workspace_too(hosted, slack):
    h = hosted()
    for team in (A, B):
        h.visit.install(team)
    assert h.visit.event(slack.revoke(B)).status == 200
    assert said(h.visit.command(B, CHANNELS[B], "tags", MEMBERS[B])) == NOT_INSTALLED
    assert said(h.visit.command(A, CHANNELS[A], "tags", MEMBERS[A])).startswith(EMPTY)


def test_a_revocation_of_a_shape_slack_does_not_send_is_refused_and_stops_nothing(hosted, slack):
    h = hosted()
    h.visit.install(A)
    odd = {"type": "tokens_revoked", "tokens": "bot", "event_ts": "1.2"}  # Slack sends an object: a 400, not a 500
    body = {"type": "event_callback", "team_id": A, "api_app_id": APP_ID, "event_id": "Ev0DD", "event": odd}
    assert h.visit.event(body).status == 400
    assert said(h.visit.command(A, CHANNELS[A], "tags", MEMBERS[A])).startswith(EMPTY)


def test_an_expiring_token_is_rotated_before_it_is_used(hosted, slack):
    slack.rotating = True
    slack.expires_in = 3600  # within the two hours before expiry when a token is renewed: due at once
    h = hosted()
    h.visit.install(A)
    installed = slack.tokens(A)
    slack.expires_in = 12 * 3600
    slack.expire_tokens(A)  # the install's token works no more: only a rotated one is answered
    slack.reset()
    assert "started" in said(h.visit.command(A, CHANNELS[A], "group start", ADMINS[A])).lower()  # users.info
    renewals = [c for c in slack.calls_to("oauth.v2.access") if c.params.get("grant_type") == "refresh_token"]
    assert len(renewals) == 1 and renewals[0].response["ok"]
    rotated = slack.tokens(A)[-1]
    assert rotated not in installed
    used = [c for c in slack.calls if c.method != "oauth.v2.access"]
    assert used and {c.token for c in used} == {rotated}
    assert all(c.response["ok"] for c in used)
    h.close()
    # What the database keeps is the rotated token (and its refresh token): a restart uses it as it is.
    slack.reset()
    again = hosted()
    assert said(again.visit.command(A, CHANNELS[A], "tags", MEMBERS[A])).startswith(EMPTY)
    assert slack.calls_to("oauth.v2.access") == []
    assert {c.token for c in slack.calls} == {rotated}


def db_rows_of_installs(h: Running) -> list[str]:
    return [row["place"] for row in h.house.db.query("SELECT place FROM slack_installs ORDER BY place")]


def test_a_token_changed_by_another_process_is_the_one_used(hosted, slack):
    # Two processes on one database (replicas): one sees the workspace uninstall and install again;
    # the other, which had answered it with the old token, answers with the new one from then on.
    first, second = hosted(), hosted()
    first.visit.install(A)
    assert said(second.visit.command(A, CHANNELS[A], "tags", MEMBERS[A])).startswith(EMPTY)
    first.visit.event(slack.uninstall(A))
    assert said(second.visit.command(A, CHANNELS[A], "tags", MEMBERS[A])) == NOT_INSTALLED
    first.visit.install(A)
    slack.reset()
    assert "started" in said(second.visit.command(A, CHANNELS[A], "group start", ADMINS[A])).lower()
    assert slack.calls and {c.token for c in slack.calls} == {slack.tokens(A)[-1]}


def test_a_self_hosted_install_that_is_hosted_too_keeps_its_own_workspace_as_it_was(tmp_path):
    # SLACK_BOT_TOKEN's workspace is the install's own place (its database as it was, its pages where
    # they were); workspaces that install the app are places beside it.
    with SlackStandin(channels={"C0PAPERS"}, users={"UADMIN": {}, "U1": {}}) as slack:
        two_workspaces(slack)
        clock = Clock(at("2026-12-08 10:00"))
        own = {"SLACK_BOT_TOKEN": "xoxb-test", "PAPERBOT_CHANNEL": "C0PAPERS", "PAPERBOT_ADMINS": "UADMIN"}
        h = Running(hosted_settings(tmp_path, slack.api_url, PAPERBOT_MEETING="thu 16:00", **own), slack, clock)
        try:
            first = h.house.db.execute("SELECT title FROM papers WHERE number = 1").fetchone()[0]
            assert first in said(h.visit.command("T0TEST", "C0PAPERS", "show 1", "U1"))
            h.visit.install(A)
            start_group(h, A)
            assert first not in said(h.visit.command(A, CHANNELS[A], "show 1", MEMBERS[A]))
            reply = said(h.visit.command("T0TEST", "C0PAPERS", "calendar", "U1"))
            page = re.search(r"(https://paperbot\.example/club/g/[^/\s`]+/)", reply)[1]
            shown = h.visit.page(page)
            assert shown.status == 200 and first in shown.body and "Attention in Alpha" not in shown.body

            clock.set(at("2026-12-14 11:00"))
            slack.reset()
            every = EveryPlace(h.app.checks)
            every.check_post()
            assert every.wait_idle(15)
            every.shutdown()
            (own_post,) = weekly_posts(slack, "C0PAPERS")
            (their_post,) = weekly_posts(slack, CHANNELS[A])
            assert their_post["metadata"]["event_payload"]["paper_id"] == "attention-in-alpha"
            posts = {c.params["channel"]: c.token for c in slack.calls_to("chat.postMessage") if c.response["ok"]}
            assert posts == {"C0PAPERS": "xoxb-test", CHANNELS[A]: slack.tokens(A)[-1]}
        finally:
            h.close()


@pytest.mark.sqlite_only
def test_a_workspace_whose_tables_cannot_be_opened_gets_one_line_and_holds_no_other(hosted, slack, tmp_path):
    first = hosted()
    for team in (A, B):
        first.visit.install(team)
    first.close()
    kept = tmp_path / "paperbot.db-places" / f"{place_of(A)}.db"
    for leftover in kept.parent.glob(kept.name + "*"):
        leftover.unlink()
    kept.mkdir()  # its file is no file now: the place's store cannot be opened
    h = hosted()
    assert said(h.visit.command(A, CHANNELS[A], "tags", MEMBERS[A])) == AWAY
    assert said(h.visit.command(B, CHANNELS[B], "tags", MEMBERS[B])).startswith(EMPTY)


def test_one_workspace_with_the_apps_credentials_in_the_environment_still_answers(make_harness, monkeypatch):
    # PAPERBOT_HOSTED=false keeps one workspace when the environment holds SLACK_CLIENT_ID for another tool:
    # Bolt, which reads them there too, must not turn the app into an install flow's of its own.
    as_run_has_them(monkeypatch)
    h = make_harness(PAPERBOT_HOSTED="false", SLACK_CLIENT_ID=CLIENT_ID, SLACK_CLIENT_SECRET="its-secret")
    assert not h.bot.settings.installs
    assert "parallelism-dp" in said(h.command("tags"))


def test_a_workspace_forgotten_while_served_is_not_installed_and_comes_back_empty(hosted, slack):
    h = hosted()
    for team in (A, B):
        h.visit.install(team)
        start_group(h, team)
    # The operator forgets A from another process (`paperbot forget`) while the install serves it.
    places = operators.opened(h.settings.db_path, place_of(A), said="forget")
    try:
        operators.forget(places, operators.named(places, place_of(A)))
    finally:
        places.close()
        places.house.close()
    assert said(h.visit.command(A, CHANNELS[A], "show 1", MEMBERS[A])) == NOT_INSTALLED
    assert "Bagging in Beta" in said(h.visit.command(B, CHANNELS[B], "show 1", MEMBERS[B]))

    # Added again, it starts empty, and what it adds now is kept where a restart finds it.
    h.visit.install(A)
    assert said(h.visit.command(A, CHANNELS[A], "tags", MEMBERS[A])).startswith(EMPTY)
    h.visit.command(A, CHANNELS[A], "group start", ADMINS[A])
    added = h.visit.submit(A, ADMINS[A], "add_paper", {"title": "After the forgetting"}, CHANNELS[A])
    assert added.status == 200 and not added.body, added.body
    store = open_place(h.settings.db_path, place_of(A), writes=False)
    try:
        assert [p.title for p in catalog.all_papers(store)] == ["After the forgetting"]
    finally:
        store.close()
