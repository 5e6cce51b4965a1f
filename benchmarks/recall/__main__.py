"""Recall benchmark: facts recoverable after a cut or an eviction, and the needle test.

Run: `.venv/bin/python -m benchmarks.recall [--quick]`

1. Facts recoverable. Each session is replayed to three quarters of its length (so
   facts are still referred to later): every tool result arrives through
   `RecallMiddleware` (cut over 1,000 tokens, full text kept), then the history is
   compacted rule-based to 25% of its tokens and the evicted messages are archived
   (`archive_sink`). A fact is *lost* when it is early and key (`benchmarks.compaction
   .facts`: paths and error lines of the Claude Code sessions, identifier arguments of
   tau-bench's ground-truth actions, and planted ids in generated threads) and no
   message of the compacted history holds it verbatim (the compaction's own snapshot
   message, which repeats many facts, is not counted). It is *recovered in one call*
   when `search_history` returns it, *in two* when `read_tool_output` on the first
   handle that search named (pattern: the fact's first 40 characters) does. Two
   queries: the fact itself, and a fragment (its first half, at least two words or 12
   characters). Goal: 100% within two calls. Peers (trim, context editing,
   llmslim-style cuts) have no read-back: what they cut or evict stays lost.
2. Needle: a tool returns ~40,000 tokens with one decisive line in the middle; a
   scripted model follows the cut notice (`follower.NoticeFollower`). Ours finds it
   in one extra call; reported are the input tokens of every model call, beside bare
   `create_agent` (the whole result in every call), the cut without a handle (recall
   off) and LangChain's `ContextEditingMiddleware` at the same budget.
3. Recall into the call (`RecallMiddleware(max_recall_tokens=300)`), at four points of
   each session's last quarter: the share of the lost facts the recalled block holds
   with no tool call, its tokens per call, and how often it changes between calls
   (each change rewrites the system message: the cached prefix is lost).
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.prebuilt import ToolRuntime
from langgraph.types import Command

from benchmarks._common import data_dir, write_result
from benchmarks._progress import track
from benchmarks.compaction.__main__ import load_claude, load_tau
from benchmarks.compaction.facts import FactIndex, message_text, view_text
from benchmarks.compaction.replay import Session
from benchmarks.recall.follower import NoticeFollower
from langgraph_context.agents import create_context_agent
from langgraph_context.compaction import compact_messages
from langgraph_context.compaction.provenance import COMPACTION_MARKER
from langgraph_context.recall import RecallMiddleware, merge_recall
from langgraph_context.recall.read import search_passages
from langgraph_context.tokens import count_tokens

NEEDLE = "DECISION: roll back release 4.2.1, migration 0042 corrupts the orders table"
HANDLE_IN_HITS = re.compile(r"\[((?:out|msg)-[0-9a-f]{12}) lines")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _runtime(index: dict[str, Any]) -> ToolRuntime:
    return ToolRuntime(
        state={"recall": index},
        context=None,
        config={"configurable": {}},
        stream_writer=lambda _: None,
        tool_call_id="bench",
        store=None,
    )


def arrive(keeper: RecallMiddleware, messages: list[BaseMessage]) -> tuple[list[BaseMessage], dict]:
    """The history as it enters state (long results cut), and the kept texts' index."""
    out: list[BaseMessage] = []
    index: dict[str, Any] = {}
    for message in messages:
        if not isinstance(message, ToolMessage):
            out.append(message)
            continue
        result, _, _ = keeper.offload(message)
        if isinstance(result, Command):
            update: dict[str, Any] = result.update  # type: ignore[assignment]
            index = merge_recall(index, update["recall"])
            result = update["messages"][0]
        out.append(result)
    return out, index


