"""A local stand-in for Crossref's REST API (`GET /works/{doi}`), for tests.

    with CrossrefStandin() as crossref:
        os.environ["PAPERBOT_CROSSREF_API"] = crossref.url
        crossref.add("10.1145/1234.5678", title="…", authors=[("Ada", "Lovelace")], year=2023, abstract="<jats:p>…")
        crossref.fault("slow", delay=2.5)   # also "500", "malformed", "hang" (see arxiv_standin.StandinServer)
        crossref.fault("deep_json", size=600_000)   # hostile: [[[…]]]; "huge": a record of `size` bytes

Answers are shaped as Crossref's (its REST API documentation): {"status": "ok", "message-type":
"work", "message": {"DOI", "title": [..], "author": [{"given", "family", "sequence"}], "issued":
{"date-parts": [[y, m, d]]}, "abstract": JATS XML, "URL", "type", "container-title"}}; an unknown DOI
gets Crossref's 404 with the text "Resource not found.". DOIs match without regard to case.
"""

from __future__ import annotations

import json
from urllib.parse import unquote, urlsplit

from tests.support.arxiv_standin import StandinServer

WORKS: dict[str, dict] = {
    "10.1145/3600006.3613145": {
        "title": "Efficient Memory Management for Large Language Model Serving with PagedAttention",
        "authors": [("Woosuk", "Kwon"), ("Zhuohan", "Li")],
        "year": 2023,
        "abstract": "<jats:title>Abstract</jats:title><jats:p>High throughput serving of large language "
        "models (LLMs) requires batching &amp; paging.</jats:p>",
        "container": "Proceedings of the 29th Symposium on Operating Systems Principles",
    },
}


class CrossrefStandin(StandinServer):
    def __init__(self, works: dict[str, dict] | None = None):
        self.works = {k.lower(): dict(v) for k, v in (WORKS if works is None else works).items()}
        super().__init__()
        self.url = self.base

    def add(self, doi: str, **work) -> None:
        self.works[doi.lower()] = {"authors": [], "year": 2024, **work}

    def hostile(self, kind: str, size: int) -> tuple[str, bytes]:
        if kind == "deep_json":
            return "application/json", b"[" * (size // 2) + b"]" * (size // 2)
        assert kind == "huge", f"Crossref has no hostile answer {kind!r}"
        work = {**WORKS["10.1145/3600006.3613145"], "abstract": "<jats:p>" + "A long abstract. " * (size // 17)}
        return "application/json", json.dumps(message_for("10.1145/3600006.3613145", work)).encode()

    def answer(self, path: str, *, malformed: bool) -> tuple[int, str, bytes]:
        route = unquote(urlsplit(path).path)
        if not route.startswith("/works/"):
            return 404, "text/plain", b"Resource not found."
        doi = route[len("/works/") :]
        work = self.works.get(doi.lower())
        if work is None:
            return 404, "text/plain;charset=utf-8", b"Resource not found."
        if malformed:
            return 200, "application/json", b'{"status":"ok","message-type":"work","message":{"DOI":'
        return 200, "application/json", json.dumps(message_for(doi, work)).encode()


def message_for(doi: str, work: dict) -> dict:
    message = {
        "indexed": {"date-parts": [[2025, 1, 1]], "date-time": "2025-01-01T00:00:00Z", "timestamp": 1735689600000},
        "publisher": "ACM",
        "DOI": doi,
        "type": "proceedings-article",
        "title": [work["title"]],
        "author": [
            {"given": given, "family": family, "sequence": "first" if i == 0 else "additional", "affiliation": []}
            for i, (given, family) in enumerate(work["authors"])
        ],
        "issued": {"date-parts": [[work["year"], 10, 23]]},
        "container-title": [work.get("container", "")],
        "URL": f"http://dx.doi.org/{doi}",
        "is-referenced-by-count": 1000,
    }
    if work.get("abstract"):
        message["abstract"] = work["abstract"]
    return {"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": message}
