"""Papers from links in the console and the core: ids read, look-ups at the arXiv and Crossref stand-ins,
failures in one line with nothing saved, the same paper never added twice, suggestions kept apart."""

from __future__ import annotations

import io
import time

import pytest

from bot import cli
from bot.catalog import queries as catalog
from bot.catalog.refs import Ref, parse
from bot.intake import lookup
from tests.support.arxiv_standin import ArxivStandin
from tests.support.crossref_standin import CrossrefStandin


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("2501.18512", Ref("arxiv", "2501.18512")),
        ("arXiv:2501.18512v2", Ref("arxiv", "2501.18512")),
        ("hep-th/9901001", Ref("arxiv", "hep-th/9901001")),
        ("hep-th/9901001v3", Ref("arxiv", "hep-th/9901001")),
        ("math.GT/0309136", Ref("arxiv", "math.GT/0309136")),
        ("https://arxiv.org/abs/2501.18512", Ref("arxiv", "2501.18512")),
        ("https://arxiv.org/pdf/2501.18512v1", Ref("arxiv", "2501.18512")),
        ("https://arxiv.org/pdf/2501.18512v1.pdf", Ref("arxiv", "2501.18512")),
        ("http://arxiv.org/abs/hep-th/9901001", Ref("arxiv", "hep-th/9901001")),
        ("10.1145/3600006.3613145", Ref("doi", "10.1145/3600006.3613145")),
        ("https://doi.org/10.1145/3600006.3613145", Ref("doi", "10.1145/3600006.3613145")),
        ("doi:10.1145/ABC", Ref("doi", "10.1145/abc")),
        ("10.48550/arXiv.2501.18512", Ref("arxiv", "2501.18512")),
        ("https://doi.org/10.48550/arXiv.2501.18512", Ref("arxiv", "2501.18512")),
        ("streaming diloco", None),
        ("https://example.com/paper.pdf", None),
        ("2501", None),
    ],
)
def test_ids_links_and_dois_are_read_and_arxiv_dois_go_to_arxiv(text, ref):
    assert parse(text) == ref


@pytest.fixture
def services(monkeypatch):
    monkeypatch.setattr(lookup, "ARXIV_GAP_SECONDS", 0.0)  # arXiv's pace, kept in its own test
    with ArxivStandin() as arxiv, CrossrefStandin() as crossref:
        monkeypatch.setenv("PAPERBOT_ARXIV_API", arxiv.url)
        monkeypatch.setenv("PAPERBOT_CROSSREF_API", crossref.url)
        yield arxiv, crossref


def console(monkeypatch, tmp_path, capsys, lines: str, *argv: str) -> str:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAPERBOT_DB", str(tmp_path / "paperbot.db"))
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    assert cli.main(["console", *argv]) == 0
    return capsys.readouterr().out


def papers(tmp_path) -> list[catalog.Paper]:
    store = catalog.open_store(tmp_path / "paperbot.db")
    try:
        return list(catalog.all_papers(store))
    finally:
        store.close()


def test_add_of_an_arxiv_id_saves_what_arxiv_says_with_the_tags_typed(services, monkeypatch, tmp_path, capsys):
    out = console(monkeypatch, tmp_path, capsys, "add 2409.12345 parallelism-dp,pipeline\n")
    assert "Added #33 Pipeline Parallelism with Zero Bubbles" in out
    paper = papers(tmp_path)[-1]
    assert paper.number == 33
    assert paper.title == "Pipeline Parallelism with Zero Bubbles for Data Parallel Training"
    assert (paper.authors, paper.year) == ("Ada Lovelace, Alan Turing", 2024)
    assert paper.url == "https://arxiv.org/abs/2409.12345"
    assert paper.summary == "We study pipeline parallelism and data parallel training of large models."
    assert paper.tags == ("parallelism-dp", "pipeline")


