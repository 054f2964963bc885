"""Votes, archiving and talk materials, as members meet them in replies (the console's rendering)."""

from __future__ import annotations

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.catalog import queries as catalog
from bot.chat import commands, context
from bot.console.render import render as console_text
from bot.schedule.signups import Member
from tests.support.clock import TZ, at

GROUP = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))


def _ctx(store, user="UADMIN", admin=False, when="2026-12-02 10:00", **kw):
    return context.Context(store, GROUP, Member(user, lambda: admin), at(when), **kw)


def say(store, line, user="U1", admin=False, when="2026-12-02 10:00") -> str:
    return console_text(commands.run(_ctx(store, user, admin, when), line).reply)


# -- votes ---------------------------------------------------------------------


def test_a_vote_counts_once_a_member_and_again_takes_it_back(store):
    assert "You voted for #7" in say(store, "vote 7", user="U1") and "votes: 1" in say(store, "show 7")
    assert "It has 2 votes." in say(store, "vote #7", user="U2")
    back = say(store, "vote 7", user="U1")
    assert "You took back your vote for #7" in back and "It has 1 vote." in back
    assert "votes: 1" in say(store, "show 7")


def test_votes_show_in_lists_only_where_there_are_some(store):
    say(store, "vote 7", user="U1")
    say(store, "vote 7", user="U2")
    say(store, "vote 9", user="U1")
    listed = say(store, "tag parallelism-dp")
    line_of = {ln.split()[0]: ln for ln in listed.splitlines() if ln.startswith("#")}
    assert line_of["#7"].endswith("(2 votes)") and line_of["#9"].endswith("(1 vote)")
    assert "vote" not in line_of["#8"]  # no votes: nothing added, lists stay compact
    title = catalog.find(store, "7").title.split(":")[0]
    assert "(2 votes)" in say(store, f"search {title}")
    assert "votes:" not in say(store, "show 8")


def test_a_vote_for_no_such_paper_says_so_and_counts_nothing(store):
    assert say(store, "vote 999").startswith("✗ There is no paper")
    assert say(store, "vote").startswith("✗ Usage:")
    assert store.db.execute("SELECT count(*) FROM votes").fetchone()[0] == 0


# -- archive and restore -----------------------------------------------------------


def test_archive_takes_a_paper_out_of_tag_search_and_counts_and_restore_brings_it_back(store):
    paper = catalog.find(store, "7")
    word = paper.title.split(":")[0]
    assert f"#{paper.number} " in say(store, f"search {word}")
    assert say(store, "archive 7", user="U1").startswith("✗ Only admins")
    assert say(store, "archive 7", admin=True).startswith("Archived #7")
    assert "#7 " not in say(store, "tag parallelism-dp") and "31 papers tagged" in say(store, "tag parallelism-dp")
    assert "#7 " not in say(store, f"search {word}")
    assert catalog.tag_counts(store) == [("parallelism-dp", 31)]
    card = say(store, "show 7")
    assert "[archived]" in card and "restore 7" in card and "Sign up to present" not in card
    assert say(store, "archive 7", admin=True).startswith("#7") and "archived already" in say(
        store, "archive 7", admin=True
    )
    assert say(store, "restore 7", admin=True).startswith("Restored #7")
    assert "#7 " in say(store, "tag parallelism-dp") and catalog.tag_counts(store) == [("parallelism-dp", 32)]
    assert f"#{paper.number} " in say(store, f"search {word}")


def test_a_booked_talk_of_an_archived_paper_stays_booked_and_says_so(store):
    assert "You're signed up" in say(store, "signup 7 2026-12-03", user="U1")
    archived = say(store, "archive 7", admin=True)
    assert "Its 1 booked talk stays booked." in archived
    schedule = say(store, "schedule")
    [line] = [ln for ln in schedule.splitlines() if "#7 " in ln]
    assert "(archived)" in line and "@U1" in line
    week = say(store, "week")
    assert "#7 " in week and "(archived)" in week and "@U1" in week
    assert "presented" not in say(store, "show 7")  # the talk is coming up, still
    assert "coming up:" in say(store, "show 7")


