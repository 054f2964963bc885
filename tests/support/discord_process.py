"""A real `paperbot run` on Discord, over HTTP interactions or the Gateway, and a way to talk to it as
Discord does; the stand-in as Discord's REST API."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time

from tests.support.databases import database_for
from tests.support.discord_group import ADMIN, CHANNEL
from tests.support.discord_standin import GUILD, PUBLIC_KEY, TOKEN, DiscordStandin, sign

BOT = [sys.executable, "-m", "bot"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env_for(tmp_path, discord: DiscordStandin, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "PAPERBOT_", "DISCORD_"))}
    return {
        **env,
        "DISCORD_TOKEN": TOKEN,
        "DISCORD_PUBLIC_KEY": PUBLIC_KEY,
        "DISCORD_API_URL": discord.api_url,
        "DISCORD_GUILD": GUILD,
        "PAPERBOT_DB": database_for(tmp_path),
        "PAPERBOT_CHANNEL": CHANNEL,
        "PAPERBOT_TIMEZONE": "Europe/Berlin",
        "PAPERBOT_SCHEDULE": "0 9 * * mon",
        "PAPERBOT_MEETING": "thu 16:00",
        "PAPERBOT_ADMINS": ADMIN,
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


class Bot:
    """A `run` process, and a way to talk to it as Discord does."""

    def __init__(self, tmp_path, discord, mode: str = "http", **extra):
        self.discord, self.mode = discord, mode
        if mode == "gateway":
            extra["DISCORD_PUBLIC_KEY"] = ""
        for _ in range(3):  # a free port may be taken by another process before run listens on it
            if self._start(tmp_path, discord, extra):
                return
        raise AssertionError(f"run found no free port:\n{self.log.read_text()}")

    def _start(self, tmp_path, discord, extra) -> bool:
        self.port = free_port()
        self.log = tmp_path / f"run-{self.port}.log"
        self.env = env_for(tmp_path, discord, PORT=str(self.port), **extra)
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(BOT + ["run"], cwd=tmp_path, env=self.env, stdout=out, stderr=out)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                if "Address already in use" in self.log.read_text():
                    return False
                raise AssertionError(self.log.read_text())
            if "serving Discord interactions" in self.log.read_text():  # listening (or connected), this process
                return True
            time.sleep(0.05)
        raise AssertionError(f"run did not listen within 30 s:\n{self.log.read_text()}")

    def request(self, method: str, path: str, body: str, headers: dict | None = None) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, body=body.encode(), headers=headers or {})
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    def interact(self, interaction: dict, headers: dict | None = None) -> tuple[int, dict | bytes]:
        if self.mode == "gateway":  # over the Gateway, answered through the callback route
            self.discord.dispatch(interaction)
            answered = self.discord.answer_to(interaction)
            assert answered is not None, f"no answer over the Gateway:\n{self.log.read_text()}"
            return 200, answered
        body = json.dumps(interaction)
        status, data = self.request("POST", "/discord/interactions", body, sign(body) if headers is None else headers)
        try:
            response = json.loads(data)
        except ValueError:
            return status, data
        if status == 200 and interaction["type"] != 1:
            self.discord.took(interaction, response)  # as Discord takes it: refused if out of its limits
        return status, response

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
