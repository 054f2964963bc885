"""Which processes working on a database are alive: claims of the weekly post, reminders and
the outbox name their owner (OWNER), and a claim of a dead owner is taken over at once.

Each process that claims rows holds a lock (flock) on a file of its own, `<db>-owners/<its id>`,
for as long as it runs; the kernel lets go of it when the process ends, however it ends. So
a claim's owner is dead when its file can be locked: across containers that share the database's
folder, and for a container's PID 1 restarted with the dead one's process ID, where host and
process ID tell nothing. Where the folder cannot be written (a read-only copy), the host and
process ID decide, as for owners from before these files. fcntl is POSIX: paperbot runs on Linux
and macOS (pyproject.toml says so), not Windows.

On PostgreSQL, replicas on many machines: each process holds a session advisory lock keyed by its
owner id (crc32, the same in every process) on a connection of its own, which the server lets go of
when the session ends (a killed process's within milliseconds). So a claim's owner is dead when
another session can take its lock. A host that vanishes without closing its TCP connections keeps
its session until keepalive notices: the claims' leases are the backstop for that. A restarted
server has lost every lock: for a minute after its start (the living take theirs again within
seconds, see _Keeper) a free lock tells only of an owner that wrote its row since the start.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import socket
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bot.store import engine
from bot.store.connection import Store

log = logging.getLogger(__name__)

_MINE = uuid.uuid4().hex[:8]  # the name of this process's owner file
OWNER = f"{socket.gethostname()}:{os.getpid()}:{_MINE}"

#: owners folder -> (our locked file's descriptor or -1, the stores of this process that use it)
_held: dict[Path, tuple[int, set[int]]] = {}
_held_lock = threading.Lock()


def _owners(store: Store) -> Path | None:
    return None if str(store.path) == ":memory:" else store.path.with_name(store.path.name + "-owners")


def hold(store: Store) -> None:
    """Lock this process's owner file for `store` (its advisory lock on PostgreSQL) before its rows
    name OWNER; held until the last Store of this process on that database closes (or the process ends)."""
    if engine.is_postgres(store):
        _hold_session(store)
        return
    folder = _owners(store)
    if folder is None or id(store) in _held.get(folder, (-1, ()))[1]:
        return
    with _held_lock:
        if folder not in _held:
            fd = -1
            try:
                folder.mkdir(exist_ok=True)
                fd = os.open(folder / _MINE, os.O_RDWR | os.O_CREAT, 0o644)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                log.debug("no owner file in %s (%s): liveness by host and process ID", folder, e)
                if fd >= 0:
                    os.close(fd)
                fd = -1
            _held[folder] = (fd, set())
            _sweep(store, folder)
        _held[folder][1].add(id(store))
    store.on_close.append(lambda: _let_go(folder, id(store)))


def _sweep(store: Store, folder: Path) -> None:
    """Remove the files of owners that died (a crash leaves its file behind, unlocked), unless a row
    still names the owner (its file is how the next look knows it dead, not a lease to wait out) or
    the file is new (a starting process creates its file a moment before it locks it)."""
    named = {
        str(r[0]).rsplit(":", 1)[-1]
        for r in store.db.execute(
            "SELECT owner FROM deliveries WHERE owner IS NOT NULL "
            "UNION SELECT owner FROM outbox WHERE owner IS NOT NULL"
        )
    }
    try:
        names = [
            p for p in folder.iterdir() if p.name != _MINE and p.name not in named and not p.name.startswith("work-")
        ]
    except OSError:
        return
    for path in names:
        try:
            if time.time() - path.stat().st_mtime < 60:
                continue
            fd = os.open(path, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            path.unlink()
        except OSError:
            pass  # locked: its process runs
        finally:
            os.close(fd)


def _let_go(folder: Path, store: int) -> None:
    with _held_lock:
        fd, stores = _held.get(folder, (-1, set()))
        stores.discard(store)
        if stores or folder not in _held:
            return
        del _held[folder]
    if fd >= 0:
        with contextlib.suppress(OSError):
            os.unlink(folder / _MINE)  # gone with us: nobody need look at it
        os.close(fd)


def owner_is_dead(store: Store, owner: str | None, since: float | None = None) -> bool:
    """True when `owner` is a process that no longer runs: its owner file is not locked (its advisory
    lock is free on PostgreSQL), or (without one) it was a process on this host that is gone.
    `since`: when the owner last wrote the row that names it (unix time), if known."""
    if not owner:
        return False
    if engine.is_postgres(store):
        return _session_gone(store, owner, since)
    if os.name != "posix":
        return False
    try:
        host, pid_text, ident = owner.split(":", 2)
        pid = int(pid_text)
    except ValueError:
        return False
    folder = _owners(store)
    if folder is not None and ident.isalnum():
        try:
            fd = os.open(folder / ident, os.O_RDWR)
        except OSError:
            pass  # no file: an owner from before these files, or one that could not write it
        else:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False  # locked: it runs
            else:
                return True  # kept: other rows may name it (the next start's sweep removes it)
            finally:
                os.close(fd)
    if host != socket.gethostname() or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


# -- PostgreSQL: a session advisory lock per process ---------------------------------------

#: The first key of the owners' advisory locks (the two-key form: apart from the store's one-key locks).
_OWNERS_SPACE = zlib.crc32(b"paperbot owners") - (1 << 31)
#: How often the process makes sure its lock is still held (a restarted server lost it).
KEEP_SECONDS = 5.0
#: After a server's start, how long a free lock says nothing: the living take theirs again meanwhile.
RESTART_GRACE_SECONDS = 60.0


def _key(owner: str) -> int:
    """The second key of `owner`'s lock: crc32, never hash() (another in every process)."""
    return zlib.crc32(owner.encode()) - (1 << 31)


