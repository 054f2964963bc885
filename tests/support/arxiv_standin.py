"""A local stand-in for the arXiv API (`GET /api/query?id_list=…`), for tests.

    with ArxivStandin() as arxiv:                  # knows a few papers (PAPERS), by id
        arxiv.add("2409.00001", title="…", authors=["Ada Lovelace"], summary="…")
        os.environ["PAPERBOT_ARXIV_API"] = arxiv.url
        arxiv.fault("slow", delay=2.5)             # the next answer after 2.5 s (then as usual)
        arxiv.answer_now()                         # ... or at once: what is held goes now
        arxiv.fault("500") / ("malformed") / ("hang") / ("error_entry")
        arxiv.fault("nested_tags", size=600_000)   # a hostile answer (see HOSTILE), about `size` bytes
        arxiv.requests                             # the query strings asked, in order

Answers are shaped as arXiv's own (its API manual's Atom feed): opensearch:totalResults, one
entry per id with id, updated, published, title, summary, author/name, arxiv:doi, link
rel="alternate" and link title="pdf", arxiv:primary_category. An unknown id gets arXiv's empty
feed (totalResults 0); a malformed id arXiv's error entry. Faults: "slow" (answers after `delay`
seconds), "500", "malformed" (a cut-off feed), "hang" (answers nothing for `delay`, default 10 s),
and the hostile answers of HOSTILE, each about `size` bytes. Standard library only.
"""

from __future__ import annotations

import re
import threading
import time
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

#: Papers it knows from the start: one the seed catalog has (#29), and one it does not.
PAPERS: dict[str, dict] = {
    "2501.18512": {
        "title": "Streaming DiLoCo with Overlapping Communication: Towards a\n  Distributed Free Lunch",
        "authors": ["Arthur Douillard", "Yanislav Donchev", "Keith Rush"],
        "summary": "  Training of large language models (LLMs) is typically distributed across a\n"
        "large number of accelerators.\n",
        "published": "2025-01-30T17:23:50Z",
    },
    "2409.12345": {
        "title": "Pipeline Parallelism with Zero Bubbles for Data\n  Parallel Training",
        "authors": ["Ada Lovelace", "Alan Turing"],
        "summary": "  We study pipeline parallelism and data parallel training of large models.\n",
        "published": "2024-09-18T09:00:00Z",
        "doi": "10.1145/3600006.3613145",
    },
    "2310.01889": {
        "title": "Ring Attention with Blockwise Transformers for Near-Infinite Context",
        "authors": ["Hao Liu", "Matei Zaharia", "Pieter Abbeel"],
        "summary": "  Transformers have emerged as the architecture of choice for many\nstate-of-the-art AI models.\n",
        "published": "2023-10-03T17:59:41Z",
    },
    "hep-th/9901001": {
        "title": "An Old-Style Paper on Strings",
        "authors": ["Old Author"],
        "summary": "Strings.",
        "published": "1999-01-04T00:00:00Z",
    },
}

OPENSEARCH = "http://a9.com/-/spec/opensearch/1.1/"
ARXIV = "http://arxiv.org/schemas/atom"
SELF = "http://arxiv.org/api/query?search_query%3D%26id_list%3D"
#: Answers a hostile server sends, costly to parse: "nested_tags" (a title of unclosed <b>),
#: "unclosed" (<a x=' over and over, no tag ever ends), "entities" (a DOCTYPE's billion laughs;
#: small whatever `size`), "huge" (a valid entry with a summary of `size` bytes), "deep_json"
#: (Crossref: [[[…]]] nested `size`/2 deep).
HOSTILE = ("nested_tags", "unclosed", "entities", "huge", "deep_json")
_LOLS = ["lol", *(f"lol{i}" for i in range(1, 10))]
_LAUGHS = '<!ENTITY lol "lol">' + "".join(
    f'<!ENTITY {n} "{f"&{m};" * 10}">' for m, n in zip(_LOLS, _LOLS[1:], strict=False)
)


