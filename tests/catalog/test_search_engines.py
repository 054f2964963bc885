"""Search gives the same pages on SQLite (FTS5) and PostgreSQL (tsvectors) for the same catalog."""

from __future__ import annotations

import pytest

from bench import synth
from bot.catalog import queries as catalog
from bot.catalog.papers import PaperInput
from tests.support import databases
from tests.support.postgres import binaries

pytestmark = [
    pytest.mark.slow,  # starts a PostgreSQL server when the run is on SQLite
    pytest.mark.skipif(binaries() is None, reason="PostgreSQL is not installed"),
]

#: Papers that the synthetic catalog has none of: accents, kana and hangul, a Chinese word that a
#: title's end and a summary's start would make if they were one text, digits in words.
ODD_PAPERS = [
    PaperInput(
        id="cafe-naive", title="Café: naïve Bayes at the coffee shop", summary="Über alles, façade.", tags=("nlp",)
    ),
    PaperInput(id="plain-cafe", title="Cafe networks", summary="A naive approach.", tags=("networking-dp",)),
    PaperInput(id="boundary", title="分布式并行计算", summary="算法的研究。", tags=("systems-tp",)),
    PaperInput(id="kana", title="トランスフォーマーの学習", summary="한국어 모델 학습 방법", tags=("training-dp",)),
    PaperInput(id="h100-fp8", title="FP8 on H100s", summary="GPT4 scale with 1e10 tokens.", tags=("hardware-fp8",)),
    PaperInput(id="tag-only", title="Untitled", summary="无", tags=("quantization-zero", "moe-serving")),
]

QUERIES = [
    # English: common, rare, prefixes of each length (2-3 characters: a prefix; longer: expanded words)
    "training",
    "model gpu",
    "zephyrine",
    "tr",
    "dis",
    "distrib",
    "sc",
    "quantiz",
    "fp8",
    "h100",
    "gpt4",
    "1e10",
    "PyTorch Megatron",
    # Chinese: two characters, longer words, a run typed without spaces (sharing), one character
    "训练",
    "并行",
    "模型 推理",
    "分布式",
    "长上下文",
    "蝴蝶效应",
    "数据并行训练",
    "强化学习模型",
    "计算法",
    "训",
    "fsdp 训练",
    "gpu 数据并行",
    # tags, accents, kana and hangul, nothing
    "parallelism",
    "moe serving",
    "cafe",
    "café",
    "naive",
    "uber",
    "学習",
    "모델",
    "nothingmatchesthis",
]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    papers = [
        PaperInput(id=p["id"], title=p["title"], summary=p["summary"], url=p["url"], tags=tuple(p["tags"]))
        for p in synth.catalog(1500, seed=3)
    ]
    papers[700:700] = ODD_PAPERS
    sqlite = catalog.open_store(tmp_path_factory.mktemp("sqlite") / "paperbot.db", seed=None)
    postgres = catalog.open_store(databases.server().new_database(), seed=None)
    for store in (sqlite, postgres):
        catalog.upsert(store, papers)
        for ref in ("kana", "7", "1200"):  # archived papers leave search on both
            paper = catalog.find(store, ref)
            assert paper is not None
            catalog.set_archived(store, paper, True)
    yield sqlite, postgres
    sqlite.close()
    postgres.close()


def _pages(store, query: str) -> list[tuple[list[str], bool]]:
    out = []
    for page in (1, 2):
        found = catalog.search(store, query, page)
        assert found is not None
        out.append(([p.id for p in found.papers], found.has_more))
    return out


@pytest.mark.parametrize("query", QUERIES)
def test_both_engines_give_the_same_first_pages(stores, query):
    sqlite, postgres = stores
    on_sqlite = _pages(sqlite, query)
    assert _pages(postgres, query) == on_sqlite


def test_the_comparison_compares_something(stores):
    """The queries above find papers in every group: titles, tags, the rest and the shared Chinese."""
    sqlite, _ = stores
    found = {q: catalog.search(sqlite, q) for q in ("training", "moe serving", "计算法", "café", "数据并行训练")}
    assert all(page is not None and page.papers for page in found.values())
    assert [p.id for p in found["café"].papers] == ["plain-cafe", "cafe-naive"]  # accents fold, newest first
    assert "boundary" in [p.id for p in found["计算法"].papers]  # shares 计算, not the whole word
    assert found["training"].has_more
