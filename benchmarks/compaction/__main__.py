"""Run the compaction benchmark: `python -m benchmarks.compaction [--quick]`.

Replays real sessions turn by turn (before each model call) at budgets of 25%, 50%
and 75% of each session's tokens, for every method, and reports invalid histories,
over-budget views, tokens after, latency and early key-fact retention (see `facts.py`).
Then measures rule-based latency on 200-message sessions and validity on generated
histories. Prints tables and writes `benchmarks/results/compaction.json`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import time
import warnings
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

from benchmarks.compaction.facts import (
    FactIndex,
    claude_facts_per_message,
    message_text,
    tau_key_ids,
    view_text,
)
from benchmarks.compaction.generated import generate
from benchmarks.compaction.methods import Method, OursRules, Trim, all_methods
from langgraph_context.compaction import CLEARED_TOOL_RESULT, compact_messages
from langgraph_context.history import group_tool_rounds, repair_history, validate_history
from langgraph_context.tokens import count_tokens
from langgraph_context.transcripts import load_claude_code_session, load_openai_transcript

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "compaction.json"
BUDGETS = (0.25, 0.5, 0.75)


def data_dir() -> Path:
    """The shared data folder (`LGC_DATA_DIR` overrides)."""
    override = os.environ.get("LGC_DATA_DIR")
    return Path(override) if override else ROOT / ".." / "shared" / "data"


def with_ids(messages: list[BaseMessage]) -> list[BaseMessage]:
    """Give every message a unique id (langmem and the middleware track messages by id)."""
    return [m.model_copy(update={"id": f"m{i}"}) for i, m in enumerate(messages)]


def sample_points(messages: list[BaseMessage], k: int) -> list[int]:
    """Up to k replay points: indices of AI messages (a model call is about to happen)."""
    points = [i for i, m in enumerate(messages) if isinstance(m, AIMessage) and i >= 2]
    if len(points) <= k:
        return points
    step = len(points) / k
    return sorted({points[int(j * step)] for j in range(k)} | {points[-1]})


class Session:
    """A loaded session with its facts index."""

    def __init__(self, name: str, messages: list[BaseMessage], index: FactIndex, later: bool):
        self.name = name
        self.messages = messages
        self.index = index
        self.later = later
        self.tokens = count_tokens(messages)


def load_claude(folder: Path) -> list[Session]:
    """The Claude Code main sessions."""
    sessions = []
    for path in sorted(folder.glob("*.jsonl")):
        messages = with_ids(load_claude_code_session(path))
        texts = [message_text(m) for m in messages]
        index = FactIndex(texts, claude_facts_per_message(messages))
        sessions.append(Session(path.stem[:8], messages, index, later=True))
    return sessions


def load_tau(path: Path, limit: int | None) -> list[Session]:
    """The tau-bench airline trajectories."""
    items = json.loads(path.read_text())
    sessions = []
    for n, item in enumerate(items[:limit] if limit else items):
        messages = with_ids(load_openai_transcript(item))
        texts = [message_text(m) for m in messages]
        ids = tau_key_ids(item)
        introduced: list[set[str]] = [set() for _ in messages]
        for fact in ids:
            first = next((i for i, t in enumerate(texts) if fact in t), None)
            if first is not None:
                introduced[first].add(fact)
        sessions.append(Session(f"tau{n}", messages, FactIndex(texts, introduced), later=False))
    return sessions


def replay(
    sessions: list[Session], factories: list[Callable[[], Method]], points: int
) -> dict[str, Any]:
    """Replay every session at every budget for every method; aggregate the metrics."""
    rows: dict[tuple[str, float], dict[str, Any]] = {}
    for factory in factories:
        for fraction in BUDGETS:
            agg: dict[str, Any] = defaultdict(float)
            latencies: list[float] = []
            ratios: list[float] = []
            name = factory().name
            for session in sessions:
                budget = max(1, int(session.tokens * fraction))
                method = factory()
                method.reset(budget)
                for t in sample_points(session.messages, points):
                    history = session.messages[:t]
                    start = time.perf_counter()
                    try:
                        view = method.view(history)
                    except Exception as exc:  # a peer crashing counts, and we go on
                        agg["errors"] += 1
                        agg.setdefault("error_sample", f"{type(exc).__name__}: {exc}"[:200])
                        continue
                    latencies.append((time.perf_counter() - start) * 1000)
                    agg["points"] += 1
                    if validate_history(view):
                        agg["invalid"] += 1
                    tokens = count_tokens(view) if view else 0
                    if tokens > budget:
                        agg["over_budget"] += 1
                        if getattr(method, "last_note", ""):
                            agg["over_reported"] += 1
                    ratios.append(tokens / budget)
                    facts = session.index.early_key_facts(t, later=session.later)
                    if facts:
                        seen = view_text(view)
                        agg["facts"] += len(facts)
                        agg["retained"] += sum(1 for f in facts if f in seen)
            rows[(name, fraction)] = {
                "method": name,
                "budget": fraction,
                "points": int(agg["points"]),
                "errors": int(agg["errors"]),
                "error_sample": agg.get("error_sample", ""),
                "invalid": int(agg["invalid"]),
                "over_budget": int(agg["over_budget"]),
                "over_reported": int(agg["over_reported"]),
                "tokens_after_pct_budget_median": round(100 * statistics.median(ratios), 1)
                if ratios
                else None,
                "latency_ms_median": round(statistics.median(latencies), 2) if latencies else None,
                "latency_ms_p95": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 2)
                if latencies
                else None,
                "early_key_facts": int(agg["facts"]),
                "retention_pct": round(100 * agg["retained"] / agg["facts"], 1)
                if agg["facts"]
                else None,
            }
    return {"rows": list(rows.values())}


def latency_200(sessions: list[Session], repeats: int) -> list[dict[str, Any]]:
    """Median latency of rule-based compaction and trim_messages on 200-message sessions."""
    out = []
    for session in sessions:
        history = session.messages[:200]
        budget = count_tokens(history) // 2
        for method in (OursRules(), Trim()):
            method.reset(budget)
            method.view(history)  # warm the per-message token memo, as in a live thread
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                method.view(history)
                times.append((time.perf_counter() - start) * 1000)
            out.append(
                {
                    "session": session.name,
                    "method": method.name,
                    "messages": len(history),
                    "budget": budget,
                    "latency_ms_median": round(statistics.median(times), 2),
                }
            )
    return out


def minimal_valid_tokens(history: list[BaseMessage]) -> int:
    """Tokens of the smallest valid history we may return: system messages + last unit."""
    items = repair_history(history).messages
    units = group_tool_rounds(items)
    if not units:
        return 0
    start, end = units[-1]
    last = [
        m.model_copy(update={"content": CLEARED_TOOL_RESULT}) if isinstance(m, ToolMessage) else m
        for m in items[start:end]
    ]
    systems = [m for m in items[:start] if isinstance(m, SystemMessage)]
    return count_tokens([*systems, *last])


def generated(count: int, factories: list[Callable[[], Method]]) -> list[dict[str, Any]]:
    """Invalid outputs over generated messy histories, per method."""
    rows = []
    histories = [generate(seed) for seed in range(count)]
    inputs_invalid = sum(1 for h in histories if validate_history(h))
    for factory in factories:
        name = factory().name
        invalid = errors = silent_over = missed = 0
        for seed, history in enumerate(histories):
            tokens = count_tokens(history)
            budget = max(1, int(tokens * (0.2 + 0.6 * ((seed * 7919) % 100) / 100)))
            method = factory()
            method.reset(budget)
            try:
                if isinstance(method, OursRules):
                    result = compact_messages(history, max_tokens=budget)
                    view = result.messages
                    if result.stats.tokens_after > budget:
                        silent_over += 0 if result.stats.note else 1
                        missed += minimal_valid_tokens(history) <= budget
                else:
                    view = method.view(history)
            except Exception:
                errors += 1
                continue
            if validate_history(view):
                invalid += 1
        rows.append(
            {
                "method": name,
                "histories": count,
                "inputs_invalid": inputs_invalid,
                "invalid_outputs": invalid,
                "errors": errors,
                "silent_overflows": silent_over if name == OursRules.name else None,
                "over_budget_though_feasible": missed if name == OursRules.name else None,
            }
        )
    return rows


def table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """A plain-text table."""
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def main() -> None:
    """Run everything and report."""
    warnings.simplefilter("ignore")  # peers warn on every over-budget call
    logging.getLogger("langgraph_context").setLevel(logging.ERROR)  # over-budget notes are counted
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", type=int, default=24, help="replay points per Claude session")
    parser.add_argument("--tau-points", type=int, default=6, help="replay points per trajectory")
    parser.add_argument("--tau-limit", type=int, default=None, help="first N trajectories only")
    parser.add_argument("--generated", type=int, default=10_000, help="generated histories")
    parser.add_argument("--repeats", type=int, default=25, help="latency repeats")
    parser.add_argument("--quick", action="store_true", help="small run for a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.points, args.tau_points, args.tau_limit = 4, 2, 10
        args.generated, args.repeats = 200, 5
    folder = data_dir()
    claude_dir = folder / "claude-code-sessions"
    tau_file = folder / "tau-bench-airline" / "gpt-4o-airline.json"
    if not claude_dir.is_dir() or not tau_file.is_file():
        raise SystemExit(f"shared data not found under {folder} (set LGC_DATA_DIR)")
    factories = all_methods()
    report: dict[str, Any] = {"args": vars(args), "methods": [f().name for f in factories]}
    columns = [
        "method", "budget", "points", "errors", "invalid", "over_budget", "over_reported",
        "tokens_after_pct_budget_median", "latency_ms_median", "latency_ms_p95",
        "early_key_facts", "retention_pct",
    ]  # fmt: skip
    claude = load_claude(claude_dir)
    tau = load_tau(tau_file, args.tau_limit)
    for label, sessions, points in (
        ("claude-code-sessions", claude, args.points),
        ("tau-bench-airline", tau, args.tau_points),
    ):
        result = replay(sessions, factories, points)
        report[label] = result
        print(f"\n## {label}: {len(sessions)} sessions, replayed turn by turn")
        print(table(result["rows"], columns))
    report["latency_200"] = latency_200(claude, args.repeats)
    print("\n## latency on 200-message Claude Code sessions (budget 50%)")
    print(
        table(
            report["latency_200"], ["session", "method", "messages", "budget", "latency_ms_median"]
        )
    )
    report["generated"] = generated(args.generated, factories)
    print(f"\n## {args.generated} generated messy histories")
    print(
        table(
            report["generated"],
            [
                "method",
                "histories",
                "inputs_invalid",
                "invalid_outputs",
                "errors",
                "silent_overflows",
                "over_budget_though_feasible",
            ],
        )
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1, default=str))
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
