"""Replay real agent sessions and measure the tokens sent at every model call.

Run: `.venv/bin/python -m benchmarks.turns [--window 32000]`

Each Claude Code session in the shared data is replayed as the agent lived it: before
every assistant turn, the history so far is what the model is sent.

* without compaction: the whole history, every call;
* with compaction (replace mode, as `create_compaction_node` does it): when the history
  passes `trigger` x `window` tokens, it is compacted by `compact_messages` (rules only,
  no LLM) to `target` x `window`, and the agent carries on from the compacted history.

Reported per session: model calls, compactions, peak and total tokens sent (the bill),
and whether every view stayed valid. The per-call series are written to the JSON for
plotting (`langgraph-context bench` draws them).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from benchmarks._common import data_dir, write_result
from benchmarks._progress import track
from langgraph_context import compact_messages
from langgraph_context.messages import validate_history
from langgraph_context.tokens import default_counter
from langgraph_context.transcripts import load_claude_code_session


def replay(
    messages: list[BaseMessage], *, window: int, trigger: float, target: float
) -> dict[str, Any]:
    """Replay one session; return per-call token series with and without compaction."""
    counter = default_counter()
    full: list[int] = []
    compacted: list[int] = []
    current: list[BaseMessage] = []
    compactions = 0
    invalid = 0
    seen = 0
    for i, message in enumerate(messages):
        if isinstance(message, AIMessage) and i > 0:
            new = messages[seen:i]
            seen = i
            current = [*current, *new]
            if counter.count_messages(current) > trigger * window:
                result = compact_messages(current, target_tokens=int(target * window))
                current = result.messages
                compactions += 1
            if validate_history(current):
                invalid += 1
            full.append(counter.count_messages(messages[:i]))
            compacted.append(counter.count_messages(current))
    return {
        "calls": len(full),
        "compactions": compactions,
        "invalid_views": invalid,
        "full": full,
        "compacted": compacted,
    }


def main(argv: list[str] | None = None) -> int:
    """Replay every session, print the table, write benchmarks/results/turns.json."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.turns")
    parser.add_argument("--window", type=int, default=32_000, help="context window (tokens)")
    parser.add_argument("--trigger", type=float, default=0.8, help="compact above this share")
    parser.add_argument("--target", type=float, default=0.5, help="compact down to this share")
    parser.add_argument("--quick", action="store_true", help="first session only")
    args = parser.parse_args(argv)
    folder = data_dir() / "claude-code-sessions"
    sessions = sorted(folder.glob("*.jsonl"))
    if not sessions:
        print(f"no sessions under {folder} (set LGC_DATA_DIR)", file=sys.stderr)
        return 1
    if args.quick:
        sessions = sessions[:1]
    results: dict[str, Any] = {}
    print(
        f"Tokens sent per model call, window {args.window:,}, compact at "
        f"{args.trigger:.0%} down to {args.target:.0%} (rules only, no LLM)"
    )
    print(
        f"{'session':10} {'calls':>6} {'compactions':>11} {'peak full':>10} "
        f"{'peak ours':>10} {'total full':>12} {'total ours':>12} {'saved':>6} {'invalid':>7}"
    )
    for path in track(sessions, "sessions replayed"):
        messages = load_claude_code_session(Path(path))
        r = replay(messages, window=args.window, trigger=args.trigger, target=args.target)
        total_full, total_ours = sum(r["full"]), sum(r["compacted"])
        saved = 1 - total_ours / total_full if total_full else 0.0
        name = path.stem[:8]
        print(
            f"{name:10} {r['calls']:>6} {r['compactions']:>11} {max(r['full']):>10,} "
            f"{max(r['compacted']):>10,} {total_full:>12,} {total_ours:>12,} {saved:>6.0%} "
            f"{r['invalid_views']:>7}"
        )
        results[name] = {**r, "total_full": total_full, "total_compacted": total_ours}
    out = write_result(
        "turns",
        {
            "window": args.window,
            "trigger": args.trigger,
            "target": args.target,
            "sessions": results,
        },
    )
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
