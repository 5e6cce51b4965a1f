"""The builder's rerank stage on LoCoMo: `ContextBuilder(reranker=fn)` with and without.

No cross-encoder ships its weights in a package we can install offline, so the
second stage is the MiniLM embedding model (cosine of the query and each packet).
Two figures, at 1,000 tokens with defaults, from the turns as documents:

* the hook as it is: the reranker sees the packets selection kept and returns them
  best first (none dropped), so evidence recall cannot change; we report it with the
  tokens used and the build time the stage adds;
* what a second stage could add with more candidates: selection at twice the budget,
  reordered by MiniLM alone or by the mean of MiniLM (scaled by its best) and the
  first-stage relevance, then packed into the budget.

Run: `python -m benchmarks.locomo.rerank` (needs the optional `bench` extra).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings

from benchmarks.locomo.build import as_documents
from benchmarks.locomo.data import Conversation
from langgraph_context.context import (
    ContextBuilder,
    ContextConfig,
    ContextPacket,
    pack_packets,
    relevance_scores,
)
from langgraph_context.context.relevance import semantic_query

BUDGET = 1000
POOL = 2


def _cosines(embeddings: Embeddings, query: str, packets: Sequence[ContextPacket]) -> list[float]:
    vectors = embeddings.embed_documents([p.content for p in packets])
    q = embeddings.embed_query(semantic_query(query, packets))
    return [sum(a * b for a, b in zip(q, v, strict=True)) for v in vectors]  # unit vectors


def minilm_reranker(embeddings: Embeddings) -> Any:
    """A reranker: the packets it is given, by cosine similarity to the query, none dropped."""

    def rerank(query: str, packets: Sequence[ContextPacket]) -> list[ContextPacket]:
        scores = _cosines(embeddings, query, packets)
        return [packets[i] for i in sorted(range(len(packets)), key=lambda i: -scores[i])]

    return rerank


def _recall(kept: set[str], evidence: frozenset[str]) -> float:
    return len(kept & evidence) / len(evidence)


def hook_figures(conversations: Sequence[Conversation], embeddings: Embeddings) -> dict[str, Any]:
    """build() from documents without and with the MiniLM reranker: recall, tokens, time."""
    builders = {
        "without": ContextBuilder(config=ContextConfig(max_tokens=BUDGET)),
        "with": ContextBuilder(
            config=ContextConfig(max_tokens=BUDGET), reranker=minilm_reranker(embeddings)
        ),
    }
    rows: dict[str, dict[str, list[float]]] = {
        k: {"recall": [], "tokens": [], "ms": []} for k in builders
    }
    for conv in conversations:
        docs = as_documents(conv)
        embeddings.embed_documents([d.content for d in docs])  # warm: time the stage, not MiniLM
        for q in conv.questions:
            embeddings.embed_query(semantic_query(q.text, docs))
            for name, builder in builders.items():
                started = time.perf_counter()
                result = builder.build_result(q.text, custom_packets=docs)
                rows[name]["ms"].append((time.perf_counter() - started) * 1000)
                rows[name]["recall"].append(
                    _recall({str(p.source) for p in result.selected}, q.evidence)
                )
                rows[name]["tokens"].append(result.tokens)
    return {
        name: {
            "recall": statistics.fmean(row["recall"]),
            "tokens_used": statistics.fmean(row["tokens"]),
            "median_ms": statistics.median(row["ms"]),
        }
        for name, row in rows.items()
    }


def two_stage_figures(
    conversations: Sequence[Conversation], embeddings: Embeddings
) -> dict[str, dict[str, float]]:
    """Selection alone at 1,000 tokens: first stage only, and reranked from a 2x pool."""
    config = ContextConfig()
    scores: dict[str, dict[str, list[float]]] = {
        k: {} for k in ("first stage", "MiniLM rerank", "mean rerank")
    }
    for conv in conversations:
        for q in conv.questions:
            relevance = relevance_scores(conv.turns, q.text, config=config)
            first = pack_packets(conv.turns, relevance, max_selected_tokens=BUDGET, config=config)
            pool = pack_packets(
                conv.turns, relevance, max_selected_tokens=BUDGET * POOL, config=config
            )
            idx = [s.index for s in pool.selected]
            cos = _cosines(embeddings, q.text, [conv.turns[i] for i in idx])
            top = max(cos, default=0.0) or 1.0
            mixed = [0.5 * c / top + 0.5 * relevance[i] for c, i in zip(cos, idx, strict=True)]
            kept = {
                "first stage": {str(p.source) for p in first.packets},
                "MiniLM rerank": _packed(conv, idx, cos),
                "mean rerank": _packed(conv, idx, mixed),
            }
            for name, sources in kept.items():
                scores[name].setdefault(conv.name, []).append(_recall(sources, q.evidence))
    out: dict[str, dict[str, float]] = {}
    for name, per_conv in scores.items():
        every = [s for row in per_conv.values() for s in row]
        out[name] = {"all": statistics.fmean(every)}
        out[name].update({c: statistics.fmean(v) for c, v in per_conv.items()})
    return out


def _packed(conv: Conversation, idx: list[int], scores: list[float]) -> set[str]:
    used, kept = 0, set()
    for j in sorted(range(len(idx)), key=lambda j: -scores[j]):
        size = conv.turns[idx[j]].token_count or 0
        if used + size <= BUDGET:
            used += size
            kept.add(str(conv.turns[idx[j]].source))
    return kept


def main() -> None:
    """Print both figures."""
    from benchmarks.locomo.__main__ import counted
    from benchmarks.locomo.data import load_all
    from benchmarks.locomo.embeddings import load_embeddings

    embeddings, name = load_embeddings()
    if embeddings is None:
        print(f"no reranker to measure: {name}")
        return
    conversations = counted(load_all())
    for path, row in hook_figures(conversations, embeddings).items():
        print(
            f"build() from documents {path:<7} reranker: recall {row['recall']:.4f}, "
            f"tokens {row['tokens_used']:.0f}, median {row['median_ms']:.1f} ms"
        )
    for method, row in two_stage_figures(conversations, embeddings).items():
        per = " ".join(f"{c} {v:.3f}" for c, v in row.items() if c != "all")
        print(f"selection, {method:<14} {row['all']:.4f}  ({per})")


if __name__ == "__main__":
    main()
