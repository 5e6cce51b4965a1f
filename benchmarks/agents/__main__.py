"""Does the prebuilt stack keep an agent's context small? Measured with scripted models.

Run from the repo root: `.venv/bin/python -m benchmarks.agents [--turns N]`.

1. Long maintainer session on this repository: every turn the scripted policy `cat`s
   one of the largest Python files of `langgraph_context/` with the real terminal and
   answers. Compared: the full maintainer (compaction + context assembly) against the
   same graph with both switched off (the history grows unbounded). Reported: largest
   and last model input (tokens), all input tokens sent, graph time per turn (the
   scripted model takes ~0 ms, so this is the stack's own overhead), invalid histories.
2. Delegation: the parent must learn about 10 files. Inline, it reads them itself;
   delegated, one `delegate_task` call lets a sub-agent read them in its own window.
   Reported: the parent's context after the task, and the sub-agent's peak input.

Writes `benchmarks/results/agents.json`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context import count_tokens
from langgraph_context.agents import (
    create_codebase_maintainer_graph,
    create_context_agent,
    create_subagent_tool,
)
from langgraph_context.messages import validate_history
from langgraph_context.tools import create_terminal_tool

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "benchmarks" / "results"


class Scripted(FakeMessagesListChatModel):
    """Replays responses, records input sizes; bind_tools returns self."""

    input_tokens: list[int] = []  # noqa: RUF012 - pydantic copies the default

    def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.input_tokens.append(count_tokens(messages))
        return super()._generate(messages, *args, **kwargs)


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def _largest_files(limit: int) -> list[str]:
    files = sorted(
        (p for p in (REPO / "langgraph_context").rglob("*.py")),
        key=lambda p: p.stat().st_size,
        reverse=True,
    )
    return [str(p.relative_to(REPO)) for p in files[:limit]]


def maintainer_session(turns: int, *, full: bool) -> dict[str, Any]:
    """Run `turns` file-reading turns; return input sizes, overhead and validity."""
    files = _largest_files(12)
    responses: list[AIMessage] = []
    for i in range(turns):
        path = files[i % len(files)]
        responses += [
            AIMessage("", tool_calls=[_call("terminal", {"command": f"cat {path}"}, f"t{i}")]),
            AIMessage(f"{path} read; it defines the module's public API."),
        ]
    model = Scripted(responses=responses)
    with tempfile.TemporaryDirectory() as notes:
        graph = create_codebase_maintainer_graph(
            model,
            workspace=REPO,
            notes=notes,
            compaction=full,
            context=full,
            checkpointer=InMemorySaver(),
        )
        config = {"configurable": {"thread_id": "bench"}}
        times: list[float] = []
        invalid = 0
        for i in range(turns):
            start = time.perf_counter()
            out = graph.invoke({"messages": [HumanMessage(f"Read file {i}")]}, config)
            times.append((time.perf_counter() - start) * 1000)
            invalid += bool(validate_history(out["messages"]))
    return {
        "turns": turns,
        "max_input_tokens": max(model.input_tokens),
        "last_input_tokens": model.input_tokens[-1],
        "total_input_tokens": sum(model.input_tokens),
        "median_turn_ms": round(statistics.median(times), 1),
        "invalid_histories": invalid,
        "compactions": out.get("compaction", {}).get("count", 0),
    }


def delegation(files: int) -> dict[str, Any]:
    """Parent context after learning about `files` files, inline vs delegated."""
    paths = _largest_files(files)
    reads = [
        _call("terminal", {"command": f"head -n 80 {p}"}, f"r{i}") for i, p in enumerate(paths)
    ]
    answer = AIMessage("Each file defines one concern of the package; details in the report.")

    inline_model = Scripted(responses=[AIMessage("", tool_calls=reads), answer])
    terminal = create_terminal_tool(REPO)
    inline = create_context_agent(
        inline_model, [terminal], constraint_tools=False, compaction=False, context=False
    )
    inline_out = inline.invoke({"messages": [HumanMessage("What do these files do?")]})

    sub_model = Scripted(responses=[AIMessage("", tool_calls=reads), answer])
    delegate = create_subagent_tool(sub_model, tools=[create_terminal_tool(REPO)])
    task = "Read these files and report what each does: " + ", ".join(paths)
    parent_model = Scripted(
        responses=[
            AIMessage("", tool_calls=[_call("delegate_task", {"task": task}, "d")]),
            answer,
        ]
    )
    parent = create_context_agent(
        parent_model, [delegate], constraint_tools=False, compaction=False, context=False
    )
    parent_out = parent.invoke({"messages": [HumanMessage("What do these files do?")]})
    return {
        "files": files,
        "inline_parent_tokens": count_tokens(inline_out["messages"]),
        "delegated_parent_tokens": count_tokens(parent_out["messages"]),
        "subagent_peak_input_tokens": max(sub_model.input_tokens),
    }


def main() -> None:
    """Run both measurements, print tables, write the JSON result."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.agents")
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args()
    full = maintainer_session(args.turns, full=True)
    bare = maintainer_session(args.turns, full=False)
    print(f"Maintainer, {args.turns} turns, each `cat`s a large module of this repo")
    header = f"{'stack':<28}{'max in':>9}{'last in':>9}{'all in':>10}{'ms/turn':>9}{'invalid':>9}"
    print(header)
    for name, row in (("compaction + context (full)", full), ("neither (history grows)", bare)):
        print(
            f"{name:<28}{row['max_input_tokens']:>9}{row['last_input_tokens']:>9}"
            f"{row['total_input_tokens']:>10}{row['median_turn_ms']:>9}"
            f"{row['invalid_histories']:>9}"
        )
    print(f"compactions in the full run: {full['compactions']}")
    sub = delegation(10)
    print("\nDelegation: learn about 10 files")
    for label, key in (
        ("parent context, inline reads", "inline_parent_tokens"),
        ("parent context, one sub-agent call", "delegated_parent_tokens"),
        ("sub-agent peak input (its own window)", "subagent_peak_input_tokens"),
    ):
        print(f"{label:<40}{sub[key]:>8} tokens")
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "agents.json"
    payload = {"maintainer": {"full": full, "bare": bare}, "delegation": sub}
    path.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"\nwrote {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()
