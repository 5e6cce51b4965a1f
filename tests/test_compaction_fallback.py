"""A failing summarizer never leaves the history over budget: rules compact instead."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_context import count_tokens
from langgraph_context.compaction import (
    CompactionStateMixin,
    SummaryOptions,
    create_compaction_node,
)
from langgraph_context.messages import validate_history

BUDGET = 600


class State(MessagesState, CompactionStateMixin):
    """Messages plus the compaction keys."""


def _chatter(state: State) -> dict[str, Any]:
    n = len(state["messages"])
    return {"messages": [AIMessage(f"answer {n}: " + "the module compiles cleanly. " * 40)]}


def _raises(_: Any) -> Any:
    raise RuntimeError("provider down")


def _times_out(_: Any) -> Any:
    raise TimeoutError("summarizer timed out after 30s")


def _empty(_: Any) -> AIMessage:
    return AIMessage("")


def _rambles(_: Any) -> AIMessage:
    return AIMessage("everything happened. " * 2000)


async def _araises(_: Any) -> Any:
    await asyncio.sleep(0)
    raise RuntimeError("provider down")


FAILURES = {"raises": _raises, "times_out": _times_out, "empty": _empty, "over_long": _rambles}


def _app(summarizer: Any, mode: str) -> Any:
    node = create_compaction_node(
        trigger_tokens=BUDGET,
        mode=mode,  # type: ignore[arg-type]
        model=summarizer,
        summary_options=SummaryOptions(retries=0, max_summary_tokens=100),
    )
    graph = StateGraph(State)
    graph.add_node("worker", _chatter)
    graph.add_node("compaction", node)
    graph.add_edge(START, "worker")
    graph.add_edge("worker", "compaction")
    graph.add_edge("compaction", END)
    return graph.compile(checkpointer=InMemorySaver())


def _seen(state: dict[str, Any], mode: str) -> list[BaseMessage]:
    return state["messages"] if mode == "replace" else state["llm_input_messages"]


@pytest.mark.parametrize("mode", ["replace", "view"])
@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_failing_summarizer_falls_back_within_budget(failure: str, mode: str) -> None:
    """Raise, time-out, empty or over-long summary: the result fits and the error is kept."""
    app = _app(RunnableLambda(FAILURES[failure]), mode)
    cfg = {"configurable": {"thread_id": f"{failure}-{mode}"}}
    for turn in range(5):
        state = app.invoke({"messages": [HumanMessage(f"turn {turn}")]}, cfg)
        assert count_tokens(_seen(state, mode)) <= BUDGET
        assert validate_history(_seen(state, mode)) == []
    last = state["compaction"]["last"]
    assert state["compaction"]["error"]
    assert last["fallback"] is True
    assert last["within_budget"] is True
    assert "everything happened" not in str(_seen(state, mode))


async def test_async_failing_summarizer_falls_back_within_budget() -> None:
    """The async path falls back the same way."""
    app = _app(RunnableLambda(_raises, afunc=_araises), "replace")
    cfg = {"configurable": {"thread_id": "async"}}
    for turn in range(4):
        state = await app.ainvoke({"messages": [HumanMessage(f"turn {turn}")]}, cfg)
        assert count_tokens(state["messages"]) <= BUDGET
    assert "provider down" in state["compaction"]["error"]