def test_archive_counts_the_booked_talks_of_every_group(store):
    from bot.schedule import groups

    assert "You're signed up" in say(store, "signup 7 2026-12-03", user="U1")
    env = _ctx(store, channel="C0ONE").env_group
    two, _ = groups.start(store, env, "C0TWO", None, "UADMIN", at=at("2026-11-30 09:00"))
    there = commands.run(_ctx(store, "U2", channel="C0ONE", where=two.channel), "signup 7 2026-12-07")
    assert "You're signed up" in console_text(there.reply)
    archived = commands.run(_ctx(store, admin=True, channel="C0ONE"), "archive 7")
    assert "Its 2 booked talks stay booked." in console_text(archived.reply)


# -- slides and past ---------------------------------------------------------------


def _talk_given(store):
    """U1 presents #7 on Thu 3 Dec 2026; the tests then speak after it."""
    assert "You're signed up" in say(store, "signup 7 2026-12-03", user="U1")


LATER = "2026-12-09 10:00"


def test_slides_by_the_presenter_are_attached_and_listed_by_past_and_show(store):
    _talk_given(store)
    added = say(store, "slides 7 https://example.org/slides.pdf", user="U1", when=LATER)
    assert added.startswith("Added the link to the talk of Thu 03 Dec 2026"), added
    say(store, "slides 2026-12-03 https://example.org/recording", user="U1", when=LATER)
    past = say(store, "past", when=LATER)
    assert "#7 " in past and "@U1" in past
    assert past.index("https://example.org/slides.pdf") < past.index("https://example.org/recording")
    card = say(store, "show 7", when=LATER)
    assert "presented:" in card and "link: https://example.org/slides.pdf" in card


def test_the_cards_talk_lines_do_not_repeat_its_title(store):
    _talk_given(store)
    say(store, "slides 7 https://example.org/slides.pdf", user="U1", when=LATER)
    title = catalog.find(store, "7").title
    card = say(store, "show 7", when=LATER)
    [line] = [ln for ln in card.splitlines() if ln.startswith("presented:")]
    assert line == "presented: Thu 03 Dec 2026 16:00 CET  —  @U1", line
    assert card.count(title) == 1, card  # its head only


def test_slides_for_a_coming_talk_say_where_it_shows_now(store):
    _talk_given(store)
    before = say(store, "slides 7 https://example.org/slides.pdf", user="U1")
    assert before.endswith("It shows in `/paper show 7` until the talk is given, then in `/paper past`."), before
    assert "https://example.org/slides.pdf" in say(store, "show 7")
    after = say(store, "slides 7 https://example.org/recording", user="U1", when=LATER)
    assert after.endswith("Talks given: `/paper past`"), after


def test_calendar_in_the_console_points_to_the_files_paperbot_writes(store):
    from bot.console.session import PLATFORM

    reply = console_text(commands.run(_ctx(store, "console", True, platform=PLATFORM), "calendar").reply)
    assert "`paperbot calendar > group.ics`" in reply and "`paperbot site DIR`" in reply, reply
    assert "whoever runs it" not in reply
    chat = say(store, "calendar")  # a member in chat: the operator is someone else
    assert "whoever runs it can set PAPERBOT_PUBLIC_URL" in chat and "paperbot site" not in chat


def test_slides_by_another_member_are_refused_in_one_line_and_an_admin_may(store):
    _talk_given(store)
    refused = say(store, "slides 7 https://example.org/mine.pdf", user="U2", when=LATER)
    assert refused == "✗ Only the presenter of that talk or an admin can change its links."
    assert store.db.execute("SELECT count(*) FROM talk_links").fetchone()[0] == 0
    assert say(store, "slides 7 https://example.org/a.pdf", user="UADMIN", admin=True, when=LATER).startswith("Added")


def test_a_link_is_removed_by_slides_remove(store):
    _talk_given(store)
    say(store, "slides 7 https://example.org/a.pdf", user="U1", when=LATER)
    assert say(store, "slides 7 remove https://example.org/a.pdf", user="U1", when=LATER).startswith("Removed")
    assert "https://example.org/a.pdf" not in say(store, "past", when=LATER)
    assert say(store, "slides 7 remove https://example.org/a.pdf", user="U1", when=LATER).startswith("✗")


def test_bad_links_and_talks_are_refused_and_change_nothing(store):
    _talk_given(store)
    for line in (
        "slides 7 javascript:alert(1)",
        "slides 7 ftp://example.org/x",
        "slides 7 https://example.org/" + "x" * 1000,
        "slides 8 https://example.org/x",  # #8 has no talk
        "slides 2026-12-10 https://example.org/x",  # nobody presents that week
        "slides 7",
    ):
        assert say(store, line, user="U1", when=LATER).startswith("✗"), line
    assert store.db.execute("SELECT count(*) FROM talk_links").fetchone()[0] == 0


