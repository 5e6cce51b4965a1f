"""State mixins and reducers, alone and inside compiled graphs and prebuilt agents."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain.agents import AgentState, create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import create_react_agent

from langgraph_context import (
    NoteStateMixin,
    PlanStateMixin,
    create_ls_tool,
    create_update_plan_tool,
    create_write_note_tool,
    create_write_plan_tool,
)
from langgraph_context.state import note_reducer, plan_reducer
from tests.conftest import ScriptedChatModel, ai_calls, call

notes_st = st.dictionaries(
    st.text(max_size=5), st.one_of(st.none(), st.text(max_size=5)), max_size=6
)


@settings(max_examples=200, deadline=None)
@given(notes_st, notes_st)
def test_note_reducer_never_mutates(left: dict[str, Any], right: dict[str, Any]) -> None:
    """note_reducer returns a new dict and leaves both inputs untouched."""
    a, b = copy.deepcopy(left), copy.deepcopy(right)
    out = note_reducer(left, right)
    assert (left, right) == (a, b)
    assert out is not left
    assert out is not right
    for key, value in right.items():
        assert out.get(key) == value if value is not None else key not in out


writes_st = st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=6)


@settings(max_examples=200, deadline=None)
@given(writes_st, writes_st, writes_st)
def test_note_reducer_is_associative_for_writes(
    a: dict[str, Any], b: dict[str, Any], c: dict[str, Any]
) -> None:
    """Merging write updates does not depend on grouping (deletions apply in sequence)."""
    assert note_reducer(note_reducer(a, b), c) == note_reducer(a, note_reducer(b, c))


def test_note_reducer_none_sides() -> None:
    """None on either side is treated as empty."""
    assert note_reducer(None, None) == {}
    assert note_reducer(None, {"a": "1"}) == {"a": "1"}
    assert note_reducer({"a": "1"}, None) == {"a": "1"}


def test_plan_reducer_replaces_and_copies() -> None:
    """The newest plan wins; None keeps the old one; results are fresh objects."""
    old = [{"content": "a", "status": "pending"}]
    new = [{"content": "b", "status": "in_progress"}]
    assert plan_reducer(old, new) == new
    assert plan_reducer(old, None) == old
    assert plan_reducer(None, None) == []
    assert plan_reducer(old, new)[0] is not new[0]


class Composite(MessagesState, PlanStateMixin, NoteStateMixin):
    """Both mixins composed with MessagesState."""


def test_mixins_compose_with_messages_state() -> None:
    """A node writing plan and notes through the composite schema merges correctly."""
    graph = StateGraph(Composite)
    graph.add_node(
        "a", lambda s: {"note": {"x": "1"}, "plan": [{"content": "p", "status": "pending"}]}
    )
    graph.add_node("b", lambda s: {"note": {"y": "2"}})
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    graph.add_edge("b", END)
    out = graph.compile().invoke({"messages": [HumanMessage("go")]})
    assert out["note"] == {"x": "1", "y": "2"}
    assert out["plan"] == [{"content": "p", "status": "pending"}]


def test_create_react_agent_with_state_tools() -> None:
    """A scripted create_react_agent run writes a plan and a note into its state."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(
                call("write_plan", {"plan": ["inspect", "report"]}, "1"),
                call("write_note", {"file_name": "f", "content": "found it"}, "2"),
            ),
            ai_calls(
                call(
                    "update_plan", {"update_plans": [{"content": "inspect", "status": "done"}]}, "3"
                )
            ),
            AIMessage("All set."),
        ]
    )
    agent = create_react_agent(
        model,
        [create_write_plan_tool(), create_update_plan_tool(), create_write_note_tool()],
        state_schema=_ReactState,
        checkpointer=InMemorySaver(),
    )
    out = agent.invoke({"messages": [HumanMessage("do it")]}, {"configurable": {"thread_id": "r"}})
    assert out["plan"] == [
        {"content": "inspect", "status": "done"},
        {"content": "report", "status": "in_progress"},
    ]
    assert out["note"] == {"f": "found it"}
    assert out["messages"][-1].content == "All set."


class _ReactState(MessagesState, PlanStateMixin, NoteStateMixin):
    remaining_steps: int


class _AgentState(AgentState, PlanStateMixin, NoteStateMixin):
    """LangChain v1 agent state extended with plan and notes."""


async def test_create_agent_with_state_tools_async() -> None:
    """LangChain's create_agent accepts the mixins in its state schema and runs the tools."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(
                call("write_note", {"file_name": "a", "content": "1"}, "n1"), call("ls", {}, "n2")
            ),
            AIMessage("done"),
        ]
    )
    agent = create_agent(
        model,
        tools=[create_write_note_tool(), create_ls_tool(), create_write_plan_tool()],
        state_schema=_AgentState,
    )
    out = await agent.ainvoke({"messages": [HumanMessage("note it")]})
    assert out["note"] == {"a": "1"}
    assert out["messages"][-1].content == "done"
