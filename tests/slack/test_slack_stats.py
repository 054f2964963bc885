"""`/paper stats` on Slack: the history in words, and its picture as an image block whose address the
bot's HTTP door serves, behind the group's secret."""

from __future__ import annotations

import http.client
import io
from datetime import UTC, datetime
from urllib.parse import urlsplit

from PIL import Image

from bot.web import feeds, http_door, member_names
from tests.support.block_kit import blocks_text, valid
from tests.support.clock import Clock
from tests.support.history import seed_history

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
PUBLIC = "https://example.org/reading/"


def _get(port: int, path: str) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        conn.close()


def test_stats_shows_its_picture_served_behind_the_groups_secret(make_harness):
    h = make_harness(Clock(NOW), PAPERBOT_PUBLIC_URL=PUBLIC)
    seed_history(h.bot.store, h.bot.settings.group, NOW)
    reply = valid(h.command("stats"))
    assert "7 talks given" in reply["text"] and "Presenters: <@U1> 3" in blocks_text(reply)
    images = [b for b in reply["blocks"] if b["type"] == "image"]
    assert len(images) == 1 and images[0]["alt_text"]
    url = urlsplit(images[0]["image_url"])
    assert images[0]["image_url"].startswith(PUBLIC + "g/") and url.path.endswith("/stats.png")

    served = feeds.Feeds(
        h.bot.store, lambda: feeds.install_groups(h.bot.settings, h.bot.store), PUBLIC, ask=member_names.as_typed,
        clock=lambda: NOW,
    )  # fmt: skip
    server = http_door.http_server(feeds.around(None, served), 0, "127.0.0.1")
    stop = http_door.serve_beside(server)
    try:
        port = int(server.effective_port)
        status, kind, body = _get(port, f"{url.path}?{url.query}")
        assert status == 200 and kind == "image/png"
        image = Image.open(io.BytesIO(body))
        assert image.format == "PNG" and image.width > 1000
        secret = url.path.split("/")[3]
        assert _get(port, url.path.replace(secret, secret[:-1] + ("A" if secret[-1] != "A" else "B")))[0] == 404
        member = feeds.member_secret(h.bot.store, "U1")
        assert _get(port, f"/reading/m/{member}/stats.png")[0] == 404, "a member's secret opens no group's picture"
        feeds.renew_group_secret(h.bot.store, 1)
        assert _get(port, url.path)[0] == 404, "a renewed secret closes the old address"
    finally:
        stop()


def test_without_a_public_address_stats_is_words_alone(make_harness):
    h = make_harness(Clock(NOW))
    seed_history(h.bot.store, h.bot.settings.group, NOW)
    reply = valid(h.command("stats"))
    assert "Tags: parallelism-dp 7 · llm 4 · moe 3" in blocks_text(reply)
    assert [b["type"] for b in reply["blocks"]] == ["section"]
