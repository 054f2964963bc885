"""Tests for the Slack stand-in, driven through the real slack_sdk / slack_bolt clients."""

import json
import threading
import time
from http.client import RemoteDisconnected

import pytest
from slack_bolt import App
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
)
from slack_sdk.http_retry.builtin_interval_calculators import FixedValueRetryIntervalCalculator
from slack_sdk.webhook import WebhookClient

from tests.support.slack_standin import Call, RejectedAck, SlackStandin

CHANNEL = "C0PAPERS"
# slack_sdk warns when text is missing; these tests omit it on purpose.
no_text_warning = pytest.mark.filterwarnings("ignore:The top-level `text` argument:UserWarning")


def pt(text):
    return {"type": "plain_text", "text": text}


def section(text):
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def button(action_id, text="Go", value="v"):
    return {"type": "button", "text": pt(text), "action_id": action_id, "value": value}


@pytest.fixture
def slack():
    with SlackStandin(
        channels={CHANNEL, "C0OTHER"}, members={CHANNEL}, users={"UADMIN": {"is_admin": True}, "U1": {"tz": "UTC"}}
    ) as s:
        yield s


@pytest.fixture
def client(slack):
    return WebClient(base_url=slack.api_url, token="xoxb-test", retry_handlers=[])


def error_of(call, *args, **kwargs):
    with pytest.raises(SlackApiError) as info:
        call(*args, **kwargs)
    return info.value.response


def post_error(client, channel, **kwargs):
    return error_of(client.chat_postMessage, channel=channel, text="x", **kwargs)["error"]


def test_post_and_read_history_with_metadata(slack, client):
    posted = [
        client.chat_postMessage(
            channel=CHANNEL,
            text=f"paper {i}",
            metadata={"event_type": "paper_posted", "event_payload": {"paper_id": i, "ok": True}},
        )
        for i in range(5)
    ]
    ts = [r["ts"] for r in posted]
    assert ts == sorted(ts, key=float) and len(set(ts)) == 5 and posted[0]["channel"] == CHANNEL
    assert posted[0]["message"]["bot_id"] == "BBOT"

    plain = client.conversations_history(channel=CHANNEL)
    assert [m["text"] for m in plain["messages"]] == [f"paper {i}" for i in reversed(range(5))]
    assert all("metadata" not in m for m in plain["messages"])

    page1 = client.conversations_history(channel=CHANNEL, limit=2, include_all_metadata=True)
    assert page1["has_more"]
    assert [m["metadata"]["event_payload"]["paper_id"] for m in page1["messages"]] == [4, 3]
    cursor = page1["response_metadata"]["next_cursor"]
    rest = client.conversations_history(channel=CHANNEL, limit=10, cursor=cursor)
    assert [m["ts"] for m in rest["messages"]] == ts[2::-1] and not rest["has_more"]
    assert "response_metadata" not in rest.data

    window = client.conversations_history(channel=CHANNEL, oldest=ts[1], latest=ts[3])
    assert [m["ts"] for m in window["messages"]] == [ts[2]]
    window = client.conversations_history(channel=CHANNEL, oldest=ts[1], latest=ts[3], inclusive=True)
    assert [m["ts"] for m in window["messages"]] == [ts[3], ts[2], ts[1]]

    stored = slack.messages(CHANNEL)
    assert [m["ts"] for m in stored] == ts
    assert stored[0]["metadata"] == {"event_type": "paper_posted", "event_payload": {"paper_id": 0, "ok": True}}


def test_thread_replies_stay_out_of_history(slack, client):
    parent = client.chat_postMessage(channel=CHANNEL, text="parent")["ts"]
    client.chat_postMessage(channel=CHANNEL, text="reply", thread_ts=parent)
    client.chat_postMessage(channel=CHANNEL, text="loud", thread_ts=parent, reply_broadcast=True)
    history = client.conversations_history(channel=CHANNEL)["messages"]
    assert [m["text"] for m in history] == ["loud", "parent"]
    assert len(slack.messages(CHANNEL)) == 3


