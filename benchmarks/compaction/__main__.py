"""Run the compaction benchmark: `python -m benchmarks.compaction [--quick]`.

Replays real sessions turn by turn (the history before each model call, see
`replay.py`) at budgets of 25%, 50% and 75% of each session's tokens, for every method,
and reports invalid histories, over-budget views, tokens after, latency and early
key-fact retention (see `facts.py`): over every measured point, and over the points
where the history exceeds the budget (compaction needed) only.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage, ToolMessage

from benchmarks._progress import track
from benchmarks.compaction.facts import (
    FactIndex,
    claude_facts_per_message,
    message_text,
    tau_key_ids,
)
from benchmarks.compaction.generated import generate
from benchmarks.compaction.methods import (
    Method,
    OursNode,
    OursNodeRules,
    OursRules,
    Trim,
    all_methods,
)
from benchmarks.compaction.replay import BUDGETS, OVERFLOW_BINS, Session, replay
from langgraph_context.compaction import compact_messages
from langgraph_context.compaction.strategies import CLEARED_TOOL_RESULT
from langgraph_context.messages import group_tool_rounds, repair_history, validate_history
from langgraph_context.tokens import count_tokens
from langgraph_context.transcripts import load_claude_code_session, load_openai_transcript

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "compaction.json"


def data_dir() -> Path:
    """The shared data folder (`LGC_DATA_DIR` overrides)."""
    override = os.environ.get("LGC_DATA_DIR")
    return Path(override) if override else ROOT / ".." / "shared" / "data"


def with_ids(messages: list[BaseMessage]) -> list[BaseMessage]:
    """Give every message a unique id (langmem and the middleware track messages by id)."""
    return [m.model_copy(update={"id": f"m{i}"}) for i, m in enumerate(messages)]


def load_claude(folder: Path, *, keep_claude_summary: bool = False) -> list[Session]:
    """The Claude Code main sessions, without Claude Code's own compaction summary.

    Every main session was compacted once by Claude Code: the log holds a user event
    flagged `isCompactSummary` (an LLM-written handoff of ~3,500 tokens) after which the
    live agent saw only that summary and what followed. Left in, it would hand every
    method a free LLM summary of the early history in the middle of the input, and the
    facts it repeats would stop counting as early. So the replayed history is the
    uncompacted session (every method compacts it itself) unless `keep_claude_summary`.
    """
    sessions = []
    for path in sorted(folder.glob("*.jsonl")):
        events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        if not keep_claude_summary:
            events = [e for e in events if not e.get("isCompactSummary")]
        messages = with_ids(load_claude_code_session(events))
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
        for seed, history in enumerate(track(histories, f"generated histories ({factory().name})")):
            tokens = count_tokens(history)
            budget = max(1, int(tokens * (0.2 + 0.6 * ((seed * 7919) % 100) / 100)))
            method = factory()
            method.reset(budget)
            try:
                if isinstance(method, OursRules):
                    result = compact_messages(history, target_tokens=budget)
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


def floor_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Retention of the node with rules only beside the node with the summarizer, per budget."""
    by = {(r["method"], r["budget"]): r for r in rows}
    out = []
    for budget in BUDGETS:
        rules = by.get((OursNodeRules.name, budget), {})
        model = by.get((OursNode.name, budget), {})
        out.append(
            {
                "budget": budget,
                "rules_only_pct": rules.get("retention_pct"),
                "with_model_pct": model.get("retention_pct"),
                "needed_rules_only_pct": rules.get("needed_retention_pct"),
                "needed_with_model_pct": model.get("needed_retention_pct"),
            }
        )
    return out


# column -> printed header: the tables stay under ~110 characters
SHORT = {
    "errors": "err", "invalid": "inv", "over_budget": "over", "over_reported": "over rep",
    "tokens_after_pct_budget_median": "size %", "latency_ms_median": "ms p50",
    "latency_ms_p95": "ms p95", "early_key_facts": "facts", "retention_pct": "kept %",
    "needed_points": "needed", "needed_points_with_facts": "w/ facts",
    "needed_tokens_after_pct_budget_median": "size %", "needed_early_key_facts": "facts",
    "needed_retention_pct": "needed %", "inputs_invalid": "bad in", "invalid_outputs": "inv out",
    "silent_overflows": "silent over", "over_budget_though_feasible": "over feasible",
}  # fmt: skip


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and 0 < value < 1:
        return f"{value:.0%}"  # a budget fraction
    return str(value)


def table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """A plain-text table with short headers; nothing measured is `-`."""
    cells = [[_text(r.get(c)) for c in columns] for r in rows]
    heads = [SHORT.get(c, c) for c in columns]
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True))]
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
    parser.add_argument(
        "--keep-claude-summary",
        action="store_true",
        help="keep Claude Code's own compaction summary in the replayed sessions",
    )
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
    needed_columns = [
        "method", "budget", "needed_points", "needed_points_with_facts",
        "needed_tokens_after_pct_budget_median", "needed_early_key_facts",
        "needed_retention_pct", "retention_pct",
    ]  # fmt: skip
    started = time.perf_counter()
    seconds: dict[str, float] = {}
    report["seconds"] = seconds
    claude = load_claude(claude_dir, keep_claude_summary=args.keep_claude_summary)
    tau = load_tau(tau_file, args.tau_limit)
    seconds["load"] = round(time.perf_counter() - started, 1)
    for label, sessions, points in (
        ("claude-code-sessions", claude, args.points),
        ("tau-bench-airline", tau, args.tau_points),
    ):
        stage = time.perf_counter()
        result = replay(sessions, factories, points)
        seconds[label] = round(time.perf_counter() - stage, 1)
        report[label] = result
        measured = "every model call" if points <= 0 else f"up to {points + 1} model calls"
        print(f"\n## {label}: {len(sessions)} sessions, replayed turn by turn")
        print(f"all measured points ({measured} per session)")
        print(table(result["rows"], columns))
        print(
            "\ncompaction needed only (history before the call exceeds the budget); "
            "needed points per budget: "
            + ", ".join(
                f"{r['budget']:.0%}: {r['needed_points']} of {r['points']}"
                for r in result["rows"][: len(BUDGETS)]
            )
        )
        print(table(result["rows"], needed_columns))
        print("\nthe node's retention: rules only vs with the summarizer (facts kept)")
        print(table(floor_rows(result["rows"]), list(floor_rows(result["rows"])[0])))
        print("\nretention at needed points by history tokens / budget (early key facts)")
        print(
            table(
                [
                    {
                        "method": r["method"],
                        "budget": r["budget"],
                        **{
                            label: "-"
                            if cell["retention_pct"] is None
                            else f"{cell['retention_pct']} ({cell['early_key_facts']})"
                            for label, cell in r["needed_by_overflow"].items()
                        },
                    }
                    for r in result["rows"]
                ],
                ["method", "budget", *OVERFLOW_BINS],
            )
        )
    stage = time.perf_counter()
    report["latency_200"] = latency_200(claude, args.repeats)
    seconds["latency_200"] = round(time.perf_counter() - stage, 1)
    print("\n## latency on 200-message Claude Code sessions (budget 50%)")
    print(
        table(
            report["latency_200"], ["session", "method", "messages", "budget", "latency_ms_median"]
        )
    )
    stage = time.perf_counter()
    report["generated"] = generated(args.generated, factories)
    seconds["generated"] = round(time.perf_counter() - stage, 1)
    seconds["total"] = round(time.perf_counter() - started, 1)
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
    print(f"\nseconds: {seconds}")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
