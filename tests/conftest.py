"""Shared fixtures: a real SQLite file, the Slack stand-in, and a Bolt app driven by signed requests.

No mocks below the transport: every test runs the real store, the real command
layer and real Bolt request handling; Slack's side is `tests/support/slack_standin.py`,
a server on 127.0.0.1. What the fixtures build from is in `tests/support/`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.catalog.queries import open_store
from bot.store.connection import Store
from tests.support.clock import Clock
from tests.support.databases import ON_POSTGRES, database_for
from tests.support.slack_group import CHANNEL, settings_for
from tests.support.slack_harness import SlackHarness
from tests.support.slack_standin import SlackStandin


def pytest_collection_modifyitems(config, items):
    """On PostgreSQL (PAPERBOT_TEST_ENGINE=postgresql), the tests of SQLite's own file are skipped."""
    if ON_POSTGRES:
        skip = pytest.mark.skip(reason="about SQLite's file; this run is on PostgreSQL")
        for item in items:
            if "sqlite_only" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def seeded_file(tmp_path_factory) -> Path | str:
    """A database as first use leaves it, made once a session: a copy costs far less than seeding
    (on PostgreSQL, a template database that each test's is made from)."""
    folder = tmp_path_factory.mktemp("template")
    if ON_POSTGRES:
        url = database_for(folder)
        open_store(url).close()
        return url.split("@/", 1)[1].split("?")[0]  # the database's name
    path = folder / "paperbot.db"
    open_store(path).close()
    return path


@pytest.fixture
def store(tmp_path, seeded_file) -> Store:
    if ON_POSTGRES:
        s = open_store(database_for(tmp_path, template=str(seeded_file)))
    else:
        shutil.copyfile(seeded_file, tmp_path / "paperbot.db")
        s = open_store(tmp_path / "paperbot.db")
    yield s
    s.close()


@pytest.fixture
def slack():
    with SlackStandin(
        channels={CHANNEL, "C0OTHER"},
        members={CHANNEL},
        users={
            "UADMIN": {},
            "UOWNER": {"is_owner": True},
            "UWSADMIN": {"is_admin": True},
            "U1": {},
            "U2": {},
            "U3": {},
        },
    ) as standin:
        yield standin


@pytest.fixture
def make_harness(tmp_path, slack, monkeypatch):
    """make_harness(clock, **env) -> SlackHarness on a fresh database. Its announcements are not held
    (each goes as soon as its reply has): a test of the hold sets outbox_sender's ANNOUNCE_* itself."""
    from bot.announcing import sender as outbox_sender
    from bot.slack.app import SlackBot, build_app

    monkeypatch.setattr(outbox_sender, "ANNOUNCE_QUIET", 0.0)
    monkeypatch.setattr(outbox_sender, "ANNOUNCE_LONGEST_HOLD", 0.0)

    made = []

    def make(clock: Clock | None = None, **env) -> SlackHarness:
        settings = settings_for(tmp_path, slack.api_url, **env)
        store = open_store(settings.db_path)
        bot = SlackBot(settings, store, clock=clock)  # the clients `run` makes, aimed at the stand-in
        harness = SlackHarness(bot, build_app(bot), slack)
        made.append(harness)
        return harness

    yield make
    for h in made:
        h.bot.close()
        h.bot.store.close()
