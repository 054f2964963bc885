"""Looking a paper up by its arXiv id or DOI: title, authors, year, link and abstract, or one line saying why not.

    lookups = Lookups(arxiv_api="https://export.arxiv.org/api/query", crossref_api="https://api.crossref.org")
    found = lookups.fetch(paper_refs.parse("2501.18512"), wait=2)   # a Found, or raises LookupFailed
    str(failure)   # "arXiv did not answer within 2 seconds: nothing was saved."

arXiv answers with an Atom feed (read with feedparser, which knows arXiv's extensions and never
fetches anything itself here: the bytes come from our own request), Crossref with JSON. Every
call ends by its deadline, whatever the server does: the request runs in a thread of its own, and
the caller stops waiting at the deadline. No database here: commands and suggestions.py decide
what to keep.
"""

from __future__ import annotations

import html
import importlib.metadata
import io
import json
import logging
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from bot.catalog.refs import Ref, keys_of

log = logging.getLogger(__name__)

ARXIV_API = "https://export.arxiv.org/api/query"
CROSSREF_API = "https://api.crossref.org"
#: How long a look-up may take inside a chat reply (the platforms allow 3 seconds for all of it),
#: after the reply (a form already open, an answer already deferred), and in the console.
REPLY_WAIT = 2.0
LATER_WAIT = 10.0
CONSOLE_WAIT = 10.0
#: arXiv's terms ask for at most one request every 3 seconds.
ARXIV_GAP_SECONDS = 3.0
#: The most of an answer read: an arXiv entry is a few kilobytes, a Crossref record with its
#: references a few hundred; anything larger is refused unread.
MAX_ARXIV_BYTES = 256 << 10
MAX_CROSSREF_BYTES = 1 << 20
#: The most tags an arXiv answer may have: one entry has a few dozen, and feedparser's cost grows
#: with the square of their nesting, so a cheap count before the parse keeps a hostile answer cheap.
MAX_ARXIV_TAGS = 2000
#: Looked-up papers kept for a while, so that the form a button opens later needs no second request.
CACHE_SIZE = 256
CACHE_SECONDS = 15 * 60


def _user_agent() -> str:
    try:
        version = importlib.metadata.version("paperbot")
    except importlib.metadata.PackageNotFoundError:
        version = "dev"
    return f"paperbot/{version} (a reading group's paper bot; python-urllib)"


#: Who asks: both services ask clients to name themselves.
USER_AGENT = _user_agent()


@dataclass(frozen=True)
class Found:
    """A paper as a look-up found it: the add form's fields."""

    title: str
    authors: str = ""
    year: int | None = None
    url: str = ""
    summary: str = ""
    doi: str | None = None  # a DOI the paper has besides its link (arXiv's journal reference)
    source: str = ""  # "arXiv" or "Crossref"

    @property
    def keys(self) -> tuple[str | None, str | None]:
        """(arXiv id, DOI) that this paper is known by, for dedupe."""
        return keys_of(self.url, self.doi)


class LookupFailed(Exception):
    """A look-up found nothing usable; str() is the one line to show (it says that nothing was saved)."""


class Lookups:
    """The two services, at the addresses the settings give (a proxy, or a stand-in in tests)."""

    def __init__(self, arxiv_api: str = ARXIV_API, crossref_api: str = CROSSREF_API):
        self.arxiv_api = arxiv_api
        self.crossref_api = crossref_api.rstrip("/")
        self._cache: OrderedDict[Ref, tuple[float, Found]] = OrderedDict()
        self._lock = threading.Lock()
        self._arxiv_next = 0.0  # monotonic: arXiv's next request not before then

    def cached(self, ref: Ref) -> Found | None:
        """The paper a recent look-up of `ref` found, if it is still kept."""
        with self._lock:
            hit = self._cache.get(ref)
            if hit is None or hit[0] < time.monotonic():
                return None
            return hit[1]

    def fetch(self, ref: Ref, wait: float) -> Found:
        """The paper `ref` names, looked up within `wait` seconds; raises LookupFailed."""
        found = self.cached(ref)
        if found is not None:
            return found
        deadline = time.monotonic() + wait
        found = self._arxiv(ref, deadline, wait) if ref.kind == "arxiv" else self._crossref(ref, deadline, wait)
        with self._lock:
            self._cache[ref] = (time.monotonic() + CACHE_SECONDS, found)
            self._cache.move_to_end(ref)
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return found

    # -- arXiv ----------------------------------------------------------------------

    def _arxiv(self, ref: Ref, deadline: float, wait: float) -> Found:
        with self._lock:  # keep arXiv's pace: wait for our turn when it comes before the deadline
            start = max(time.monotonic(), self._arxiv_next)
            if start > deadline:
                raise LookupFailed(
                    f"arXiv asks for a pause between look-ups: try again in {start - time.monotonic():.0f} seconds."
                    " Nothing was saved."
                )
            self._arxiv_next = start + ARXIV_GAP_SECONDS
        time.sleep(max(0.0, start - time.monotonic()))
        query = urllib.parse.urlencode({"id_list": ref.key, "max_results": 1})
        sep = "&" if "?" in self.arxiv_api else "?"

        def read(status: int, body: bytes) -> Found:
            if status != 200:
                raise LookupFailed(f"arXiv answered with an error (HTTP {status}): nothing was saved.")
            return read_arxiv(body, ref)

        url = f"{self.arxiv_api}{sep}{query}"
        return _get(url, "arXiv", deadline, wait, "application/atom+xml", MAX_ARXIV_BYTES, read)

    # -- Crossref -------------------------------------------------------------------

    def _crossref(self, ref: Ref, deadline: float, wait: float) -> Found:
        path = works_path(ref.key)
        if path is None:
            raise LookupFailed(f"{ref.key} is not a DOI Crossref could know: nothing was saved.")

        def read(status: int, body: bytes) -> Found:
            if status == 404:
                raise LookupFailed(f"Crossref knows no DOI {ref.key}: nothing was saved.")
            if status != 200:
                raise LookupFailed(f"Crossref answered with an error (HTTP {status}): nothing was saved.")
            return read_crossref(body, ref)

        return _get(
            f"{self.crossref_api}{path}", "Crossref", deadline, wait, "application/json", MAX_CROSSREF_BYTES, read
        )


