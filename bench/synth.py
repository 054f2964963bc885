"""A deterministic synthetic catalog for the benchmark.

    papers = synth.catalog(100_000, seed=7)      # list of dicts: id, title, summary, tags, url
    synth.write_jsonl(papers, path)
    words = synth.search_words(papers)           # the commonest/rarest words actually present

About 200 tags with a Zipf-like skew (the top tag is on roughly 40% of the
papers), 1-4 tags a paper; English titles drawn from a Zipf-weighted
vocabulary (some words on a large share of titles, some on a handful);
summaries that mix Chinese words (common ones such as 训练 模型 并行, and rare
ones) with English terms, the way the group's real catalog reads.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from itertools import accumulate
from pathlib import Path

# English title words, roughly in order of how common they are in ML-systems titles.
ENGLISH = """
training model models large language efficient distributed parallel scaling inference
learning deep neural attention transformer gpu memory data fast systems via towards
optimization sparse mixture experts llm llms serving pipeline communication scalable
adaptive framework networks graph low high throughput latency compression quantization
federated reinforcement diffusion vision multimodal retrieval long context benchmark
heterogeneous clusters hardware kernels compiler scheduling placement sharding tensor
gradient asynchronous decentralized robust fault tolerant elastic checkpointing recovery
offloading cpu nvme storage cache caching kv prefill decoding speculative batching
continuous dynamic static analysis evaluation study survey understanding rethinking
revisiting accelerating boosting improving unified general simple practical theory
convergence stochastic momentum adam optimizer precision mixed fp8 int4 bit pruning
distillation lora finetuning fine tuning instruction alignment preference reward policy
agents reasoning code generation search vector index database query sql stream streaming
edge mobile devices energy power carbon cost aware budget resource allocation multi tenant
cloud serverless datacenter network rdma nvlink collective allreduce topology routing
expert load balancing token tokens sequence length ring zero offload activation
recomputation overlap bandwidth interconnect chip wafer accelerator tpu fpga asic
sparsity structured unstructured block attention-free state space recurrent linear
hybrid hierarchical layered modular composable declarative automatic auto search-based
profiling tracing debugging monitoring observability reliability availability straggler
mitigation tail predictable deterministic reproducible verified formal safe secure
private privacy differential encrypted trusted confidential attestation
""".split()

# Rare words: each appears in only a few titles (the long tail of a real catalog).
#: The smallest catalog of the search-growth rows (its papers are the first of every larger one).
GROWTH_BASE = 1000

RARE_ENGLISH = """
zephyrine quokka halcyon obsidian marmoset vellichor tessellate quixotic lumisphere
petrichor saffronite borealis cinnabar fennecore gossamer heliotrope isthmus juniperus
kestrelnet labyrinthine meridian nautilus orrery palimpsest quasarflow rhizome sonder
tamarisk umbrage verdigris wyvern xylograph yarrowhash zeugma abacusnet bryophyte
""".split()

# Chinese words of ML-systems summaries, common first.
CHINESE = """
训练 模型 并行 数据 推理 通信 显存 调度 优化 分布式 计算 吞吐量 延迟 框架 系统 算法
性能 内存 加速 高效 大规模 参数 梯度 流水线 张量 专家 混合 稀疏 注意力 序列 长上下文
容错 检查点 恢复 集群 网络 带宽 拓扑 负载 均衡 压缩 量化 精度 低秩 微调 对齐 强化学习
生成 解码 预填充 缓存 批处理 服务 部署 异构 硬件 编译器 内核 算子 融合 分片 全归约
卸载 重计算 激活 存储 检索 向量 索引 数据库 查询 流式 边缘 设备 能耗 成本 资源
分配 多租户 云 无服务器 数据中心 拓展 扩展性 可靠性 可用性 监控 剖析 追踪 调试
实验 结果 表明 提出 方法 显著 提升 降低 实现 支持 基于 通过 针对 面向 问题 挑战
""".split()

# Rare Chinese words: a few summaries each.
RARE_CHINESE = """
蝴蝶效应 琥珀 青铜器 甲骨文 敦煌 昆仑 麒麟 饕餮 琉璃 翡翠 丝绸之路 兵马俑 楔形文字 珊瑚礁
""".split()

FILLERS_ZH = ["的", "在", "和", "与", "中", "上", "对", "将", "了", "并", "可"]
PUNCT_ZH = ["，", "，", "，", "。", "；", "、"]
ENGLISH_TERMS = [
    "GPU",
    "LLM",
    "FSDP",
    "MoE",
    "KV",
    "RDMA",
    "NVLink",
    "TPU",
    "CUDA",
    "PyTorch",
    "Megatron",
    "DeepSpeed",
    "ZeRO",
    "HSDP",
    "MI300X",
    "H100",
    "A100",
    "FP8",
]

TAG_AREAS = """
parallelism inference training systems compilers kernels networking storage scheduling
memory quantization sparsity moe serving rl data eval theory security hardware
""".split()
TAG_ASPECTS = """
dp tp pp sp ep zero fsdp offload async elastic fault-tolerance checkpoint overlap topology
kv-cache speculative batching prefill long-context attention survey benchmark energy
""".split()


def _zipf_weights(n: int, s: float) -> list[float]:
    return list(accumulate(1.0 / (rank + 1) ** s for rank in range(n)))


def tag_names(n: int = 200) -> list[str]:
    """`n` distinct tag names such as `parallelism-dp`, in a fixed order."""
    names = [f"{area}-{aspect}" for aspect in TAG_ASPECTS for area in TAG_AREAS]
    rng = random.Random(11)
    rng.shuffle(names)
    names = ["parallelism-dp"] + [t for t in names if t != "parallelism-dp"]
    return names[:n]


def catalog(n: int, seed: int = 7, n_tags: int = 200) -> list[dict]:
    """`n` papers, the same for the same seed; the first k of them are `catalog(k, seed)`."""
    tags = tag_names(n_tags)
    tag_cum = _zipf_weights(len(tags), 1.0)
    en_cum = _zipf_weights(len(ENGLISH), 0.9)
    zh_cum = _zipf_weights(len(CHINESE), 0.9)
    rng = random.Random(seed)  # one stream, drawn paper after paper: prefixes agree
    return [_paper(i, rng, tags, tag_cum, en_cum, zh_cum) for i in range(n)]


def _paper(i: int, rng: random.Random, tags, tag_cum, en_cum, zh_cum) -> dict:
    rand, choice, choices = rng.random, rng.choice, rng.choices
    words = list(dict.fromkeys(choices(ENGLISH, cum_weights=en_cum, k=rng.randint(4, 11))))
    if rand() < 0.004:
        words.insert(rng.randrange(len(words) + 1), choice(RARE_ENGLISH))
    title = " ".join(w.capitalize() if j == 0 or rand() < 0.5 else w for j, w in enumerate(words))
    if rand() < 0.3:
        title = f"{choice(ENGLISH_TERMS)}{rng.randint(1, 99)}: {title}"

    k = rng.randint(10, 40)
    zh_words = choices(CHINESE, cum_weights=zh_cum, k=k)
    parts: list[str] = []
    for j, r in enumerate(choices(_KINDS, k=k)):
        if r == "zh":
            parts.append(zh_words[j])
        elif r == "term":
            parts.append(f" {choice(ENGLISH_TERMS)} ")
        elif r == "en":
            parts.append(f" {choices(ENGLISH, cum_weights=en_cum)[0]} ")
        elif r == "filler":
            parts.append(choice(FILLERS_ZH))
        elif j:
            parts.append(choice(PUNCT_ZH))
    if rand() < 0.004:
        parts.insert(rng.randrange(len(parts) + 1), choice(RARE_CHINESE))
    summary = _SPACES.sub(" ", "".join(parts)).strip(" ，；、") + "。"

    chosen = list(dict.fromkeys(choices(tags, cum_weights=tag_cum, k=rng.randint(1, 4))))
    slug = "-".join(_WORD.findall(title.lower().split(":")[-1]))[:28].strip("-") or "paper"
    return {
        "id": f"{slug}-{i:x}",
        "title": title,
        "summary": summary,
        "tags": chosen,
        "url": f"https://arxiv.org/abs/{2000 + i // 10000}.{i % 100000:05d}",
    }


_KINDS = ["zh"] * 12 + ["term"] * 3 + ["en"] * 2 + ["filler"] * 2 + ["punct"] * 2
_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"[a-z0-9]+")


def write_jsonl(papers: list[dict], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for p in papers:
            f.write(json.dumps(p, ensure_ascii=False))
            f.write("\n")


def _matcher(word: str):
    """Does a paper match `word` the way the search does (English: a word prefix; Chinese: a substring)?"""
    if word.isascii():
        rx = re.compile(r"(?<![a-z0-9])" + re.escape(word.lower()))
        return lambda p: bool(
            rx.search(p["title"].lower()) or rx.search(p["summary"].lower()) or any(rx.search(t) for t in p["tags"])
        )
    return lambda p: word in p["summary"] or word in p["title"]


def _count(papers: list[dict], words: list[str]) -> Counter:
    """For each word, in how many papers it occurs (substring, for the rare words of the tail)."""
    rx = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))
    found: Counter = Counter()
    for p in papers:
        found.update(set(rx.findall(p["title"].lower() + " " + p["summary"])))
    return found


def search_words(papers: list[dict]) -> dict[str, dict]:
    """The search queries of the benchmark, chosen from the data: label -> {query, papers_matching}."""
    sample = papers[:: max(1, len(papers) // 3000)]  # a sample is enough to rank the common words

    def df(word: str) -> int:
        match = _matcher(word)
        return sum(1 for p in sample if match(p))

    en = ENGLISH[:15]
    zh = [w for w in CHINESE if len(w) == 2][:15]
    common_en, second_en = sorted(en, key=lambda w: (-df(w), w))[:2]
    common_zh = min(zh, key=lambda w: (-df(w), w))
    rare = _count(papers, RARE_ENGLISH + RARE_CHINESE)
    early = _count(papers[:GROWTH_BASE], RARE_ENGLISH + RARE_CHINESE)

    def pick_rare(words: list[str]) -> str:
        # A word of the long tail that the smallest catalog of the growth rows has too, so that
        # every size answers with a (short) list and the rows compare the same work.
        present = [w for w in words if early[w]]
        return min(present or words, key=lambda w: (rare[w] if present else -rare[w], w))

    rare_en = pick_rare(RARE_ENGLISH)
    rare_zh = pick_rare(RARE_CHINESE)

    def row(*words: str) -> dict:
        matchers = [_matcher(w) for w in words]
        return {"query": " ".join(words), "papers_matching": sum(1 for p in papers if all(m(p) for m in matchers))}

    return {
        "common English": row(common_en),
        "rare English": row(rare_en),
        "common Chinese": row(common_zh),
        "rare Chinese": row(rare_zh),
        "multi-word": row(common_en, second_en, common_zh),
    }


def match_counts(papers: list[dict], words: dict[str, dict], sizes: list[int]) -> dict[str, dict[int, int]]:
    """For each query of `search_words`, how many of the first `size` papers it matches."""
    out: dict[str, dict[int, int]] = {}
    for label, w in words.items():
        matchers = [_matcher(x) for x in w["query"].split()]
        out[label] = {size: sum(1 for p in papers[:size] if all(m(p) for m in matchers)) for size in sizes}
    return out
