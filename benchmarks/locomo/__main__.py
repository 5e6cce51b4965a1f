"""Evidence recall at a token budget on LoCoMo, plus context build latency.

Run from the repository root:  .venv/bin/python -m benchmarks.locomo

For every question with evidence (categories 1-4), each turn of its conversation is a
candidate packet ("Speaker: text", plus the shared image caption); a method ranks the
turns, they are packed greedily (skipping any that overflow) up to the budget in
cl100k tokens, and we report the share of evidence turns kept, averaged over questions.
Only the ranking differs between methods. Embeddings are used when the optional
MiniLM package is installed (`pip install -e '.[bench]'`), otherwise reported n/a;
`--embedding-model DIR` measures another sentence-transformers model saved on disk.

Then, at 1,000 tokens with defaults, per question category (1-4): the selection alone,
and `ContextBuilder.build_result` from the conversation as messages and as documents
(`benchmarks/locomo/build.py`, which also runs on its own with budget use and latency),
and with MiniLM the builder's rerank stage with and without a reranker
(`benchmarks/locomo/rerank.py`).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks._progress import Steps
from benchmarks.locomo.build import build_recall
from benchmarks.locomo.data import Conversation, load_all
from benchmarks.locomo.embeddings import load_embeddings
from benchmarks.locomo.rerank import hook_figures, two_stage_figures
from langgraph_context.context import (
    ContextBuilder,
    ContextConfig,
    ContextPacket,
    pack_packets,
    relevance_scores,
)
from langgraph_context.tokens import default_counter

BUDGETS = (500, 1000, 2000, 4000)
LATENCY_SIZES = (100, 1_000, 10_000)
RESULTS = Path(__file__).resolve().parents[1] / "results" / "locomo.json"

Ranker = Callable[[Sequence[ContextPacket], str], list[int]]


def _pack(order: Sequence[int], packets: Sequence[ContextPacket], budget: int) -> set[str]:
    used, kept = 0, set()
    for i in order:
        size = packets[i].token_count or 0
        if used + size <= budget:
            used += size
            kept.add(str(packets[i].source))
    return kept


def rank_recency(packets: Sequence[ContextPacket], query: str) -> list[int]:
    """What a sliding window keeps: newest first."""
    return list(range(len(packets) - 1, -1, -1))


def rank_overlap(packets: Sequence[ContextPacket], query: str) -> list[int]:
    """The seed's score: Jaccard overlap of lower-cased whitespace words."""
    words = set(query.lower().split())
    scores = []
    for p in packets:
        other = set(p.content.lower().split())
        scores.append(len(words & other) / len(words | other) if words | other else 0.0)
    return sorted(range(len(packets)), key=lambda i: (-scores[i], -i))


def rank_plain_bm25(packets: Sequence[ContextPacket], query: str) -> list[int]:
    """Library BM25 (rank-bm25 Okapi) over lower-cased word tokens, nothing else."""
    from rank_bm25 import BM25Okapi

    corpus = [re.findall(r"\w+", p.content.lower()) or [""] for p in packets]
    scores = BM25Okapi(corpus).get_scores(re.findall(r"\w+", query.lower()))
    return sorted(range(len(packets)), key=lambda i: (-scores[i], -i))


PER_CONVERSATION_BUDGET = 1000


