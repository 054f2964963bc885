"""Rights come from the workspace a request comes from (the bot token's, from auth.test): another
workspace's requests, signed by Slack as any are, get one line and change nothing."""

from __future__ import annotations

import json
import time
from urllib.parse import urlencode

from bot.catalog import queries as catalog
from bot.schedule import slots
from tests.support.clock import Clock, at
from tests.support.slack_harness import slash_form

OTHER = "T0OTHER"


def payload_from(h, kind: str, user: str, **fields) -> dict:
    response = h.dispatch(
        urlencode(
            {
                "payload": json.dumps(
                    {"type": kind, "team": {"id": OTHER}, "user": {"id": user}, "api_app_id": "A0TEST", **fields}
                )
            }
        )
    )
    assert response.status == 200, response.body
    return json.loads(response.body) if response.body else {}


def test_another_workspace_gets_one_line_and_changes_nothing(make_harness, slack):
    h = make_harness(Clock(at("2026-12-07 10:00")), PAPERBOT_ADMINS="UADMIN")
    for line in ("delete 7", "signup 7"):
        response = h.dispatch(slash_form(line, "UADMIN", slack.response_url(), team_id=OTHER))
        said = json.loads(response.body)
        assert said["response_type"] == "ephemeral" and "not set up in this server or workspace" in said["text"]
    assert catalog.find(h.bot.store, "7") is not None
    assert all(
        getattr(w, "presenter", None) != "UADMIN" for w in slots.schedule(h.bot.store, h.bot.group, h.bot.clock())
    )
    url = slack.response_url()
    button = {
        "type": "button",
        "action_id": "run:0",
        "value": "signup 7",
        "block_id": "b",
        "action_ts": str(time.time()),
    }
    payload_from(
        h,
        "block_actions",
        "U1",
        actions=[button],
        response_url=url,
        trigger_id="1.2.3",
        container={"type": "message", "message_ts": "1.2", "channel_id": "C0TEST", "is_ephemeral": True},
    )
    h.bot.drain()
    assert "not set up" in slack.responses_to(url)[0]["text"]
    assert all(getattr(w, "presenter", None) != "U1" for w in slots.schedule(h.bot.store, h.bot.group, h.bot.clock()))
    view = {
        "id": "V9",
        "type": "modal",
        "callback_id": "edit_paper",
        "private_metadata": "C0TEST|7|",
        "state": {"values": {"title": {"title": {"type": "plain_text_input", "value": "Renamed elsewhere"}}}},
    }
    refused = payload_from(h, "view_submission", "UADMIN", view=view)
    assert refused["response_action"] == "errors" and "not set up" in refused["errors"]["title"]
    assert catalog.find(h.bot.store, "7").title != "Renamed elsewhere"
    assert "not set up" not in h.command("show 7", user="U1")["text"]  # the install's workspace still works


def test_a_token_whose_workspace_slack_does_not_name_still_answers(make_harness, slack):
    # With no workspace to compare with, paperbot cannot tell one from another: it answers, as it did
    # before it told them apart, rather than refusing every request.
    slack.auth_team = None
    h = make_harness(Clock(at("2026-12-07 10:00")), PAPERBOT_ADMINS="UADMIN")
    said = json.loads(h.dispatch(slash_form("signup 7", "U1", slack.response_url())).body)
    assert "You're signed up" in said["text"]
