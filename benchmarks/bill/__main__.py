"""The bill benchmark: `python -m benchmarks.bill [--quick]`.

Replays sessions (the shared Claude Code sessions, the longest tau-bench airline
trajectories, generated tool-heavy threads) through every configuration (`configs.py`)
with a scripted model, and for every model call records the input tokens and the
tokens repeating the previous call's prefix (`meter.py`). Prices them under each table
of `prices.json`, plus the summarizer's calls at the uncached input and output rates.

Per session and configuration: model calls, tokens sent, cache-hit share, bill per
price table, compaction events (the configuration's own: clearings, summaries, our
compaction count) and history rewrites (calls where a non-system message the model saw
in the previous call is gone or changed), both per 100 model calls; calls over the
window; early facts present in the probe call's input; pinned plan and constraint
present in the last call's input (generated threads). A turn is one model call.

Each row also prices the Anthropic table under Anthropic's own cache rules
(`anthropic-breakpoints`, see `meter.py`): a prefix is read only where a request
marks a breakpoint, so what sits after the stable part decides the bill there.

Writes `benchmarks/results/bill.json` and `benchmarks/results/bill.png` (cumulative
headline bill vs model call, per configuration).
"""

from __future__ import annotations

import argparse
import itertools
import logging
import time
from collections import defaultdict
from typing import Any

from benchmarks._common import RESULTS, data_dir, write_result
from benchmarks._progress import track
from benchmarks.bill.configs import Config, configurations
from benchmarks.bill.generated import generated_session
from benchmarks.bill.meter import load_prices, price, price_breakpoints
from benchmarks.bill.replay import SUMMARY_INSTRUCTIONS, SUMMARY_TOKENS, run_session
from benchmarks.bill.sessions import Session, load_claude, load_tau

WINDOWS = {"claude-code": 16_000, "tau": 4_000, "generated": 16_000}
GENERATED_CALLS = (50, 200, 1000)
HEADLINE = "headline"
ANTHROPIC = "anthropic-claude-sonnet-4"
BREAKPOINTS = "anthropic-breakpoints"  # the Anthropic table under its breakpoint cache


def load_sessions(*, quick: bool, tau: int) -> list[Session]:
    """The sessions of a full run, or the quick subset (one cut Claude session, 3 tau, 50/200)."""
    data = data_dir()
    if not (data / "claude-code-sessions").is_dir():
        msg = f"no shared data under {data}: set LGC_DATA_DIR to the shared data folder"
        raise SystemExit(msg)
    claude = load_claude(
        data / "claude-code-sessions",
        window=WINDOWS["claude-code"],
        limit_messages=120 if quick else None,
    )
    sessions = claude[:1] if quick else claude
    sessions += load_tau(
        data / "tau-bench-airline" / "gpt-4o-airline.json",
        window=WINDOWS["tau"],
        count=3 if quick else tau,
    )
    sizes = GENERATED_CALLS[:2] if quick else GENERATED_CALLS
    sessions += [generated_session(n, seed=n, window=WINDOWS["generated"]) for n in sizes]
    return sessions


def _compactions(config: Config, log: Any, state: dict[str, Any]) -> int:
    """The configuration's own compaction events (see the module docstring)."""
    if config.name.startswith("ours"):
        return int((state.get("compaction") or {}).get("count", 0))
    if config.summarizes:
        # LangChain's middleware can summarize without calling its model (a history too
        # long to trim returns a fixed sentence): count its rewrites of the history.
        return log.rewrites
    return log.cleared_events


