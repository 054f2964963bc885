"""The feeds and the group's page over real HTTP (the door's waitress server on 127.0.0.1)."""

from __future__ import annotations

import logging
import re

import icalendar
import pytest

from bot.runtime import both_platforms
from bot.web import feeds
from tests.support.served_page import served_feeds


@pytest.fixture
def served(tmp_path, store):
    """The feeds of the test group, behind PAPERBOT_PUBLIC_URL's path, served on a free port."""
    yield from served_feeds(tmp_path, store, lambda calendars: feeds.around(None, calendars))


@pytest.fixture
def served_with_platforms(tmp_path, store):
    """The same, beside the platforms' routes, as `run` serves them: other paths go to the platforms' door."""
    yield from served_feeds(tmp_path, store, lambda calendars: both_platforms.application([], calendars))


def test_a_feed_fetched_again_with_its_etag_is_304_until_the_week_changes(served):
    served.do("assign U2 5 2027-03-04")
    served.later(1)  # the server's clock past the booking (a later second on a busy machine), as a real one is
    feed = served.urls()["group"]
    status, headers, body = served.get(feed)
    assert status == 200 and headers["Content-Type"].startswith("text/calendar")
    assert icalendar.Calendar.from_ical(body).walk("VEVENT")
    etag, modified = headers["ETag"], headers["Last-Modified"]

    status, again, body2 = served.get(feed, If_None_Match=etag)
    assert status == 304 and body2 == b"" and again["ETag"] == etag
    assert served.get(feed, If_Modified_Since=modified)[0] == 304

    served.do("unassign 2027-03-04")
    served.do("assign U3 6 2027-03-04")  # the week changes: a new body, a new ETag
    status, changed, body3 = served.get(feed, If_None_Match=etag)
    assert status == 200 and changed["ETag"] != etag and b"SEQUENCE:1" in body3 and b"U3" in body3


def test_an_if_modified_since_in_the_future_is_ignored(served):
    """RFC 9110 13.1.3: a date later than the server's clock is no reason for a 304."""
    served.do("assign U2 5 2027-03-04")
    feed = served.urls()["group"]
    assert served.get(feed)[0] == 200
    future = "Fri, 01 Jan 9999 00:00:00 GMT"
    assert served.get(feed, If_Modified_Since=future)[0] == 200
    served.do("unassign 2027-03-04")
    status, _, body = served.get(feed, If_Modified_Since=future)
    assert status == 200 and b"U2" not in body


#: If-Modified-Since values no server should choke on: a huge year, a zone past the range, junk.
BAD_DATES = [
    "Mon, 01 Jan 99999999999999999999 00:00:00 GMT",
    "Fri, 31 Dec 9999 23:59:59 -2359",
    "Sat, 01 Jan 0001 00:00:00 +2359",
    "Mon, 01 Jan 2024 00:00:00 +99999999999999999999",
    "Mon, 01 Jan 2024 99:99:99 GMT",
    "Mon, 32 Foo 2024 00:00:00 GMT",
    "9" * 5000,
    "Mon, 01 Jan 2024 00:00:00 GMT" + " " * 4000 + "x",
    "",
    ",,,,",
]


@pytest.mark.parametrize("since", BAD_DATES)
def test_a_bad_if_modified_since_is_ignored_as_if_absent_never_a_500(served, since, caplog):
    """A date header that is no date (a year of twenty digits gave a 500 and a traceback) is treated as
    absent: the feed and the page answer in full, and nothing is logged as an error."""
    served.do("assign U2 5 2027-03-04")
    urls = served.urls()
    for address in (urls["group"], urls["page"], urls["member"]):
        status, headers, body = served.get(address, If_Modified_Since=since)
        assert status == 200 and body, (address, status)
        assert served.get(address, If_Modified_Since=since, If_None_Match=headers["ETag"])[0] == 304
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info], caplog.text


@pytest.mark.parametrize("match", ['"' + "x" * 5000 + '"', "," * 3000, "W/", "*" * 2000, "\t, W/W/W/"])
def test_if_none_match_junk_is_a_full_answer(served, match):
    """An If-None-Match that names no ETag, or is too long to be one's list, gets the feed whole."""
    status, _, body = served.get(served.urls()["group"], If_None_Match=match)
    assert status == 200 and b"BEGIN:VCALENDAR" in body


def test_no_log_line_of_a_run_of_requests_holds_a_secret(served_with_platforms, store, caplog):
    """A path one character off a feed's address went to the platforms' door, which logged it whole.
    Across feeds, pages, near misses, bad headers and a feed that fails to draw, no line holds a
    secret, while the near misses' lines still tell requests apart (a short hash)."""
    served = served_with_platforms
    caplog.set_level(logging.DEBUG)
    urls = served.urls("U1")
    group, member = urls["group"].split("/")[3], urls["member"].split("/")[3]
    near = [
        urls["group"] + "x",
        urls["page"].rstrip("/"),
        urls["page"] + "x",
        urls["group"].replace(group, group + "!"),
        urls["group"].replace(group, group[:16] + "." + group[16:]),
        urls["member"].replace(member, member[:-1]),
        urls["member"].removesuffix("calendar.ics"),
        f"/reading/m/{member}/calendar.ics/",
        f"/reading/x/{group}/",
    ]
    for path in near:
        assert served.get(path)[0] == 404, path
    assert served.get(urls["page"] + "?q=" + group)[0] == 200
    assert served.get(urls["group"], If_Modified_Since=BAD_DATES[0])[0] == 200
    with store.write() as db:  # members' feeds now fail to draw: the line names the address by a hash
        db.execute("DROP TABLE member_secrets")
    assert served.get(urls["member"])[0] == 503
    lines = [r.getMessage() + (r.exc_text or "") for r in caplog.records]
    assert any(line.startswith("could not draw the feed at /m/#") for line in lines), lines
    refused = [line for line in lines if line.startswith("refused a request to")]
    assert len(refused) >= 7 and len(set(refused)) == len(refused), lines  # each near miss told apart
    for secret in (group, member):
        for line in lines:
            assert secret[:10] not in line and secret[-10:] not in line, line


