"""Rights come from the server a request comes from: another server's members, Administrators there
included, get one line and change nothing, by every entry (commands, buttons, forms, autocomplete, direct
messages); the install's server is DISCORD_GUILD, else the server of PAPERBOT_CHANNEL."""

from __future__ import annotations

import time

from bot.catalog import queries as catalog
from bot.discord import render
from bot.discord.app import ADMINISTRATOR
from bot.schedule import slots
from tests.support.discord_door import post
from tests.support.discord_group import ADMIN, MEMBER
from tests.support.discord_standin import click, slash, submit

OTHER_SERVER = "1000000000000000777"
STRANGER = "1300000000000000777"


def elsewhere(interaction: dict) -> dict:
    return {**interaction, "guild_id": OTHER_SERVER}


def direct(interaction: dict) -> dict:
    """`interaction` in a direct message: no server, the user outside `member`."""
    dm = {k: v for k, v in interaction.items() if k not in ("guild_id", "member")}
    return {**dm, "user": interaction["member"]["user"], "channel_id": "1000000000000000099"}


def said(response: dict) -> str:
    return response["data"]["content"]


def test_an_administrator_of_another_server_changes_nothing(make_bot, discord):
    bot = make_bot()  # DISCORD_GUILD unset: the install's server is PAPERBOT_CHANNEL's
    for line in (
        slash("delete", STRANGER, permissions=ADMINISTRATOR, paper="7"),
        slash("archive", STRANGER, permissions=ADMINISTRATOR, paper="7"),
        slash("signup", STRANGER, paper="7"),
    ):
        answer = said(post(bot, discord, elsewhere(line)))
        assert answer.startswith("⚠️") and "not set up in this server" in answer and "\n" not in answer
    [(archived,)] = bot.store.db.execute("SELECT archived_at FROM papers WHERE number = 7").fetchall()
    assert archived is None  # neither deleted nor archived
    weeks = slots.schedule(bot.store, bot.group, bot.clock())
    assert all(getattr(w, "presenter", None) != STRANGER for w in weeks)
    assert not discord.messages("1000000000000000003")  # nothing announced in the group's channel
    clicked = said(post(bot, discord, elsewhere(click(render.custom_id(render.RUN, 0, "signup 7"), STRANGER))))
    assert "not set up in this server" in clicked
    choices = post(bot, discord, elsewhere(slash("show", STRANGER, focused="paper", paper="")))
    assert choices == {"type": 8, "data": {"choices": []}}
    at_home = post(bot, discord, slash("show", MEMBER, focused="paper", paper=""))
    assert at_home["data"]["choices"]  # the install's own server still gets them


def test_an_edit_form_submitted_from_another_server_saves_nothing(make_bot, discord):
    bot = make_bot()
    opened = post(bot, discord, slash("edit", ADMIN, paper="7"))["data"]
    values = {c["components"][0]["custom_id"]: c["components"][0].get("value") or "" for c in opened["components"]}
    sneaky = elsewhere(submit(opened, STRANGER, {**values, "title": "Renamed elsewhere"}, permissions=ADMINISTRATOR))
    assert "not set up in this server" in said(post(bot, discord, sneaky))
    assert catalog.find(bot.store, "7").title != "Renamed elsewhere"


def test_a_direct_message_counts_for_members_of_the_install_server_only(make_bot, discord):
    bot = make_bot()
    assert "not set up in this server" in said(post(bot, discord, direct(slash("signup", STRANGER, paper="7"))))
    mine = said(post(bot, discord, direct(slash("mine", MEMBER))))
    assert "not set up" not in mine


def test_discord_guild_names_the_install_server(make_bot, discord):
    bot = make_bot(DISCORD_GUILD=OTHER_SERVER)
    assert "not set up in this server" in said(post(bot, discord, slash("signup", MEMBER, paper="7")))
    assert "not set up" not in said(post(bot, discord, elsewhere(slash("show", MEMBER, paper="7"))))


def test_the_gateway_path_refuses_another_server_too(make_bot, discord):
    bot = make_bot()  # an INTERACTION_CREATE as the Gateway reader hands it over; answered by the callback route
    interaction = elsewhere(slash("delete", STRANGER, permissions=ADMINISTRATOR, paper="7"))
    bot.from_gateway(interaction, time.monotonic())
    answered = discord.answer_to(interaction)
    assert answered is not None and "not set up in this server" in answered["data"]["content"]
    assert catalog.find(bot.store, "7") is not None


def test_the_install_learns_its_server_from_a_groups_channel_when_discord_will_not_say(make_bot, discord):
    # A Discord that has no answer for GET /channels/{id}: the install's server is still learned, from
    # the first signed request typed in the group's own channel, and another server stays another.
    discord.fail_next("channel_object", 404, code=10003, times=50)

    def abroad(interaction: dict) -> dict:  # a channel of the other server: a channel is in one server only
        return {**elsewhere(interaction), "channel_id": "1000000000000000778"}

    bot = make_bot()
    refused = said(post(bot, discord, abroad(slash("archive", STRANGER, permissions=ADMINISTRATOR, paper="7"))))
    assert "not set up in this server" in refused
    assert "You're signed up" in said(post(bot, discord, slash("signup", MEMBER, paper="7")))
    again = said(post(bot, discord, abroad(slash("archive", STRANGER, permissions=ADMINISTRATOR, paper="7"))))
    assert "not set up in this server" in again
    [(archived,)] = bot.store.db.execute("SELECT archived_at FROM papers WHERE number = 7").fetchall()
    assert archived is None
