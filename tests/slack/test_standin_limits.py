"""The stand-in's rate limits on chat.postMessage: per channel, workspace-wide, 429 with Retry-After."""

import time

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from tests.support.slack_standin import PostLimits, SlackStandin

CHANNELS = [f"C0G{i:04d}" for i in range(12)]


def standin(limits):
    return SlackStandin(channels=CHANNELS, limits=limits)


def post(client, channel, text="x"):
    """The post's HTTP status and Retry-After (None when accepted)."""
    try:
        client.chat_postMessage(channel=channel, text=text)
        return 200, None
    except SlackApiError as e:
        return e.response.status_code, e.response.headers.get("Retry-After")


def client_of(slack):
    return WebClient(base_url=slack.api_url, token="xoxb-test", retry_handlers=[])


def test_off_by_default_any_number_of_posts_go_through():
    with SlackStandin(channels=CHANNELS) as slack:
        client = client_of(slack)
        assert [post(client, CHANNELS[0])[0] for _ in range(20)] == [200] * 20
        assert len(slack.messages(CHANNELS[0])) == 20
        assert slack.rate_limited == 0


def test_one_channel_takes_a_short_burst_then_about_one_a_second():
    with standin(PostLimits(channel_rate=1.0, channel_burst=3)) as slack:
        client = client_of(slack)
        assert [post(client, CHANNELS[0])[0] for _ in range(3)] == [200] * 3
        assert post(client, CHANNELS[0]) == (429, "1")
        assert post(client, CHANNELS[1]) == (200, None)  # another channel has its own allowance
        assert len(slack.messages(CHANNELS[0])) == 3  # the refused post is not stored
        assert slack.rate_limited == 1
        # After a second (the Retry-After), the channel takes a post again; a busy machine's slowness
        # only adds to the wait, so the bound is a backstop.
        assert slack.wait_for(lambda s: post(client, CHANNELS[0])[0] == 200, timeout=10, interval=0.05)


def test_the_workspace_limit_holds_across_channels():
    limits = PostLimits(channel_rate=None, workspace_rate=5, workspace_burst=5)
    with standin(limits) as slack:
        client = client_of(slack)
        assert [post(client, c)[0] for c in CHANNELS[:5]] == [200] * 5
        status, retry_after = post(client, CHANNELS[5])
        assert status == 429 and int(retry_after) >= 1
        assert slack.calls_to("chat.postMessage")[-1].response == {"ok": False, "error": "ratelimited"}


def test_a_refused_post_spends_no_allowance():
    with standin(PostLimits(channel_rate=None, workspace_rate=1, workspace_burst=1)) as slack:
        client = client_of(slack)
        with pytest.raises(SlackApiError):
            client.chat_postMessage(channel="C0NOSUCH", text="x")  # channel_not_found
        assert post(client, CHANNELS[0]) == (200, None)


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_client_honouring_retry_after_gets_every_post_in_no_faster_than_the_limit():
    limits = PostLimits(channel_rate=None, workspace_rate=10)
    posts = 30
    with standin(limits) as slack:
        client = client_of(slack)
        start = time.monotonic()
        for i in range(posts):
            while (answer := post(client, CHANNELS[i % len(CHANNELS)], text=f"post {i}"))[0] == 429:
                time.sleep(int(answer[1]))
        elapsed = time.monotonic() - start
        texts = [m["text"] for c in CHANNELS for m in slack.messages(c)]
        assert sorted(texts) == sorted(f"post {i}" for i in range(posts))
        assert slack.rate_limited > 0
        assert elapsed >= limits.floor_seconds(posts, len(CHANNELS)) - 0.1  # 2 s: (30 - 10) / 10


def test_floor_seconds():
    assert PostLimits(channel_rate=None, workspace_rate=20).floor_seconds(1000, 1000) == pytest.approx(49.0)
    assert PostLimits(channel_rate=1, channel_burst=3).floor_seconds(10, 1) == pytest.approx(7.0)
    assert PostLimits(channel_rate=1, workspace_rate=20).floor_seconds(1000, 1000) == pytest.approx(49.0)
