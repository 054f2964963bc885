"""A group's own start: `paperbot init --empty` over the untouched starter list (after README's
console session, which is the operator's try-out), refused once a member did anything."""

from __future__ import annotations

import pytest

from bot import cli
from bot.catalog import queries as catalog
from tests.support import readme_session


def _init_empty(monkeypatch, capsys, db) -> tuple[int, str, str]:
    monkeypatch.setenv("PAPERBOT_DB", str(db))
    code = cli.main(["init", "--empty"])
    return (code, *capsys.readouterr())


def _rows(db_path) -> list:
    store = catalog.open_store(db_path)
    try:
        return [store.db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in ("papers", "slots", "votes")]
    finally:
        store.close()


def test_init_empty_right_after_readmes_session_gives_an_empty_catalog(tmp_path, monkeypatch, capsys):
    db = tmp_path / "paperbot.db"
    store = catalog.open_store(db)
    assert "You're signed up" in readme_session.replay(store)  # the operator tried a sign-up, too
    store.close()

    code, out, err = _init_empty(monkeypatch, capsys, db)
    assert (code, err) == (0, "")
    assert out == f"Emptied the catalog at {db}: the 32 starter papers are gone; it has 0 papers.\n"
    store = catalog.open_store(db)
    assert catalog.count(store) == 0 and catalog.tag_counts(store) == [] and catalog.search(store, "data").papers == []
    assert "Coming weeks" in readme_session.replay(store, "schedule\n") and "—  @console" not in readme_session.replay(
        store, "schedule\n"
    )
    store.close()
    monkeypatch.setenv("PAPERBOT_DB", str(db))
    assert cli.main(["export"]) == 0 and capsys.readouterr().out == "[]\n"  # opened again: never seeded again


@pytest.mark.parametrize(
    ("typed", "lost"),
    [
        ("signup 7 2026-12-17\n", "1 sign-up"),
        ("vote 7\n", "1 vote"),
        ("signup 7 2026-12-17\nslides 7 https://example.org/slides.pdf\n", "1 sign-up, 1 talk link"),
    ],
)
def test_init_empty_after_a_members_doing_refuses_and_keeps_everything(tmp_path, monkeypatch, capsys, typed, lost):
    db = tmp_path / "paperbot.db"
    store = catalog.open_store(db)
    readme_session.replay(store)
    reply = readme_session.replay(store, typed, user="U012ABCDEF")  # a member, as the console's --user acts
    assert "✗" not in reply, reply
    store.close()
    before = _rows(db)

    code, out, err = _init_empty(monkeypatch, capsys, db)
    assert (code, out) == (1, "")
    assert err == (
        f"paperbot: PAPERBOT_DB: {db} holds what members did ({lost}); init --empty would lose it, "
        "so it was left as it is\n"
    )
    assert _rows(db) == before and len(before[0]) == 32


@pytest.mark.parametrize(
    ("typed", "lost", "left"),
    [("edit 7 title A better title\n", "1 paper edited", 32), ("delete 32 confirm\n", "1 paper deleted", 31)],
)
def test_an_edited_or_deleted_starter_paper_is_named_too(tmp_path, monkeypatch, capsys, typed, lost, left):
    db = tmp_path / "paperbot.db"
    store = catalog.open_store(db)
    readme_session.replay(store, typed)  # even by the operator, at once: the list is no longer the starter list
    store.close()
    code, out, err = _init_empty(monkeypatch, capsys, db)
    assert code == 1 and f"({lost})" in err
    assert len(_rows(db)[0]) == left