def _fragment(fact: str) -> str:
    words = fact.split()
    if len(words) >= 4:
        return " ".join(words[: len(words) // 2])
    return fact[: max(12, len(fact) // 2)]


def recover(keeper: RecallMiddleware, index: dict[str, Any], fact: str, query: str) -> int:
    """1 or 2 when `fact` comes back within that many tool calls, else 0."""
    reader, search = keeper.tools
    hits = str(search.func(query=query, runtime=_runtime(index)).content)  # type: ignore[attr-defined]
    if fact in _norm(hits):
        return 1
    handles = HANDLE_IN_HITS.findall(hits)
    if not handles:
        return 0
    page = reader.func(  # type: ignore[attr-defined]
        handle=handles[0], pattern=fact[:40], runtime=_runtime(index)
    )
    return 2 if fact in _norm(str(page.content)) else 0


def session_row(session: Session, keeper: RecallMiddleware) -> dict[str, Any]:
    """Lost and recovered early key facts of one session at 3/4 of its length."""
    t = max(2, len(session.messages) * 3 // 4)
    history, index = arrive(keeper, session.messages[:t])
    budget = max(200, count_tokens(history) // 4)
    result = compact_messages(history, target_tokens=budget)
    update, _ = keeper.archive_sink(list(result.evicted))
    index = merge_recall(index, update.get("recall"))
    # The snapshot message may repeat a fact; a fact counts as cut or evicted when no
    # other message of the compacted history still holds it.
    kept = [m for m in result.messages if COMPACTION_MARKER not in m.additional_kwargs]
    seen = _norm(view_text(kept))
    lost = [f for f in session.index.early_key_facts(t, later=session.later) if f not in seen]
    exact = [recover(keeper, index, f, f) for f in lost]
    fragment = [recover(keeper, index, f, _fragment(f)) for f in lost]
    return {
        "session": session.name,
        "messages": t,
        "kept": len(index),
        "lost": len(lost),
        "exact_1": sum(1 for r in exact if r == 1),
        "exact_2": sum(1 for r in exact if r),
        "fragment_1": sum(1 for r in fragment if r == 1),
        "fragment_2": sum(1 for r in fragment if r),
        "missed": [f for f, r in zip(lost, exact, strict=True) if not r][:5],
    }


def _latest_request(messages: list[BaseMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message_text(message)
    return ""


def recall_row(session: Session, keeper: RecallMiddleware, points: int = 4) -> dict[str, Any]:
    """Recall into the call (`max_recall_tokens=300`) at points of the session's last quarter.

    At each point: the lost early key facts the recalled block holds (zero tool calls),
    its tokens, and whether it differs from the previous point's block (a change
    rewrites the system message, so the provider's cached prefix is lost).
    """
    n = len(session.messages)
    start = max(2, n * 3 // 4)
    stops = sorted({start + k * max(1, (n - start) // points) for k in range(points)} - {0})
    lost_total = held = changed = 0
    sizes: list[int] = []
    previous: str | None = None
    for t in (s for s in stops if s <= n):
        history, index = arrive(keeper, session.messages[:t])
        result = compact_messages(history, target_tokens=max(200, count_tokens(history) // 4))
        update, _ = keeper.archive_sink(list(result.evicted))
        index = merge_recall(index, update.get("recall"))
        kept = [m for m in result.messages if COMPACTION_MARKER not in m.additional_kwargs]
        seen = _norm(view_text(kept))
        lost = [f for f in session.index.early_key_facts(t, later=session.later) if f not in seen]
        texts = [(h, str(e["text"])) for h, e in index.items() if "text" in e]
        hits = search_passages(
            _latest_request(history), texts, max_result_tokens=300, token_counter=count_tokens
        )
        block = "\n".join(body for *_, body in hits)
        lost_total += len(lost)
        held += sum(1 for f in lost if f in _norm(block))
        sizes.append(count_tokens(block) if block else 0)
        changed += int(previous is not None and block != previous)
        previous = block
    return {
        "session": session.name,
        "points": len(sizes),
        "lost": lost_total,
        "held": held,
        "block_tokens": sum(sizes),
        "changed": changed,
    }


def generated_session(seed: int) -> Session:
    """A thread of tool rounds whose long outputs each hide one id, then later use it."""
    rng = random.Random(seed)
    messages: list[BaseMessage] = [HumanMessage(f"audit batch {seed}", id=f"g{seed}-0")]
    ids = []
    for i in range(12):
        fact = f"ticket-{seed}-{i}-{rng.randrange(10**6):06d}"
        ids.append(fact)
        lines = [f"row {j}: status ok" for j in range(rng.choice([30, 400, 1500]))]
        lines[rng.randrange(len(lines))] = f"row x: blocked by {fact}"
        call = {"name": "query_db", "args": {"batch": i}, "id": f"c{seed}-{i}"}
        messages += [
            AIMessage("", tool_calls=[call], id=f"g{seed}-a{i}"),
            ToolMessage(
                "\n".join(lines), tool_call_id=call["id"], name="query_db", id=f"g{seed}-t{i}"
            ),
        ]
    for i, fact in enumerate(ids[:6]):
        messages += [HumanMessage(f"what about {fact}?", id=f"g{seed}-h{i}"), AIMessage("ok")]
    texts = [message_text(m) for m in messages]
    introduced: list[set[str]] = [set() for _ in messages]
    for fact in ids:
        first = next(i for i, text in enumerate(texts) if fact in text)
        introduced[first].add(fact)
    return Session(f"gen{seed}", messages, FactIndex(texts, introduced), later=True)


def _needle_log() -> str:
    lines = [
        f"2026-11-27T07:{i // 60 % 60:02d}:{i % 60:02d} worker {i % 7} batch ok"
        for i in range(3_300)
    ]
    lines[len(lines) // 2] = NEEDLE
    return "\n".join(lines)


def needle(budget: int) -> list[dict[str, Any]]:
    """Input tokens per model call and whether the decisive line came back, per method."""
    log = _needle_log()

    @tool
    def fetch_logs() -> str:
        """Fetch the deploy logs."""
        return log

    first = {"name": "fetch_logs", "args": {}}
    rows = []
    methods = {
        "ours (recall)": lambda m: create_context_agent(m, [fetch_logs], max_tokens=budget),
        "cut, no handle": lambda m: create_context_agent(
            m, [fetch_logs], max_tokens=budget, recall=False
        ),
        "bare create_agent": lambda m: create_agent(m, [fetch_logs]),
        "context editing": lambda m: create_agent(
            m,
            [fetch_logs],
            middleware=[
                ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=budget, keep=0)])
            ],
        ),
    }
    for name, build in methods.items():
        model = NoticeFollower(first=first, pattern="DECISION")
        out = build(model).invoke({"messages": [("user", "why was the deploy stopped?")]})
        calls = [count_tokens(seen) for seen in model.seen]
        rows.append(
            {
                "method": name,
                "result_tokens": count_tokens([ToolMessage(log, tool_call_id="x")]),
                "model_calls": len(calls),
                "input_tokens": calls,
                "total_input_tokens": sum(calls),
                "found": NEEDLE in str(out["messages"][-1].content),
            }
        )
    return rows


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    lines = [" | ".join(columns), " | ".join("---" for _ in columns)]
    lines += [" | ".join(str(row.get(c, "")) for c in columns) for row in rows]
    return "\n".join(lines)


def main() -> None:
    """Run both parts, print tables, write `benchmarks/results/recall.json`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 tau sessions, 5 generated")
    args = parser.parse_args()
    keeper = RecallMiddleware(1_000)
    data = data_dir()
    sessions: list[Session] = []
    claude = data / "claude-code-sessions"
    if claude.is_dir():
        sessions += load_claude(claude)
    tau = data / "tau-bench-airline" / "gpt-4o-airline.json"
    if tau.is_file():
        sessions += load_tau(tau, 5 if args.quick else 50)
    sessions += [generated_session(seed) for seed in range(5 if args.quick else 20)]
    rows = [session_row(s, keeper) for s in track(sessions, "facts")]
    groups = {}
    for prefix, label in (("tau", "tau-bench"), ("gen", "generated")):
        groups[label] = [r for r in rows if r["session"].startswith(prefix)]
    groups["claude code"] = [r for r in rows if not r["session"].startswith(("tau", "gen"))]
    summary = []
    for label, group in groups.items():
        lost = sum(r["lost"] for r in group)
        row: dict[str, Any] = {"corpus": label, "sessions": len(group), "lost facts": lost}
        for key in ("exact_1", "exact_2", "fragment_1", "fragment_2"):
            found = sum(r[key] for r in group)
            row[key] = f"{100 * found / lost:.1f}%" if lost else "n/a"
        summary.append(row)
    print("Facts lost to cuts and eviction (25% budget), recovered within 1 / 2 calls")
    cols = ["corpus", "sessions", "lost facts", "exact_1", "exact_2", "fragment_1", "fragment_2"]
    print(_table(summary, cols))
    recalled = [recall_row(s, keeper) for s in track(sessions, "recall into the call")]
    recall_summary = []
    for label, names in (
        ("tau-bench", lambda n: n.startswith("tau")),
        ("generated", lambda n: n.startswith("gen")),
        ("claude code", lambda n: not n.startswith(("tau", "gen"))),
    ):
        group = [r for r in recalled if names(r["session"])]
        points = sum(r["points"] for r in group) or 1
        lost = sum(r["lost"] for r in group)
        recall_summary.append(
            {
                "corpus": label,
                "calls": points,
                "lost facts": lost,
                "held by recall": f"{100 * sum(r['held'] for r in group) / lost:.1f}%"
                if lost
                else "n/a",
                "tokens per call": round(sum(r["block_tokens"] for r in group) / points),
                "prefix changed": f"{100 * sum(r['changed'] for r in group) / points:.0f}%",
            }
        )
    print("\nRecall into the call (max_recall_tokens=300), last quarter of each session")
    print(_table(recall_summary, list(recall_summary[0])))
    needles = needle(16_000)
    print("\nNeedle in a ~40,000-token tool result (budget 16,000)")
    print(_table(needles, ["method", "model_calls", "input_tokens", "total_input_tokens", "found"]))
    payload = {"facts": summary, "sessions": rows, "needle": needles}
    payload["recall_into_call"] = recall_summary
    path = write_result("recall", payload)
    print(f"\nwrote {Path(path).name}")


if __name__ == "__main__":
    main()
