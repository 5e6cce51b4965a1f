"""Lean per call: our per-call pieces beside bare, memory per finished thread, cold builds.

Run: `.venv/bin/python -m benchmarks.lean [--quick]`

1. Tool-output cut: `arrived_tool_result` on distinct ~2,000-token logs (limit 1,600,
   the default a tenth of 16,000) beside one plain tiktoken encode of the same text,
   and beside the binary search the cut used before (a plain callable counter still
   takes that path), interleaved; CPU time, medians. Also the encodes per cut and the
   entries per cut left in the shared token-count memo (target: 1, the count of the
   kept text, which the next model call reads; no candidate, no full text).
2. Per model call, scripted model, one tool call per model call returning a distinct
   ~2,000-token log, ten calls per user turn, CPU ms, interleaved medians: bare
   `create_agent`; ours, the real `create_context_agent(max_tokens=16000)` with its
   defaults (the bar: at most 1.5x bare); LangChain's summarization + context editing;
   our output limit + a history count alone (the pieces). Full runs add a 1,000-call
   thread, bare and ours: ours stays flat in the history's length, bare grows. The
   warm recount of a 200-message history after one append is printed beside a cold
   count (the memo must keep it cheap). One agent build, ours beside bare, LangChain's
   summarization + context editing and deepagents, is printed too (what a graph
   factory building its agent per run pays). Served throughput is
   `benchmarks.lean.served`.
3. Memory per finished thread: `create_context_agent` with its defaults (as `repro_2`)
   and a bare `create_agent`, each over `--threads` threads of 200 calls, each deleted from
   its `InMemorySaver` after it ends; live Python memory (tracemalloc) after each 5, target
   for ours at most 5 MB after 10 and flat after.
4. Cold build: `ContextBuilder.build_result` over 1,000 and 10,000 packets it has not
   seen (each size in a fresh process), beside `rank_bm25` top-k + greedy pack, CPU
   time; warm (repeat) builds printed apart, labelled. The packets, the query and the
   baseline are `repro_3`'s: the baseline's greedy pack encodes until under 20 tokens
   are left, so its cost depends on the texts (with this module's log words it took
   twice as long, and the ratio read 1.9x where `repro_3` read 4x).
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import random
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from benchmarks._common import write_result

WORDS = [
    "request",
    "completed",
    "status",
    "latency",
    "route",
    "cache",
    "miss",
    "shard",
    "fallback",
    "retrying",
    "upstream",
    "backoff",
    "host",
    "query",
    "slow",
    "table",
    "rows",
    "duration",
    "plan",
    "worker",
    "heartbeat",
    "queue",
    "depth",
    "config",
    "reloaded",
    "checksum",
    "keys",
    "source",
    "TimeoutError",
    "billing",
    "auth",
    "ingest",
    "scheduler",
]
QUERY = "why does the billing upstream time out after the config reload"
# repro_3's words: the benchmark's first 28, then ten of its own
COLD_WORDS = [*WORDS[:28], "timeout", "billing", "auth", "ingest", "scheduler"]
COLD_WORDS += ["handler", "client", "payload", "retry", "error"]
COLD_QUERY = (
    "why does the billing upstream time out after the config reload, and which request ids failed"
)
"""The cold build's packet words and query: `repro_3`'s, so the two report one figure."""
LIMIT = 1_600


def log_text(seed: int, lines: int = 48) -> str:
    """A distinct log of about 2,000 cl100k tokens."""
    rng = random.Random(seed)
    return "\n".join(
        f"2024-05-{seed % 28 + 1:02d}T10:{i % 60:02d}:{rng.randint(0, 59):02d}Z INFO "
        f"[svc-{rng.randint(1, 9)}] {' '.join(rng.choice(WORDS) for _ in range(8))} "
        f"id={rng.getrandbits(40):010x} ms={rng.randint(1, 9000)}"
        for i in range(lines)
    )


def _cpu_ms(fn: Callable[[], Any]) -> float:
    started = time.process_time()
    fn()
    return (time.process_time() - started) * 1000


def cut_costs(n: int) -> dict[str, float]:
    """Median CPU ms of one encode, our cut and the old binary search, interleaved."""
    from langchain_core.messages import ToolMessage

    from langgraph_context.compaction.entry import arrived_tool_result
    from langgraph_context.tokens import default_counter, truncate_text

    counter = default_counter()
    encoding = counter.encoding
    assert encoding is not None
    notice = "\n[... {n} characters of this result were cut as it arrived ...]\n"
    times: dict[str, list[float]] = {"encode": [], "cut": [], "binary_search": []}
    before = len(counter._text_memo), len(counter._message_memo)
    search = counter.count_fresh.__call__  # a plain callable: the binary search path
    for seed in range(n):
        text = log_text(10_000 + seed)
        message = ToolMessage(text, tool_call_id=f"c{seed}")
        runs = {
            "encode": functools.partial(encoding.encode, text, disallowed_special=()),
            "cut": functools.partial(arrived_tool_result, message, LIMIT),
            "binary_search": functools.partial(
                truncate_text, text, LIMIT, token_counter=search, marker=notice, keep="ends"
            ),
        }
        for name, run in runs.items():
            times[name].append(_cpu_ms(run))
    left = (len(counter._text_memo) - before[0] + len(counter._message_memo) - before[1]) / n
    spy = _Spy(encoding)
    counter._encoding = spy  # type: ignore[assignment]
    arrived_tool_result(ToolMessage(log_text(1), tool_call_id="spy"), LIMIT)
    counter._encoding = encoding
    out = {k: statistics.median(v) for k, v in times.items()}
    return {**out, "encodes_per_cut": spy.calls, "memo_entries_left": left}


class _Spy:
    """A tiktoken encoding that counts its `encode` and `encode_ordinary` calls."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.calls = inner, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def encode(self, text: str, **kwargs: Any) -> list[int]:
        self.calls += 1
        return self.inner.encode(text, **kwargs)  # type: ignore[no-any-return]

    def encode_ordinary(self, text: str) -> list[int]:
        self.calls += 1
        return self.inner.encode_ordinary(text)  # type: ignore[no-any-return]