def measure(session: Session, config: Config, tables: dict[str, Any]) -> dict[str, Any]:
    """Replay one session through one configuration; return its row."""
    started = time.perf_counter()
    row: dict[str, Any] = {"session": session.name, "group": session.group, "config": config.name}
    try:
        log, summarizer, state = run_session(
            session,
            config.build,
            skip=config.native_tools,
            unbound_summarizes=config.unbound_summarizes,
            metered_summaries=config.metered_summaries,
        )
    except Exception as exc:  # a configuration crashing is a result; the run goes on
        row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        return row
    calls = len(log.tokens)
    sent, cached = sum(log.tokens), sum(log.cached)

    summary_cached = sum(log.summary_cached)  # only where the summary calls are metered

    def summaries(table: dict[str, float]) -> float:
        return (
            (summarizer.tokens_in - summary_cached) * table["input"]
            + summary_cached * table["cached_input"]
            + summarizer.tokens_out * table["output"]
        ) / 1e6

    bills = {}
    for key, table in tables.items():
        agent = sum(price(n, c, table) for n, c in zip(log.tokens, log.cached, strict=True))
        bills[key] = agent + summaries(table)
    anthropic = tables[ANTHROPIC]
    agent = sum(
        price_breakpoints(n, r, w, anthropic)
        for n, r, w in zip(log.tokens, log.breakpoint_read, log.breakpoint_written, strict=True)
    )
    bills[BREAKPOINTS] = agent + summaries(anthropic)
    compactions = _compactions(config, log, state)
    probe = log.texts.get(session.probe, "")
    row.update(
        {
            "window": session.window,
            "calls": calls,
            "tokens_sent": sent,
            "tokens_cached": cached,
            "cache_hit_share": round(cached / sent, 4) if sent else None,
            "breakpoint_hit_share": round(sum(log.breakpoint_read) / sent, 4) if sent else None,
            "max_input_tokens": max(log.tokens, default=0),
            "over_window_calls": log.over_window,
            "bill": {k: round(v, 6) for k, v in bills.items()},
            "summarizer": {
                "calls": summarizer.calls,
                "tokens_in": summarizer.tokens_in,
                "tokens_out": summarizer.tokens_out,
                # the summary calls' cached share, where they go through the agent's cache
                "cached_share": (
                    round(summary_cached / sum(log.summary_tokens), 4)
                    if log.summary_tokens
                    else None
                ),
            },
            "compactions": compactions,
            "compactions_per_100_calls": round(100 * compactions / calls, 1) if calls else None,
            "rewrites": log.rewrites,
            "rewrites_per_100_calls": round(100 * log.rewrites / calls, 1) if calls else None,
            "early_facts": len(session.facts),
            "early_facts_at_probe": sum(f in probe for f in session.facts),
            "pinned": len(session.pinned),
            "pinned_at_last_call": sum(p in log.last_text for p in session.pinned),
            "script_exhausted_calls": log.exhausted,
            "seconds": round(time.perf_counter() - started, 1),
            "per_call": {
                "tokens": log.tokens,
                "cached": log.cached,
                "breakpoint_read": log.breakpoint_read,
                "breakpoint_written": log.breakpoint_written,
            },
        }
    )
    return row


