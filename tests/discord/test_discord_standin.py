"""The Discord stand-in itself: it must refuse what Discord refuses, or the tests prove nothing."""

from __future__ import annotations

import http.client
import json

import pytest
from nacl.signing import VerifyKey

from tests.support.discord_standin import APP_ID, BOT_ID, GUILD, KEY, PUBLIC_KEY, TOKEN, DiscordStandin, pings, sign

CHANNEL = "1000000000000000003"
USER, SHY = "1300000000000000002", "1300000000000000003"


@pytest.fixture
def discord():
    with DiscordStandin(channels={CHANNEL}, users={USER: {}, SHY: {"dms": False}}) as d:
        yield d


def call(d: DiscordStandin, method: str, path: str, body=None, token: str | None = TOKEN, timeout: float = 5):
    host, port = d.api_url.split("//")[1].split("/")[0].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bot {token}"
    conn.request(method, "/api/v10" + path, body=json.dumps(body) if body is not None else None, headers=headers)
    r = conn.getresponse()
    raw = r.read()
    conn.close()
    return r.status, (json.loads(raw) if raw else None), dict(r.getheaders())


def test_the_bot_and_application_and_a_wrong_token(discord):
    assert call(discord, "GET", "/users/@me")[1]["id"] == BOT_ID
    assert call(discord, "GET", "/applications/@me")[1]["id"] == APP_ID
    status, body, _ = call(discord, "GET", "/users/@me", token="nope")
    assert status == 401 and body["code"] == 0


def test_a_nonce_enforced_twice_gives_the_first_message(discord):
    body = {"content": "hi", "nonce": "post 2026-W49", "enforce_nonce": True}
    first = call(discord, "POST", f"/channels/{CHANNEL}/messages", body)[1]
    again = call(discord, "POST", f"/channels/{CHANNEL}/messages", {**body, "content": "hi again"})[1]
    assert first["id"] == again["id"] and len(discord.messages(CHANNEL)) == 1
    call(discord, "POST", f"/channels/{CHANNEL}/messages", {"content": "hi", "nonce": "post 2026-W49"})
    assert len(discord.messages(CHANNEL)) == 2  # without enforce_nonce, no dedupe
    assert call(discord, "POST", f"/channels/{CHANNEL}/messages", {"content": "x", "nonce": "n" * 26})[0] == 400


@pytest.mark.parametrize(
    "body",
    [
        {"content": "x" * 2001},
        {"embeds": [{"description": "x"}] * 11},
        {"embeds": [{"description": "x" * 3001}, {"description": "x" * 3000}]},
        {"embeds": [{"description": "x" * 4097}]},
        {
            "content": "x",
            "components": [
                {
                    "type": 1,
                    "components": [{"type": 2, "style": 1, "label": "a", "custom_id": str(i)} for i in range(6)],
                }
            ],
        },
        {
            "content": "x",
            "components": [{"type": 1, "components": [{"type": 2, "style": 1, "label": "a", "custom_id": "c" * 101}]}],
        },
        {
            "content": "x",
            "components": [{"type": 1, "components": [{"type": 2, "style": 1, "label": "a", "custom_id": "1"}]}] * 6,
        },
        {},
    ],
)
def test_messages_past_discords_limits_are_refused_with_its_error(discord, body):
    status, answer, _ = call(discord, "POST", f"/channels/{CHANNEL}/messages", body)
    assert status == 400 and answer["code"] in (50035, 50006)
    assert discord.messages(CHANNEL) == []


def test_history_is_newest_first_with_limit_before_and_after(discord):
    ids = [call(discord, "POST", f"/channels/{CHANNEL}/messages", {"content": str(i)})[1]["id"] for i in range(5)]
    page = call(discord, "GET", f"/channels/{CHANNEL}/messages?limit=2")[1]
    assert [m["id"] for m in page] == ids[:-3:-1]
    older = call(discord, "GET", f"/channels/{CHANNEL}/messages?limit=2&before={page[-1]['id']}")[1]
    assert [m["id"] for m in older] == [ids[2], ids[1]]
    newer = call(discord, "GET", f"/channels/{CHANNEL}/messages?limit=2&after={ids[0]}")[1]
    assert [m["id"] for m in newer] == [ids[2], ids[1]]
    assert call(discord, "GET", f"/channels/{CHANNEL}/messages?limit=101")[0] == 400


def test_a_dm_to_a_member_who_takes_none_is_refused_with_50007(discord):
    dm = call(discord, "POST", "/users/@me/channels", {"recipient_id": USER})[1]["id"]
    assert call(discord, "POST", f"/channels/{dm}/messages", {"content": "hi"})[0] == 200
    shy = call(discord, "POST", "/users/@me/channels", {"recipient_id": SHY})[1]["id"]
    status, body, _ = call(discord, "POST", f"/channels/{shy}/messages", {"content": "hi"})
    assert status == 403 and body["code"] == 50007


def test_an_interaction_is_answered_once_then_edited_and_followed_up(discord):
    path = "/interactions/1200000000000000001/tok-1/callback"
    assert call(discord, "POST", path, {"type": 5, "data": {"flags": 64}}, token=None)[0] == 204
    status, body, _ = call(discord, "POST", path, {"type": 4, "data": {"content": "again"}}, token=None)
    assert status == 400 and body["code"] == 40060
    assert (
        call(discord, "PATCH", f"/webhooks/{APP_ID}/tok-1/messages/@original", {"content": "done"}, token=None)[0]
        == 200
    )
    assert discord.original("tok-1")["content"] == "done"
    assert call(discord, "POST", f"/webhooks/{APP_ID}/tok-1", {"content": "more"}, token=None)[0] == 200
    assert (
        call(discord, "PATCH", f"/webhooks/{APP_ID}/tok-2/messages/@original", {"content": "x"}, token=None)[0] == 404
    )