class _Keeper:
    """This process's owner lock on one PostgreSQL database, on a connection of its own, checked every
    KEEP_SECONDS and taken again on a new connection when the server went away."""

    def __init__(self, store: Any):
        self.store = store
        self.stores: set[int] = set()
        self.raw: Any = None
        self._stop = threading.Event()
        self._take()
        self._thread = threading.Thread(target=self._keep, name="owner-lock", daemon=True)
        self._thread.start()

    def _take(self) -> None:
        raw = self.store.connect(apart=True)
        # Not free only when a session of this process, lost to us but not yet to the server, holds it.
        raw.execute("SELECT pg_try_advisory_lock(%s, %s)", [_OWNERS_SPACE, _key(OWNER)])
        self.raw = raw

    def _keep(self) -> None:
        while not self._stop.wait(KEEP_SECONDS):
            try:
                if self.raw is not None and not self.raw.broken:
                    self.raw.execute("SELECT 1")
                    continue
            except Exception:  # noqa: BLE001, S110 - a lost connection: taken again below
                pass
            with contextlib.suppress(Exception):
                self.raw.close()
            self.raw = None
            try:
                self._take()
                log.info("took this process's owner lock again")
            except Exception as e:  # noqa: BLE001 - the server still away: the next round tries again
                log.debug("owner lock not taken again yet: %s", e)

    def close(self) -> None:
        self._stop.set()
        if self.raw is not None:
            with contextlib.suppress(Exception):
                self.raw.close()


_sessions: dict[str, _Keeper] = {}


def _hold_session(store: Any) -> None:
    with _held_lock:
        keeper = _sessions.get(store.url)
        if keeper is not None and id(store) in keeper.stores:
            return
        if keeper is None:
            keeper = _sessions[store.url] = _Keeper(store)
        keeper.stores.add(id(store))
    store.on_close.append(lambda: _let_go_session(store.url, id(store)))


def _let_go_session(url: str, store: int) -> None:
    with _held_lock:
        keeper = _sessions.get(url)
        if keeper is None:
            return
        keeper.stores.discard(store)
        if keeper.stores:
            return
        del _sessions[url]
    keeper.close()