def test_form_encoded_bodies_are_decoded(slack, client):
    blocks = [section("*hi*")]
    client.api_call("chat.postMessage", params={"channel": CHANNEL, "text": "hi", "blocks": json.dumps(blocks)})
    assert slack.messages(CHANNEL)[0]["blocks"] == blocks
    assert slack.calls_to("chat.postMessage")[0].params["blocks"] == blocks
    resp = error_of(
        client.api_call, "chat.postMessage", params={"channel": CHANNEL, "text": "x", "blocks": "[not json"}
    )
    assert resp["error"] == "invalid_blocks"


def test_direct_messages_and_users(slack, client):
    assert client.conversations_open(users="U1")["channel"]["id"] == "DU1"
    assert client.chat_postMessage(channel="U1", text="hello")["channel"] == "DU1"
    client.chat_postMessage(channel="DU1", text="again")
    assert [m["text"] for m in slack.messages("DU1")] == ["hello", "again"]
    assert post_error(client, "U404") == "channel_not_found"

    admin = client.users_info(user="UADMIN")["user"]
    assert (admin["is_admin"], admin["is_owner"], admin["tz"]) == (True, False, "Europe/Berlin")
    assert client.users_info(user="U1")["user"]["tz"] == "UTC"
    assert error_of(client.users_info, user="U404")["error"] == "user_not_found"

    eph = client.chat_postEphemeral(channel=CHANNEL, user="U1", text="only you")
    assert slack.ephemerals[0]["ts"] == eph["message_ts"] and slack.messages(CHANNEL) == []


def test_channel_rules(slack, client):
    assert post_error(client, "C0OTHER") == "not_in_channel"
    assert post_error(client, "C0NOPE") == "channel_not_found"
    assert error_of(client.conversations_history, channel="C0OTHER")["error"] == "not_in_channel"
    assert error_of(client.conversations_history, channel="C0NOPE")["error"] == "channel_not_found"
    assert slack.messages("C0OTHER") == []
    assert [c.response["error"] for c in slack.calls] == ["not_in_channel", "channel_not_found"] * 2


def test_tokens_and_unknown_methods(slack):
    def err(token, method="auth.test"):
        return error_of(WebClient(base_url=slack.api_url, token=token).api_call, method)["error"]

    assert err("nonsense") == "invalid_auth"
    assert err("xapp-1") == "not_allowed_token_type"
    assert err("xoxb-1", "apps.connections.open") == "not_allowed_token_type"
    assert err("xoxb-1", "chat.fly") == "unknown_method"
    assert WebClient(base_url=slack.api_url).apps_connections_open(app_token="xapp-1")["url"] == slack.socket_url
    assert WebClient(base_url=slack.api_url, token="xoxb-1").auth_test()["user_id"] == "UBOT"
    assert slack.calls[-1].token == "xoxb-1"


def test_rate_limit_then_success_with_retry_handler(slack):
    client = WebClient(
        base_url=slack.api_url, token="xoxb-test", retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=1)]
    )
    slack.fail_next("chat.postMessage", status=429, retry_after=1)
    start = time.monotonic()
    client.chat_postMessage(channel=CHANNEL, text="eventually")
    assert time.monotonic() - start >= 1
    assert [c.status for c in slack.calls_to("chat.postMessage")] == [429, 200]
    assert len(slack.messages(CHANNEL)) == 1


def test_rate_limit_without_retry(slack, client):
    slack.fail_next("chat.postMessage", status=429, retry_after=7)
    with pytest.raises(SlackApiError) as info:
        client.chat_postMessage(channel=CHANNEL, text="x")
    assert info.value.response.status_code == 429
    assert info.value.response.headers["Retry-After"] == "7"
    assert info.value.response["error"] == "ratelimited"
    assert slack.messages(CHANNEL) == []


def test_queued_faults_are_consumed_in_order(slack, client):
    slack.fail_next("chat.postMessage", status=503)
    slack.fail_next("chat.postMessage", error="not_in_channel")
    with pytest.raises(SlackApiError) as info:
        client.chat_postMessage(channel=CHANNEL, text="x")
    assert info.value.response.status_code == 503
    assert post_error(client, CHANNEL) == "not_in_channel"
    client.chat_postMessage(channel=CHANNEL, text="x")
    assert [c.status for c in slack.calls] == [503, 200, 200]
    assert len(slack.messages(CHANNEL)) == 1


