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
from urllib.parse import unquote

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
#: arXiv's DOIs (registered at DataCite, which Crossref does not know): 10.48550/arXiv.<id>.
_ARXIV_DOI = re.compile(rf"^10\.48550/arxiv\.({_NEW}|{_OLD})(?:v\d+)?$", re.IGNORECASE)


class Ref(NamedTuple):
    """A paper named by its arXiv id (`kind` 'arxiv') or its DOI ('doi'); `key` is the normal spelling."""

    kind: str
    key: str

    @property
    def url(self) -> str:
        """The paper's page, as the catalog links it."""
        return f"https://arxiv.org/abs/{self.key}" if self.kind == "arxiv" else f"https://doi.org/{self.key}"


def _arxiv_key(found: str) -> str:
    """An arXiv id without its version; an old-style archive in lower case (the number part has no letters)."""
    if "/" in found:
        archive, number = found.split("/", 1)
        head, _, subject = archive.partition(".")
        return f"{head.lower()}{'.' + subject.upper() if subject else ''}/{number}"
    return found


def _doi_key(doi: str) -> str:
    """DOIs compare without regard to case (the DOI handbook): kept in lower case, trailing punctuation gone."""
    return unquote(doi).rstrip(".,;)").lower()


def parse(text: str) -> Ref | None:
    """The paper that `text` (an id, a DOI, or a link to either) names, or None when it names none."""
    text = unicodedata.normalize("NFKC", text).strip().strip("<>")
    if not text or len(text) > 1000:
        return None
    m = _ARXIV_ID.match(text) or _ARXIV_URL.match(text)
    if m:
        return Ref("arxiv", _arxiv_key(m[1]))
    m = _DOI.match(text) or _DOI_URL.match(text)
    if m:
        doi = _doi_key(m[1])
        if any(part in (".", "..") for part in doi.split("/")):
            return None  # a path's `.` or `..`, never a DOI's suffix: it would lead a look-up out of /works/
        arxiv = _ARXIV_DOI.match(doi)
        if arxiv:
            return Ref("arxiv", _arxiv_key(arxiv[1]))
        return Ref("doi", doi)
    return None


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