def works_path(doi: str) -> str | None:
    """Crossref's `/works/{doi}` for a DOI, each of its parts percent-encoded but for unreserved
    characters, so that the request never leaves /works/; None for a DOI with a `.` or `..` part."""
    parts = doi.split("/")
    if any(part in (".", "..") for part in parts):
        return None
    return "/works/" + "/".join(urllib.parse.quote(part, safe="") for part in parts)


def _get(
    url: str, service: str, deadline: float, wait: float, accept: str, limit: int, read: Callable[[int, bytes], Found]
) -> Found:
    """`read(status, body)` of a GET's answer, or LookupFailed; never later than `deadline` (monotonic).
    The answer is read in the request's thread too, so that a parse that runs long costs no reply."""
    result: dict = {}

    def run() -> None:
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": accept})
        try:
            # The socket's own time-out ends the thread soon after the caller stopped waiting.
            with urllib.request.urlopen(request, timeout=max(0.1, deadline - time.monotonic())) as response:
                status, body = response.status, response.read(limit + 1)
        except urllib.error.HTTPError as e:
            status, body = e.code, b""
        except Exception as e:  # noqa: BLE001  (any failure is the look-up's one line)
            result["error"] = e
            return
        if len(body) > limit:
            result["failed"] = LookupFailed(f"{service} sent more than a paper's record: nothing was saved.")
            return
        try:
            result["found"] = read(status, body)
        except LookupFailed as failed:
            result["failed"] = failed
        except Exception as e:  # noqa: BLE001  (an answer no reader foresaw is still one line)
            log.warning("reading the answer of %s failed: %r", service, e)
            result["failed"] = LookupFailed(f"{service} sent an answer that could not be read: nothing was saved.")

    worker = threading.Thread(target=run, name=f"lookup-{service}", daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive() or _timed_out(result.get("error")):
        raise LookupFailed(f"{service} did not answer within {wait:g} seconds: nothing was saved.")
    if "error" in result:
        log.info("look-up at %s failed: %r", service, result["error"])
        raise LookupFailed(f"{service} could not be reached ({_reason(result['error'])}): nothing was saved.")
    if "failed" in result:
        raise result["failed"]
    return result["found"]


def _timed_out(error: BaseException | None) -> bool:
    if isinstance(error, urllib.error.URLError):
        error = error.reason if isinstance(error.reason, BaseException) else None
    return isinstance(error, TimeoutError)


def _reason(error: BaseException) -> str:
    if isinstance(error, urllib.error.URLError):
        return str(error.reason)[:80]
    return error.__class__.__name__


def _one_line(text: str) -> str:
    return " ".join((text or "").split())


#: What arXiv never sends and a parser pays dearly for: a DOCTYPE (entities, billion laughs) or an
#: encoding other than UTF-8 (which would hide both from the checks here).
_DECLARATION = re.compile(r"<!\s*(?:DOCTYPE|ENTITY|ELEMENT|ATTLIST)", re.IGNORECASE)
_ENCODING = re.compile(r"""^\ufeff?<\?xml[^>]*encoding\s*=\s*["']([^"']*)["']""")


def wellformed_enough(body: bytes) -> bool:
    """Whether an arXiv answer is worth parsing: UTF-8 within MAX_ARXIV_BYTES, no declarations, and
    at most MAX_ARXIV_TAGS tags; a cheap look that bounds what feedparser can cost."""
    if len(body) > MAX_ARXIV_BYTES:
        return False
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    encoding = _ENCODING.match(text)
    if encoding and encoding[1].lower().replace("_", "-") not in ("utf-8", "utf8"):
        return False
    return text.count("<") <= MAX_ARXIV_TAGS and not _DECLARATION.search(text)


def read_arxiv(body: bytes, ref: Ref) -> Found:
    """The paper in an arXiv API answer (an Atom feed of one entry); LookupFailed for an empty or broken feed."""
    invalid = LookupFailed("arXiv sent an answer that is not a valid feed: nothing was saved.")
    if not wellformed_enough(body):
        raise invalid
    import feedparser  # noqa: PLC0415 (0.1 s to import, which every verb of the command line would pay)

    # A stream, never bytes: feedparser would take bytes that name a file (b"/etc/passwd") for its path.
    feed = feedparser.parse(io.BytesIO(body), sanitize_html=False, resolve_relative_uris=False)
    malformed = feed.get("bozo") and not isinstance(
        feed.get("bozo_exception"), feedparser.CharacterEncodingOverride | feedparser.NonXMLContentType
    )
    if malformed or feed.get("version") != "atom10":
        raise invalid
    entries = [e for e in feed.entries if "/api/errors" not in e.get("id", "")]
    if any("/api/errors" in e.get("id", "") for e in feed.entries):
        raise LookupFailed(f"arXiv says {ref.key} is not a valid arXiv id: nothing was saved.")
    entry = entries[0] if entries else None
    title = _one_line(entry.get("title", "")) if entry else ""
    if entry is None or not title:
        raise LookupFailed(f"arXiv has no paper {ref.key}: nothing was saved.")
    authors = ", ".join(_one_line(a.get("name", "")) for a in entry.get("authors", []) if a.get("name"))
    year = None
    published = entry.get("published_parsed")
    if published:
        year = published.tm_year
    doi = entry.get("arxiv_doi")
    return Found(
        title=title,
        authors=authors,
        year=year,
        url=ref.url,
        summary=_one_line(entry.get("summary", "")),
        doi=_one_line(doi).lower() or None if doi else None,
        source="arXiv",
    )


#: JATS (and any other) markup in a Crossref abstract: tags go, entities are read.
_TAG = re.compile(r"<[^>]*>")
_ABSTRACT_HEADING = re.compile(r"^(abstract|summary)[\s.:]*", re.IGNORECASE)


def strip_jats(abstract: str) -> str:
    """`<jats:p>We show…</jats:p>` -> `We show…`; a leading "Abstract" heading goes too."""
    text = _one_line(html.unescape(_TAG.sub(" ", abstract)))
    return _ABSTRACT_HEADING.sub("", text, count=1) if text[:8].lower().startswith(("abstract", "summary")) else text


def read_crossref(body: bytes, ref: Ref) -> Found:
    """The paper in a Crossref `/works/{doi}` answer; LookupFailed when it is not one (too large,
    or nested too deep for the JSON reader, too)."""
    try:
        if len(body) > MAX_CROSSREF_BYTES:
            raise ValueError("too large")
        data = json.loads(body)
        message = data["message"] if data.get("status") == "ok" else None
        if not isinstance(message, dict):
            raise ValueError("no message")
        titles = message.get("title") or []
        title = titles[0] if isinstance(titles, list) and titles else str(titles or "")
        title = _one_line(html.unescape(_TAG.sub("", str(title))))  # <i>in vivo</i>, <sub>2</sub>
        names = []
        for author in message.get("author") or []:
            if not isinstance(author, dict):
                continue
            name = " ".join(str(author.get(k) or "") for k in ("given", "family")).strip() or str(
                author.get("name") or ""
            )
            if name:
                names.append(_one_line(name))
        year = None
        for key in ("issued", "published", "published-print", "published-online", "created"):
            parts = (message.get(key) or {}).get("date-parts") or []
            if parts and parts[0] and isinstance(parts[0][0], int):
                year = parts[0][0]
                break
        abstract = message.get("abstract")
        summary = strip_jats(abstract) if isinstance(abstract, str) else ""
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError):
        raise LookupFailed("Crossref sent an answer that is not a paper's record: nothing was saved.") from None
    if not title:
        raise LookupFailed(f"Crossref has no title for {ref.key}: nothing was saved.")
    return Found(
        title=title,
        authors=", ".join(names),
        year=year if year and 1000 <= year <= 2999 else None,
        url=ref.url,
        summary=summary,
        source="Crossref",
    )