def test_registration_is_checked_and_kept_by_scope(discord):
    good = [
        {
            "name": "paper",
            "description": "papers",
            "options": [
                {
                    "name": "tag",
                    "type": 1,
                    "description": "a tag",
                    "options": [{"name": "tag", "type": 3, "description": "the tag", "required": True}],
                }
            ],
        }
    ]
    assert call(discord, "PUT", f"/applications/{APP_ID}/guilds/{GUILD}/commands", good)[0] == 200
    assert discord.registered[GUILD] == good
    bad = [
        {
            "name": "Paper",
            "description": "x",
            "options": [
                {"name": "x", "type": 3, "description": "d"},
                {"name": "y", "type": 3, "description": "d", "required": True},
            ],
        }
    ]
    assert call(discord, "PUT", f"/applications/{APP_ID}/commands", bad)[0] == 400


def test_faults_on_demand(discord):
    discord.fail_next("create_message", 429, retry_after=2.5)
    status, body, headers = call(discord, "POST", f"/channels/{CHANNEL}/messages", {"content": "x"})
    assert status == 429 and body["retry_after"] == 2.5 and headers["Retry-After"] == "2"
    discord.fail_next("create_message", 502)
    assert call(discord, "POST", f"/channels/{CHANNEL}/messages", {"content": "x"})[0] == 502
    assert discord.messages(CHANNEL) == []
    discord.fail_next("create_message", accept_then="hang", seconds=2)
    with pytest.raises(TimeoutError):
        call(discord, "POST", f"/channels/{CHANNEL}/messages", {"content": "kept"}, timeout=0.5)
    assert [m["content"] for m in discord.messages(CHANNEL)] == ["kept"]  # done, though no answer came


def test_pings_follow_allowed_mentions():
    loud = {"content": "@everyone <@123> <@&9>"}
    assert pings(loud) == {"@everyone", "123", "&9"}
    assert pings({**loud, "allowed_mentions": {"parse": []}}) == set()
    assert pings({**loud, "allowed_mentions": {"parse": [], "users": ["123"]}}) == {"123"}


def test_sign_is_ed25519_over_timestamp_and_body():
    headers = sign('{"type":1}', timestamp="1700000000")
    VerifyKey(bytes.fromhex(PUBLIC_KEY)).verify(b'1700000000{"type":1}', bytes.fromhex(headers["X-Signature-Ed25519"]))
    assert KEY.verify_key.encode().hex() == PUBLIC_KEY


def test_the_gateway_says_hello_checks_identify_and_acks_heartbeats(discord):
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    url = call(discord, "GET", "/gateway/bot")[1]["url"]
    with connect(url + "/?v=10&encoding=json") as ws:
        hello = json.loads(ws.recv(timeout=5))
        assert hello["op"] == 10 and hello["d"]["heartbeat_interval"] > 0
        ws.send(json.dumps({"op": 2, "d": {"token": TOKEN, "intents": 0, "properties": {}}}))
        ready = json.loads(ws.recv(timeout=5))
        assert (ready["op"], ready["t"], ready["d"]["user"]["id"]) == (0, "READY", BOT_ID)
        ws.send(json.dumps({"op": 1, "d": 1}))
        assert json.loads(ws.recv(timeout=5))["op"] == 11
        discord.dispatch({"id": "1", "type": 2})
        event = json.loads(ws.recv(timeout=5))
        assert (event["t"], event["d"]["id"]) == ("INTERACTION_CREATE", "1")
    with connect(url) as ws:
        ws.recv(timeout=5)
        ws.send(json.dumps({"op": 2, "d": {"token": "wrong", "intents": 0, "properties": {}}}))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd.code == 4004


def test_the_gateway_compresses_as_asked_and_resumes_only_its_own_sessions(discord):
    import zlib

    from websockets.sync.client import connect

    url = call(discord, "GET", "/gateway/bot")[1]["url"]
    with connect(url + "/?v=10&encoding=json&compress=zlib-stream") as ws:
        inflate = zlib.decompressobj()

        def receive() -> dict:
            frame = ws.recv(timeout=5)
            assert isinstance(frame, bytes) and frame.endswith(b"\x00\x00\xff\xff")  # a sync flush ends each
            return json.loads(inflate.decompress(frame))

        assert receive()["op"] == 10
        ws.send(json.dumps({"op": 2, "d": {"token": TOKEN, "intents": 0, "properties": {}}}))
        ready = receive()["d"]
        assert ready["user"]["discriminator"] == "0" and ready["session_id"] and ready["resume_gateway_url"] == url
    with connect(url + "/?v=10&encoding=json") as ws:
        ws.recv(timeout=5)
        ws.send(json.dumps({"op": 6, "d": {"token": TOKEN, "session_id": ready["session_id"], "seq": 1}}))
        assert json.loads(ws.recv(timeout=5))["t"] == "RESUMED"
    with connect(url + "/?v=10&encoding=json") as ws:
        ws.recv(timeout=5)
        ws.send(json.dumps({"op": 6, "d": {"token": TOKEN, "session_id": "nobody's", "seq": 1}}))
        assert json.loads(ws.recv(timeout=5)) == {"op": 9, "d": False, "s": None, "t": None}