def test_add_of_a_paper_the_catalog_has_shows_it_instead_of_a_copy(services, monkeypatch, tmp_path, capsys):
    arxiv, _ = services
    out = console(
        monkeypatch,
        tmp_path,
        capsys,
        "add 2501.18512\nadd arXiv:2501.18512v2\nadd https://arxiv.org/pdf/2501.18512v1\n"
        "add 10.48550/arXiv.2501.18512\n",
    )
    assert out.count("Already in the catalog: #29 Streaming DiLoCo") == 4
    assert len(papers(tmp_path)) == 32 and arxiv.requests == []  # found in the catalog, never looked up


def test_a_doi_is_looked_up_at_crossref_and_the_same_paper_by_its_doi_is_found(services, monkeypatch, tmp_path, capsys):
    out = console(
        monkeypatch, tmp_path, capsys, "add 10.1145/3600006.3613145\nadd https://doi.org/10.1145/3600006.3613145\n"
    )
    assert "Added #33 Efficient Memory Management" in out and "Already in the catalog: #33" in out
    paper = papers(tmp_path)[-1]
    assert paper.url == "https://doi.org/10.1145/3600006.3613145" and paper.year == 2023
    assert paper.authors == "Woosuk Kwon, Zhuohan Li"
    assert paper.summary == "High throughput serving of large language models (LLMs) requires batching & paging."


def test_proposed_tags_come_from_the_catalogs_own(services, monkeypatch, tmp_path, capsys):
    console(monkeypatch, tmp_path, capsys, "add 2409.12345\nadd 2310.01889\n")
    *_, zero_bubble, ring = papers(tmp_path)
    assert zero_bubble.tags == ("parallelism-dp",)  # "data parallel": d, p
    assert ring.tags == ()  # no tag of the catalog fits it, and none is made up


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("malformed", "arXiv sent an answer that is not a valid feed: nothing was saved."),
        ("500", "arXiv answered with an error (HTTP 500): nothing was saved."),
        ("hang", "arXiv did not answer within 10 seconds: nothing was saved."),
    ],
)
def test_a_failed_look_up_is_one_line_and_saves_nothing(services, monkeypatch, tmp_path, capsys, fault, said):
    arxiv, _ = services
    arxiv.fault(fault, delay=60 if fault == "hang" else None)
    started = time.monotonic()
    out = console(monkeypatch, tmp_path, capsys, "add 2409.12345\n")
    assert time.monotonic() - started < 30  # gave up at its 10 s, long before arXiv would have answered
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines[0].startswith(f"✗ {said}")
    assert "Traceback" not in out and len(papers(tmp_path)) == 32


def test_an_id_arxiv_does_not_have_and_a_doi_crossref_does_not_know(services, monkeypatch, tmp_path, capsys):
    out = console(monkeypatch, tmp_path, capsys, "add 2409.99999\nadd 10.1145/unknown\nsuggest 2409.99999\n")
    assert "✗ arXiv has no paper 2409.99999: nothing was saved." in out
    assert "✗ Crossref knows no DOI 10.1145/unknown: nothing was saved." in out
    assert len(papers(tmp_path)) == 32


