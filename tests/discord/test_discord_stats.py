"""`/paper stats` on Discord: the history in words in an embed, and its picture attached to it."""

from __future__ import annotations

import io

from PIL import Image

from tests.support.discord_group import MEMBER, respond
from tests.support.discord_standin import slash
from tests.support.history import seed_history


def test_stats_answers_with_its_picture_attached(make_bot, discord):
    bot = make_bot()
    seed_history(bot.store, bot.group, bot.clock())
    interaction = slash("stats", MEMBER)
    response = respond(bot, discord, interaction)
    assert response == {"type": 5, "data": {"flags": 64}}, "deferred: a file goes only with an edit of the answer"
    token = interaction["token"]
    assert discord.wait_for(lambda d: (d.original(token) or {}).get("attachments"), 10)
    answer = discord.original(token)
    embed = answer["embeds"][0]
    assert "7 talks given" in embed["description"] and "Tags: parallelism\\-dp 7" in embed["description"]
    assert embed["image"]["url"] == "attachment://stats.png"
    [picture] = answer["attachments"]
    assert picture["filename"] == "stats.png" and picture["content_type"] == "image/png"
    image = Image.open(io.BytesIO(discord.attachment(picture)))
    assert image.format == "PNG" and image.width > 1000
    assert answer["flags"] == 64, "ephemeral, as every answer"


def test_stats_before_any_talk_is_one_line_at_once(make_bot, discord):
    bot = make_bot()
    response = respond(bot, discord, slash("stats", MEMBER))
    assert response["type"] == 4 and "No talk has been given yet" in response["data"]["content"]
