"""Starting without the seed list (`paperbot init --empty`), and deleting a paper that nothing refers to."""

from __future__ import annotations

import io

from bot import cli
from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.catalog import queries as catalog
from bot.chat import commands, context
from bot.console.render import render as console_text
from bot.schedule.signups import Member
from tests.support.clock import TZ, at


def _ctx(store, user="UADMIN", admin=True, when="2026-12-02 10:00"):
    group = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))
    return context.Context(store, group, Member(user, lambda: admin), at(when))


def _say(store, line, **kw) -> str:
    return console_text(commands.run(_ctx(store, **kw), line).reply)


def test_an_admin_deletes_a_paper_nothing_refers_to(store):
    added = catalog.upsert(
        store, [catalog.PaperInput(id="typo-paper", title="A paper added by mistake", tags=("oops",))]
    )
    assert added.added == 1
    paper = catalog.find(store, "typo-paper")
    assert dict(catalog.tag_counts(store))["oops"] == 1

    asked = commands.run(_ctx(store), f"delete #{paper.number}").reply
    assert console_text(asked) == (
        f"Delete #{paper.number} A paper added by mistake (typo-paper, tagged oops)? It goes for good: its number "
        "is not given to another paper. Nothing was deleted yet.\n"
        f"  [Delete #{paper.number}] → delete {paper.number} confirm"
    )
    assert catalog.find(store, "typo-paper") is not None  # one word deletes nothing
    [button] = asked.buttons
    reply = _say(store, button.command)  # the button carries the command's text
    assert reply.startswith(f"Deleted #{paper.number} A paper added by mistake")
    assert catalog.find(store, "typo-paper") is None
    assert "oops" not in dict(catalog.tag_counts(store))
    assert catalog.search(store, "mistake").papers == []
    # Its number is never handed out again.
    again = catalog.add(store, catalog.validate({"title": "The next paper"}, new=True))
    assert again.number == paper.number + 1


def test_delete_confirm_typed_deletes_and_says_how_to_add_it_back(store):
    paper = catalog.find(store, "diloco")
    reply = _say(store, "delete diloco confirm")
    assert reply == (
        f"Deleted #{paper.number} {paper.title} (`diloco`). Its number is not given to another paper. "
        "To add it back: `/paper add https://arxiv.org/abs/2311.08105 parallelism-dp`."
    )
    assert catalog.find(store, "diloco") is None


def test_a_paper_with_a_talk_or_a_post_is_not_deleted(store):
    assert "signed up" in _say(store, "signup 5 2026-12-10", user="U1", admin=False)
    reply = _say(store, "delete 5")  # said at once, before any confirming
    assert (
        _say(store, "delete 5 confirm")
        == reply
        == (
            "✗ #5 Seed1.5-VL Technical Report stays: a talk (booked or given) refers to it. "
            "Only a paper nothing refers to can be deleted."
        )
    )
    assert catalog.find(store, "5") is not None

    with store.write() as db:  # the row a weekly post leaves, once sent
        db.execute(
            "INSERT INTO deliveries (kind, dest, key, state, paper, claimed_at, updated_at) "
            "VALUES ('post', 'C0PAPERS', '2026-W49', 'sent', 6, 0, 'x')"
        )
    assert "a weekly post or reminder refers to it" in _say(store, "delete 6 confirm")
    assert catalog.count(store) == 32


def test_only_admins_delete_papers(store):
    reply = _say(store, "delete 7 confirm", user="U1", admin=False)
    assert reply.startswith("✗ Only admins can delete papers.")
    assert catalog.find(store, "7") is not None
    assert _say(store, "delete").startswith("✗ Usage: `/paper delete <paper> [confirm]`")
    assert _say(store, "delete no-such-paper").startswith("✗ There is no paper `no-such-paper`.")
    assert catalog.count(store) == 32


def _main(monkeypatch, tmp_path, capsys, *argv, db="paperbot.db"):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAPERBOT_DB", str(db))
    monkeypatch.setattr("sys.stdin", io.StringIO("tags\n"))
    code = cli.main(list(argv))
    return (code, *capsys.readouterr())


def test_init_empty_starts_without_the_seed_list_and_never_seeds_later(tmp_path, monkeypatch, capsys):
    db = tmp_path / "empty.db"
    code, out, err = _main(monkeypatch, tmp_path, capsys, "init", "--empty", db=db)
    assert code == 0 and out == f"Made a new database at {db} with 0 papers.\n", err
    code, out, err = _main(monkeypatch, tmp_path, capsys, "export", db=db)
    assert code == 0 and out == "[]\n"  # opened again: still no papers

    code, out, err = _main(monkeypatch, tmp_path, capsys, "init", db=db)
    assert code == 1 and out == ""
    assert (
        err == f"paperbot: PAPERBOT_DB: {db} exists already; init makes only a new database and leaves it as it is "
        "(to start afresh, stop paperbot and remove the file, with its -wal and -shm beside it, "
        "or set PAPERBOT_DB to a new path)\n"
    )


def test_init_without_empty_makes_the_seeded_database(tmp_path, monkeypatch, capsys):
    db = tmp_path / "seeded.db"
    code, out, err = _main(monkeypatch, tmp_path, capsys, "init", db=db)
    assert code == 0 and out == f"Made a new database at {db} with 32 papers.\n"


def test_a_new_database_at_a_relative_path_is_named_loudly(tmp_path, monkeypatch, capsys):
    code, out, err = _main(monkeypatch, tmp_path, capsys, "export", db="data/paperbot.db")
    assert code == 0
    where = tmp_path / "data" / "paperbot.db"
    assert err.startswith(f"paperbot: made a new database at {where} (32 papers); PAPERBOT_DB (data/paperbot.db)")
    assert "set PAPERBOT_DB to an absolute path" in err and len(err.splitlines()) == 1
    code, out, err = _main(monkeypatch, tmp_path, capsys, "export", db="data/paperbot.db")
    assert err == ""  # opened, not made: nothing to say


def test_a_new_database_at_an_absolute_path_is_not_news_to_a_script(tmp_path, monkeypatch, capsys):
    code, out, err = _main(monkeypatch, tmp_path, capsys, "export", db=tmp_path / "abs.db")
    assert code == 0 and err == ""


def test_version_names_the_package_version(capsys):
    from importlib.metadata import version

    try:
        cli.main(["--version"])
    except SystemExit as done:
        assert done.code == 0
    assert capsys.readouterr().out == f"paperbot {version('paperbot')}\n" == "paperbot 0.1.0\n"
