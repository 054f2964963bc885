"""An interaction POSTed to the bot's real door (bot/discord/serve.py's WSGI application), signed as
Discord signs it, and the response Discord would take from it."""

from __future__ import annotations

import io
import json

from bot.discord import serve
from bot.discord.app import DiscordBot
from tests.support.discord_standin import PUBLIC_KEY, DiscordStandin, sign


def post(bot: DiscordBot, discord: DiscordStandin, interaction: dict) -> dict:
    """The interaction response to `interaction`, through the door; the status must be 200."""
    body = json.dumps(interaction).encode()
    environ = {
        "PATH_INFO": serve.INTERACTIONS_PATH,
        "REQUEST_METHOD": "POST",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    for k, v in sign(body).items():
        environ["HTTP_" + k.upper().replace("-", "_")] = v
    said: list[str] = []
    answer = b"".join(serve.wsgi(bot, PUBLIC_KEY)(environ, lambda status, headers: said.append(status)))
    assert said == ["200 OK"], (said, answer[:300])
    response = json.loads(answer)
    discord.took(interaction, response)
    return response
