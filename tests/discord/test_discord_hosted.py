"""A hosted install on Discord (PAPERBOT_HOSTED=true): every server that adds the bot is a place of its own.
Nothing of one server is seen or changed from another (commands, autocomplete, buttons, forms, pages);
each numbers its papers from 1 and posts in its own channel; rights come from the server a request comes
from; a server that removes the bot stops its posts, and no other's."""

from __future__ import annotations

import contextlib
import re

from bot.catalog import queries as catalog
from bot.discord import render
from bot.discord.app import ADMINISTRATOR
from bot.places import operators
from bot.places.registry import open_place
from bot.runtime.hosting import EveryPlace
from tests.support.clock import at
from tests.support.discord_hosted import (
    ALICE,
    BOB,
    CAROL,
    CHANNEL_A,
    CHANNEL_B,
    PUBLIC_URL,
    SERVER_A,
    SERVER_B,
    direct,
    from_a,
    from_b,
    get,
    hosted_install,
    post,
)
from tests.support.discord_standin import click, slash, submit

PLACE_A, PLACE_B = f"discord-{SERVER_A}", f"discord-{SERVER_B}"


def said(response: dict) -> str:
    return response["data"]["content"]


def group(sub: str, who: str, *, permissions: int = 0) -> dict:
    """`/paper group <sub>`, as Discord sends a subcommand of a subcommand group."""
    interaction = slash("group", who, permissions=permissions)
    interaction["data"]["options"] = [{"name": "group", "type": 2, "options": [{"name": sub, "type": 1}]}]
    return interaction


def add(hosted, discord, where, who: str, title: str, tags: str) -> str:
    """An admin of the server `where` places it in adds a paper through the add form: the reply."""
    opened = post(hosted, discord, where(slash("add", who, permissions=ADMINISTRATOR)))
    assert opened["type"] == 9, opened  # the form
    values = {"title": title, "url": f"https://example.org/{title.lower().replace(' ', '-')}", "tags": tags}
    return said(post(hosted, discord, where(submit(opened["data"], who, values, permissions=ADMINISTRATOR))))


def choices(response: dict) -> list[str]:
    return [c["name"] for c in response["data"]["choices"]]


def test_a_paper_added_in_one_server_is_not_seen_from_another(tmp_path):
    with hosted_install(tmp_path) as (hosted, discord, clock):
        # Each server numbers its own papers from 1.
        assert add(hosted, discord, from_a, ALICE, "Ring attention", "long-context").startswith("Added **#1**")
        assert add(hosted, discord, from_b, BOB, "Sparse experts", "moe").startswith("Added **#1**")

        shown = post(hosted, discord, from_b(slash("show", BOB, paper="1")))["data"]
        assert "Sparse experts" in shown["embeds"][0]["title"] and "Ring" not in str(shown)
        for asked in (
            lambda: slash("search", CAROL, words="ring attention"),
            lambda: slash("tag", CAROL, tag="long-context"),
        ):
            answer = str(post(hosted, discord, from_b(asked()))["data"])
            assert "Ring attention" not in answer, answer
            assert "Ring attention" in str(post(hosted, discord, from_a(asked()))["data"])

        # Autocomplete offers each server its own catalog only.
        typed = lambda: slash("show", CAROL, focused="paper", paper="")  # noqa: E731
        assert choices(post(hosted, discord, from_b(typed()))) == ["#1 Sparse experts"]
        assert choices(post(hosted, discord, from_a(typed()))) == ["#1 Ring attention"]
        tags = choices(post(hosted, discord, from_b(slash("tag", CAROL, focused="tag", tag=""))))
        assert tags == ["moe (1)"], tags

        # A button reads the catalog of the server it is clicked in.
        clicked = post(hosted, discord, from_b(click(render.custom_id(render.RUN, 0, "show 1"), CAROL)))["data"]
        assert "Sparse experts" in str(clicked) and "Ring" not in str(clicked)

        # The add form submitted in B adds to B: A's catalog keeps its one paper.
        assert add(hosted, discord, from_b, BOB, "Speculative decoding", "inference").startswith("Added **#2**")
        assert [p.title for p in catalog.all_papers(hosted.places.store(PLACE_A))] == ["Ring attention"]
        # The install's own database keeps its starter list, and no place's paper.
        assert catalog.find(hosted.store, "ring-attention") is None and catalog.find(hosted.store, "7") is not None


