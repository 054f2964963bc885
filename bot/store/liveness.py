"""Which processes working on a database are alive: claims of the weekly post, reminders and
the outbox name their owner (OWNER), and a claim of a dead owner is taken over at once.

Each process that claims rows holds a lock (flock) on a file of its own, `<db>-owners/<its id>`,
for as long as it runs; the kernel lets go of it when the process ends, however it ends. So
a claim's owner is dead when its file can be locked: across containers that share the database's
folder, and for a container's PID 1 restarted with the dead one's process ID, where host and
process ID tell nothing. Where the folder cannot be written (a read-only copy), the host and
process ID decide, as for owners from before these files. fcntl is POSIX: paperbot runs on Linux
and macOS (pyproject.toml says so), not Windows.
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
from pathlib import Path

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
    """Lock this process's owner file for `store` before its rows name OWNER; held until the last
    Store of this process on that database closes (or the process ends)."""
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
        names = [p for p in folder.iterdir() if p.name != _MINE and p.name not in named]
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


def owner_is_dead(store: Store, owner: str | None) -> bool:
    """True when `owner` is a process that no longer runs: its owner file is not locked, or
    (without one) it was a process on this host that is gone."""
    if not owner or os.name != "posix":
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