def _agent(kind: str, texts: dict[str, list[str]]) -> tuple[Any, Any]:
    """`(model, graph)`: `bare`, `pieces` (our output limit + a history count), `ours`
    (`create_context_agent(max_tokens=16000)`, defaults on) or `langchain` (LangChain's
    summarization at 16,000 tokens keeping 8,000, and its context editing at 8,000)."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import (
        AgentMiddleware,
        ClearToolUsesEdit,
        ContextEditingMiddleware,
        SummarizationMiddleware,
    )
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_context import create_context_agent
    from langgraph_context.agents.output_limit import ToolOutputLimitMiddleware
    from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call
    from langgraph_context.tokens import default_counter

    class Model(ScriptedChatModel):
        n: int = 0

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any):  # type: ignore[no-untyped-def, override]
            k, self.n = self.n, self.n + 1
            if k % 10 == 9:
                message = AIMessage("The timeouts come from the billing upstream.")
            else:
                message = ai_calls(tool_call("read_log", {"n": k}, f"c{k}"))
            return ChatResult(generations=[ChatGeneration(message=message)])

    class CountHistory(AgentMiddleware):
        """Counts the model's input before each call, as our context pieces do (no node)."""

        def wrap_model_call(self, request: Any, handler: Any) -> Any:  # type: ignore[override]
            default_counter().count_messages(request.messages)
            return handler(request)

    @tool
    def read_log(n: int) -> str:
        """Return log number n."""
        return texts["now"][n]

    model, saver = Model(responses=[]), InMemorySaver()
    if kind == "ours":
        agent = create_context_agent(model, [read_log], max_tokens=16_000, checkpointer=saver)
        return model, agent
    middleware: list[Any] = []
    if kind == "pieces":
        middleware = [ToolOutputLimitMiddleware(LIMIT), CountHistory()]
    elif kind == "langchain":
        summarizer = FakeMessagesListChatModel(responses=[AIMessage("Summary: billing.")])
        middleware = [
            SummarizationMiddleware(summarizer, trigger=("tokens", 16_000), keep=("tokens", 8_000)),
            ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=8_000, keep=3)]),
        ]
    return model, create_agent(model, [read_log], checkpointer=saver, middleware=middleware)