def test_each_servers_page_shows_its_own_catalog_at_its_own_address(tmp_path):
    with hosted_install(tmp_path) as (hosted, discord, clock):
        add(hosted, discord, from_a, ALICE, "Ring attention", "long-context")
        add(hosted, discord, from_b, BOB, "Sparse experts", "moe")
        for where, who in ((from_a, ALICE), (from_b, BOB)):
            assert "Started" in said(post(hosted, discord, where(group("start", who, permissions=ADMINISTRATOR))))
        pages = {}
        for where, place in ((from_a, PLACE_A), (from_b, PLACE_B)):
            urls = re.findall(
                rf"{PUBLIC_URL}/p/{place}/g/[^\s`>)]+/", said(post(hosted, discord, where(slash("calendar", CAROL))))
            )
            assert urls, "no page address under the place's own path"
            pages[place] = urls[0].removeprefix(PUBLIC_URL)
        status, page_a = get(hosted, pages[PLACE_A])
        assert status.startswith("200") and "Ring attention" in page_a and "Sparse experts" not in page_a
        status, page_b = get(hosted, pages[PLACE_B])
        assert status.startswith("200") and "Sparse experts" in page_b and "Ring attention" not in page_b
        # A's secret under B's address is no page of B's.
        status, _ = get(hosted, pages[PLACE_A].replace(PLACE_A, PLACE_B))
        assert status.startswith("404"), status


def test_an_administrator_of_one_server_has_no_rights_in_another(tmp_path):
    # Carol administers server A, and is the install's own admin besides; in server B she is a member.
    with hosted_install(tmp_path, PAPERBOT_ADMINS=CAROL) as (hosted, discord, clock):
        add(hosted, discord, from_b, BOB, "Sparse experts", "moe")
        assert "Started" in said(post(hosted, discord, from_a(group("start", CAROL, permissions=ADMINISTRATOR))))
        assert add(hosted, discord, from_a, CAROL, "Ring attention", "long-context").startswith("Added")
        for asked in (
            slash("add", CAROL),
            slash("archive", CAROL, paper="1"),
            slash("delete", CAROL, paper="1"),
            group("start", CAROL),
        ):
            answer = said(post(hosted, discord, from_b(asked)))
            assert answer.startswith("⚠️ Only") and "admins" in answer and "\n" not in answer, answer
        papers = hosted.places.store(PLACE_B).db.execute("SELECT title, archived_at FROM papers").fetchall()
        assert [tuple(p) for p in papers] == [("Sparse experts", None)]
        assert not hosted.places.store(PLACE_B).db.execute("SELECT 1 FROM groups WHERE channel IS NOT NULL").fetchall()
        # B's Administrator, in turn, is nobody in A.
        answer = said(post(hosted, discord, from_a(slash("delete", BOB, paper="1"))))
        assert "Only admins" in answer, answer


def test_each_servers_weekly_post_goes_to_its_own_channel(tmp_path):
    with hosted_install(tmp_path) as (hosted, discord, clock):
        for where, who, title in ((from_a, ALICE, "Ring attention"), (from_b, BOB, "Sparse experts")):
            add(hosted, discord, where, who, title, "reading")
            assert "Started" in said(post(hosted, discord, where(group("start", who, permissions=ADMINISTRATOR))))
        checks = EveryPlace(hosted.checks)
        try:
            clock.set(at("2026-12-07 10:05"))  # Monday, past each group's 09:00 UTC
            checks.check_post()
            assert checks.wait_idle(20)
        finally:
            checks.shutdown()
        [post_a], [post_b] = discord.messages(CHANNEL_A), discord.messages(CHANNEL_B)
        assert "Ring attention" in post_a["embeds"][0]["title"] and "Sparse" not in str(post_a)
        assert "Sparse experts" in post_b["embeds"][0]["title"] and "Ring" not in str(post_b)


def test_a_server_that_removes_the_bot_stops_its_posts_and_not_anothers(tmp_path):
    with hosted_install(tmp_path) as (hosted, discord, clock):
        for where, who, title in ((from_a, ALICE, "Ring attention"), (from_b, BOB, "Sparse experts")):
            add(hosted, discord, where, who, title, "reading")
            post(hosted, discord, where(group("start", who, permissions=ADMINISTRATOR)))
        discord.remove_guild(SERVER_B)
        hosted.check_servers()  # the scheduler's listing of the bot's servers
        states = {p.id: p.state for p in hosted.places.every()}
        assert (states[PLACE_A], states[PLACE_B]) == ("active", "gone")
        checks = EveryPlace(hosted.checks)
        try:
            clock.set(at("2026-12-07 10:05"))
            checks.check_post()
            assert checks.wait_idle(20)
        finally:
            checks.shutdown()
        assert len(discord.messages(CHANNEL_A)) == 1
        assert not [c for c in discord.calls_to("create_message") if CHANNEL_B in c.path]  # not even tried
        # Its data stays until `paperbot forget`.
        assert [p.title for p in catalog.all_papers(hosted.places.store(PLACE_B))] == ["Sparse experts"]


