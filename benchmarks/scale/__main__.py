"""No cliffs: build cost, recount cost and per-turn middleware cost as inputs grow.

Run: `.venv/bin/python -m benchmarks.scale [--quick]`

1. Build curve: `ContextBuilder.build_result` over 1k..100k distinct packets (half of
   them untrusted, so they are fenced and sanitized), timed cold (the first build of
   new packets: fresh retrieval results, new tool output) and warm (the second build of
   the same packets, what every turn of a long session pays), in CPU time of this
   process (the machine is shared; wall time swings with the neighbours' load). The floor is a plain
   `rank_bm25.BM25Okapi` over the same texts plus a greedy pack under the same budget.
   Each point is the median over `--rounds` passes (3) of a median of >= 5 builds.
   Targets: at most 1.5x the floor, and no step of the curve steeper than linear by
   more than 20% (`slope` = time ratio / size ratio, target <= 1.2); the floor's own
   slope is printed beside ours (cache effects of a growing working set hit both), and
   so is the growth exponent of the whole curve (log-log least-squares fit).
2. Recount: a 1,000-message history counted cold, then recounted after one append by
   the warm counter, for the same message objects, for deep copies (what a checkpoint
   load hands back) and for OpenAI-style dicts. Target: under 5% of cold. Also checks
   that a counted history is freed once dropped (the memo holds no message objects).
3. Middleware: `create_context_middleware` + `create_compaction_middleware` inside
   `langchain.agents.create_agent` with a scripted model, over a growing session;
   the per-turn overhead is the agent's time minus a bare agent's on the same input.
   Target: the last turns cost no more than the first ones (history stays bounded).
"""

from __future__ import annotations

import argparse
import copy
import functools
import gc
import itertools
import math
import random
import statistics
import time
import weakref
from collections.abc import Callable
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, convert_to_openai_messages
from rank_bm25 import BM25Okapi

from benchmarks._common import write_result
from benchmarks.tokens.__main__ import synthetic_history
from langgraph_context.agents import CompactionMiddleware, ContextMiddleware
from langgraph_context.context import ContextBuilder, ContextConfig
from langgraph_context.packet import ContextPacket
from langgraph_context.testing import ScriptedChatModel
from langgraph_context.tokens import TiktokenCounter, default_counter

QUERY = "which deploy step failed on the staging cluster after the config change"
BUDGET = 4_000
SIZES = [1_000, 3_000, 10_000, 30_000, 40_000, 100_000]
QUICK_SIZES = [1_000, 3_000, 10_000]
MAX_X_FLOOR = 1.5
MAX_SLOPE = 1.2


def _vocabulary(rng: random.Random, n: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(n)]


def make_packets(n: int, *, seed: int = 0) -> list[ContextPacket]:
    """`n` distinct packets of 20-60 words, every other one untrusted tool output."""
    rng = random.Random(seed)
    words = [*_vocabulary(rng, 5_000), *QUERY.split()]
    packets = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(20, 60)))
        kind = "tool" if i % 2 else "note"
        trusted = None if i % 2 else True
        packets.append(ContextPacket(f"{text} #{i}", type=kind, source=f"p{i}", trusted=trusted))
    return packets


def cpu_ms(fn: Callable[[], Any], *, repeat: int = 5) -> float:
    """Median CPU time of `fn` in ms (the process's own time: steadier than wall time
    on a shared machine)."""
    times = []
    for _ in range(repeat):
        started = time.process_time()
        fn()
        times.append((time.process_time() - started) * 1000)
    return statistics.median(times)


