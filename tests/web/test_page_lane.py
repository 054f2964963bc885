"""Pages never starve chat (issue 29, break 8): page and feed requests run in a lane of their own,
at most feeds.RENDERS drawn at once, each drawn page kept until the page version changes. Over the
door's real waitress server, beside a platform route that answers at once."""

from __future__ import annotations

import http.client
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest

from bot.calendar import Week
from bot.catalog import queries as catalog
from bot.catalog.papers import PaperInput
from bot.web import feeds, http_door, site
from tests.support.served_page import PUBLIC
from tests.support.slack_group import settings_for


def chat(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"chat"]


class Held:
    """A member-name look-up (asked while a page is drawn) that holds each drawing until let go."""

    def __init__(self):
        self.drawing, self.go = threading.Event(), threading.Event()
        self.asked = threading.Semaphore(0)

    def __call__(self, member: str) -> str:
        self.drawing.set()
        self.asked.release()
        assert self.go.wait(30)
        return "Ada"


@pytest.fixture
def door(tmp_path, store):
    settings = settings_for(tmp_path, PAPERBOT_PUBLIC_URL=PUBLIC)
    group = feeds.environment_group(settings)
    this = Week.containing(datetime.now(UTC), settings.timezone)
    with store.write() as db:  # a coming talk: drawing the page asks for its presenter's name
        db.execute(
            "INSERT INTO slots (week, kind, presenter, paper, booked_by, booked_at) "
            "VALUES (?, 'presenter', 'U2', 5, 'U2', 'now')",
            [this.plus(2).key],
        )
    held = Held()
    pages = feeds.Feeds(store, lambda: [group], PUBLIC, ask=held)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    stop = http_door.serve_beside(http_door.http_server(feeds.around(chat, pages), port, "127.0.0.1"))
    page = feeds.urls(store, PUBLIC, 1, "U1")["page"].removeprefix("https://example.org")

    def get(path: str, timeout: float = 30) -> tuple[int, dict, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, dict(response.headers), response.read()
        finally:
            conn.close()

    get.feeds = pages  # type: ignore[attr-defined]
    yield held, page, get
    held.go.set()
    stop()


def test_chat_answers_while_every_page_thread_is_held(door):
    held, page, get = door
    crowd = http_door.THREADS + http_door.SIDE_THREADS
    with ThreadPoolExecutor(crowd) as readers:
        pages = [readers.submit(get, page) for _ in range(crowd)]
        assert held.drawing.wait(10), "a page is being drawn"
        status, _, body = get("/chat", timeout=5)
        assert (status, body) == (200, b"chat"), "chat has threads of its own"
        held.go.set()
        answers = [p.result(30) for p in pages]
    assert [a[0] for a in answers] == [200] * crowd and len({a[2] for a in answers}) == 1


def test_past_the_renders_cap_a_page_is_a_quick_503_with_retry_after(door):
    held, page, get = door
    with ThreadPoolExecutor(feeds.RENDERS) as readers:
        drawing = [readers.submit(get, f"{page}?q=word{k}") for k in range(feeds.RENDERS)]
        for _ in range(feeds.RENDERS):  # each of them drawing, held
            assert held.asked.acquire(timeout=10)
        status, headers, _ = get(f"{page}?q=another", timeout=5)
        held.go.set()
        assert [d.result(30)[0] for d in drawing] == [200] * feeds.RENDERS
    assert status == 503 and headers["Retry-After"] == "5"


def test_a_drawn_page_is_kept_until_a_write_changes_what_it_shows(door, store, tmp_path, monkeypatch):
    held, page, get = door
    held.go.set()
    drawn = []
    real = site.page
    monkeypatch.setattr(site, "page", lambda *a, **k: drawn.append(1) or real(*a, **k))
    first = get(page)[2]
    assert get(page)[2] == first and len(drawn) == 1, "kept: not drawn again"
    catalog.add(store, PaperInput(id="fresh", title="A freshly added paper", tags=("fresh",)))
    assert b"A freshly added paper" in get(page)[2] and len(drawn) == 2
    other = catalog.open_store(tmp_path / "paperbot.db")  # another connection, as `paperbot edit` in a console
    with other.write() as db:
        db.execute("UPDATE papers SET title = 'Retitled elsewhere' WHERE id = 'fresh'")
    other.close()
    assert b"Retitled elsewhere" in get(page)[2] and len(drawn) == 3


def test_what_is_kept_is_bounded_in_count_and_bytes(door, monkeypatch):
    held, page, get = door
    held.go.set()
    monkeypatch.setattr(feeds, "KEPT_BYTES", 3 * len(get(page)[2]))
    for k in range(feeds.KEPT + 10):
        assert get(f"{page}?q=w{k}")[0] == 200
    kept = get.feeds._kept
    assert 0 < len(kept) < feeds.KEPT and sum(len(d.body) for d in kept.values()) <= feeds.KEPT_BYTES
    monkeypatch.setattr(feeds, "KEPT_BYTES", 1 << 30)
    for k in range(feeds.KEPT + 10):
        assert get(f"{page}?q=w{k}")[0] == 200
    assert len(kept) == feeds.KEPT