def test_a_direct_message_is_told_to_use_a_server_and_its_buttons_reach_their_own_server(tmp_path):
    with hosted_install(tmp_path) as (hosted, discord, clock):
        add(hosted, discord, from_a, ALICE, "Ring attention", "long-context")
        answer = said(post(hosted, discord, direct(slash("show", ALICE, paper="1"))))
        assert "in a server" in answer and "Ring" not in answer and "\n" not in answer
        assert post(hosted, discord, direct(slash("show", ALICE, focused="paper", paper="")))["data"]["choices"] == []
        # A button of a direct message (a swap's offer, an open slot's call) names its server.
        shown = str(post(hosted, discord, direct(click(render.custom_id(render.RUN, 0, "show 1", SERVER_A), ALICE))))
        assert "Ring attention" in shown
        # Clicked by someone who is not a member of that server, it changes nothing and shows nothing.
        stranger = str(post(hosted, discord, direct(click(render.custom_id(render.RUN, 0, "show 1", SERVER_A), BOB))))
        assert "Ring" not in stranger and "not set up" in stranger


def test_a_swap_offered_in_one_server_is_accepted_from_its_direct_message(tmp_path):
    with hosted_install(tmp_path) as (hosted, discord, clock):
        add(hosted, discord, from_a, ALICE, "Ring attention", "reading")
        add(hosted, discord, from_a, ALICE, "Sparse experts", "reading")
        post(hosted, discord, from_a(group("start", ALICE, permissions=ADMINISTRATOR)))
        for who, paper, date in ((ALICE, "1", "2026-12-14"), (CAROL, "2", "2026-12-21")):
            booked = said(
                post(
                    hosted,
                    discord,
                    from_a(slash("assign", ALICE, permissions=ADMINISTRATOR, user=who, paper=paper, date=date)),
                )
            )
            assert "⚠️" not in booked, booked
        assert "You offered" in said(post(hosted, discord, from_a(slash("swap", ALICE, date="2026-12-21", user=CAROL))))
        assert discord.wait_for(lambda d: bool(d.dm_channel(CAROL) and d.messages(d.dm_channel(CAROL))), 10)
        [dm] = discord.messages(discord.dm_channel(CAROL))
        accept = next(b for row in dm["components"] for b in row["components"] if b["label"] == "Accept")
        assert render.place_of(accept["custom_id"]) == SERVER_A  # a click in a direct message carries no server
        answer = said(post(hosted, discord, direct(click(accept["custom_id"], CAROL, dm))))
        assert "Swapped: you present" in answer, answer


def test_a_server_past_its_share_of_the_answering_threads_holds_up_no_other(tmp_path):
    with hosted_install(tmp_path) as (hosted, discord, clock):
        add(hosted, discord, from_b, BOB, "Sparse experts", "moe")
        with contextlib.ExitStack() as held:  # server A's requests under way: its whole share
            while held.enter_context(hosted.inflight.one(SERVER_A)):
                pass
            answer = said(post(hosted, discord, from_a(slash("show", ALICE, paper="1"))))
            assert answer.startswith("⚠️") and "try again" in answer and "\n" not in answer, answer
            assert "Sparse experts" in str(post(hosted, discord, from_b(slash("show", BOB, paper="1")))["data"])
        assert "try again" not in str(post(hosted, discord, from_a(slash("show", ALICE, paper="1")))["data"])


def test_a_server_forgotten_while_served_starts_again_empty_and_keeps_what_it_adds(tmp_path):
    with hosted_install(tmp_path) as (hosted, discord, clock):
        add(hosted, discord, from_a, ALICE, "Ring attention", "reading")
        add(hosted, discord, from_b, BOB, "Sparse experts", "reading")
        # The operator forgets A from another process (`paperbot forget`); the bot is still in its server.
        places = operators.opened(hosted.settings.db_path, PLACE_A, said="forget")
        try:
            operators.forget(places, operators.named(places, PLACE_A))
        finally:
            places.close()
            places.house.close()
        hosted.check_servers()  # the scheduler's listing of the bot's servers: A is there, a place again
        add(hosted, discord, from_a, ALICE, "After the forgetting", "reading")
        store = open_place(hosted.settings.db_path, PLACE_A, writes=False)
        try:
            assert [p.title for p in catalog.all_papers(store)] == ["After the forgetting"]
        finally:
            store.close()
        assert "Sparse experts" in str(post(hosted, discord, from_b(slash("show", BOB, paper="1"))))
