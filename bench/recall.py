"""Recall of search across English and Chinese, on the 32 seed papers of data/papers.yaml.

    python bench/recall.py          # the table for bench/README.md, and each query's top 3

Thirty queries written from the seed papers: twenty English ones whose answer says them only in
its Chinese summary (or Chinese title), ten Chinese ones whose answer says them only in its
English title. Each is searched as `search` does it, over a fresh copy of the seed catalog, once
with the dictionary turned off (FTS alone: exact words, and Chinese runs sharing half their
character pairs) and once as the default install searches; recall@3 is the share of a query's
expected papers among its first three results, averaged over the queries.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.catalog import bilingual  # noqa: E402
from bot.catalog import queries as catalog  # noqa: E402

#: English queries: each expected paper says them only in Chinese.
ENGLISH = {
    "pipeline": {"llama3-parallelism"},  # 流水线并行
    "fault tolerance": {"distributed-training-reading-list"},  # 容错
    "asynchronous recovery": {"ft-hsdp"},  # 异步恢复
    "memory optimization": {"distributed-training-reading-list"},  # 内存优化
    "frequency": {"chopper"},  # 频率开销
    "vision encoder": {"seed1-5-vl"},  # 视觉编码器
    "multimodal": {"seed1-5-vl"},  # 多模态
    "load balancing": {"llumnix"},  # 负载均衡
    "cache migration": {"llumnix"},  # 缓存迁移
    "atomic operations": {"tigon"},  # 原子操作
    "concurrent access": {"tigon"},  # 并发访问
    "continuous batching": {"uniprefill"},  # 连续批处理
    "autoregressive": {"ssd-saguaro"},  # 自回归
    "draft model": {"ssd-saguaro"},  # 草稿模型
    "hardware failure": {"decoupled-diloco"},  # 硬件故障
    "gradient": {"streaming-diloco"},  # 梯度
    "bandwidth": {"streaming-diloco"},  # 高带宽
    "alignment": {"real-rlhf"},  # 对齐训练
    "debugging": {"llama3-parallelism"},  # 调试方法
    "mixture of experts": {"x-moe"},  # 混合专家 (its title is Chinese)
}

#: Chinese queries: each expected paper says them only in its English title.
CHINESE = {
    "推测解码": {"ssd-saguaro"},  # Speculative Decoding (its summary says 投机解码)
    "神经网络": {"seq2seq"},  # Neural Networks
    "环形注意力": {"striped-attention"},  # Ring Attention
    "技术报告": {"seed1-5-vl"},  # Technical Report
    "重叠通信": {"eager-updates-diloco", "streaming-diloco"},  # Overlapped / Overlapping Communication
    "完全分片": {"pytorch-fsdp"},  # Fully Sharded (its summary says 全分片)
    "免费午餐": {"streaming-diloco"},  # Free Lunch
    "动态稀疏": {"uniprefill"},  # Dynamic Sparsification
    "训练障碍": {"billion-umlip-training"},  # Training Barrier (its summary says 训练壁垒)
    "向量检索": {"quake"},  # Vector Search (its summary says 向量搜索)
}

K = 3


def top(store, query: str) -> list[str]:
    found = catalog.search(store, query, size=K)
    return [p.id for p in found.papers] if found else []


def recall(store, queries: dict[str, set[str]]) -> tuple[float, dict[str, list[str]]]:
    tops = {q: top(store, q) for q in queries}
    share = [len(expected & set(tops[q])) / len(expected) for q, expected in queries.items()]
    return sum(share) / len(share), tops


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        store = catalog.open_store(Path(tmp) / "paperbot.db")
        rows = []
        details = {}
        for label, queries in (("English → Chinese (20)", ENGLISH), ("Chinese → English (10)", CHINESE)):
            with mock.patch.object(bilingual, "other_language", lambda word: []):
                alone, _ = recall(store, queries)
            widened, tops = recall(store, queries)
            rows.append((label, alone, widened))
            details.update(tops)
        every = {**ENGLISH, **CHINESE}
        with mock.patch.object(bilingual, "other_language", lambda word: []):
            alone, _ = recall(store, every)
        widened, _ = recall(store, every)
        rows.append(("all 30", alone, widened))
        store.close()
    print(f"| queries | FTS alone, recall@{K} | with the dictionary, recall@{K} |")
    print("| --- | ---: | ---: |")
    for label, a, w in rows:
        print(f"| {label} | {a:.2f} | {w:.2f} |")
    print()
    for q, expected in every.items():
        mark = "ok" if expected & set(details[q]) else "MISS"
        print(f"{mark:4} {q}: {', '.join(details[q]) or '-'}  (want {', '.join(sorted(expected))})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
