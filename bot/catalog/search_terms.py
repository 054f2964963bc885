"""Turning catalog text and user queries into FTS5 terms, Chinese included.

    >>> index_form("GPU上稀疏矩阵乘法")
    ('gpu 上稀 稀疏 疏矩 矩阵 阵乘 乘法', {'gpu'})
    >>> all_of(match_terms("稀疏矩阵 gpu"))
    '"稀疏" + "疏矩" + "矩阵" AND "gpu"*'
    >>> match_terms("distrib", expand=lambda prefix: ["distributed", "distribution"])
    ['("distributed" OR "distribution")']
    >>> match_terms("!!! ()")      # nothing searchable: no query at all
    []

FTS5's unicode61 tokenizer keeps a run of Han characters as one token, so the
two-character word 并行 inside 数据并行训练 would never match. Both the stored
text and the query therefore spell Han (and kana, hangul) runs as overlapping
character bigrams; a query word becomes the phrase of its bigrams, which matches
exactly where the word occurs. Everything else is split the way unicode61 splits
it, and every query term is quoted by us, so no user input can reach FTS5 as
syntax.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice, product

# Scripts written without spaces between words.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u31f0-\u31ff\uff66-\uff9f"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_TOKEN_KIND = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")  # the same, telling CJK runs from words
_CJK_RUN = re.compile(rf"[{_CJK}]+")
_ASCII_WORD = re.compile(r"[^\W_]+")

MAX_QUERY_TERMS = 12
MAX_TERM_CHARS = 40


def _normal(text: str) -> str:
    # NFKC folds full-width letters and digits (ＧＰＵ, １２) to their ASCII forms.
    if not text.isascii() and not unicodedata.is_normalized("NFKC", text):  # the check is 40x cheaper
        text = unicodedata.normalize("NFKC", text)
    return text.casefold()


def tokens(text: str) -> list[str]:
    """Words of `text`: runs of letters/digits, and runs of CJK characters."""
    return _TOKEN.findall(_normal(text))


def searched_words(query: str) -> str:
    """The part of `query` that a search uses (its first words, each clipped), as a query again.

    >>> searched_words("Training  " + "x" * 50 + " 数据并行!")
    'training xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx 数据并行'
    """
    return " ".join(_searched_tokens(query))


def _searched_tokens(query: str) -> list[str]:
    return [token[:MAX_TERM_CHARS] for token in tokens(query)[:MAX_QUERY_TERMS]]


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return list(map(str.__add__, run[:-1], run[1:]))


def index_form(text: str) -> tuple[str, set[str]]:
    """(the indexed form of `text`, its words that a prefix query may expand to)."""
    if text.isascii():  # most titles and tags: words only, and casefold is lower
        found = _ASCII_WORD.findall(text.lower())
        return " ".join(found), set(found)
    out: list[str] = []
    words: set[str] = set()
    for run, word in _TOKEN_KIND.findall(_normal(text)):
        if word:
            out.append(word)
            words.add(word)
        elif len(run) > 1:
            out.extend(map(str.__add__, run[:-1], run[1:]))
        else:
            out.append(run)
    return " ".join(out), words


#: FTS5 keeps a prefix index for prefixes this short (prefix='2 3'): such a query is cheap.
INDEXED_PREFIX = 3
MAX_EXPANSION = 32


def all_of(terms: list[str]) -> str:
    """The MATCH expression that every one of `terms` matches."""
    return " AND ".join(terms)


def match_terms(query: str, expand: Callable[[str], list[str] | None] | None = None) -> list[str]:
    """The query's words as FTS5 terms, each of which must match; none when there is nothing to search for.

    English words match as prefixes (`distrib` finds "distributed"); a CJK word
    of two or more characters matches where those characters stand together; a
    single CJK character matches words that start with it.

    `expand(prefix)` lists the indexed words that start with `prefix`, or None
    if there are too many. A prefix longer than FTS5's prefix index is then
    spelled as those exact words: FTS5 reads `"training"*` by first merging the
    lists of every matching word in full, but walks `("training" OR
    "trainings")` lazily, so a page of results costs the same for any word.
    """
    return [_term(token, expand) for token in _searched_tokens(query)]


def _term(token: str, expand: Callable[[str], list[str] | None] | None) -> str:
    if _CJK_RUN.fullmatch(token):
        if len(token) == 1:
            return f'"{token}"*'
        return " + ".join(f'"{g}"' for g in _bigrams(token))
    words = expand(token) if expand is not None and len(token) > INDEXED_PREFIX else None
    if words is None:
        return f'"{token}"*'
    if not words:
        return f'"{token}"'  # no indexed word starts so: matches nothing, cheaply
    if len(words) == 1:
        return f'"{words[0]}"'
    return "(" + " OR ".join(f'"{w}"' for w in words) + ")"


#: English words that join others and have no Chinese of their own: left out of a widened query.
_GLUE = frozenset("a an and the of for in on to with by via from at as or".split())
#: Other-language spellings of one word (or of one part of a Chinese run) kept in a query, at most.
MAX_SPELLINGS = 4
#: Phrases a Chinese run of several words becomes in English, at most (one for each choice of spellings).
MAX_PHRASES = 16


def other_language(
    query: str,
    spellings: Callable[[str], list[list[str]]],
    holds: Callable[[str], bool],
    expand: Callable[[str], list[str] | None] | None = None,
) -> list[str] | None:
    """The query's terms, each widened to its other-language spellings too; None when no word has any.

    `spellings(word)` gives a word's spellings in the other language as parts that must all match,
    each a list of words any of which will do (bilingual.other_language); `holds(term)` says whether
    the catalog has the term, so only the senses the catalog itself uses are kept. The parts of a
    Chinese run (推测 解码) must stand together in that order, as a phrase of English prefixes.

    >>> other_language("pipeline", lambda w: [["流水线", "管道"]], lambda t: "管" not in t)
    ['("pipeline"* OR "流水" + "水线")']
    >>> other_language("推测解码", lambda w: [["specul", "conjectur"], ["decod"]], lambda t: True)
    ['("推测" + "测解" + "解码" OR ("specul"* + "decod"* OR "conjectur"* + "decod"*))']
    """
    terms, widened = [], False
    for token in _searched_tokens(query):
        if token in _GLUE:
            continue  # "mixture of experts" is 混合专家: no Chinese says "of"
        term = _term(token, expand)
        parts: list[list[str]] = []
        for part in spellings(token):
            kept = [word for word in dict.fromkeys(part) if holds(_term(word, expand))][:MAX_SPELLINGS]
            if not kept:  # a part the catalog never says: this reading of the word finds nothing
                parts = []
                break
            parts.append(kept)
        if not parts:
            others = []
        elif len(parts) == 1:
            others = [_term(word, expand) for word in parts[0]]
        else:
            others = [" + ".join(f'"{w}"*' for w in words) for words in islice(product(*parts), MAX_PHRASES)]
        if others:
            term = f"({term} OR {others[0] if len(others) == 1 else '(' + ' OR '.join(others) + ')'})"
            widened = True
        terms.append(term)
    return terms if widened else None


def shared_terms(query: str, expand: Callable[[str], list[str] | None] | None = None) -> tuple[list[str], list[str]]:
    """For papers that share part of the query's Chinese (or other CJK) runs of three or more
    characters, typed without spaces: (those runs' bigrams as terms, each once; the query's other
    terms, which still must match). No bigrams: the query has no such run.

    >>> shared_terms("数据并行训练 gpu")
    (['"数据"', '"据并"', '"并行"', '"行训"', '"训练"'], ['"gpu"*'])
    """
    grams: list[str] = []
    others: list[str] = []
    for token in _searched_tokens(query):
        if _CJK_RUN.fullmatch(token) and len(token) > 2:
            grams += [f'"{g}"' for g in _bigrams(token) if f'"{g}"' not in grams]
        else:
            others.append(_term(token, expand))
    return grams, others


@dataclass(frozen=True)
class Sharing:
    """What a query with a CJK run of three or more characters also finds: the papers matching `any`
    (any of the run's bigrams, and every other term) that hold at least `need` of `grams`."""

    any: str
    grams: list[str]
    need: int


def sharing(query: str, expand: Callable[[str], list[str] | None] | None = None) -> Sharing | None:
    """The query's Sharing; None when it has no CJK run of three or more characters.

    >>> sharing("数据并行 gpu").any
    '"gpu"* AND ("数据" OR "据并" OR "并行")'
    """
    grams, others = shared_terms(query, expand)
    if not grams:
        return None
    return Sharing(all_of([*others, "(" + " OR ".join(grams) + ")"]), grams, (len(grams) + 1) // 2)
