"""Compaction on a number of tool rounds, and on request from a tool call."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context.compaction import (
    CompactionStateMixin,
    create_compaction_node,
    create_request_compaction_tool,
)
from langgraph_context.testing import ScriptedChatModel, tool_call


class State(MessagesState, CompactionStateMixin):
    """Messages and the compaction keys."""


def one_round(state: State) -> dict[str, Any]:
    """Append one small tool round."""
    n = len(state["messages"])
    call = {"name": "Read", "args": {"file_path": f"f{n}.py"}, "id": f"call-{n}"}
    return {
        "messages": [AIMessage("", tool_calls=[call]), ToolMessage("ok", tool_call_id=f"call-{n}")]
    }


def test_tool_rounds_trigger_fires_at_the_nth_round() -> None:
    """`("tool_rounds", 3)` compacts on the third tool round, not before, while far under budget."""
    graph = StateGraph(State)
    graph.add_node("work", one_round)
    graph.add_node(
        "compaction", create_compaction_node(trigger_tokens=100_000, trigger=("tool_rounds", 3))
    )
    graph.add_edge(START, "work")
    graph.add_edge("work", "compaction")
    graph.add_edge("compaction", END)
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    state = app.invoke({"messages": [HumanMessage("read the files")]}, config)
    state = app.invoke({"messages": []}, config)
    assert "compaction" not in state or state["compaction"]["count"] == 0
    state = app.invoke({"messages": []}, config)
    assert state["compaction"]["last"]["trigger"] == "tool_rounds>=3"
    assert state["compaction"]["count"] == 1


def test_tool_rounds_trigger_needs_a_positive_value() -> None:
    """A non-positive round count is refused at construction."""
    with pytest.raises(ValueError, match="trigger 'tool_rounds' needs a positive value"):
        create_compaction_node(trigger_tokens=100, trigger=("tool_rounds", 0))


def test_request_tool_makes_the_node_compact_and_resets_the_request() -> None:
    """A model calling `request_compaction` makes the next compaction run fire by request."""
    model = ScriptedChatModel(
        responses=[AIMessage("", tool_calls=[tool_call("request_compaction", {}, "c1")])]
    )
    graph = StateGraph(State)
    graph.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
    graph.add_node("tools", ToolNode([create_request_compaction_tool()]))
    graph.add_node("compaction", create_compaction_node(trigger_tokens=100_000))
    graph.add_edge(START, "agent")
    graph.add_edge("agent", "tools")
    graph.add_edge("tools", "compaction")
    graph.add_edge("compaction", END)
    state = graph.compile().invoke({"messages": [HumanMessage("tidy up")]})
    assert state["compaction"]["last"]["trigger"] == "request"
    assert state["compaction_requested"] is False
    assert any(
        isinstance(m, ToolMessage) and m.content.startswith("Compaction requested")
        for m in state["messages"]
    )


def test_request_tool_names_and_key_are_checked() -> None:
    """The tool takes a custom name and request key, and refuses an empty key."""
    assert create_request_compaction_tool(name="compact_now").name == "compact_now"
    with pytest.raises(ValueError, match="request_key"):
        create_request_compaction_tool(request_key="")
