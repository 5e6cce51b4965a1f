"""Evidence kept by `ContextBuilder.build_result` itself, per input path and category.

The selection figure (`benchmarks.locomo`) ranks and packs turns alone; this one runs
the whole build at 1,000 tokens with default settings and counts an evidence turn as
kept when its packet is in the final text. Two input paths:

* messages: the conversation as `conversation_history` (one `HumanMessage` per turn,
  named for its speaker, stamped with its session time in `additional_kwargs`);
* documents: the turns as `custom_packets` of type `document` (untrusted, fenced).

Also reports how the budget was spent (tokens used, evidence tokens, policy, fences and
labels) and build latency at 1k and 10k document packets.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import HumanMessage

from benchmarks.locomo.data import Conversation, Question
from langgraph_context.context import ContextBuilder, ContextConfig, ContextPacket
from langgraph_context.tokens import default_counter

BUDGET = 1000
PATHS = ("messages", "documents")


def as_messages(conv: Conversation) -> list[HumanMessage]:
    """One named `HumanMessage` per turn, id = dialogue id, stamped with its session time."""
    out = []
    for turn in conv.turns:
        speaker = str(turn.metadata["speaker"])
        text = turn.content.removeprefix(f"{speaker}: ")
        stamp = turn.timestamp
        kwargs: dict[str, Any] = {}
        if isinstance(stamp, float):
            when = datetime.fromtimestamp(stamp, tz=UTC)
            kwargs["timestamp"] = when.isoformat()
        out.append(HumanMessage(text, name=speaker, id=str(turn.source), additional_kwargs=kwargs))
    return out


def as_documents(conv: Conversation) -> list[ContextPacket]:
    """The turns as untrusted `document` packets (what a retriever would hand over)."""
    return [replace(t, type="document") for t in conv.turns]


def _kept(result: Any, evidence: frozenset[str]) -> float:
    kept = {str(p.source) for p in result.selected}
    return len(kept & evidence) / len(evidence)


def build_recall(
    conversations: Sequence[Conversation], builder: ContextBuilder | None = None
) -> dict[str, Any]:
    """Mean evidence kept per path, overall and per category; budget use per path."""
    builder = builder or ContextBuilder(config=ContextConfig(max_tokens=BUDGET))
    counter = default_counter()
    scores: dict[str, dict[int, list[float]]] = {p: defaultdict(list) for p in PATHS}
    used: dict[str, list[int]] = {p: [] for p in PATHS}
    content: dict[str, list[int]] = {p: [] for p in PATHS}
    for conv in conversations:
        inputs = {"messages": as_messages(conv), "documents": as_documents(conv)}
        for q in conv.questions:
            for path in PATHS:
                result = _build(builder, path, inputs[path], q)
                scores[path][q.category].append(_kept(result, q.evidence))
                used[path].append(result.tokens)
                content[path].append(sum(counter(p.content) for p in result.selected))
    out: dict[str, Any] = {}
    for path in PATHS:
        every = [s for row in scores[path].values() for s in row]
        out[path] = {
            "recall": statistics.fmean(every),
            "by_category": {c: statistics.fmean(v) for c, v in sorted(scores[path].items())},
            "tokens_used": statistics.fmean(used[path]),
            "content_tokens": statistics.fmean(content[path]),
        }
    return out


def _build(builder: ContextBuilder, path: str, items: Any, q: Question) -> Any:
    if path == "messages":
        return builder.build_result(q.text, conversation_history=items)
    return builder.build_result(q.text, custom_packets=items)


def build_latency(conversations: Sequence[Conversation]) -> dict[int, float]:
    """Median build_result time over document packets (1k and 10k), counts warm."""
    turns = [t for c in conversations for t in as_documents(c)]
    questions = [q.text for c in conversations for q in c.questions]
    builder = ContextBuilder(config=ContextConfig(max_tokens=BUDGET))
    out: dict[int, float] = {}
    for size in (1_000, 10_000):
        packets = [turns[i % len(turns)] for i in range(size)]
        builder.build_result(questions[0], custom_packets=packets)
        times = []
        for r in range(15 if size <= 1000 else 5):
            started = time.perf_counter()
            builder.build_result(questions[(r * 37) % len(questions)], custom_packets=packets)
            times.append((time.perf_counter() - started) * 1000)
        out[size] = statistics.median(times)
    return out


def overhead_share(max_tokens: int = BUDGET, item_tokens: int = 25) -> float:
    """Share of a budget taken by policy, fences and labels when filled with small items."""
    counter = default_counter()
    words = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "mu")
    packets = []
    for i in range(200):
        text = " ".join(words[(i + j) % len(words)] for j in range(40))
        while counter(text) > item_tokens:
            text = text.rsplit(" ", 1)[0]
        packets.append(ContextPacket(text, type="document", source=f"doc-{i}"))
    builder = ContextBuilder(config=ContextConfig(max_tokens=max_tokens, output_instructions=""))
    result = builder.build_result("q", custom_packets=packets)
    payload = sum(counter(p.content) for p in result.selected)
    skeleton = counter("[Task]\nq")
    return (result.tokens - payload - skeleton) / max_tokens


def main() -> None:
    """Print the figures."""
    from benchmarks.locomo.data import load_all

    conversations = load_all()
    figures = build_recall(conversations)
    for path, row in figures.items():
        cats = " ".join(f"c{c}={v:.3f}" for c, v in row["by_category"].items())
        print(
            f"build from {path:<9} {row['recall']:.3f}  {cats}  "
            f"used {row['tokens_used']:.0f}, content {row['content_tokens']:.0f}"
        )
    print(f"policy+fences+labels share (25-token items): {overhead_share():.3f}")
    for size, ms in build_latency(conversations).items():
        print(f"build latency {size:>6} packets: {ms:.1f} ms")


if __name__ == "__main__":
    main()
