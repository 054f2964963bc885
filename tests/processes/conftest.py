"""Fixtures of the real-process tests: the children a test starts, each killed in teardown if it still runs."""

from __future__ import annotations

import pytest

from tests.support.discord_process import Bot
from tests.support.processes import Procs


@pytest.fixture
def procs(tmp_path):
    p = Procs(tmp_path)
    yield p
    p.close()


@pytest.fixture
def run_bot(tmp_path, discord):
    made: list[Bot] = []

    def start(mode: str = "http", **extra) -> Bot:
        bot = Bot(tmp_path, discord, mode, **extra)
        made.append(bot)
        return bot

    yield start
    for bot in made:
        bot.stop()