def test_concurrent_posts(slack, client):
    def post(n):
        for i in range(10):
            client.chat_postMessage(channel=CHANNEL, text=f"{n}-{i}")

    threads = [threading.Thread(target=post, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ts = [m["ts"] for m in slack.messages(CHANNEL)]
    assert len(ts) == 80 == len(set(ts)) and ts == sorted(ts, key=float)


@no_text_warning
@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"text": "x", "blocks": [{"type": "divider"}] * 51}, "invalid_blocks"),
        ({"text": "x", "blocks": [section("a" * 3001)]}, "invalid_blocks"),
        ({"blocks": [section("no fallback text")]}, "no_text"),
        ({"text": "", "blocks": [section("empty fallback text")]}, "no_text"),
        ({}, "no_text"),
        ({"text": "x", "blocks": [{"type": "actions", "elements": [button("a"), button("a")]}]}, "invalid_blocks"),
        (
            {
                "text": "x",
                "blocks": [
                    section("a"),
                    {"type": "actions", "elements": [button("a")]},
                    {**section("b"), "accessory": button("a")},
                ],
            },
            "invalid_blocks",
        ),
        ({"text": "x", "blocks": [{"type": "actions", "elements": [button("a", text="b" * 76)]}]}, "invalid_blocks"),
        ({"text": "x", "blocks": [{"type": "actions", "elements": [button("a", value="v" * 2001)]}]}, "invalid_blocks"),
        ({"text": "x", "blocks": [{"type": "header", "text": pt("h" * 151)}]}, "invalid_blocks"),
        ({"text": "x", "blocks": [{"type": "no_such_block"}]}, "invalid_blocks"),
        ({"text": "x", "blocks": [{"type": "section", "text": "a bare string"}]}, "invalid_blocks"),
        ({"text": "x", "blocks": [{"type": "actions", "elements": [{"type": "bogus"}]}]}, "invalid_blocks"),
        ({"text": "x", "metadata": {"event_type": "e"}}, "invalid_metadata"),
        ({"text": "x", "metadata": {"event_type": "e", "event_payload": {"a": [1]}}}, "invalid_metadata"),
    ],
)
def test_rejects_what_slack_rejects(slack, client, kwargs, error):
    resp = error_of(client.chat_postMessage, channel=CHANNEL, **kwargs)
    assert resp["error"] == error
    assert resp["error"] == "no_text" or resp.get("detail")
    assert slack.messages(CHANNEL) == []
    assert not slack.calls[-1].response["ok"]


def test_accepts_limits_and_truncates_long_text(slack, client):
    actions = {"type": "actions", "elements": [button("a"), button("b")]}
    blocks = [{"type": "divider"}] * 49 + [actions]
    client.chat_postMessage(channel=CHANNEL, text="t" * 40_001, blocks=blocks)
    assert len(slack.messages(CHANNEL)[0]["text"]) == 40_000


@no_text_warning
def test_chat_update(slack, client):
    ts = client.chat_postMessage(channel=CHANNEL, text="v1")["ts"]
    blocks = [section("*v2*")]
    resp = client.chat_update(channel=CHANNEL, ts=ts, text="v2", blocks=blocks)
    assert resp["ts"] == ts and resp["message"]["text"] == "v2"
    [stored] = slack.messages(CHANNEL)
    assert (stored["text"], stored["blocks"], stored["ts"]) == ("v2", blocks, ts)
    assert client.conversations_history(channel=CHANNEL)["messages"][0]["text"] == "v2"
    assert error_of(client.chat_update, channel=CHANNEL, ts="1.000001", text="x")["error"] == "message_not_found"
    assert error_of(client.chat_update, channel=CHANNEL, ts=ts, blocks=blocks)["error"] == "no_text"