def per_call(calls: int, rounds: int, kinds: tuple[str, ...]) -> dict[str, float]:
    """Median CPU ms per model call of each kind (see `_agent`), interleaved over `rounds`.

    CPU time of the process (the tool runs on a worker thread); each kind over a thread
    of `calls` model calls, one tool call each, ten per user turn.
    """
    results: dict[str, list[float]] = {k: [] for k in kinds}
    for r in range(rounds):
        for kind in kinds[r % len(kinds) :] + kinds[: r % len(kinds)]:
            texts = {"now": [log_text(r * 10_000 + k) for k in range(calls)]}
            _, graph = _agent(kind, texts)
            config = {"configurable": {"thread_id": "t"}, "recursion_limit": 10 * calls}
            started = time.process_time()
            for turn in range(calls // 10):
                graph.invoke({"messages": [("user", f"Turn {turn}: {QUERY}?")]}, config)
            results[kind].append((time.process_time() - started) / calls * 1000)
    out = {k: statistics.median(v) for k, v in results.items()}
    return {**out, **{f"{k}_x_bare": out[k] / out["bare"] for k in kinds if k != "bare"}}


def agent_builds(n: int) -> dict[str, float]:
    """Median CPU ms of one agent build, ours beside the peers, interleaved.

    Bare `create_agent`, LangChain's summarization + context editing (as in the per
    call measurement) and deepagents' `create_deep_agent`, with the same model and
    tool each time, after one warm-up build each: what a graph factory building its
    agent per run pays (our tools' argument schemas are inferred once per process,
    then kept).
    """
    from deepagents import create_deep_agent
    from langchain.agents import create_agent
    from langchain.agents.middleware import (
        ClearToolUsesEdit,
        ContextEditingMiddleware,
        SummarizationMiddleware,
    )
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_context import create_context_agent
    from langgraph_context.testing import ScriptedChatModel

    @tool
    def read_log(n: int) -> str:
        """Return log number n."""
        return str(n)

    model = ScriptedChatModel(responses=[])
    make = {
        "bare": lambda: create_agent(model, [read_log], checkpointer=InMemorySaver()),
        "ours": lambda: create_context_agent(
            model, [read_log], max_tokens=16_000, checkpointer=InMemorySaver()
        ),
        "langchain": lambda: create_agent(
            model,
            [read_log],
            checkpointer=InMemorySaver(),
            middleware=[
                SummarizationMiddleware(model, trigger=("tokens", 16_000), keep=("tokens", 8_000)),
                ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=8_000, keep=3)]),
            ],
        ),
        "deepagents": lambda: create_deep_agent(
            model=model, tools=[read_log], checkpointer=InMemorySaver()
        ),
    }
    times: dict[str, list[float]] = {k: [] for k in make}
    for build in make.values():
        build()
    for _ in range(n):
        for kind, build in make.items():
            times[kind].append(_cpu_ms(build))
    out = {k: statistics.median(v) for k, v in times.items()}
    return {**out, **{f"{k}_x_bare": out[k] / out["bare"] for k in make if k != "bare"}}


def recount() -> dict[str, float]:
    """CPU ms of a cold count of a 200-message history, and of a warm recount after one append."""
    import copy

    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from langgraph_context.tokens import TiktokenCounter

    history: list[Any] = []
    for i in range(100):
        history.append(
            AIMessage("", tool_calls=[{"name": "read_log", "args": {"n": i}, "id": f"c{i}"}])
        )
        history.append(ToolMessage(log_text(i)[:6_000], tool_call_id=f"c{i}"))  # fmt: skip
    counter = TiktokenCounter()
    cold = _cpu_ms(lambda: counter.count_messages(history))
    reloaded = [*copy.deepcopy(history), HumanMessage("and now?")]
    warm = statistics.median(_cpu_ms(lambda: counter.count_messages(reloaded)) for _ in range(5))
    return {"cold_ms": cold, "warm_ms": warm, "warm_share": warm / cold}


