"""The group's page as a reader sees it: headless Chromium (Debian's) against a real `python -m bot
run` process, in Socket Mode and in HTTP mode, and against the static site `paperbot site` writes."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from PIL import Image

from bot.calendar import Week
from bot.catalog.queries import open_store
from bot.web import charts, feeds
from tests.support.databases import database_for
from tests.support.history import seed_history
from tests.support.processes import free_port
from tests.support.repo import ROOT
from tests.support.slack_group import env_for_process, settings_for

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH: `apt-get install chromium` (.ci/run does, as root)"
)
SCRIPT_TITLE = "<script>alert(1)</script>"
#: UPDATE_SCREENSHOT=1 keeps the phone-sized screenshot as docs/group-page.png.
SCREENSHOT = ROOT / "docs" / "group-page.png"


def chromium(tmp_path: Path, url: str, *args: str) -> str:
    """What headless Chromium makes of `url` (the DOM after scripts ran, with --dump-dom)."""
    profile = tmp_path / "chromium-profile"
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={profile}",
         "--virtual-time-budget=3000", *args, url],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def seed(tmp_path: Path) -> None:
    """A group with a coming talk on a paper titled like a script, a Chinese summary, and a past talk."""
    store = open_store(database_for(tmp_path))
    this = Week.containing(datetime.now(UTC), ZoneInfo("Europe/Berlin"))
    with store.write() as db:
        db.execute("UPDATE papers SET title = ? WHERE number = 5", [SCRIPT_TITLE])
        db.execute(
            "INSERT INTO slots (week, kind, presenter, paper, booked_by, booked_at) VALUES "
            "(?, 'presenter', 'U2', 5, 'U2', 'now'), (?, 'presenter', 'U3', 3, 'U3', 'now')",
            [this.plus(3).key, this.plus(-5).key],
        )
        db.execute("INSERT INTO member_names (member, name, asked_at) VALUES ('U2', 'Ada Lovelace', 4e9)")
        db.execute("INSERT INTO member_names (member, name, asked_at) VALUES ('U3', '李华', 4e9)")
    store.close()


def get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def wait_for_page(proc, port: int, path: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.log()
        try:
            if get(port, path)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)  # polling a port that opens once the process is up
    raise AssertionError(f"no page within {timeout} s:\n{proc.log()}")


def check_what_a_reader_sees(dom: str) -> None:
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in dom
    assert "Coming talks" in dom and "Past talks" in dom and "The catalog by tag" in dom
    assert "Ada Lovelace" in dom and "李华" in dom and "U2" not in re.sub(r"<[^>]+>", " ", dom).split()
    # The title is text on the page: escaped in the DOM, never an element that ran.
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert not re.search(r"<script[^>]*>[^<]*alert\(1\)", dom)
    assert re.search(r'<p class="summary" lang="zh">[^<]*[\u4e00-\u9fff]', dom), "Chinese summaries marked lang=zh"


@needs_chromium
@pytest.mark.parametrize("mode", ["socket", "http"])
def test_the_page_served_by_run_reads_in_chromium(procs, tmp_path, slack, mode):  # noqa: F811
    seed(tmp_path)
    port = free_port()
    extra = {"PORT": str(port), "PAPERBOT_PUBLIC_URL": f"http://127.0.0.1:{port}/reading"}
    if mode == "socket":
        extra["SLACK_APP_TOKEN"] = "xapp-test"
    proc = procs.start("run", env=env_for_process(tmp_path, slack.api_url, **extra))
    store = open_store(database_for(tmp_path))
    urls = feeds.urls(store, extra["PAPERBOT_PUBLIC_URL"], 1, "U2")
    store.close()
    page = urls["page"].removeprefix(f"http://127.0.0.1:{port}")
    wait_for_page(proc, port, page)

    dom = chromium(tmp_path, urls["page"], "--dump-dom")
    check_what_a_reader_sees(dom)
    assert '<form id="search" role="search" method="get"' in dom and "<script" not in dom

    found = chromium(tmp_path, urls["page"] + "?q=diloco", "--dump-dom")
    assert "Papers matching “diloco”" in found and re.search(r'id="results".*?class="paper"', found, re.S)

    wrong = chromium(tmp_path, urls["page"].replace("/g/", "/g/x"), "--dump-dom")
    assert "There is nothing at this address" in wrong

    status, body = get(port, urls["member"].removeprefix(f"http://127.0.0.1:{port}"))
    assert status == 200 and b"SUMMARY:<script>alert(1)</script> \xe2\x80\x94 Ada Lovelace" in body

    if mode == "socket":
        shot = tmp_path / "page.png"
        chromium(tmp_path, urls["page"], f"--screenshot={shot}", "--window-size=412,1400")
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
        if os.environ.get("UPDATE_SCREENSHOT"):
            shutil.copyfile(shot, SCREENSHOT)
    code, _ = proc.terminate_and_wait()
    assert code == 0


@needs_chromium
def test_the_static_site_reads_in_chromium_and_its_script_searches(procs, tmp_path):  # noqa: F811
    seed(tmp_path)
    env = env_for_process(tmp_path, "http://127.0.0.1:9/api/")
    env.pop("SLACK_BOT_TOKEN")  # no platform to ask: the names kept in the database
    done = procs.run("site", str(tmp_path / "public"), env=env)
    assert done.returncode == 0, done.stderr
    index = tmp_path / "public" / "index.html"
    dom = chromium(tmp_path, index.as_uri(), "--dump-dom")
    check_what_a_reader_sees(dom)
    # The script ran: the search box, hidden without it, shows.
    assert re.search(r'<form id="search" role="search">', dom), "the static search form is shown by its script"
    # Its search reads every paper's entry in search-index.js, not only those the page lists.
    found = chromium(tmp_path, index.as_uri() + "?q=alert", "--dump-dom")
    results = found.split('id="results"', 1)[1].split("</section>", 1)[0]
    assert "Papers matching “alert” (1)" in results and "#5 " in results
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in results, "a title is text in the results too"


def test_the_screenshot_in_the_docs_is_there_and_shown():
    assert SCREENSHOT.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "(group-page.png)" in (ROOT / "docs" / "calendar.md").read_text()


#: UPDATE_SCREENSHOT=1 keeps the stats section's screenshot as docs/stats.png.
STATS_SCREENSHOT = ROOT / "docs" / "stats.png"


@needs_chromium
def test_the_pages_history_section_draws_its_charts_in_chromium(procs, tmp_path):  # noqa: F811
    seed(tmp_path)
    store = open_store(database_for(tmp_path))
    seed_history(store, settings_for(tmp_path).group, datetime.now(UTC))
    store.close()
    env = env_for_process(tmp_path, "http://127.0.0.1:9/api/")
    env.pop("SLACK_BOT_TOKEN")  # no platform to ask: the names kept in the database
    done = procs.run("site", str(tmp_path / "public"), env=env)
    assert done.returncode == 0, done.stderr
    index = tmp_path / "public" / "index.html"
    dom = chromium(tmp_path, index.as_uri(), "--dump-dom")
    section = dom.split('<section id="stats">', 1)[1].split("</section>", 1)[0]
    assert section.count("<svg") == 4 and "Talks per presenter" in section and "李华" in section
    assert "Grace &lt;Hopper&gt;" in section, "a name that looks like markup is text in the chart"
    # The section alone, as a reader scrolled to it: the page in a frame opened at #stats.
    frame = tmp_path / "public" / "stats-frame.html"
    frame.write_text(
        '<!doctype html><body style="margin:0"><iframe src="index.html#stats" '
        'style="border:0;width:800px;height:580px"></iframe></body>'
    )
    shot = tmp_path / "stats.png"
    chromium(
        tmp_path, frame.as_uri(), f"--screenshot={shot}", "--window-size=800,580", "--allow-file-access-from-files"
    )
    image = Image.open(shot)
    blue = tuple(int(charts.BAR[i : i + 2], 16) for i in (1, 3, 5))
    drawn = sum(n for n, colour in image.convert("RGB").getcolors(1 << 20) if colour == blue)
    assert drawn > 20_000, f"the charts' bars are drawn ({drawn} pixels of their colour)"
    if os.environ.get("UPDATE_SCREENSHOT"):
        shutil.copyfile(shot, STATS_SCREENSHOT)


def test_the_stats_screenshot_in_the_docs_is_there_and_shown():
    assert STATS_SCREENSHOT.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "(stats.png)" in (ROOT / "docs" / "calendar.md").read_text()