def test_views(slack, client):
    modal = {
        "type": "modal",
        "title": pt("Add paper"),
        "submit": pt("Save"),
        "external_id": "ext1",
        "blocks": [{"type": "input", "label": pt("URL"), "element": {"type": "plain_text_input", "action_id": "url"}}],
    }
    view = client.views_open(trigger_id="1.2", view=modal)["view"]
    assert view["id"].startswith("V") and view["hash"]
    updated = client.views_update(view_id=view["id"], view={**modal, "title": pt("Edit paper")}, hash=view["hash"])[
        "view"
    ]
    assert updated["id"] == view["id"] and updated["title"]["text"] == "Edit paper"
    assert client.views_update(external_id="ext1", view=modal)["view"]["id"] == view["id"]
    stale = error_of(client.views_update, view_id=view["id"], view=modal, hash=view["hash"])
    assert stale["error"] == "hash_conflict"
    assert (
        error_of(client.views_open, trigger_id="1.2", view={**modal, "title": pt("x" * 25)})["error"]
        == "invalid_arguments"
    )
    assert (
        error_of(client.views_open, trigger_id="1.2", view={**modal, "blocks": [section("x" * 3001)]})["error"]
        == "invalid_arguments"
    )

    home = {"type": "home", "blocks": [section("Papers of the week")]}
    client.views_publish(user_id="U1", view=home)
    assert slack.home_views["U1"]["blocks"] == home["blocks"]
    assert (
        error_of(client.views_publish, user_id="U1", view={"type": "home", "blocks": [{"type": "divider"}] * 101})[
            "error"
        ]
        == "invalid_arguments"
    )
    assert error_of(client.views_publish, user_id="U1", view=modal)["error"] == "invalid_arguments"
    assert error_of(client.views_publish, user_id="U404", view=home)["error"] == "user_not_found"


def test_response_url(slack):
    url = slack.response_url()
    ok = WebhookClient(url).send(text="saved", blocks=[section("saved")], replace_original=True)
    assert ok.status_code == 200
    assert slack.responses == [{"text": "saved", "blocks": [section("saved")], "replace_original": True}]
    bad = WebhookClient(url).send(blocks=[section("no text")])
    assert bad.status_code == 400 and json.loads(bad.body)["error"] == "no_text"
    assert WebhookClient(url).send(delete_original=True).status_code == 200
    for _ in range(3):
        WebhookClient(url).send(text="again")
    assert WebhookClient(url).send(text="sixth").status_code == 404  # 5 uses per URL
    assert WebhookClient(url[:-3] + "xyz").send(text="x").status_code == 404
    assert len(slack.responses) == 5 and slack.calls[0].method == "response_url"


def test_drop_after_accept(slack, client):
    seen = []
    slack.on_accept = lambda call: seen.append((call.method, len(slack.messages(CHANNEL))))
    slack.fail_next("chat.postMessage", accept_then="drop")
    with pytest.raises(RemoteDisconnected):
        client.chat_postMessage(channel=CHANNEL, text="did it post?")
    assert [m["text"] for m in slack.messages(CHANNEL)] == ["did it post?"]
    assert seen == [("chat.postMessage", 1)]
    [call] = slack.calls
    assert call.status == 0 and call.response["ok"]


def test_connection_retry_duplicates_a_dropped_post(slack):
    # A default WebClient retries once on RemoteDisconnected (ConnectionErrorRetryHandler), so
    # it posts twice when Slack accepted the first attempt.  Same handler, without the backoff:
    assert [type(h) for h in WebClient().retry_handlers] == [ConnectionErrorRetryHandler]
    retry_now = ConnectionErrorRetryHandler(interval_calculator=FixedValueRetryIntervalCalculator(0))
    client = WebClient(base_url=slack.api_url, token="xoxb-test", retry_handlers=[retry_now])
    slack.fail_next("chat.postMessage", accept_then="drop")
    client.chat_postMessage(channel=CHANNEL, text="x")
    assert len(slack.messages(CHANNEL)) == 2