def memory(threads: int, kind: str = "ours") -> list[float]:
    """Live Python MB after each 5 finished, deleted 200-call threads of one agent.

    `kind` is `ours` (the full `create_context_agent`, as `repro_2`) or `bare`.
    """
    texts: dict[str, list[str]] = {"now": []}
    model, graph = _agent(kind, texts)
    saver = graph.checkpointer
    gc.collect()
    tracemalloc.start()
    after: list[float] = []
    for t in range(threads):
        texts["now"] = [log_text(t * 1000 + k) for k in range(200)]
        model.n = 0
        config = {"configurable": {"thread_id": f"t{t}"}, "recursion_limit": 1000}
        for turn in range(20):
            graph.invoke({"messages": [("user", f"Turn {turn}: {QUERY}?")]}, config)
        saver.delete_thread(f"t{t}")
        texts["now"] = []
        gc.collect()
        if (t + 1) % 5 == 0:
            after.append(tracemalloc.get_traced_memory()[0] / 2**20)
    tracemalloc.stop()
    return after


def _cold_point(n: int) -> dict[str, float]:
    """One size, in this (fresh) process: cold build, warm builds, rank_bm25 floor."""
    import numpy as np
    from rank_bm25 import BM25Okapi

    from langgraph_context.context import ContextBuilder, ContextConfig
    from langgraph_context.packet import ContextPacket
    from langgraph_context.tokens import default_counter

    rng = random.Random(n)
    docs = [
        f"[svc-{rng.randint(1, 40)}] " + " ".join(rng.choice(COLD_WORDS) for _ in range(28))
        + f" id={rng.getrandbits(48):012x} ms={rng.randint(1, 9999)}"
        for _ in range(n)
    ]  # fmt: skip
    packets = [ContextPacket(t, type="retrieved", source=f"doc-{i}") for i, t in enumerate(docs)]
    unrelated = [ContextPacket(f"unrelated {i}", type="retrieved") for i in range(9)]
    ContextBuilder(config=ContextConfig(max_tokens=4000)).build_result(
        "warm up", custom_packets=unrelated
    )
    encoding = default_counter().encoding
    assert encoding is not None

    def bm25() -> None:
        words = COLD_QUERY.lower().split()
        scores = BM25Okapi([d.lower().split() for d in docs]).get_scores(words)
        left = 4000
        for i in np.argsort(-scores):
            c = len(encoding.encode(docs[i]))
            left -= c if c <= left else 0
            if left < 20:
                break

    builder = ContextBuilder(config=ContextConfig(max_tokens=4000))
    cold = _cpu_ms(lambda: builder.build_result(COLD_QUERY, custom_packets=packets))
    warm = statistics.median(
        _cpu_ms(lambda: builder.build_result(COLD_QUERY, custom_packets=packets)) for _ in range(3)
    )
    floor = statistics.median(_cpu_ms(bm25) for _ in range(3))
    return {"packets": n, "cold_ms": cold, "warm_ms": warm, "rank_bm25_ms": floor}


def cold_builds(sizes: list[int]) -> list[dict[str, float]]:
    """Each size in its own process, so the first build is really cold."""
    rows = []
    for n in sizes:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.lean", "--cold-point", str(n)],
            check=True, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        row = json.loads(out.stdout.strip().splitlines()[-1])
        row["x_rank_bm25"] = row["cold_ms"] / row["rank_bm25_ms"]
        rows.append(row)
        print(
            f"  {n:>6,} packets: cold build {row['cold_ms']:7.1f} ms"
            f" ({row['x_rank_bm25']:.2f}x rank_bm25 top-k + greedy pack, {row['rank_bm25_ms']:.1f}"
            f" ms) | warm (repeat) build {row['warm_ms']:7.1f} ms"
        )
    return rows