def test_past_lists_talks_given_newest_first_and_none_coming(store):
    say(store, "signup 7 2026-11-19", user="U1", when="2026-11-01 10:00")
    say(store, "signup 8 2026-11-26", user="U2", when="2026-11-01 10:00")
    say(store, "signup 9 2026-12-10", user="U3")  # still to come
    past = say(store, "past", when=LATER)
    assert past.index("#8 ") < past.index("#7 ") and "#9 " not in past
    assert say(store, "past", when="2026-11-01 10:00").startswith("No talk has been given yet")


def test_past_pages_twenty_talks_at_a_time(store):
    for i in range(25):  # a talk a week from June 2026
        week = GROUP.week_of(at("2026-06-01 10:00")).plus(i)
        say(store, f"assign U{i} {i + 1} {week.monday.isoformat()}", admin=True, when="2026-05-01 10:00")
    first = say(store, "past", when=LATER)
    assert first.count("  Thu ") == 20 and "[Next 20 ▶] → past --page 2" in first
    second = say(store, "past --page 2", when=LATER)
    assert second.count("  Thu ") == 5 and "#1 " in second
    assert say(store, "past --page 3", when=LATER).startswith("✗ There is no page 3")


# -- edit ---------------------------------------------------------------------------


def test_edit_changes_one_field_and_keeps_the_number_talks_and_votes(store):
    say(store, "signup 7 2026-12-03", user="U1")
    say(store, "vote 7", user="U2")
    assert say(store, "edit 7 tags moe, parallelism-dp", user="U1").startswith("✗ Only admins")
    assert say(store, "edit 7 tags moe, parallelism-dp", admin=True).startswith("Saved #7")
    assert say(store, "edit 7 title AsyncDiff revised", admin=True).startswith("Saved #7 AsyncDiff revised")
    assert say(store, "edit 7 year 2024", admin=True).startswith("Saved")
    card = say(store, "show 7", when=LATER)
    assert card.startswith("#7 AsyncDiff revised") and "tags: moe, parallelism-dp" in card and "by: 2024" in card
    assert "votes: 1" in card and "presented:" in card
    assert "#7 " in say(store, "search revised") and "#7 " in say(store, "tag moe")
    assert "#7 " not in say(store, "search asyncdiff parallelizing")  # the old title left the index


def test_edit_refuses_what_add_refuses_and_changes_nothing(store):
    before = catalog.find(store, "7")
    taken = catalog.find(store, "8").title
    for line in (
        f"edit 7 title {taken}",
        "edit 7 title",
        "edit 7 link javascript:x",
        "edit 7 year 12",
        "edit 7 colour red",
    ):
        assert say(store, line, admin=True).startswith("✗"), line
    assert catalog.find(store, "7") == before
    form = say(store, "edit 7", admin=True)
    assert form.startswith("Editing #7") and f"title:   {before.title}" in form and "edit 7 <field> <value>" in form


def test_a_rotation_setting_that_is_neither_catalog_nor_votes_stops_the_start(tmp_path):
    import pytest

    from bot.settings import SettingError, Settings

    assert Settings.load({"PAPERBOT_ROTATION": "Votes"}, dotenv=None).rotation == "votes"
    assert Settings.load({}, dotenv=None).rotation == "catalog"
    with pytest.raises(SettingError, match="PAPERBOT_ROTATION: must be catalog or votes"):
        Settings.load({"PAPERBOT_ROTATION": "random"}, dotenv=None)


def test_the_cards_talk_lines_name_no_paper_on_slack_and_discord(store):
    import json

    from bot.discord import render as discord_render
    from bot.slack import blocks as slack_blocks

    _talk_given(store)
    say(store, "slides 7 https://example.org/slides.pdf", user="U1", when=LATER)
    card = commands.run(_ctx(store, "U1", when=LATER), "show 7").reply
    title = catalog.find(store, "7").title
    slack = json.dumps(slack_blocks.message(card)["blocks"], ensure_ascii=False)
    [presented] = [b["text"]["text"] for b in slack_blocks.message(card)["blocks"] if "Presented" in str(b)]
    assert title not in presented and "<@U1>" in presented and "example.org/slides.pdf" in presented, presented
    assert slack.count("#7*") == 1, slack  # the card's head only
    embed = discord_render.message(card)["embeds"][0]
    [field] = [f for f in embed["fields"] if f["name"] == "Presented"]
    assert title.split(":")[0] not in field["value"] and "U1" in field["value"], field


