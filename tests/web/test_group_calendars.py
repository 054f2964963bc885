"""Two groups in one install: each its own calendar feed, page, secret, past talks and slides,
served over real HTTP by the feeds `run` serves; a member's own feed spans both."""

from __future__ import annotations

import http.client
import io
import os
import shutil
from contextlib import redirect_stdout
from datetime import timedelta

import icalendar
import pytest

from bot import cli
from bot.catalog.queries import open_store
from bot.chat import commands, context
from bot.console.render import render
from bot.schedule import groups, talks
from bot.schedule.signups import Member
from bot.web import feeds, http_door, member_names

PUBLIC = "https://example.org/reading"
A, B = "C0GROUPA", "C0GROUPB"
ENV = {
    "PAPERBOT_CHANNEL": A,
    "PAPERBOT_TIMEZONE": "Europe/Berlin",
    "PAPERBOT_MEETING": "thu 16:00",
    "PAPERBOT_MEETING_MINUTES": "90",
    "PAPERBOT_ADMINS": "UADMIN",
    "PAPERBOT_PUBLIC_URL": PUBLIC,
}


class Out(io.StringIO):
    """stdout with the bytes buffer that `calendar` writes to."""

    def __init__(self):
        super().__init__()
        self.buffer = io.BytesIO()


@pytest.fixture
def install(tmp_path, seeded_file, monkeypatch):
    """Group A (the environment's) served as `run` serves it; `start_b()` starts group B in chat
    afterwards, as an admin would while the bot runs."""
    shutil.copyfile(seeded_file, tmp_path / "paperbot.db")
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("PAPERBOT_", "SLACK_", "DISCORD_")):
            monkeypatch.delenv(name)
    for name, value in {**ENV, "PAPERBOT_DB": str(tmp_path / "paperbot.db")}.items():
        monkeypatch.setenv(name, value)
    settings = cli.load_settings(os.environ)
    store = open_store(tmp_path / "paperbot.db")
    served = feeds.serve(settings, store, ask=member_names.as_typed)
    assert served is not None
    server = http_door.http_server(feeds.around(None, served), 0, "127.0.0.1")  # a port none can take first
    port = int(server.effective_port)
    stop = http_door.serve_beside(server)

    class Install:
        def do(self, line: str, where: str | None, user: str = "UADMIN", now=None, ok: bool = True):
            ctx = context.Context(
                store,
                settings.group,
                Member(user, lambda: user == "UADMIN"),
                now or settings.now(),
                settings.focus_tag,
                settings.channel,
                lambda change: None,
                where=where,
                public_url=settings.public_url,
            )
            ctx.env = groups.from_settings(settings)
            answer = commands.run(ctx, line)
            assert getattr(answer.reply, "ok", True) is ok, render(answer.reply)
            return render(answer.reply)

        def start_b(self) -> int:
            self.do("group start", B)
            return groups.of_channel(store, groups.from_settings(settings), B).id

        def urls(self, group_id: int, member: str = "U2") -> dict[str, str]:
            found = feeds.urls(store, PUBLIC, group_id, member)
            return {k: v.removeprefix("https://example.org") for k, v in found.items()}

        def get(self, path: str) -> tuple[int, bytes]:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                return response.status, response.read()
            finally:
                conn.close()

        def events(self, path: str) -> dict[str, icalendar.Event]:
            status, body = self.get(path)
            assert status == 200, (status, body[:200])
            return {str(e["uid"]): e for e in icalendar.Calendar.from_ical(body).walk("VEVENT")}

    i = Install()
    i.store, i.settings = store, settings
    yield i
    stop()
    store.close()


def presenters(events: dict[str, icalendar.Event]) -> set[str]:
    return {str(e["summary"]).rsplit(" — ", 1)[1] for e in events.values() if " — " in str(e["summary"])}