def _encoder() -> str:
    """Which exact encoder counts: rs-bpe (the `fast` extra) or tiktoken alone."""
    from langgraph_context.tokens import default_counter

    encoding = getattr(default_counter(), "encoding", None)
    return "rs-bpe" if type(encoding).__name__ == "_FastEncoding" else "tiktoken"


def main() -> None:
    """Run the four measurements and write `benchmarks/results/lean.json`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples, 10 threads")
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--cold-point", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold_point:
        print(json.dumps(_cold_point(args.cold_point)))
        return
    quick = args.quick
    encoder = _encoder()
    print(f"encoder: {encoder} (LGC_TOKENIZER=tiktoken for tiktoken alone)")
    print("1. tool-output cut of a ~2,000-token result (limit 1,600), CPU ms, medians")
    cut = cut_costs(40 if quick else 200)
    print(
        f"  one encode {cut['encode']:.2f} | our cut {cut['cut']:.2f}"
        f" ({cut['cut'] / cut['encode']:.2f}x) | the old binary search {cut['binary_search']:.2f}"
        f" ({cut['binary_search'] / cut['encode']:.2f}x) | encodes per cut"
        f" {cut['encodes_per_cut']} | memo entries left per cut {cut['memo_entries_left']:.2f}"
    )
    print("2. per model call (scripted model), CPU ms, interleaved medians; bar: ours <= 1.5x bare")
    kinds = ("bare", "ours", "langchain", "pieces")
    calls = per_call(50 if quick else 100, 3 if quick else 5, kinds)
    print(
        f"  100-call thread: bare create_agent {calls['bare']:.2f}"
        f" | ours (create_context_agent, defaults) {calls['ours']:.2f}"
        f" ({calls['ours_x_bare']:.2f}x)"
        f" | LangChain summarization + context editing {calls['langchain']:.2f}"
        f" ({calls['langchain_x_bare']:.2f}x)"
        f" | our output limit + a history count alone {calls['pieces']:.2f}"
        f" ({calls['pieces_x_bare']:.2f}x)"
    )
    long = {} if quick else per_call(1_000, 2, ("bare", "ours"))
    if long:
        print(
            f"  1,000-call thread (flat: ours should not grow, bare does): bare {long['bare']:.2f}"
            f" | ours {long['ours']:.2f} ({long['ours_x_bare']:.2f}x)"
        )
    built = agent_builds(10 if quick else 30)
    print(
        f"  one agent build: bare create_agent {built['bare']:.1f} ms"
        f" | ours {built['ours']:.1f} ms ({built['ours_x_bare']:.1f}x)"
        f" | LangChain summarization + context editing {built['langchain']:.1f} ms"
        f" ({built['langchain_x_bare']:.1f}x) | deepagents {built['deepagents']:.1f} ms"
        f" ({built['deepagents_x_bare']:.1f}x)"
    )
    again = recount()
    print(
        f"  200-message history: cold count {again['cold_ms']:.1f} ms, warm recount of a"
        f" reloaded copy {again['warm_ms']:.2f} ms ({again['warm_share']:.1%})"
    )
    print("3. live Python memory after finished, deleted 200-call threads, bare and ours")
    count = 10 if quick else args.threads
    bare_live, live = memory(count, "bare"), memory(count, "ours")
    for i, (b, o) in enumerate(zip(bare_live, live, strict=True)):
        print(f"  after {5 * (i + 1):3d} threads: bare {b:5.1f} MB | ours {o:5.1f} MB live")
    print("4. cold builds over new packets (fresh process per size), CPU ms")
    builds = cold_builds([1_000, 10_000])
    path = write_result(
        "lean",
        {"cut": cut, "per_call": calls, "per_call_1000": long, "build": built, "recount": again,
         "live_mb_per_5_threads": live, "live_mb_per_5_threads_bare": bare_live,
         "cold_builds": builds, "quick": quick, "encoder": encoder},
    )  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
