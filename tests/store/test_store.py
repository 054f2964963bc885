"""The SQLite file: migrations keep data, first use is safe under concurrency, writes are not lost."""

from __future__ import annotations

import io
import sqlite3
import threading
import time

import pytest
import sqlite_utils

from bot.catalog import files as papers_file
from bot.catalog import queries as catalog
from bot.catalog.queries import open_store
from bot.catalog.search_index import MERGING_DEFERRED, SEARCH_TABLES, set_merging
from bot.store.connection import Store
from bot.store.migrations import migrations


def test_an_older_database_is_migrated_and_keeps_its_data(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m002_schedule")  # the database as the first release left it
    db.execute("INSERT INTO papers (id, title, added_at, updated_at) VALUES ('mine', 'My own paper', 'x', 'x')")
    db.close()

    store = open_store(path)
    assert [p.id for p in catalog.all_papers(store)] == ["mine"]  # kept, and not seeded over
    assert store.db.execute("SELECT count(*) FROM slots").fetchone()[0] == 0  # the new tables exist
    assert migrations.pending(store.db) == []
    assert [m.name for m in migrations.applied(store.db)][:2] == ["m001_catalog", "m002_schedule"]
    store.close()


def test_ids_that_no_longer_read_back_are_renamed_and_an_export_imports_whole(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m005_valid_ids")  # as the releases before it left the file
    old = [("1999", "Explicitly numbered"), ("2024", "2024"), ("long-title--2", "Long title, the second")]
    old += [("long-title-2", "Taken already"), ("fine-id", "Fine")]
    for pid, title in old:
        db.execute("INSERT INTO papers (id, title, added_at, updated_at) VALUES (?, ?, 'x', 'x')", [pid, title])
    db.close()

    store = open_store(path)
    ids = {p.title: (p.id, p.number) for p in catalog.all_papers(store)}
    assert ids == {
        "Explicitly numbered": ("paper-1999", 1),
        "2024": ("paper-2024", 2),
        "Long title, the second": ("long-title-2-2", 3),  # long-title-2 was taken
        "Taken already": ("long-title-2", 4),
        "Fine": ("fine-id", 5),
    }
    exported = io.StringIO()
    papers_file.write(catalog.all_papers(store), "json", exported)
    store.close()
    dump = tmp_path / "export.json"
    dump.write_text(exported.getvalue(), encoding="utf-8")
    report = papers_file.read(dump)
    assert report.problems == [] and len(report.papers) == 5


def test_a_sent_posts_slack_ts_is_kept_as_its_message_reference(tmp_path):
    """The week's post, sent before the column was renamed, is still known: no second post."""
    from bot.delivery import sending as delivery

    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m007_message_ref")
    db.execute(
        "INSERT INTO deliveries (kind, dest, key, state, claimed_at, channel, ts, updated_at) "
        "VALUES ('post', 'C0PAPERS', '2026-W50', 'sent', 0, 'C0PAPERS', '1765000000.000100', 'x')"
    )
    db.close()

    store = Store(path)
    assert delivery.sent_message(store, "post", "C0PAPERS", "2026-W50") == delivery.Sent(
        "C0PAPERS", "1765000000.000100"
    )
    store.close()


def test_many_threads_opening_a_new_file_at_once(tmp_path):
    path = tmp_path / "new.db"
    errors = []
    barrier = threading.Barrier(8)

    def open_it():
        barrier.wait()
        try:
            open_store(path).close()
        except Exception as e:  # pragma: no cover - the assertion below shows it
            errors.append(e)

    threads = [threading.Thread(target=open_it) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    store = open_store(path)
    assert catalog.count(store) == 32  # seeded once, not eight times
    store.close()


@pytest.mark.sqlite_only
def test_wal_mode_and_one_connection_per_thread(store):
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    seen = {}

    def grab(name):
        seen[name] = store.db

    threads = [threading.Thread(target=grab, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(db) for db in seen.values()} | {id(store.db)}) == 4


def test_a_failed_write_changes_nothing(store):
    try:
        with store.write() as db:
            db.execute("UPDATE papers SET title = 'half done' WHERE number = 1")
            raise sqlite3.IntegrityError("something went wrong halfway")
    except sqlite3.IntegrityError:
        pass
    assert catalog.by_number(store, 1).title.startswith("Chopper")


def merging(store: Store) -> list[tuple]:
    return [
        store.db.execute(
            f"SELECT k, v FROM {table}_config WHERE k IN ('automerge', 'crisismerge') ORDER BY k"
        ).fetchall()
        for table in SEARCH_TABLES
    ]


@pytest.mark.sqlite_only
def test_an_import_defers_index_merging_and_always_turns_it_back_on(store):
    seen: list = []
    rows = (catalog.PaperInput(id=f"bulk-{i}", title=f"Bulk {i}", summary="数据并行") for i in range(2500))

    def watching():
        for i, row in enumerate(rows):
            if i == 1500:
                seen.append(merging(store))
            yield row

    catalog.upsert(store, watching())
    assert seen == [[[("automerge", 0), ("crisismerge", 1000)]] * 3]
    assert merging(store) == [[("automerge", 4), ("crisismerge", 16)]] * 3
    assert len(catalog.search(store, "bulk 并行").papers) == 40

    def failing():
        yield catalog.PaperInput(id="fine", title="Fine")
        raise OSError("disk gone")

    with pytest.raises(OSError):
        catalog.upsert(store, failing())
    assert merging(store) == [[("automerge", 4), ("crisismerge", 16)]] * 3


@pytest.mark.sqlite_only
def test_a_big_import_leaves_each_search_index_in_one_piece(store):
    """Merged a step at a time (so that sign-ups get the write lock between steps), but all the way."""
    rows = [
        catalog.PaperInput(id=f"bulk-{i}", title=f"Bulk {i} training", summary="数据并行 " * 20) for i in range(3000)
    ]
    catalog.upsert(store, rows, batch=100)  # 30 commits: 30 segments in each index before the merge
    segments = {t: store.db.execute(f"SELECT count(DISTINCT segid) FROM {t}_idx").fetchone()[0] for t in SEARCH_TABLES}
    assert segments == dict.fromkeys(SEARCH_TABLES, 1)
    assert len(catalog.search(store, "bulk 并行").papers) == 40


def test_merging_left_off_by_a_killed_import_is_turned_back_on_at_open(tmp_path):
    store = open_store(tmp_path / "paperbot.db")
    with store.write() as db:
        set_merging(db, MERGING_DEFERRED)  # as an import killed halfway leaves it
    store.close()
    reopened = open_store(tmp_path / "paperbot.db")
    assert merging(reopened) == [[("automerge", 4), ("crisismerge", 16)]] * 3
    reopened.close()


def test_the_outbox_hands_an_item_to_one_sender_and_keeps_it_until_done(store):
    from bot.delivery import outbox

    with store.write() as db:
        outbox.queue(db, [("announce", {"n": 1}), ("refresh", {"week": "2026-W50"})])
    first = outbox.take(store, now=1000.0)
    assert [i.payload for i in first] == [{"n": 1}, {"week": "2026-W50"}]
    assert outbox.take(store, now=1001.0) == []  # leased: another sender gets nothing
    outbox.done(store, first[1])
    assert outbox.retry(store, first[0], at=1100.0, error="rate limited")
    assert outbox.take(store, now=1050.0) == []  # not due yet
    [again] = outbox.take(store, now=1100.0)
    assert again.attempts == 1 and again.payload == {"n": 1}
    outbox.release(store, again)  # a stopping sender lets go
    [taken] = outbox.take(store, now=1100.0 + outbox.LEASE_SECONDS)  # a dead sender's lease runs out too
    for attempt in range(taken.attempts, outbox.MAX_ATTEMPTS - 1):
        assert outbox.retry(store, taken, at=0, error="x")
        [taken] = outbox.take(store, now=2000.0 + attempt)
    # Twelve tries within the hour and a half (restarts try every line at once): kept.
    assert outbox.retry(store, taken, at=0, error="x")
    store.db.execute("UPDATE outbox SET created_at = ?", [time.time() - outbox.GIVE_UP_AFTER - 1])
    [taken] = outbox.take(store, now=3000.0)
    assert not outbox.retry(store, taken, at=0, error="x")  # the last try: dropped, and said so by the sender
    assert outbox.take(store, now=9999.0) == []


def test_no_announcement_overtakes_an_earlier_one_that_waits_in_any_process(store):
    from bot.delivery import outbox

    with store.write() as db:
        outbox.queue(db, [("announce", {"n": 1}), ("announce", {"n": 2}), ("refresh", {"week": "2026-W50"})])
    first, second, update = outbox.take(store, now=1000.0)
    outbox.postpone(store, first, at=2000.0, why="rate limited")  # Slack holds the first line off
    outbox.release(store, second)
    outbox.release(store, update)
    # Another process, or this one after a restart, knows nothing of that hold but what is saved:
    [taken] = outbox.take(store, now=1001.0)
    assert taken.payload == {"week": "2026-W50"}  # a post update needs no order
    outbox.done(store, taken)
    assert [i.payload for i in outbox.take(store, now=2001.0)] == [{"n": 1}, {"n": 2}]


def test_a_database_another_process_keeps_locked_is_called_busy_not_broken(tmp_path, monkeypatch):
    from bot import cli
    from bot.settings import Settings
    from bot.store import connection as store

    path = tmp_path / "held.db"
    open_store(path).close()
    holder = sqlite3.connect(path)
    holder.execute("BEGIN IMMEDIATE")  # another process writing, and writing, and writing
    monkeypatch.setattr(store, "BUSY_TIMEOUT_MS", 300)  # 15 s in the bot
    settings = Settings.load({"PAPERBOT_DB": str(path)}, dotenv=None)
    try:
        with pytest.raises(cli.Failure) as failed:
            cli._store(settings, writes=False)
    finally:
        holder.rollback()
        holder.close()
    said = str(failed.value)
    assert said.startswith(f"PAPERBOT_DB: {path} is busy: another process kept it locked")
    assert "not a usable" not in said


def _imports_of_bot() -> dict[str, set[str]]:
    """Each module of bot/ and the modules of bot/ it imports, at its top or inside a function."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    names = {
        ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__") for p in root.glob("bot/**/*.py")
    }
    graph: dict[str, set[str]] = {}
    for path in root.glob("bot/**/*.py"):
        name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "bot":
                found.add(node.module)
                found |= {f"{node.module}.{a.name}" for a in node.names} & names
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names} & names
        graph[name] = (found & names) - {name}
    return graph


def test_the_store_imports_nothing_of_the_domain_and_bot_has_no_import_circle():
    graph = _imports_of_bot()
    assert graph["bot.store.connection"] == {"bot.store.migrations"}
    assert graph["bot.store.migrations"] == set()
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            raise AssertionError("import circle: " + " -> ".join(path[path.index(name) :] + [name]))
        if name in done:
            return
        for dep in sorted(graph[name]):
            if dep in graph:
                visit(dep, path + [name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])