def recall_table(
    conversations: Sequence[Conversation], methods: dict[str, Ranker | None], embeddings: object
) -> tuple[dict[str, dict[int, float]], dict[str, dict[str, float]]]:
    """Mean evidence recall per method and budget, and per conversation at 1,000 tokens."""
    config = ContextConfig()
    table: dict[str, dict[int, list[float]]] = {m: {b: [] for b in BUDGETS} for m in methods}
    per_conv: dict[str, dict[str, float]] = {m: {} for m in methods}
    steps = Steps("questions, every method", sum(len(c.questions) for c in conversations))
    for conv in conversations:
        start = {m: len(table[m][PER_CONVERSATION_BUDGET]) for m in methods}
        for q in conv.questions:
            for name, ranker in methods.items():
                if ranker is None:
                    # select_packets = relevance_scores + pack_packets; score once per question.
                    relevance = relevance_scores(
                        conv.turns,
                        q.text,
                        config=config,
                        embeddings=embeddings if name.startswith("ours +") else None,  # type: ignore[arg-type]
                    )
                    for budget in BUDGETS:
                        chosen = pack_packets(
                            conv.turns, relevance, max_selected_tokens=budget, config=config
                        )
                        kept = {str(p.source) for p in chosen.packets}
                        table[name][budget].append(len(kept & q.evidence) / len(q.evidence))
                    continue
                order = ranker(conv.turns, q.text)
                for budget in BUDGETS:
                    kept = _pack(order, conv.turns, budget)
                    table[name][budget].append(len(kept & q.evidence) / len(q.evidence))
            steps.advance()
        for m in methods:
            scores = table[m][PER_CONVERSATION_BUDGET][start[m] :]
            per_conv[m][conv.name] = statistics.fmean(scores) if scores else 0.0
    means = {m: {b: statistics.fmean(v) for b, v in row.items()} for m, row in table.items()}
    return means, per_conv


def selection_by_category(conversations: Sequence[Conversation]) -> dict[int, float]:
    """Evidence kept by the selection alone at 1,000 tokens, per question category."""
    config = ContextConfig()
    rows: dict[int, list[float]] = {}
    for conv in conversations:
        for q in conv.questions:
            relevance = relevance_scores(conv.turns, q.text, config=config)
            chosen = pack_packets(
                conv.turns, relevance, max_selected_tokens=PER_CONVERSATION_BUDGET, config=config
            )
            kept = {str(p.source) for p in chosen.packets}
            rows.setdefault(q.category, []).append(len(kept & q.evidence) / len(q.evidence))
    return {c: statistics.fmean(v) for c, v in sorted(rows.items())}


def _categories(row: dict[int, float]) -> str:
    return " ".join(f"c{c} {v:.3f}" for c, v in row.items())


def latency(conversations: Sequence[Conversation]) -> dict[int, float]:
    turns = [t for conv in conversations for t in conv.turns]
    questions = [q.text for conv in conversations for q in conv.questions]
    builder = ContextBuilder(config=ContextConfig(max_tokens=2000))
    out: dict[int, float] = {}
    for size in LATENCY_SIZES:
        packets = [turns[i % len(turns)] for i in range(size)]
        runs = 30 if size <= 1000 else 7
        builder.build_result(questions[0], custom_packets=packets)  # warm token counts
        times = []
        for r in range(runs):
            started = time.perf_counter()
            builder.build_result(questions[(r * 37) % len(questions)], custom_packets=packets)
            times.append((time.perf_counter() - started) * 1000)
        out[size] = statistics.median(times)
    return out


def counted(conversations: Sequence[Conversation]) -> list[Conversation]:
    """The conversations with every turn's cl100k token count filled in."""
    counter = default_counter()
    return [
        Conversation(
            c.name, c.speakers, tuple(t.with_token_count(counter) for t in c.turns), c.questions
        )
        for c in conversations
    ]