def minutes(event: icalendar.Event) -> int:
    return int((event["dtend"].dt - event["dtstart"].dt).total_seconds() // 60)


def test_each_groups_feed_shows_only_its_own_talks_with_its_own_uids_and_length(install):
    b = install.start_b()  # after the feeds were served: no restart
    install.do("group set meeting-minutes 45", B)
    install.do("assign U2 5 2027-03-04", A)
    install.do("assign U3 6 2027-03-04", B)  # the same week, in the other group

    a_events, b_events = install.events(install.urls(1)["group"]), install.events(install.urls(b)["group"])
    assert presenters(a_events) == {"U2"} and presenters(b_events) == {"U3"}
    assert all(uid.endswith("-group1@" + uid.split("@")[1]) and "-group1@" in uid for uid in a_events)
    assert all(f"-group{b}@" in uid for uid in b_events) and not set(a_events) & set(b_events)
    assert {minutes(e) for e in a_events.values()} == {90}  # PAPERBOT_MEETING_MINUTES
    assert {minutes(e) for e in b_events.values()} == {45}  # group set meeting-minutes

    a_page, b_page = install.get(install.urls(1)["page"]), install.get(install.urls(b)["page"])
    assert a_page[0] == b_page[0] == 200
    assert b"U2" in a_page[1] and b"U3" not in a_page[1]
    assert b"U3" in b_page[1] and b"U2" not in b_page[1]


def test_calendar_in_a_groups_channel_gives_that_groups_addresses(install):
    b = install.start_b()
    in_b = install.do("calendar", B, user="U2")
    assert PUBLIC + install.urls(b)["page"].removeprefix("/reading") in in_b
    assert install.urls(b)["group"] in in_b and install.urls(1)["group"] not in in_b
    assert install.urls(b)["member"] in in_b
    assert install.urls(1)["group"] in install.do("calendar", A, user="U2")
    # Typed in a direct message with two groups: which group is not guessed.
    said = install.do("calendar", None, user="U2", ok=False)
    assert A in said and B in said


def test_renewing_one_groups_secret_leaves_the_others_working(install):
    b = install.start_b()
    install.do("assign U3 6 2027-03-04", B)
    old_a, old_b = install.urls(1), install.urls(b)
    assert install.get(old_b["group"])[0] == 200

    assert "Only admins" in install.do("group set calendar-secret new", B, user="U9", ok=False)
    assert "Usage" in install.do("group set calendar-secret please", B, ok=False)
    assert install.urls(b) == old_b  # refused: nothing changed

    said = install.do("group set calendar-secret new", B)
    new_b = install.urls(b)
    assert new_b["group"] != old_b["group"] and new_b["group"] in said and new_b["page"] in said
    for path in (old_b["group"], old_b["page"]):
        assert install.get(path)[0] == 404
    assert presenters(install.events(new_b["group"])) == {"U3"}
    assert install.urls(1) == old_a and install.get(old_a["group"])[0] == install.get(old_a["page"])[0] == 200
    assert install.urls(b)["member"] == old_b["member"]  # the member's own feed keeps its address
    told = [r[0] for r in install.store.db.execute("SELECT payload FROM outbox") if "new addresses" in r[0]]
    assert len(told) == 1 and B in told[0]  # the channel hears of it …
    assert feeds.group_secret(install.store, b) not in told[0]  # … without the secret

    # A group's own admin renews that group's, not another's; the environment's group renews too.
    install.do("group set admins U7", B)
    install.do("group set calendar-secret new", B, user="U7")
    assert "Only admins" in install.do("group set calendar-secret new", A, user="U7", ok=False)
    install.do("group set calendar-secret new", A)
    assert install.get(old_a["group"])[0] == 404 and install.get(install.urls(1)["group"])[0] == 200


def test_a_members_feed_spans_every_group_served_and_from_the_command_line(install):
    b = install.start_b()
    install.do("assign U2 5 2027-03-04", A)
    install.do("assign U2 6 2027-03-11", B)
    install.do("assign U3 7 2027-03-18", B)
    mine = install.events(install.urls(1)["member"])
    assert presenters(mine) == {"U2"} and len(mine) == 2
    assert {uid.split("-group")[1].split("@")[0] for uid in mine} == {"1", str(b)}

    out = Out()
    with redirect_stdout(out):
        assert cli.main(["calendar", "--member", "U2"]) == 0
    from_cli = {str(e["uid"]) for e in icalendar.Calendar.from_ical(out.buffer.getvalue()).walk("VEVENT")}
    assert from_cli == set(mine)


def test_calendar_and_site_take_the_second_groups_channel(install, tmp_path, capsys):
    install.start_b()
    install.do("assign U2 5 2027-03-04", A)
    install.do("assign U3 6 2027-03-04", B)
    out = Out()
    with redirect_stdout(out):
        assert cli.main(["calendar", "--channel", B]) == 0
    events = {str(e["uid"]): e for e in icalendar.Calendar.from_ical(out.buffer.getvalue()).walk("VEVENT")}
    assert presenters(events) == {"U3"}

    assert cli.main(["site", str(tmp_path / "b"), "--channel", B]) == 0
    page = (tmp_path / "b" / "index.html").read_text()
    assert "U3" in page and "U2" not in page
    capsys.readouterr()

    assert cli.main(["calendar", "--channel", "C0NOTHERE"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and A in err and B in err
    assert cli.main(["site", str(tmp_path / "x"), "--channel", "C0NOTHERE"]) == 1
    assert not (tmp_path / "x").exists()


def test_slides_in_group_b_do_not_show_in_group_as_past_or_page(install):
    b = install.start_b()
    then = install.settings.now() - timedelta(days=60)
    install.do("assign U2 5 next", A, now=then)
    install.do("assign U3 6 next", B, now=then)
    week = install.settings.group.week_of(then).plus(1)
    talk_day = install.settings.group.meeting_of(week).date().isoformat()
    assert "Added" in install.do(f"slides {talk_day} https://b.example/slides.pdf", B, user="U3")

    past_a, past_b = install.do("past", A, user="U9"), install.do("past", B, user="U9")
    assert "U2" in past_a and "U3" not in past_a and "b.example" not in past_a
    assert "U3" in past_b and "U2" not in past_b and "https://b.example/slides.pdf" in past_b
    assert "https://b.example/slides.pdf" in install.do("show 6", A, user="U9")  # the paper's talks, anywhere

    a_page, b_page = install.get(install.urls(1)["page"])[1], install.get(install.urls(b)["page"])[1]
    assert b"b.example" not in a_page and b"https://b.example/slides.pdf" in b_page

    b_cal = groups.by_id(install.store, groups.from_settings(install.settings), b).calendar
    assert talks.last_week(install.store, b_cal, week.plus(1)).links == ("https://b.example/slides.pdf",)
    assert talks.last_week(install.store, install.settings.group, week.plus(1)) is None


def test_show_puts_a_talks_slides_on_its_own_groups_talk_only(install):
    install.start_b()
    then = install.settings.now() - timedelta(days=60)
    install.do("assign U2 6 next", A, now=then)
    install.do("assign U3 6 next", B, now=then)  # the same paper, the same week, in both groups
    week = install.settings.group.week_of(then).plus(1)
    talk_day = install.settings.group.meeting_of(week).date().isoformat()
    assert "Added" in install.do(f"slides {talk_day} https://b.example/slides.pdf", B, user="U3")
    shown = install.do("show 6", A, user="U9").splitlines()
    talks_shown = [n for n, line in enumerate(shown) if line.startswith("presented:")]
    assert len(talks_shown) == 2 and shown.count("  link: https://b.example/slides.pdf") == 1, shown
    [linked] = [n for n in talks_shown if shown[n + 1 : n + 2] == ["  link: https://b.example/slides.pdf"]]
    assert "U3" in shown[linked] and "U2" not in shown[linked], shown
