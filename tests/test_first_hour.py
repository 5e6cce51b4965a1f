"""A LangGraph user's first hour: mistakes that used to give a silently wrong result."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context.agents import (
    ContextMiddleware,
    PinnedMiddleware,
    create_context_agent,
)
from langgraph_context.compaction import CompactionStateMixin, create_compaction_node
from langgraph_context.context import ContextStateMixin, create_context_node
from langgraph_context.notebook import create_notebook_tools
from langgraph_context.state import NoteStateMixin
from langgraph_context.tools import create_terminal_tool
from langgraph_context.tools.state_notes import (
    create_ls_tool,
    create_query_note_tool,
    create_write_note_tool,
)
from tests.conftest import ScriptedChatModel, ai_calls, call


class _ContextState(MessagesState, ContextStateMixin):
    """Messages plus the context node's output key."""


class _CompactionState(MessagesState, CompactionStateMixin):
    """Messages plus the compaction node's keys."""


class _ToolState(MessagesState, NoteStateMixin):
    """Messages plus the state notes."""


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
    graph = _graph(MessagesState, create_compaction_node(trigger_tokens=1000, mode="view"))
    with pytest.raises(ValueError, match=r"'llm_input_messages'.*CompactionStateMixin"):
        graph.invoke({"messages": [HumanMessage("hi")]})


def test_compaction_with_a_model_without_its_record_key_raises(scripted: Any) -> None:
    """A summarizing compaction node needs the record key that keeps its running summary."""
    node = create_compaction_node(trigger_tokens=1000, model=scripted(responses=[AIMessage("s")]))
    graph = _graph(MessagesState, node)
    with pytest.raises(ValueError, match=r"'compaction'.*CompactionStateMixin"):
        graph.invoke({"messages": [HumanMessage("hi")]})


def test_compaction_view_with_the_mixin_runs() -> None:
    """With `CompactionStateMixin` the view-mode compaction node writes its view."""
    node = create_compaction_node(trigger_tokens=1000, mode="view")
    out = _graph(_CompactionState, node).invoke({"messages": [HumanMessage("hi")]})
    assert out["messages"][-1].content == "hi"


def _run_tools(tools: list[Any], calls: list[dict[str, Any]], state: dict[str, Any]) -> list[Any]:
    """Run one AI turn of `calls` through LangGraph's ToolNode; return its tool messages."""
    turn = AIMessage("", tool_calls=[{**c, "id": f"c{i}"} for i, c in enumerate(calls)])
    messages = [HumanMessage("go"), turn]
    out = _graph(_ToolState, ToolNode(tools)).invoke({**state, "messages": messages})
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


def test_state_note_tool_results_and_errors_carry_the_tool_name() -> None:
    """A note tool's result, its Command's message and its error all carry its name."""
    tools = [create_write_note_tool(), create_query_note_tool(), create_ls_tool()]
    calls = [
        {"name": "write_note", "args": {"file_name": "a", "content": "x"}},
        {"name": "query_note", "args": {"file_name": "missing"}},
        {"name": "ls", "args": {}},
    ]
    results = _run_tools(tools, calls, {"note": {}})
    assert [(m.name, m.status) for m in results] == [
        ("write_note", "success"),
        ("query_note", "error"),
        ("ls", "success"),
    ]


def test_terminal_and_note_store_results_carry_the_tool_name(tmp_path: Any) -> None:
    """The terminal's refusal and the note store's results carry their tool's name."""
    tools = [create_terminal_tool(tmp_path), *create_notebook_tools(tmp_path / "notes")]
    calls = [
        {"name": "terminal", "args": {"command": "rm -rf /"}},
        {"name": "notebook_read", "args": {"note_id": "missing"}},
    ]
    results = _run_tools(tools, calls, {})
    assert [(m.name, m.status) for m in results] == [
        ("terminal", "error"),
        ("notebook_read", "error"),
    ]


def test_pinned_middleware_checks_naming_no_tool_raises_at_first_call() -> None:
    """`checks="run_tests"` in an agent without that tool raises, naming it and the tools."""
    agent = create_agent(
        ScriptedChatModel(responses=[AIMessage("done")]),
        [],
        middleware=[PinnedMiddleware(checks="run_tests")],
    )
    with pytest.raises(ValueError, match=r"checks names \['run_tests'\].*record_constraint"):
        agent.invoke({"messages": [HumanMessage("hi")]})


def test_pinned_middleware_checks_naming_a_real_tool_runs() -> None:
    """With the named check tool present the agent runs as before."""

    @tool
    def run_tests() -> str:
        """Run the tests."""
        return "1 passed"

    agent = create_agent(
        ScriptedChatModel(responses=[AIMessage("done")]),
        [run_tests],
        middleware=[PinnedMiddleware(checks="run_tests")],
    )
    assert agent.invoke({"messages": [HumanMessage("hi")]})["messages"][-1].content == "done"


def test_context_agent_name_is_set_on_its_ai_messages() -> None:
    """`create_context_agent(name=...)` names every AI message, tool calls included."""
    model = ScriptedChatModel(
        responses=[ai_calls(call("write_plan", {"items": ["a"]}, "p")), AIMessage("done")]
    )
    graph = create_context_agent(model, name="researcher")
    out = graph.invoke({"messages": [HumanMessage("hi")]})
    assert [m.name for m in out["messages"] if isinstance(m, AIMessage)] == ["researcher"] * 2


def test_context_agent_blank_name_is_refused() -> None:
    """A blank agent name is refused at construction."""
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        create_context_agent(ScriptedChatModel(responses=[]), name=" ")


def test_context_middleware_is_a_class_the_factory_returns() -> None:
    """`ContextMiddleware` is exported and works in `create_agent` like its factory."""
    assert isinstance(ContextMiddleware(), ContextMiddleware)
    model = ScriptedChatModel(responses=[AIMessage("done")])
    middleware = [ContextMiddleware(keep_last=2)]
    agent = create_agent(model, [], system_prompt="You help.", middleware=middleware)
    assert agent.invoke({"messages": [HumanMessage("hi")]})["messages"][-1].content == "done"
    assert [m.type for m in model.seen[-1]] == ["system", "human"]