def test_a_secret_cut_in_pieces_is_not_logged_piece_by_piece(served_with_platforms, caplog):
    """Runs shorter than a secret's were kept whole in a refused path's line: a secret cut into pieces
    of nine by dots, slashes or spaces was logged whole, piece by piece."""
    served = served_with_platforms
    caplog.set_level(logging.DEBUG)
    urls = served.urls("U1")
    group = urls["group"].split("/")[3]
    for cut in (".", "/", "%20", "~"):
        pieces = cut.join(group[i : i + 9] for i in range(0, len(group), 9))
        assert served.get(urls["page"].replace(group, pieces))[0] == 404
    lines = [r.getMessage() for r in caplog.records]
    assert len([line for line in lines if line.startswith("refused a request to")]) == 4, lines
    for line in lines:
        assert not any(group[i : i + 6] in line for i in range(len(group) - 5)), line


def test_a_wrong_or_old_secret_is_a_404_that_says_nothing_of_which_part_was_wrong(served):
    urls = served.urls("U1")
    assert served.get(urls["member"])[0] == 200 and served.get(urls["page"])[0] == 200
    group_secret = urls["group"].split("/")[3]
    old_member = urls["member"]
    assert served.do("calendar renew", "U1").reply.ok
    renewed = served.urls("U1")["member"]
    assert renewed != old_member and served.get(renewed)[0] == 200

    wrong = [
        old_member,  # renewed: old
        urls["group"].replace(group_secret, group_secret[:-1] + ("A" if group_secret[-1] != "A" else "B")),
        f"/reading/g/{'x' * 32}/",
        f"/reading/m/{group_secret}/calendar.ics",  # a group's secret where a member's goes
        "/reading/g/short/calendar.ics",
        "/reading/nothing",
        "/",
    ]
    answers = [served.get(path) for path in wrong]
    assert {status for status, _, _ in answers} == {404}
    assert len({body for _, _, body in answers}) == 1, "every 404 says the same"
    text = answers[0][2].decode().lower()
    assert "nothing at this address" in text and not re.search(r"secret|member|group|token|expired|wrong", text)

    group_page = urls["page"]
    feeds.renew_group_secret(served.store, 1)  # an admin's `group set calendar-secret new`
    assert served.get(group_page)[0] == 404 and served.get(served.urls()["page"])[0] == 200


def test_only_get_and_head_come_in(served):
    page = served.urls()["page"]
    status, headers, body = served.get(page, "HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 1000
    for method in ("POST", "PUT", "DELETE"):
        status, headers, _ = served.get(page, method)
        assert status == 405 and headers["Allow"] == "GET, HEAD"
    assert served.get("/healthz")[0] == 200


def test_the_page_searches_with_a_get_form_and_shows_a_script_title_as_text(served, store):
    with store.write() as db:
        db.execute("UPDATE papers SET title = '<script>alert(1)</script>' WHERE number = 5")
    served.do("assign U2 5 next")
    page = served.urls()["page"]
    status, headers, body = served.get(page)
    html = body.decode()
    assert status == 200 and "default-src 'none'" in headers["Content-Security-Policy"]
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert '<form id="search" role="search" method="get"' in html and "<script" not in html
    served.later(10)
    assert served.get(page, If_None_Match=headers["ETag"])[0] == 304, "the page is cached as the feeds are"
    status, _, found = served.get(page + "?q=diloco")
    assert status == 200 and "Papers matching “diloco”" in found.decode()
    assert served.get(page + "?q=%22%29%28*%5E")[0] == 200  # any text is a query


def test_calendar_answers_the_members_addresses_privately(served):
    answer = served.do("calendar", "U1")
    from bot.console.render import render

    shown = render(answer.reply)
    for path in served.urls("U1").values():
        assert "https://example.org" + path in shown
    assert served.urls("U1")["member"] != served.urls("U2")["member"]


def test_long_page_queries_are_cut_and_leave_nothing_of_themselves_behind(served, store):
    """1,000 long `?q=` values kept about 330 MB: each remembered page was keyed by its whole query. A query
    is read to its first 200 characters, remembered by a hash; a request head past 16 KB is refused (431)."""
    from bot.web import site

    page = served.urls()["page"]
    status, _, body = served.get(page + "?q=" + "diloco+" * 2000)  # 14 KB
    assert status == 200 and ("diloco " * 28).strip().encode() in body and ("diloco " * 29).encode() not in body
    assert served.get(page + "?q=" + "x" * 200_000)[0] == 431
    for i in range(60):
        assert served.get(page + f"?q={i}+" + "word+" * 2500)[0] == 200
    calendars = served.app
    assert len(calendars._first_seen) <= feeds.SEEN_KEPT
    assert max(len(key) for key in calendars._first_seen) < 100, "a remembered page's key holds its query"
    assert site.query_of("q=" + "%E4%B8%AD" * 300) == "中" * site.QUERY_CHARS