def test_the_console_offers_no_form_it_cannot_open(services, monkeypatch, tmp_path, capsys):
    out = console(monkeypatch, tmp_path, capsys, "add 2409.99999\nadd not-a-link\n")
    lines = [line for line in out.splitlines() if line.strip()]
    by_hand = "put it in a file (.bib, .csv, .yaml or .json) and run `paperbot import FILE`."
    assert lines[0] == f"✗ arXiv has no paper 2409.99999: nothing was saved. To add it by hand, {by_hand}", lines
    assert lines[1].endswith(f"2501.18512`, or {by_hand}"), lines
    assert "form" not in out and "→" not in out, out


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_a_chat_reply_waits_2_seconds_at_most(services):
    arxiv, _ = services
    arxiv.fault("slow", delay=60)
    lookups = lookup.Lookups(arxiv.url)
    started = time.monotonic()
    with pytest.raises(lookup.LookupFailed, match="did not answer within 2 seconds"):
        lookups.fetch(parse("2409.12345"), lookup.REPLY_WAIT)
    # Gave up at its own wait, not arXiv's answer; the reply's 3 s under load is bench/bench.py's.
    assert time.monotonic() - started < lookup.LATER_WAIT


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
def test_arxivs_pace_is_kept_between_look_ups(monkeypatch):
    monkeypatch.setattr(lookup, "ARXIV_GAP_SECONDS", 3.0)  # far longer than a busy machine's pause
    with ArxivStandin() as arxiv:
        lookups = lookup.Lookups(arxiv.url)
        lookups.fetch(parse("2409.12345"), 2)
        with pytest.raises(lookup.LookupFailed, match="pause between look-ups"):
            lookups.fetch(parse("2310.01889"), 0.2)  # its turn comes after its time is up
        started = time.monotonic()
        lookups.fetch(parse("2310.01889"), 5)  # waits for its turn
        assert time.monotonic() - started > 0.5 and len(arxiv.requests) == 2


def test_jats_is_stripped_from_crossref_abstracts():
    jats = "<jats:title>Abstract</jats:title><jats:p>We <jats:italic>show</jats:italic> x &lt; y.</jats:p>"
    assert lookup.strip_jats(jats) == "We show x < y."


def test_a_suggestion_stays_out_of_the_catalog_until_accepted(services, monkeypatch, tmp_path, capsys):
    out = console(monkeypatch, tmp_path, capsys, "suggest 2409.12345\nsuggest 2310.01889\n", "--user", "ada")
    assert "you suggested “Pipeline Parallelism with Zero Bubbles" in out and "(suggestion 1)" in out
    assert "(suggestion 2)" in out
    out = console(monkeypatch, tmp_path, capsys, "search zero bubbles\nsuggest 2409.12345\n", "--user", "bo")
    assert "No paper matches" in out and "is suggested already (suggestion 1, by @ada)" in out
    assert len(papers(tmp_path)) == 32

    out = console(monkeypatch, tmp_path, capsys, "suggestions\n")
    assert "2 suggestions waiting" in out
    assert "[Accept] → suggestions accept 1" in out and "[Decline] → suggestions decline 2" in out
    out = console(monkeypatch, tmp_path, capsys, "suggestions accept 1\nsuggestions decline 2\nsuggestions\n")
    assert "Accepted suggestion 1: #33 Pipeline Parallelism with Zero Bubbles" in out
    assert "(to @ada: Your suggestion “Pipeline Parallelism with Zero Bubbles" in out and "it is #33" in out
    assert "(to @ada: Your suggestion “Ring Attention" in out and "was declined" in out
    assert "No suggestions are waiting" in out
    numbers = {p.title: p.number for p in papers(tmp_path)}
    assert numbers["Pipeline Parallelism with Zero Bubbles for Data Parallel Training"] == 33
    assert not any(t.startswith("Ring Attention") for t in numbers)
    out = console(monkeypatch, tmp_path, capsys, "suggestions accept 2\nsuggestions decline 7\n")
    assert "Suggestion 2 was declined already." in out and "There is no suggestion 7." in out
    assert len(papers(tmp_path)) == 33


def test_members_cannot_decide_suggestions(services, monkeypatch, tmp_path, capsys):
    out = console(monkeypatch, tmp_path, capsys, "suggest 2409.12345\nsuggestions accept 1\n", "--user", "ada")
    assert "✗ Only admins can see and decide suggestions." in out
    assert len(papers(tmp_path)) == 32


@pytest.mark.slow  # seconds of real waiting: the full suite runs it, the quick loop does not
@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("malformed", "Crossref sent an answer that is not a paper's record: nothing was saved."),
        ("500", "Crossref answered with an error (HTTP 500): nothing was saved."),
        ("hang", "Crossref did not answer within 2 seconds: nothing was saved."),
    ],
)
def test_crossref_failures_are_one_line_each(fault, said):
    with CrossrefStandin() as crossref:
        crossref.fault(fault)
        with pytest.raises(lookup.LookupFailed) as failed:
            lookup.Lookups(crossref_api=crossref.url).fetch(parse("10.1145/3600006.3613145"), 2)
    assert str(failed.value) == said


