"""Which processes are alive, across processes (and machines, on PostgreSQL): a claim of a process
that runs is left to it; one of a process killed with SIGKILL is taken over at once, not after its lease."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from bot.delivery import sending
from bot.delivery.sending import Delivery, Sent
from bot.store import liveness
from tests.support.databases import ON_POSTGRES, database_for, server

#: A process that claims a delivery, says so, and runs until killed (as a replica mid-send), named as
#: if on another machine: its host and process ID tell this one nothing.
CLAIMANT = """
import socket, sys, time
socket.gethostname = lambda: "another-machine"
from bot.catalog.queries import open_store
from bot.store import liveness
store = open_store(sys.argv[1], seed=None)
liveness.hold(store)
with store.write() as db:
    db.execute(
        "INSERT INTO deliveries (kind, dest, key, state, owner, lease_until, claimed_at, updated_at) "
        "VALUES ('post', 'C0PAPERS', '2026-W50', 'sending', ?, ?, ?, 'x')",
        [liveness.OWNER, time.time() + 900, time.time()],
    )
print(liveness.OWNER, flush=True)
time.sleep(600)
"""


class Channel:
    """A transport that posts into a list and finds what it posted."""

    def __init__(self):
        self.posted: list[str] = []

    def send(self, d, message):
        self.posted.append(d.key)
        return Sent(d.dest, f"ref-{len(self.posted)}")

    def reaches(self, user):
        return True

    def find(self, d, since):
        return None


def _claimant(tmp_path) -> tuple[subprocess.Popen, str]:
    child = subprocess.Popen(
        [sys.executable, "-c", CLAIMANT, database_for(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    owner = child.stdout.readline().strip()
    assert owner, "the claimant did not start"
    return child, owner


def _deliver(store, channel: Channel) -> str:
    return sending.deliver(store, Delivery("post", "C0PAPERS", "2026-W50"), lambda: ("post", None), channel).status


def test_a_running_owner_keeps_its_claim_and_a_killed_ones_is_taken_at_once(tmp_path):
    from bot.catalog.queries import open_store

    store = open_store(database_for(tmp_path), seed=None)
    child, owner = _claimant(tmp_path)
    channel = Channel()
    try:
        assert _deliver(store, channel) == "busy" and channel.posted == []  # it may be posting this moment
        assert not liveness.owner_is_dead(store, owner)
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        deadline = time.monotonic() + 5  # the server (or the kernel) lets go of a killed process's lock
        while not liveness.owner_is_dead(store, owner) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _deliver(store, channel) == "sent"  # now: not after the killed one's 15-minute lease
        assert channel.posted == ["2026-W50"]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        child.stdout.close()
        store.close()


if ON_POSTGRES:

    def test_after_the_server_restarts_a_running_owners_claim_stays_its_own(tmp_path, monkeypatch):
        # A restart drops every session, and with them every lock: the living's too. They take theirs
        # again within seconds; meanwhile a free lock of an owner that wrote before the restart says nothing.
        from bot.catalog.queries import open_store

        store = open_store(database_for(tmp_path), seed=None)
        child, owner = _claimant(tmp_path)
        channel = Channel()
        try:
            server().pg_ctl("restart")
            assert _deliver(store, channel) == "busy" and channel.posted == []
            deadline = time.monotonic() + 3 * liveness.KEEP_SECONDS  # the claimant takes its lock again
            while time.monotonic() < deadline:
                store.db.execute("SELECT 1")
                taken = store.db.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid::int = ? "
                    "AND objid::int = ? AND granted",
                    [liveness._OWNERS_SPACE, liveness._key(owner)],
                ).fetchone()[0]
                if taken:
                    break
                time.sleep(0.1)
            else:
                raise AssertionError("the claimant did not take its lock again")
            monkeypatch.setattr(liveness, "RESTART_GRACE_SECONDS", 0.0)  # a minute later, as far as it knows
            assert not liveness.owner_is_dead(store, owner)
            assert _deliver(store, channel) == "busy" and channel.posted == []
        finally:
            if child.poll() is None:
                os.kill(child.pid, signal.SIGKILL)
                child.wait(10)
            child.stdout.close()
            store.close()
