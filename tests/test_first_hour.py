"""A LangGraph user's first hour: mistakes that used to give a silently wrong result."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_context.compaction import CompactionStateMixin, create_compaction_node
from langgraph_context.context import ContextStateMixin, create_context_node


class _ContextState(MessagesState, ContextStateMixin):
    """Messages plus the context node's output key."""


class _CompactionState(MessagesState, CompactionStateMixin):
    """Messages plus the compaction node's keys."""


def _graph(state: type[Any], node: Any) -> Any:
    builder = StateGraph(state)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    return builder.compile()


def test_context_node_without_its_output_key_names_the_key_and_mixin() -> None:
    """The context node in a state without `llm_input_messages` raises, naming the mixin."""
    graph = _graph(MessagesState, create_context_node())
    with pytest.raises(ValueError, match=r"'llm_input_messages'.*ContextStateMixin"):
        graph.invoke({"messages": [HumanMessage("hi")]})


async def test_context_node_async_without_its_output_key_raises() -> None:
    """The async path checks the output key too."""
    graph = _graph(MessagesState, create_context_node(layout="focus"))
    with pytest.raises(ValueError, match=r"'llm_input_messages'.*ContextStateMixin"):
        await graph.ainvoke({"messages": [HumanMessage("hi")]})


def test_context_node_with_the_mixin_writes_its_view() -> None:
    """With `ContextStateMixin` the node's view reaches the state."""
    out = _graph(_ContextState, create_context_node()).invoke({"messages": [HumanMessage("hi")]})
    assert [m.type for m in out["llm_input_messages"]] == ["system", "human"]


def test_context_node_outside_a_graph_is_not_checked() -> None:
    """A direct invoke (no graph) still works: there is no schema to check."""
    out = create_context_node().invoke({"messages": [HumanMessage("hi")]})
    assert out["llm_input_messages"][-1].content == "hi"


def test_compaction_view_without_its_output_key_names_the_key_and_mixin() -> None:
    """The compaction node in view mode in a bare `MessagesState` raises, naming the mixin."""
    graph = _graph(MessagesState, create_compaction_node(max_tokens=1000, mode="view"))
    with pytest.raises(ValueError, match=r"'llm_input_messages'.*CompactionStateMixin"):
        graph.invoke({"messages": [HumanMessage("hi")]})


def test_compaction_with_a_model_without_its_record_key_raises(scripted: Any) -> None:
    """A summarizing compaction node needs the record key that keeps its running summary."""
    node = create_compaction_node(max_tokens=1000, model=scripted(responses=[AIMessage("s")]))
    graph = _graph(MessagesState, node)
    with pytest.raises(ValueError, match=r"'compaction'.*CompactionStateMixin"):
        graph.invoke({"messages": [HumanMessage("hi")]})


def test_compaction_view_with_the_mixin_runs() -> None:
    """With `CompactionStateMixin` the view-mode compaction node writes its view."""
    node = create_compaction_node(max_tokens=1000, mode="view")
    out = _graph(_CompactionState, node).invoke({"messages": [HumanMessage("hi")]})
    assert out["messages"][-1].content == "hi"