def test_a_service_that_cannot_be_reached_is_one_line():
    with pytest.raises(lookup.LookupFailed, match=r"^Crossref could not be reached \(.*\): nothing was saved\.$"):
        lookup.Lookups(crossref_api="http://127.0.0.1:9").fetch(parse("10.1145/x"), 2)


def test_two_members_suggesting_one_paper_at_once_make_one_suggestion(tmp_path):
    import threading

    from bot.intake import suggestions

    store = catalog.open_store(tmp_path / "paperbot.db", seed=None)
    found = lookup.Found("A paper", url="https://arxiv.org/abs/2409.12345")
    start = threading.Barrier(8)
    made = []

    def suggest(member: str) -> None:
        start.wait()
        made.append(suggestions.add(store, member, found))

    threads = [threading.Thread(target=suggest, args=(f"U{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    assert sorted(new for _, new in made) == [False] * 7 + [True]
    assert {s.id for s, _ in made} == {1}


def test_an_answer_naming_a_local_file_is_no_feed_and_no_file_is_read(tmp_path):
    secret = tmp_path / "feed.xml"
    secret.write_bytes(b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><title>Local</title></entry></feed>')
    with pytest.raises(lookup.LookupFailed, match="not a valid feed"):
        lookup.read_arxiv(str(secret).encode(), parse("2409.12345"))


def test_requests_name_paperbot(services):
    arxiv, _ = services
    seen = []
    arxiv.on_request = seen.append
    lookup.Lookups(arxiv.url).fetch(parse("2409.12345"), 2)
    assert seen and seen[0].startswith("paperbot/")


def test_markup_in_a_crossref_title_is_dropped():
    with CrossrefStandin() as crossref:
        crossref.add("10.1234/x", title="Growth of MoS<sub>2</sub> <i>in vivo</i> &amp; more", authors=[("A", "B")])
        found = lookup.Lookups(crossref_api=crossref.url).fetch(parse("10.1234/x"), 2)
    assert found.title == "Growth of MoS2 in vivo & more" and found.year == 2024 and found.summary == ""


def test_every_reference_reads_back_from_its_own_link_and_fits_the_catalog():
    """A form carries a reference as its link and reads it again: whatever text parses, its link parses
    back as the same reference, is at most a catalog link long, and holds no space or control character."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from bot.catalog.papers import MAX_URL

    pieces = st.sampled_from(["%0A", "%25", "%20", "%00", "%ff", "%3C", "%2F", "é", "(", ")", ".", "/", "a", "Z", "%"])
    suffix = st.lists(pieces, max_size=12).map("".join) | st.text(max_size=40)
    texts = st.tuples(st.sampled_from(["10.1234/", "doi:10.1234/", "https://doi.org/10.1234/"]), suffix)

    @settings(max_examples=400, deadline=None)
    @given(texts, st.integers(0, 1000))
    def check(parts, padding):
        text = parts[0] + parts[1] + "a" * padding
        ref = parse(text)
        if ref is None:
            return
        assert parse(ref.url) == ref and len(ref.url) <= MAX_URL, (text, ref)
        assert ref.url.isprintable() and not any(ch.isspace() for ch in ref.url), ref.url

    check()


@pytest.mark.parametrize(
    "text", ["10.1234/a%0Ab", "10.1234/" + "a" * 990, "https://arxiv.org/abs/2501.18512?x=" + "a" * 990]
)
def test_a_console_add_of_a_doi_that_spells_none_is_one_line(services, monkeypatch, tmp_path, capsys, text):
    out = console(monkeypatch, tmp_path, capsys, f"add {text}\nsuggest {text}\n")
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 2 and all(line.startswith("✗ ") for line in lines), lines
    assert "went wrong" not in out