def _repeats(n: int) -> int:
    """Builds per point: at least 5, more for small sizes (a 1k build takes ~10 ms, and
    a few ms of a neighbour's cache traffic would otherwise move the first steps)."""
    return max(5, 50_000 // n)


def floor_ms(packets: list[ContextPacket], counts: list[int]) -> float:
    """One rank-bm25 + greedy pack over the packets (token counts given)."""

    def run() -> None:
        bm25 = BM25Okapi([p.content.lower().split() for p in packets])
        scores = bm25.get_scores(QUERY.lower().split())
        order = sorted(range(len(packets)), key=lambda i: -scores[i])
        left, chosen = BUDGET, []
        for i in order:
            if counts[i] <= left:
                chosen.append(i)
                left -= counts[i]

    return cpu_ms(run, repeat=_repeats(len(packets)))


def _build_point(n: int, counter: Callable[[str], int], seed: int) -> dict[str, float]:
    packets = make_packets(n, seed=seed)  # new texts each point: the first build is cold
    counts = [counter(p.content) for p in packets]
    builder = ContextBuilder(config=ContextConfig(max_tokens=BUDGET))
    build = functools.partial(builder.build_result, QUERY, custom_packets=packets)
    cold = cpu_ms(build, repeat=1)
    warm = cpu_ms(build, repeat=_repeats(n))
    return {"cold_ms": cold, "warm_ms": warm, "floor_ms": floor_ms(packets, counts)}


def build_curve(sizes: list[int], *, rounds: int = 3) -> list[dict[str, Any]]:
    """Warm build time and floor per size: the median over `rounds` passes of the curve
    (each point itself a median of at least 5 builds), so one noisy neighbour moves no
    step."""
    counter = default_counter()
    passes = [
        [_build_point(n, counter, seed=1_000_003 * r + n) for n in sizes] for r in range(rounds)
    ]
    rows: list[dict[str, Any]] = []
    for i, n in enumerate(sizes):
        row: dict[str, Any] = {"packets": n, "rounds": rounds}
        for key in ("cold_ms", "warm_ms", "floor_ms"):
            row[key] = statistics.median(p[i][key] for p in passes)
        row["x_floor"] = row["warm_ms"] / row["floor_ms"]
        row["cold_x_floor"] = row["cold_ms"] / row["floor_ms"]
        rows.append(row)
    for before, row in itertools.pairwise(rows):
        grew = row["packets"] / before["packets"]
        row["slope"] = row["warm_ms"] / before["warm_ms"] / grew
        row["floor_slope"] = row["floor_ms"] / before["floor_ms"] / grew
    return rows


def growth_exponent(curve: list[dict[str, Any]], key: str) -> float:
    """The least-squares slope of log(time) on log(packets): 1.0 is linear growth.

    One figure for the whole curve, steadier than any single step (a step moves with
    a neighbour's cache traffic; the fit weighs every point).
    """
    xs = [math.log(row["packets"]) for row in curve]
    ys = [math.log(row[key]) for row in curve]
    return statistics.linear_regression(xs, ys).slope


def _ratio(history: list[Any], reloaded: Callable[[], list[Any]], extra: Any) -> dict[str, float]:
    cold = cpu_ms(lambda: TiktokenCounter().count_messages(history))
    warm = TiktokenCounter()
    warm.count_messages(history)
    copies = [[*reloaded(), extra] for _ in range(11)]
    times = []
    for appended in copies:
        started = time.process_time()
        warm.count_messages(appended)
        times.append((time.process_time() - started) * 1000)
    recount = statistics.median(times)
    return {"cold_ms": cold, "recount_ms": recount, "ratio": recount / cold}


def recounts() -> dict[str, dict[str, float]]:
    """Recount-after-append cost as a share of a cold count, three ways."""
    history = synthetic_history(1000)
    extra = HumanMessage("one more question about the flight order")
    dicts = convert_to_openai_messages(history)
    return {
        "in-memory": _ratio(history, lambda: history, extra),
        "reloaded": _ratio(history, lambda: copy.deepcopy(history), extra),
        "openai dicts": _ratio(
            dicts, lambda: copy.deepcopy(dicts), {"role": "user", "content": "more"}
        ),
    }


def retained_messages() -> int:
    """How many counted messages stay alive once their history is dropped."""
    counter = TiktokenCounter()
    history = synthetic_history(300, seed=7)
    counter.count_messages(history)
    refs = [weakref.ref(m) for m in history]
    del history
    gc.collect()
    return sum(r() is not None for r in refs)


TURN_WORDS = ["the", "build", "failed", "again", "on", "step", "four", "because", "cache", "key"]


def _turn_text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(TURN_WORDS) for _ in range(n))


def middleware_turns(turns: int) -> list[float]:
    """Per-turn overhead (ms) of the two middlewares over a growing session."""
    rng = random.Random(3)
    replies = [AIMessage(_turn_text(rng, 80)) for _ in range(turns)]
    agent = create_agent(
        ScriptedChatModel(responses=replies),
        tools=[],
        middleware=[
            CompactionMiddleware(trigger_tokens=3_000),
            ContextMiddleware(),
        ],
    )
    bare = create_agent(ScriptedChatModel(responses=replies), tools=[])
    messages: list[BaseMessage] = []
    overhead = []
    for turn in range(turns):
        messages = [*messages, HumanMessage(_turn_text(rng, 40), id=f"h{turn}")]
        started = time.perf_counter()
        out = agent.invoke({"messages": messages})
        with_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        bare.invoke({"messages": messages})
        bare_ms = (time.perf_counter() - started) * 1000
        overhead.append(with_ms - bare_ms)
        messages = out["messages"]
    return overhead


