"""The Slack stand-in's several workspaces: oauth.v2.access as Slack answers it, and every call answered
as the workspace of its token (what the hosted install's tests rely on)."""

from __future__ import annotations

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from tests.support.slack_standin import CLIENT_ID, CLIENT_SECRET, SlackStandin


@pytest.fixture
def slack():
    with SlackStandin(channels={"C0FIRST"}, users={"U0FIRST": {}}) as standin:
        standin.add_workspace("T0A", "Alpha", channels={"C0A"}, admins={"UA0"}, users={"UA1"})
        standin.add_workspace("T0B", "Beta", channels={"C0B"}, admins={"UB0"})
        yield standin


def error_of(call) -> str:
    with pytest.raises(SlackApiError) as raised:
        call()
    return raised.value.response["error"]


def exchange(slack: SlackStandin, code: str, secret: str = CLIENT_SECRET) -> dict:
    """oauth.v2.access as slack_sdk sends it: the app's credentials as HTTP Basic auth."""
    return WebClient(base_url=slack.api_url).oauth_v2_access(client_id=CLIENT_ID, client_secret=secret, code=code).data


def test_a_code_is_exchanged_once_for_a_token_of_its_workspace(slack):
    code = slack.authorize("T0A")
    assert error_of(lambda: exchange(slack, code, secret="wrong")) == "bad_client_secret"
    given = exchange(slack, code)
    assert given["team"] == {"id": "T0A", "name": "Alpha"} and given["authed_user"] == {"id": "UA0"}
    assert given["access_token"].startswith("xoxb-T0A-") and "refresh_token" not in given
    assert error_of(lambda: exchange(slack, code)) == "invalid_code"
    assert slack.tokens("T0A") == [given["access_token"]] and slack.tokens("T0B") == []
    (recorded, *_) = slack.calls_to("oauth.v2.access")
    assert "client_secret" not in recorded.params
    # The credentials as form fields do as well.
    form = WebClient(base_url=slack.api_url).api_call(
        "oauth.v2.access", data={"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "code": slack.authorize("T0B")}
    )
    assert form["team"]["id"] == "T0B"


def test_each_call_is_answered_as_the_workspace_of_its_token(slack):
    alpha = WebClient(base_url=slack.api_url, token=exchange(slack, slack.authorize("T0A"))["access_token"])
    first = WebClient(base_url=slack.api_url, token="xoxb-test")
    assert alpha.auth_test()["team_id"] == "T0A" and first.auth_test()["team_id"] == "T0TEST"
    assert alpha.users_info(user="UA0")["user"]["is_admin"] and not alpha.users_info(user="UA1")["user"]["is_admin"]
    assert error_of(lambda: alpha.users_info(user="UB0")) == "user_not_found"
    assert error_of(lambda: alpha.chat_postMessage(channel="C0B", text="hi")) == "channel_not_found"
    assert error_of(lambda: alpha.chat_postMessage(channel="C0FIRST", text="hi")) == "channel_not_found"
    assert error_of(lambda: first.chat_postMessage(channel="C0A", text="hi")) == "channel_not_found"
    alpha.chat_postMessage(channel="C0A", text="hi")
    (post,) = [c for c in slack.calls_to("chat.postMessage") if c.response["ok"]]
    assert slack.team_of(post.token) == "T0A" and slack.messages("C0A")[0]["team"] == "T0A"


def test_rotating_tokens_expire_and_a_refresh_token_renews_once(slack):
    slack.rotating = True
    given = exchange(slack, slack.authorize("T0A"))
    assert given["expires_in"] == slack.expires_in and given["refresh_token"].startswith("xoxe-")
    client = WebClient(base_url=slack.api_url)

    def renew():
        return client.oauth_v2_access(
            client_id=CLIENT_ID,
            client_secret=CLIENT_SECRET,
            grant_type="refresh_token",
            refresh_token=given["refresh_token"],
        ).data

    renewed = renew()
    assert renewed["token_type"] == "bot" and renewed["access_token"] != given["access_token"]
    assert error_of(renew) == "invalid_refresh_token"
    slack.expire_tokens("T0A")
    assert error_of(lambda: WebClient(base_url=slack.api_url, token=renewed["access_token"]).auth_test()) == (
        "token_expired"
    )


def test_an_uninstall_revokes_the_workspaces_tokens_and_gives_its_event(slack):
    alpha = WebClient(base_url=slack.api_url, token=exchange(slack, slack.authorize("T0A"))["access_token"])
    beta = WebClient(base_url=slack.api_url, token=exchange(slack, slack.authorize("T0B"))["access_token"])
    event = slack.uninstall("T0A")
    assert event["team_id"] == "T0A" and event["event"]["type"] == "app_uninstalled"
    assert error_of(alpha.auth_test) == "token_revoked"
    assert beta.auth_test()["team_id"] == "T0B"
    revoked = slack.revoke("T0B")
    assert revoked["event"]["type"] == "tokens_revoked" and revoked["event"]["tokens"]["bot"] == ["UBT0B"]
    assert error_of(beta.auth_test) == "token_revoked"