def _session_gone(store: Any, owner: str, since: float | None) -> bool:
    """Can this session take `owner`'s lock (then let go of it at once)? A restarted server lost every
    lock, the living's too: a free lock tells only of an owner that wrote its row (unix time `since`)
    after the server started, or once the server has run RESTART_GRACE_SECONDS (the living have
    taken theirs again by then)."""
    if owner == OWNER:
        return False
    # One statement, so one connection of the pool: a lock taken on one and let go on another would stay held.
    taken, started, up = store.db.execute(
        "SELECT CASE WHEN pg_try_advisory_lock(:space, :key) THEN pg_advisory_unlock(:space, :key) ELSE false END, "
        "extract(epoch FROM pg_postmaster_start_time()), extract(epoch FROM now() - pg_postmaster_start_time())",
        {"space": _OWNERS_SPACE, "key": _key(owner)},
    ).fetchone()
    if not taken:
        return False
    return float(up) > RESTART_GRACE_SECONDS or (since is not None and since > float(started))


# -- work one process at a time ------------------------------------------------------------

#: The first key of `exclusive`'s advisory locks.
_WORK_SPACE = zlib.crc32(b"paperbot work") - (1 << 31)


def _work_key(store: Store, name: str) -> int:
    """The second key of the work `name`'s lock: each place's work apart (a place's schema in it)."""
    schema = getattr(store, "schema", None)
    return zlib.crc32((f"{schema}/{name}" if schema else name).encode()) - (1 << 31)


@contextlib.contextmanager
def exclusive(store: Store, name: str) -> Iterator[bool]:
    """Whether this process may do the work `name` now, held until the block ends: False while another
    process (a replica on another machine too) does it. For work whose every step cannot be claimed
    apart (Discord's events: listed, compared and made in one check). A lock on a file beside the
    SQLite file, or a session advisory lock on this thread's PostgreSQL connection, let go of by the
    system whenever the process ends."""
    if engine.is_postgres(store):
        pg: Any = store  # a PgStore: connect() is its own
        # A connection of its own for the block: a session lock is let go of on the connection that took it.
        raw = pg.connect(apart=True)
        try:
            key = _work_key(store, name)
            yield bool(raw.execute("SELECT pg_try_advisory_lock(%s, %s)", [_WORK_SPACE, key]).fetchone()[0])
        finally:
            with contextlib.suppress(Exception):  # closing lets go of the lock
                raw.close()
        return
    folder = _owners(store)
    fd = -1
    if folder is not None:
        try:
            folder.mkdir(exist_ok=True)
            fd = os.open(folder / f"work-{zlib.crc32(name.encode()):08x}", os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if fd >= 0:
                os.close(fd)
                fd = -1
            if isinstance(e, BlockingIOError):
                yield False
                return
            log.debug("no lock file for %s in %s (%s): this process alone decides", name, folder, e)
    try:
        yield True
    finally:
        if fd >= 0:
            os.close(fd)


class Held:
    """Work that one process at a time does for as long as it runs (Discord's Gateway session), taken
    with `take`: a session advisory lock on a connection of its own on PostgreSQL, a flock beside the
    SQLite file. The system lets go of it when the process ends, however it ends."""

    def __init__(self, release: Callable[[], None], alive: Callable[[], bool]):
        self._release, self._alive = release, alive

    def still_held(self) -> bool:
        """False once the lock is lost (PostgreSQL restarted, or its connection cut): another may take it."""
        return self._alive()

    def release(self) -> None:
        with contextlib.suppress(Exception):
            self._release()


def take(store: Store, name: str) -> Held | None:
    """The work `name`, held by this process until `release()`; None while another process holds it."""
    if engine.is_postgres(store):
        pg: Any = store  # a PgStore: connect() is its own
        raw = pg.connect(apart=True)
        key = _work_key(store, name)
        if not raw.execute("SELECT pg_try_advisory_lock(%s, %s)", [_WORK_SPACE, key]).fetchone()[0]:
            raw.close()
            return None

        def alive() -> bool:
            try:
                raw.execute("SELECT 1")
                return True
            except Exception:  # noqa: BLE001 - the session is gone, and its lock with it
                return False

        return Held(raw.close, alive)
    folder = _owners(store)
    if folder is None:
        return Held(lambda: None, lambda: True)
    folder.mkdir(exist_ok=True)
    fd = os.open(folder / f"work-{zlib.crc32(name.encode()):08x}", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return Held(lambda: os.close(fd), lambda: True)
