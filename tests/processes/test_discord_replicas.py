"""Discord's Gateway with replicas: two `paperbot run` processes in Gateway mode on one PostgreSQL
database hold one session between them, and the other takes it over when the holder is killed."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from bot.discord import serve
from tests.support.databases import server as postgres
from tests.support.discord_group import ADMIN, CHANNEL
from tests.support.discord_process import env_for
from tests.support.discord_standin import DiscordStandin
from tests.support.postgres import binaries

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(binaries() is None, reason="PostgreSQL is not installed"),
]


@pytest.fixture
def discord():
    with DiscordStandin(channels={CHANNEL}, users={ADMIN: {}}) as d:
        yield d


def test_two_replicas_hold_one_gateway_session_and_the_other_takes_it_over_after_a_kill(tmp_path, discord):
    url = postgres().new_database()
    env = env_for(tmp_path, discord, PAPERBOT_DB=url, DISCORD_PUBLIC_KEY="")
    started = []
    for n in range(2):
        log = (tmp_path / f"run-{n}.log").open("w")
        started.append(
            subprocess.Popen([sys.executable, "-m", "bot", "run"], cwd=tmp_path, env=env, stdout=log, stderr=log)
        )
        log.close()
    try:
        assert discord.wait_for(lambda d: d.gateway_connected == 1, 30), [p.read_text() for p in logs(tmp_path)]
        deadline = time.monotonic() + 2 * serve.GATEWAY_ASK_SECONDS  # the other asked at least once meanwhile
        while time.monotonic() < deadline:
            assert discord.gateway_connected == 1 and len(discord.gateway_sessions) == 1
            time.sleep(0.2)
        waiting = [
            p for p, log in zip(started, logs(tmp_path), strict=True) if "another process holds" in log.read_text()
        ]
        [holder] = [p for p in started if p not in waiting]
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        # The Gateway sees the holder's socket close; the other takes the session over within its next ask.
        assert discord.wait_for(
            lambda d: len(d.gateway_sessions) == 2 and d.gateway_connected == 1, 2 * serve.GATEWAY_ASK_SECONDS + 15
        ), [p.read_text() for p in logs(tmp_path)]
        assert "took Discord's Gateway over" in "".join(p.read_text() for p in logs(tmp_path))
        [other] = waiting
        other.send_signal(signal.SIGTERM)
        assert other.wait(15) == 0
        assert "Traceback" not in "".join(p.read_text() for p in logs(tmp_path))
    finally:
        for p in started:
            if p.poll() is None:
                p.kill()
                p.wait(10)


def logs(tmp_path):
    return sorted(tmp_path.glob("run-*.log"))