def test_a_withdrawn_talk_takes_its_links_with_it_in_the_console(tmp_path, monkeypatch, capsys):
    """A member signs up, attaches slides, withdraws; the next presenter of that week signs up: their
    talk had the withdrawn talk's link. Materials belong to the talk, and go with it."""
    import io

    from bot import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    for name in ("PAPERBOT_CHANNEL", "PAPERBOT_ADMINS", "SLACK_BOT_TOKEN", "PAPERBOT_TIMEZONE"):
        monkeypatch.delenv(name, raising=False)

    def console(typed: str, user: str) -> str:
        monkeypatch.setattr("sys.stdin", io.StringIO(typed))
        assert cli.main(["console", "--user", user]) == 0
        return capsys.readouterr().out

    out = console("signup 7 next\nslides next https://example.org/mine.pdf\nshow 7\nwithdraw 7\n", "U1")
    assert "example.org/mine.pdf" in out and "withdr" in out.lower(), out
    out = console("signup 3 next\nshow 3\nslides next\n", "U2")
    assert "You're signed up" in out and "example.org/mine.pdf" not in out, out
    out = console("show 7\npast\n", "U3")
    assert "example.org/mine.pdf" not in out, out
    store = catalog.open_store(tmp_path / "paperbot.db")
    assert store.db.execute("SELECT count(*) FROM talk_links").fetchone()[0] == 0
    store.close()


def test_an_unassigned_or_replaced_talk_takes_its_links_and_the_next_keeps_its_own(store):
    say(store, "signup 7 2026-12-10", user="U1")
    say(store, "slides 2026-12-10 https://example.org/one.pdf", user="U1")
    assert say(store, "unassign 2026-12-10", user="UADMIN", admin=True).startswith("Cleared"), "unassigned"
    say(store, "assign U2 3 2026-12-10", user="UADMIN", admin=True)
    assert "one.pdf" not in say(store, "show 3")
    say(store, "slides 2026-12-10 https://example.org/two.pdf", user="U2")
    assert "two.pdf" in say(store, "show 3") and "one.pdf" not in say(store, "show 7")


def test_an_old_database_drops_links_left_by_earlier_talks_and_keeps_the_talks_own(tmp_path):
    """A database from before the migration: a week whose talk was withdrawn kept its link, and a week
    given to the next presenter showed the earlier talk's; both go, the talk's own link stays."""
    import sqlite_utils

    from bot.store.connection import migrations

    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="m013_talk_links_go_with_their_talk")
    db.execute("INSERT INTO papers (id, title, added_at, updated_at) VALUES ('p', 'P', 'x', 'x')")
    db.executescript(
        """
        INSERT INTO slots (group_id, week, kind, presenter, paper, booked_by, booked_at) VALUES
            (1, '2026-W50', 'presenter', 'U2', 1, 'U2', '2026-12-05T10:00:00+00:00'),
            (1, '2026-W51', 'presenter', 'U3', 1, 'U3', '2026-12-01T10:00:00+00:00');
        INSERT INTO talk_links (group_id, week, url, added_by, added_at) VALUES
            (1, '2026-W49', 'https://example.org/withdrawn.pdf', 'U1', '2026-12-01T10:00:00+00:00'),
            (1, '2026-W50', 'https://example.org/earlier.pdf', 'U1', '2026-12-02T10:00:00+00:00'),
            (1, '2026-W50', 'https://example.org/own.pdf', 'U2', '2026-12-05T10:00:00+00:00'),
            (1, '2026-W51', 'https://example.org/unread.pdf', 'U3', 'sometime');
        """
    )
    db.close()
    opened = catalog.open_store(path)
    kept = [r[0] for r in opened.db.execute("SELECT url FROM talk_links ORDER BY id")]
    assert kept == ["https://example.org/own.pdf", "https://example.org/unread.pdf"], kept
    with opened.write() as w:  # and from now on the store keeps it so
        w.execute("DELETE FROM slots WHERE week = '2026-W50'")
    assert [r[0] for r in opened.db.execute("SELECT url FROM talk_links")] == ["https://example.org/unread.pdf"]
    opened.close()