def _rerank(conversations: Sequence[Conversation], embeddings: Any, name: str) -> dict[str, Any]:
    """The rerank stage's figures (`benchmarks/locomo/rerank.py`), printed.

    The rows keep their MiniLM names (the default model) whatever model `name` is.
    """
    if embeddings is None:
        return {}
    hook = hook_figures(conversations, embeddings)
    print(f"\nRerank stage ({name} as second stage), build() from documents at 1,000 tokens")
    for path, row in hook.items():
        print(
            f"{path:<8} reranker: recall {row['recall']:.3f}, tokens {row['tokens_used']:.0f}, "
            f"median {row['median_ms']:.1f} ms"
        )
    stages = two_stage_figures(conversations, embeddings)
    print("Selection alone at 1,000 tokens: first stage, or reranked from a 2x pool")
    for method, row in stages.items():
        per = " ".join(f"{c} {v:.3f}" for c, v in row.items() if c != "all")
        print(f"{method:<16} {row['all']:.3f}  ({per})")
    return {"hook": hook, "two_stage": stages}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.locomo")
    parser.add_argument(
        "--embedding-model",
        metavar="DIR",
        help="a sentence-transformers model on disk to measure instead of packaged MiniLM "
        "(default: $LGC_EMBEDDING_MODEL)",
    )
    args = parser.parse_args(argv)
    conversations = counted(load_all())
    if not conversations:
        print("LoCoMo data not found (set LGC_DATA_DIR); nothing to measure")
        return 1
    embeddings, embeddings_name = load_embeddings(args.embedding_model)
    methods: dict[str, Ranker | None] = {
        "recency": rank_recency,
        "seed word overlap": rank_overlap,
        "plain BM25": rank_plain_bm25,
        "ours (no embeddings)": None,
    }
    if embeddings is not None:
        methods[f"ours + {embeddings_name}"] = None
    started = time.perf_counter()
    table, per_conv = recall_table(conversations, methods, embeddings)
    elapsed = time.perf_counter() - started
    questions = sum(len(c.questions) for c in conversations)
    print(
        f"Evidence recall@budget (cl100k tokens), {questions} questions, "
        f"{len(conversations)} conversations ({elapsed:.0f} s)"
    )
    print(f"{'method':<28}" + "".join(f"{b:>8}" for b in BUDGETS))
    for name, row in table.items():
        print(f"{name:<28}" + "".join(f"{row[b]:>8.3f}" for b in BUDGETS))
    if embeddings is None:
        print(
            f"{'ours + embeddings':<28}"
            + "".join(f"{'n/a':>8}" for _ in BUDGETS)
            + f"   ({embeddings_name})"
        )
    names = [c.name for c in conversations]
    print(f"\nPer conversation at {PER_CONVERSATION_BUDGET} tokens")
    print(f"{'method':<28}" + "".join(f"{n:>8}" for n in names))
    for name, row in per_conv.items():
        print(f"{name:<28}" + "".join(f"{row[n]:>8.3f}" for n in names))
    by_category = selection_by_category(conversations)
    print(f"\nAt {PER_CONVERSATION_BUDGET} tokens, defaults, by question category (1-4)")
    print("selection (ours, no embeddings): " + _categories(by_category))
    built = build_recall(conversations)
    for path, row in built.items():
        print(
            f"build() from {path:<9} {row['recall']:.3f}  {_categories(row['by_category'])}  "
            f"(tokens used {row['tokens_used']:.0f})"
        )
    reranked = _rerank(conversations, embeddings, embeddings_name)
    timings = latency(conversations)
    print("\nContextBuilder.build_result latency, median (max_tokens=2000, counts warm)")
    for size, ms in timings.items():
        print(f"{size:>8} packets {ms:>9.1f} ms")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "questions": questions,
                "conversations": [c.name for c in conversations],
                "recall": {
                    m: {str(b): round(v, 4) for b, v in r.items()} for m, r in table.items()
                },
                "recall_per_conversation_at_1000": {
                    m: {c: round(v, 4) for c, v in r.items()} for m, r in per_conv.items()
                },
                "embeddings": embeddings_name,
                "rerank_at_1000": reranked,
                "latency_ms": {str(k): round(v, 2) for k, v in timings.items()},
                "selection_by_category_at_1000": {
                    str(c): round(v, 4) for c, v in by_category.items()
                },
                "build_at_1000": {
                    path: {
                        "recall": round(row["recall"], 4),
                        "by_category": {str(c): round(v, 4) for c, v in row["by_category"].items()},
                        "tokens_used": round(row["tokens_used"], 1),
                    }
                    for path, row in built.items()
                },
            },
            indent=2,
        )
    )
    print(f"\nwrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
