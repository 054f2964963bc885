"""Swaps on Discord: the offer is a direct message with Accept and Decline buttons, and Accept trades
the two weeks, told to the channel in one line."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from bot.announcing import sender as outbox_sender
from tests.support.discord_group import ADMIN, CHANNEL, MEMBER, SHY, respond
from tests.support.discord_standin import check_message, click, pings, slash

TZ = ZoneInfo("Europe/Berlin")


def test_a_swap_offer_is_a_dm_with_buttons_and_accept_trades_the_weeks(make_bot, discord, monkeypatch):
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_QUIET", 0.0)  # the channel's line goes as soon as it can
    bot = make_bot()
    week = bot.group.week_of(datetime.now(TZ)).plus(2)
    first, second = week.monday.isoformat(), week.plus(1).monday.isoformat()
    respond(bot, discord, slash("assign", ADMIN, user=MEMBER, paper="3", date=first))
    respond(bot, discord, slash("assign", ADMIN, user=ADMIN, paper="4", date=second))
    offered = respond(bot, discord, slash("swap", MEMBER, date=second, user=ADMIN))["data"]
    assert "You offered" in offered["content"]
    assert discord.wait_for(lambda d: bool(d.dm_channel(ADMIN) and d.messages(d.dm_channel(ADMIN))), 10)
    [dm] = discord.messages(discord.dm_channel(ADMIN))
    check_message(dm)
    assert f"<@{MEMBER}> asks to swap weeks with you" in dm["content"] and pings(dm) == set()
    accept, decline = [b for row in dm["components"] for b in row["components"]]
    assert (accept["label"], decline["label"]) == ("Accept", "Decline")
    stranger = respond(bot, discord, click(accept["custom_id"], MEMBER, dm))["data"]
    assert "not you" in stranger["content"]
    answer = respond(bot, discord, click(accept["custom_id"], ADMIN, dm))["data"]
    assert "Swapped: you present" in answer["content"]
    mine = respond(bot, discord, slash("mine", MEMBER))["data"]
    shown = str(mine)
    later = int(bot.group.meeting_of(week.plus(1)).timestamp())
    assert f"<t:{later}:f>** · **#3**" in shown, shown  # MEMBER keeps their paper, in ADMIN's week
    assert discord.wait_for(lambda d: any("swapped weeks" in m["content"] for m in d.messages(CHANNEL)), 10)
    again = respond(bot, discord, click(accept["custom_id"], ADMIN, dm))["data"]
    assert "accepted this offer already" in again["content"]
    assert sum("swapped weeks" in m["content"] for m in discord.messages(CHANNEL)) == 1


def test_an_offer_to_a_member_who_takes_no_dms_is_named_to_the_admins_once(make_bot, discord):
    bot = make_bot()
    week = bot.group.week_of(datetime.now(TZ)).plus(2)
    first, second = week.monday.isoformat(), week.plus(1).monday.isoformat()
    respond(bot, discord, slash("assign", ADMIN, user=MEMBER, paper="3", date=first))
    respond(bot, discord, slash("assign", ADMIN, user=SHY, paper="4", date=second))
    respond(bot, discord, slash("swap", MEMBER, date=second, user=SHY))
    assert discord.wait_for(lambda d: bool(d.dm_channel(ADMIN) and d.messages(d.dm_channel(ADMIN))), 10)
    bot.send_notes()  # the scheduler's check after it: told once
    [told] = discord.messages(discord.dm_channel(ADMIN))
    assert f"<@{SHY}> takes no direct messages" in told["content"] and "asks to swap weeks" in told["content"]
    assert pings(told) == set()