class StandinServer:
    """A threading HTTP server on 127.0.0.1 with faults on demand; subclasses answer GETs."""

    def __init__(self):
        self.requests: list[str] = []
        #: Called with each request's User-Agent (a test may set it).
        self.on_request = None
        self._faults: list[tuple[str, float, int]] = []
        self._lock = threading.Lock()
        self._let_go = threading.Event()  # ends the waits of slow and hung answers under way
        self._held = 0  # slow and hung answers begun
        self._holding = threading.Condition(self._lock)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):  # noqa: N802
                if outer.on_request is not None:
                    outer.on_request(self.headers.get("User-Agent", ""))
                with outer._lock:
                    outer.requests.append(self.path)
                    fault = outer._faults.pop(0) if outer._faults else None
                    let_go = outer._let_go
                    kind, delay, size = fault or ("", 0.0, 0)
                    if kind in ("slow", "hang"):
                        outer._held += 1
                        outer._holding.notify_all()
                if kind in ("slow", "hang"):
                    let_go.wait(delay)
                    if kind == "hang":
                        self.close_connection = True
                        return
                if kind == "500":
                    self._send(500, "text/plain", b"Internal Server Error")
                    return
                if kind in HOSTILE:
                    self._send(200, *outer.hostile(kind, size))
                    return
                status, ctype, body = outer.answer(self.path, malformed=kind == "malformed")
                self._send(status, ctype, body)

            def _send(self, status: int, ctype: str, body: bytes):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client stopped waiting
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"

    def answer(self, path: str, *, malformed: bool) -> tuple[int, str, bytes]:
        raise NotImplementedError

    def fault(self, kind: str, delay: float | None = None, times: int = 1, size: int = 240_000) -> None:
        """The next `times` requests get `kind`: slow (after `delay`, default 2.5 s), 500, malformed,
        hang (nothing for `delay`, default 10 s, then the connection closes), or a HOSTILE answer of
        about `size` bytes."""
        assert kind in ("slow", "500", "malformed", "hang", *HOSTILE), kind
        wait = delay if delay is not None else (10.0 if kind == "hang" else 2.5)
        with self._lock:
            self._faults += [(kind, wait, size)] * times

    def answer_now(self, timeout: float = 10) -> None:
        """The slow answers under way go now (a hung one closes), once the first has come in (the bot
        may ask in the background): a test holds a look-up with a long `delay` and lets it go once it
        has seen what the bot does meanwhile, whatever the machine's pace."""
        with self._lock:
            assert self._holding.wait_for(lambda: self._held, timeout), "no slow answer was asked for"
            let_go, self._let_go = self._let_go, threading.Event()
        let_go.set()

    def hostile(self, kind: str, size: int) -> tuple[str, bytes]:
        """(content type, body) of a hostile answer."""
        raise NotImplementedError

    def close(self) -> None:
        self._let_go.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ArxivStandin(StandinServer):
    def __init__(self, papers: dict[str, dict] | None = None):
        self.papers = {k: dict(v) for k, v in (PAPERS if papers is None else papers).items()}
        super().__init__()
        self.url = f"{self.base}/api/query"

    def add(self, arxiv_id: str, **paper) -> None:
        self.papers[arxiv_id] = {"published": "2025-06-01T00:00:00Z", "summary": "", "authors": [], **paper}

    def hostile(self, kind: str, size: int) -> tuple[str, bytes]:
        paper = dict(PAPERS["2409.12345"])
        head, decl = "", ""
        if kind == "nested_tags":
            head = "<b>" * (size // 3)
        elif kind == "unclosed":
            head = "<a x='" * (size // 6)
        elif kind == "entities":
            decl, head = f"<!DOCTYPE lolz [{_LAUGHS}]>", "&lol9;&lol9;&lol9;"
        elif kind == "huge":
            paper["summary"] = "A long summary. " * (size // 16)
        elif kind == "deep_json":
            return "application/json", b"[" * (size // 2) + b"]" * (size // 2)
        feed = feed_for(["2409.12345"], {"2409.12345": paper})
        if decl:  # after the XML declaration, as a DOCTYPE must be
            first, rest = feed.split("\n", 1)  # on the XML declaration's line: feedparser keeps it then
            feed = f"{first}{decl}\n{rest}"
        if head:  # raw markup (or entities) in the title, where escape() would have quoted it
            feed = feed.replace("<title>Pipeline", f"<title>{head}Pipeline")
        return "application/atom+xml; charset=utf-8", feed.encode()

    def answer(self, path: str, *, malformed: bool) -> tuple[int, str, bytes]:
        query = parse_qs(urlsplit(path).query)
        ids = [i for part in query.get("id_list", []) for i in part.split(",") if i]
        feed = feed_for(ids, self.papers)
        if malformed:
            feed = feed[: len(feed) // 2]  # cut off mid-element, as a broken proxy would
        return 200, "application/atom+xml; charset=utf-8", feed.encode()


def _entry(arxiv_id: str, paper: dict) -> str:
    authors = "".join(f"\n    <author>\n      <name>{escape(a)}</name>\n    </author>" for a in paper["authors"])
    doi = f'\n    <arxiv:doi xmlns:arxiv="{ARXIV}">{escape(paper["doi"])}</arxiv:doi>' if paper.get("doi") else ""
    return f"""
  <entry>
    <id>http://arxiv.org/abs/{arxiv_id}v1</id>
    <updated>{paper["published"]}</updated>
    <published>{paper["published"]}</published>
    <title>{escape(paper["title"])}</title>
    <summary>{escape(paper["summary"])}</summary>{authors}{doi}
    <link href="http://arxiv.org/abs/{arxiv_id}v1" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/{arxiv_id}v1" rel="related" type="application/pdf"/>
    <arxiv:primary_category xmlns:arxiv="{ARXIV}" term="cs.DC" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.DC" scheme="http://arxiv.org/schemas/atom"/>
  </entry>"""


def _error_entry(bad: str) -> str:
    return f"""
  <entry>
    <id>http://arxiv.org/api/errors#incorrect_id_format_for_{escape(bad)}</id>
    <title>Error</title>
    <summary>incorrect id format for {escape(bad)}</summary>
    <updated>2025-01-30T00:00:00-05:00</updated>
    <link href="http://arxiv.org/api/errors#incorrect_id_format_for_{escape(bad)}" rel="alternate" type="text/html"/>
    <author>
      <name>arXiv api core</name>
    </author>
  </entry>"""


def feed_for(ids: list[str], papers: dict[str, dict]) -> str:
    """arXiv's answer to `id_list=<ids>`: an entry per known id, none for an unknown one, the error entry
    for one that is no arXiv id."""
    valid = re.compile(r"^(\d{4}\.\d{4,5}|[a-z\-]+(\.[A-Z]{2})?/\d{7})(v\d+)?$")
    bad = [i for i in ids if not valid.match(i)]
    entries = [_error_entry(bad[0])] if bad else [_entry(i.split("v")[0], papers[i]) for i in ids if i in papers]
    total = len(entries)
    listed = ",".join(ids)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link href="{SELF}{listed}%26start%3D0%26max_results%3D10" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query: search_query=&amp;id_list={escape(listed)}&amp;start=0&amp;max_results=10</title>
  <id>http://arxiv.org/api/standin</id>
  <updated>{time.strftime("%Y-%m-%dT00:00:00-05:00")}</updated>
  <opensearch:totalResults xmlns:opensearch="{OPENSEARCH}">{total}</opensearch:totalResults>
  <opensearch:startIndex xmlns:opensearch="{OPENSEARCH}">0</opensearch:startIndex>
  <opensearch:itemsPerPage xmlns:opensearch="{OPENSEARCH}">10</opensearch:itemsPerPage>{"".join(entries)}
</feed>
"""
