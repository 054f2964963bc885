"""`/paper calendar` on Slack: the member's addresses, privately, each one served."""

from __future__ import annotations

import re

from bot.web import feeds
from tests.support.clock import Clock, at


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


def test_presenters_are_named_as_slack_shows_them_asked_once_a_day(tmp_path, store):
    from bot.web import member_names
    from tests.support.slack_group import settings_for
    from tests.support.slack_standin import SlackStandin

    users = {"U1": {"profile": {"display_name": "Ada L.", "real_name": "Ada Lovelace"}}, "U2": {}}
    with SlackStandin(users=users) as slack:
        ask = feeds.names_of(settings_for(tmp_path, slack.api_url))
        assert member_names.display_name(store, "U1", ask) == "Ada L."
        assert member_names.display_name(store, "U2", ask) == "U2"  # no display name: the full name
        asked = len(slack.calls_to("users.info"))
        assert asked == 2
        assert member_names.display_name(store, "U1", ask) == "Ada L." and len(slack.calls_to("users.info")) == asked
    # Slack gone: the kept name still, and never an id for someone never named.
    later = lambda: 4e9  # noqa: E731  (long after the kept names went stale)
    assert member_names.display_name(store, "U1", ask, clock=later) == "Ada L."
    assert member_names.display_name(store, "U9", ask, clock=later) == member_names.UNKNOWN