def totals(rows: list[dict[str, Any]], group: str) -> list[dict[str, Any]]:
    """Sum the rows of one session group (or `all`) per configuration."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        if "error" in row or group not in ("all", row["group"]):
            continue
        agg = out.setdefault(
            row["config"],
            defaultdict(
                int, {"session": f"[{group}]", "config": row["config"], "bill": defaultdict(float)}
            ),
        )
        for key in (
            "calls",
            "tokens_sent",
            "tokens_cached",
            "compactions",
            "rewrites",
            "over_window_calls",
            "early_facts",
            "early_facts_at_probe",
            "pinned",
            "pinned_at_last_call",
        ):
            agg[key] += row[key]
        for key, value in row["bill"].items():
            agg["bill"][key] += value
    result = []
    for agg in out.values():
        agg["cache_hit_share"] = (
            round(agg["tokens_cached"] / agg["tokens_sent"], 4) if agg["tokens_sent"] else None
        )
        agg["compactions_per_100_calls"] = round(100 * agg["compactions"] / agg["calls"], 1)
        agg["rewrites_per_100_calls"] = round(100 * agg["rewrites"] / agg["calls"], 1)
        agg["bill"] = {k: round(v, 6) for k, v in agg["bill"].items()}
        result.append(dict(agg))
    return result


def print_table(title: str, rows: list[dict[str, Any]], keys: list[str]) -> None:
    """Print one table: a row per configuration, bills per price table, x bare (headline)."""
    print(f"\n{title}")
    heads = [k.replace("anthropic-", "").replace("openai-", "") for k in keys]
    print(
        f"{'configuration':<27}{'calls':>6}{'sent k':>9}{'hit %':>7}"
        + "".join(f"{h[:13]:>14}" for h in heads)
        + f"{'x bare':>7}{'comp':>6}{'/100':>6}{'rewr/100':>9}{'>win':>6}{'facts':>7}{'pinned':>7}"
    )
    bare = next(
        (r["bill"][HEADLINE] for r in rows if r["config"].startswith("bare") and "bill" in r), None
    )
    for row in rows:
        if "error" in row:
            print(f"{row['config']:<27} error: {row['error'][:90]}")
            continue
        ratio = f"{row['bill'][HEADLINE] / bare:.2f}" if bare else "-"
        facts = f"{row['early_facts_at_probe']}/{row['early_facts']}" if row["early_facts"] else "-"
        pinned = f"{row['pinned_at_last_call']}/{row['pinned']}" if row["pinned"] else "-"
        print(
            f"{row['config']:<27}{row['calls']:>6}{row['tokens_sent'] / 1000:>9.0f}"
            f"{100 * row['cache_hit_share']:>7.1f}"
            + "".join(f"{row['bill'][k]:>14.4f}" for k in keys)
            + f"{ratio:>7}{row['compactions']:>6}{row['compactions_per_100_calls']:>6}"
            f"{row['rewrites_per_100_calls']:>9}{row['over_window_calls']:>6}{facts:>7}{pinned:>7}"
        )


def plot(rows: list[dict[str, Any]], sessions: list[Session], table: dict[str, float]) -> str:
    """Cumulative headline bill vs model call, one panel per session (tau summed); a PNG."""
    import matplotlib as mpl

    mpl.use("Agg")
    import matplotlib.pyplot as plt

    panels = [s.name for s in sessions if s.group != "tau"] + ["tau (all, calls concatenated)"]
    cols = 3
    fig, axes = plt.subplots(
        -(-len(panels) // cols), cols, figsize=(15, 4 * -(-len(panels) // cols))
    )
    flat = list(axes.flat)
    configs = list(dict.fromkeys(r["config"] for r in rows))
    for ax, panel in zip(flat, panels, strict=False):
        for config in configs:
            picked = [
                r
                for r in rows
                if r["config"] == config
                and "per_call" in r
                and (r["session"] == panel or (panel.startswith("tau") and r["group"] == "tau"))
            ]
            tokens = list(itertools.chain.from_iterable(r["per_call"]["tokens"] for r in picked))
            cached = list(itertools.chain.from_iterable(r["per_call"]["cached"] for r in picked))
            bill = list(
                itertools.accumulate(
                    price(n, c, table) for n, c in zip(tokens, cached, strict=True)
                )
            )
            if bill:
                ax.plot(range(1, len(bill) + 1), bill, label=config)
        ax.set_title(panel)
        ax.set_xlabel("model call")
        ax.set_ylabel("cumulative bill ($1/M input, 10% cached)")
    for ax in flat[len(panels) :]:
        ax.axis("off")
    flat[0].legend(fontsize=8)
    fig.tight_layout()
    path = RESULTS / "bill.png"
    RESULTS.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    return str(path.relative_to(RESULTS.parents[1]))


def main(argv: list[str] | None = None) -> None:
    """Run every session through every configuration; print tables; write JSON and PNG."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bill")
    parser.add_argument("--quick", action="store_true", help="a small subset, for CI smoke use")
    parser.add_argument(
        "--tau", type=int, default=20, help="longest tau-bench trajectories to replay"
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma-separated parts of configuration names to run (bare always runs)",
    )
    args = parser.parse_args(argv)
    logging.getLogger("llmslim").setLevel(logging.ERROR)
    prices = load_prices()
    tables = prices["tables"]
    keys = [*tables, BREAKPOINTS]
    sessions = load_sessions(quick=args.quick, tau=args.tau)
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    configs = [
        c
        for c in configurations()
        if not wanted or c.name.startswith("bare") or any(w in c.name for w in wanted)
    ]
    started = time.perf_counter()
    pairs = [(s, c) for s in sessions for c in configs]
    rows = [measure(s, c, tables) for s, c in track(pairs, "sessions x configurations")]
    elapsed = time.perf_counter() - started
    print(
        f"Bill: {len(sessions)} sessions x {len(configs)} configurations in {elapsed:.0f} s; "
        f"prices read on {prices['read_on']} (USD per 1M tokens)."
    )
    print(
        "Summarizer for every summarizing configuration: a stand-in that returns the first "
        f"{SUMMARY_TOKENS} tokens of the text it is asked to summarize."
    )
    for session in sessions:
        if session.group != "tau":
            print_table(
                f"{session.name} (window {session.window}, {session.calls} calls)",
                [r for r in rows if r["session"] == session.name],
                keys,
            )
    groups = {}
    for group in ("claude-code", "tau", "generated", "all"):
        groups[group] = totals(rows, group)
        print_table(f"total: {group}", groups[group], keys)
    figure = plot(rows, sessions, tables[HEADLINE])
    path = write_result(
        "bill",
        {
            "quick": args.quick,
            "prices": prices,
            "windows": WINDOWS,
            "summarizer": {
                "kind": f"stand-in: first {SUMMARY_TOKENS} tokens of the text to summarize",
                "instructions": SUMMARY_INSTRUCTIONS,
            },
            "definitions": __doc__,
            "configurations": [c.name for c in configs],
            "rows": rows,
            "totals": groups,
            "figure": figure,
        },
    )
    print(f"\nwrote {path.relative_to(RESULTS.parents[1])} and {figure}")


if __name__ == "__main__":
    main()
