"""What a link or id names: an arXiv paper or a DOI, in the one spelling that dedupe compares.

    parse("arXiv:2501.18512v2")                 # Ref(kind='arxiv', key='2501.18512')
    parse("https://doi.org/10.1145/3600006")    # Ref(kind='doi', key='10.1145/3600006')
    parse("10.48550/arXiv.2501.18512")          # Ref(kind='arxiv', key='2501.18512'): arXiv's own DOIs
    keys_of_url("https://arxiv.org/pdf/2501.18512v1")  # ('2501.18512', None)

No network and no database here: lookup.py fetches, importing.py stores the keys beside each paper.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple
from urllib.parse import quote, unquote

#: The longest link the catalog keeps (papers.MAX_URL): a reference whose link would be longer is none.
MAX_URL = 1000

#: New-style arXiv ids (2007 on): YYMM.NNNN or YYMM.NNNNN, an optional version.
_NEW = r"\d{4}\.\d{4,5}"
#: Old-style ids: archive (with an optional .XX subject class) / YYMMNNN.
_OLD = r"[a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7}"
_ARXIV_ID = re.compile(rf"^(?:arxiv:)?({_NEW}|{_OLD})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_URL = re.compile(
    rf"^https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/({_NEW}|{_OLD})(?:v\d+)?(?:\.pdf)?/?(?:[?#].*)?$",
    re.IGNORECASE,
)
#: A DOI: 10.<registrant>/<suffix>, the suffix anything but white space.
_DOI = re.compile(r"^(?:doi:\s*)?(10\.\d{4,9}/\S+)$", re.IGNORECASE)
_DOI_URL = re.compile(r"^https?://(?:dx\.)?(?:www\.)?doi\.org/(10\.\d{4,9}/\S+)$", re.IGNORECASE)
#: A DOI once its %-escapes are read (`isprintable` then refuses line breaks, control and format characters).
_DOI_KEY = re.compile(r"10\.\d{4,9}/.*\S")
#: What a DOI's link leaves as it is: RFC 3986's path characters; `%`, `#`, `?`, `<`, spaces and the rest are escaped.
_LINK_SAFE = "/:@!$&'()*+,;="
#: arXiv's DOIs (registered at DataCite, which Crossref does not know): 10.48550/arXiv.<id>.
_ARXIV_DOI = re.compile(rf"^10\.48550/arxiv\.({_NEW}|{_OLD})(?:v\d+)?$", re.IGNORECASE)


class Ref(NamedTuple):
    """A paper named by its arXiv id (`kind` 'arxiv') or its DOI ('doi'); `key` is the normal spelling."""

    kind: str
    key: str

    @property
    def url(self) -> str:
        """The paper's page, as the catalog links it; `parse` reads it back as this reference."""
        if self.kind == "arxiv":
            return f"https://arxiv.org/abs/{self.key}"
        return "https://doi.org/" + quote(self.key, safe=_LINK_SAFE)


def _arxiv_key(found: str) -> str:
    """An arXiv id without its version; an old-style archive in lower case (the number part has no letters)."""
    if "/" in found:
        archive, number = found.split("/", 1)
        head, _, subject = archive.partition(".")
        return f"{head.lower()}{'.' + subject.upper() if subject else ''}/{number}"
    return found


def _doi_key(doi: str) -> str | None:
    """DOIs compare without regard to case (the DOI handbook): kept in lower case, trailing punctuation
    gone, %-escapes read once; None when what they spell is no DOI (a line break, bytes that are no UTF-8)."""
    try:
        key = unquote(doi, errors="strict").rstrip(".,;)").lower()
    except UnicodeDecodeError:
        return None
    return key if _DOI_KEY.fullmatch(key) and key.isprintable() else None


#: Why a text shaped as a DOI names no paper, as `problem` says it.
_NO_DOI = "holds a line break or another character no DOI has, once its %-escapes are read"
_TOO_LONG = f"is longer than a DOI's link may be ({MAX_URL:,} characters)"


def _read(text: str) -> Ref | str | None:
    """The paper `text` names; else why not, for a text shaped as a DOI; else None."""
    text = unicodedata.normalize("NFKC", text).strip().strip("<>")
    if not text:
        return None
    if len(text) > MAX_URL:
        return _TOO_LONG if text.lower().startswith(("10.", "doi:", "https://doi.org/", "http://doi.org/")) else None
    m = _ARXIV_ID.match(text) or _ARXIV_URL.match(text)
    if m:
        return Ref("arxiv", _arxiv_key(m[1]))
    m = _DOI.match(text) or _DOI_URL.match(text)
    if m:
        doi = _doi_key(m[1])
        if doi is None:
            return _NO_DOI
        if any(part in (".", "..") for part in doi.split("/")):
            return None  # a path's `.` or `..`, never a DOI's suffix: it would lead a look-up out of /works/
        arxiv = _ARXIV_DOI.match(doi)
        if arxiv:
            return Ref("arxiv", _arxiv_key(arxiv[1]))
        ref = Ref("doi", doi)
        return ref if len(ref.url) <= MAX_URL else _TOO_LONG  # escaped, a link may outgrow what was typed
    return None


def parse(text: str) -> Ref | None:
    """The paper that `text` (an id, a DOI, or a link to either) names, or None when it names none.
    Each reference's `url` parses back as the same reference."""
    found = _read(text)
    return found if isinstance(found, Ref) else None


def problem(text: str) -> str | None:
    """Why `text`, shaped as a DOI, names no paper (`is longer than …`); None when it names one or is no DOI."""
    found = _read(text)
    return found if isinstance(found, str) else None


def keys_of(url: str, doi: str | None = None) -> tuple[str | None, str | None]:
    """(arXiv id, DOI) that a paper's link (and DOI, when one is known) name, each None when none."""
    arxiv_id = found_doi = None
    for text in (url, doi or ""):
        ref = parse(text) if text else None
        if ref is None:
            continue
        if ref.kind == "arxiv":
            arxiv_id = arxiv_id or ref.key
        else:
            found_doi = found_doi or ref.key
    return arxiv_id, found_doi