def _print_curve(curve: list[dict[str, Any]]) -> None:
    rounds = curve[0]["rounds"]
    print(f"Build curve (CPU ms, median of {rounds} rounds x >= 5 warm build_result calls;")
    print("  floor = rank-bm25 + greedy pack of the same packets under the same budget;")
    print("  slope = time ratio / size ratio of the step ending at this row, 1.00 = linear)")
    head = ("packets", "cold ms", "warm ms", "floor ms", "x floor", "slope", "floor slope")
    print("  {:>8} {:>9} {:>9} {:>9} {:>8} {:>6} {:>12}".format(*head))
    for row in curve:
        slope = f"{row['slope']:.2f}" if "slope" in row else "-"
        floor_slope = f"{row['floor_slope']:.2f}" if "floor_slope" in row else "-"
        print(
            f"  {row['packets']:>8,} {row['cold_ms']:>9.0f} {row['warm_ms']:>9.0f}"
            f" {row['floor_ms']:>9.0f} {row['x_floor']:>7.2f}x {slope:>6} {floor_slope:>12}"
        )
    last = curve[-1]
    verdict = "met" if last["x_floor"] <= MAX_X_FLOOR else "NOT met"
    print(
        f"  at {last['packets']:,} packets: {last['x_floor']:.2f}x the bm25 floor"
        f" (target <= {MAX_X_FLOOR}x): {verdict}"
    )
    steps = [row for row in curve if "slope" in row]
    if steps:
        worst = max(steps, key=lambda row: row["slope"])
        start = curve[curve.index(worst) - 1]["packets"]
        verdict = "met" if worst["slope"] <= MAX_SLOPE else "NOT met"
        print(
            f"  steepest step: {start:,} -> {worst['packets']:,} at {worst['slope']:.2f}x linear"
            f" (floor {worst['floor_slope']:.2f}x; target <= {MAX_SLOPE}x): {verdict}"
        )
        ours, floor = growth_exponent(curve, "warm_ms"), growth_exponent(curve, "floor_ms")
        cold = growth_exponent(curve, "cold_ms")
        print(
            "  growth exponent over the curve (log-log fit, 1.00 = linear):"
            f" warm {ours:.2f}, cold {cold:.2f} (floor {floor:.2f})"
        )
    print(
        "  cold (first) builds, x floor: "
        + ", ".join(f"{row['packets']:,}: {row['cold_x_floor']:.2f}x" for row in curve)
    )


def _print_recounts(ratios: dict[str, dict[str, float]], retained: int) -> None:
    print("Recount after one append, 1,001 messages (CPU ms; target < 5% of cold)")
    for name, r in ratios.items():
        print(
            f"  {name:<13} cold {r['cold_ms']:7.1f} ms"
            f"  recount {r['recount_ms']:6.2f} ms  {r['ratio']:6.1%}"
        )
    print(f"  messages kept alive by the memo after the history is dropped: {retained}")


def _print_turns(turns: list[float]) -> None:
    tenth = max(1, len(turns) // 10)
    first, last = statistics.median(turns[:tenth]), statistics.median(turns[-tenth:])
    print(f"Middleware overhead per turn over {len(turns)} turns (context + compaction)")
    print(f"  median of the first {tenth} turns {first:.1f} ms, the last {tenth}: {last:.1f} ms")


def main(argv: list[str] | None = None) -> None:
    """Run the three measurements, print a table, write benchmarks/results/scale.json."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale")
    parser.add_argument("--quick", action="store_true", help="sizes up to 10k, 40 turns")
    parser.add_argument("--sizes", type=int, nargs="*", help="packet counts for the curve")
    parser.add_argument("--turns", type=int, help="middleware session length")
    parser.add_argument("--rounds", type=int, help="passes over the build curve (median)")
    parser.add_argument("--only", choices=["build", "recount", "middleware"], action="append")
    args = parser.parse_args(argv)
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    turn_count = args.turns or (40 if args.quick else 200)
    only = set(args.only or ["build", "recount", "middleware"])
    rounds = args.rounds or (1 if args.quick else 3)
    curve = build_curve(sizes, rounds=rounds) if "build" in only else []
    ratios = recounts() if "recount" in only else {}
    retained = retained_messages() if "recount" in only else 0
    turns = middleware_turns(turn_count) if "middleware" in only else []
    if curve:
        _print_curve(curve)
    if ratios:
        _print_recounts(ratios, retained)
    if turns:
        _print_turns(turns)
    payload: dict[str, Any] = {"build": curve, "recount": ratios, "retained_messages": retained}
    if len(curve) > 1:
        payload["growth_exponent"] = {
            "warm": growth_exponent(curve, "warm_ms"),
            "cold": growth_exponent(curve, "cold_ms"),
            "floor": growth_exponent(curve, "floor_ms"),
        }
    path = write_result("scale", {**payload, "turn_overhead_ms": turns})
    print(f"  written to {path}")


if __name__ == "__main__":
    main()