def test_hang_after_accept_keeps_server_responsive(slack):
    slack.fail_next("chat.postMessage", accept_then="hang", seconds=30)
    slow = WebClient(base_url=slack.api_url, token="xoxb-test", timeout=0.3, retry_handlers=[])
    with pytest.raises(TimeoutError):
        slow.chat_postMessage(channel=CHANNEL, text="slow")
    assert slack.wait_for(lambda s: len(s.messages(CHANNEL)) == 1)
    assert slow.auth_test()["ok"]  # while the other request still hangs


def test_wait_for_and_reset(slack, client):
    assert not slack.wait_for(lambda s: s.messages(CHANNEL), timeout=0.05)
    threading.Timer(0.05, client.chat_postMessage, kwargs={"channel": CHANNEL, "text": "x"}).start()
    assert slack.wait_for(lambda s: s.messages(CHANNEL))
    slack.fail_next("auth.test", error="fatal_error")
    slack.reset()
    assert slack.calls == [] and slack.messages(CHANNEL) == []
    assert client.auth_test()["ok"]
    assert isinstance(slack.calls[0], Call)


def test_fail_next_argument_checks(slack):
    with pytest.raises(ValueError):
        slack.fail_next("chat.postMessage")
    with pytest.raises(ValueError):
        slack.fail_next("chat.postMessage", status=500, error="x")
    with pytest.raises(ValueError):
        slack.fail_next("chat.postMessage", accept_then="explode")


def test_socket_mode_round_trip(slack):
    app = App(client=WebClient(base_url=slack.api_url, token="xoxb-test"))

    @app.command("/paper")
    def paper(ack, command):
        ack(text=f"Looking up {command['text']}")

    @app.command("/broken")
    def broken(ack):
        ack(blocks=[section("blocks but no text")])

    @app.action("save")
    def save(ack, respond):
        ack()
        respond(text="saved")

    @app.event("app_mention")
    def mention(event, say):
        say(text=f"hi <@{event['user']}>")

    handler = SocketModeHandler(app, "xapp-test")
    handler.connect()
    try:
        assert slack.socket_connected.wait(5)
        command = {
            "command": "/paper",
            "text": "2401.00001",
            "user_id": "U1",
            "team_id": "T0TEST",
            "channel_id": CHANNEL,
            "response_url": slack.response_url(),
            "trigger_id": "1.2",
            "api_app_id": "A0TEST",
        }
        assert slack.socket_send("slash_commands", command)["text"] == "Looking up 2401.00001"
        with pytest.raises(RejectedAck):
            slack.socket_send("slash_commands", {**command, "command": "/broken"})

        action = {
            "type": "block_actions",
            "user": {"id": "U1"},
            "team": {"id": "T0TEST"},
            "api_app_id": "A0TEST",
            "channel": {"id": CHANNEL},
            "trigger_id": "1.2",
            "response_url": slack.response_url(),
            "container": {"type": "message"},
            "actions": [{"type": "button", "action_id": "save", "block_id": "b", "value": "v", "action_ts": "1.2"}],
        }
        assert slack.socket_send("interactive", action) == {}
        assert slack.wait_for(lambda s: s.responses == [{"text": "saved"}])

        event = {
            "type": "event_callback",
            "team_id": "T0TEST",
            "api_app_id": "A0TEST",
            "event_id": "Ev1",
            "event_time": 1,
            "event": {
                "type": "app_mention",
                "user": "U1",
                "text": "<@UBOT> hi",
                "channel": CHANNEL,
                "ts": "1.2",
                "event_ts": "1.2",
            },
        }
        assert slack.socket_send("events_api", event) == {}
        assert slack.wait_for(lambda s: [m["text"] for m in s.messages(CHANNEL)] == ["hi <@U1>"])

        slack.socket_disconnect()  # the client must fetch a new URL and reconnect
        assert slack.wait_for(lambda s: s.socket_connection_count == 2)
        assert slack.socket_send("slash_commands", command)["text"].startswith("Looking up")
    finally:
        handler.close()
    assert slack.wait_for(lambda s: not s.socket_connected.is_set())
    assert len(slack.calls_to("apps.connections.open")) == 2


def test_socket_send_without_client_times_out(slack):
    with pytest.raises(TimeoutError):
        slack.socket_send("slash_commands", {}, timeout=0.05)
