"""`/paper calendar` on Slack: the member's addresses, privately, each one served."""

from __future__ import annotations

import re

from conftest import Clock, at

from bot import feeds


def test_calendar_answers_privately_with_addresses_that_are_served(make_harness):
    h = make_harness(Clock(at("2026-12-02 10:00")), PAPERBOT_PUBLIC_URL="https://example.org/reading/")
    reply = h.command("calendar", user="U1")
    assert reply.get("response_type") == "ephemeral"
    urls = re.findall(r"https://example\.org/reading/[^\s`]+", reply["text"])
    assert len(urls) == 3 and len(set(urls)) == 3
    served = feeds.serve(h.bot.settings, h.bot.store)
    for url in urls:
        assert served.route(url.removeprefix("https://example.org")) is not None

    renewed = h.command("calendar renew", user="U1")
    mine = [u for u in urls if "/m/" in u]
    assert mine[0] not in renewed["text"] and "new address" in renewed["text"]
    assert h.command("calendar now", user="U1")["text"].startswith("Usage")
