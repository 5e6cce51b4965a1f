"""Plan tools driven through a compiled StateGraph with the default ToolNode."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from typing_extensions import TypedDict

from langgraph_context import (
    PlanStateMixin,
    create_update_plan_tool,
    create_write_plan_tool,
)
from tests.conftest import ai_calls, call


class State(MessagesState, PlanStateMixin):
    """Messages plus a plan."""


def plan_graph(**kwargs: Any) -> Any:
    """Compile START -> ToolNode -> END over the plan tools, with a checkpointer."""
    graph = StateGraph(State)
    graph.add_node(
        "tools", ToolNode([create_write_plan_tool(**kwargs), create_update_plan_tool(**kwargs)])
    )
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile(checkpointer=InMemorySaver())


CFG = {"configurable": {"thread_id": "t"}}


def run(app: Any, *calls: dict[str, Any]) -> dict[str, Any]:
    """Send one AI turn with `calls` and return the resulting state."""
    return app.invoke({"messages": [ai_calls(*calls)]}, CFG)


def last_tool(state: dict[str, Any]) -> ToolMessage:
    """Return the newest ToolMessage in the state."""
    msg = state["messages"][-1]
    assert isinstance(msg, ToolMessage)
    return msg


def test_write_plan_marks_first_in_progress() -> None:
    """write_plan sets the first step in_progress and the rest pending."""
    app = plan_graph()
    state = run(app, call("write_plan", {"plan": ["read", "fix", "test"]}, "c1"))
    assert state["plan"] == [
        {"content": "read", "status": "in_progress"},
        {"content": "fix", "status": "pending"},
        {"content": "test", "status": "pending"},
    ]
    msg = last_tool(state)
    assert msg.status == "success"
    assert "Start with: read" in msg.content


@pytest.mark.parametrize(
    ("plan", "needle"),
    [([], "plan is empty"), (["a", "  "], "non-empty"), (["a", "b", "a"], "distinct")],
)
def test_write_plan_rejects_bad_plans(plan: list[str], needle: str) -> None:
    """Empty, blank and duplicate plans are refused and the state is unchanged."""
    app = plan_graph()
    run(app, call("write_plan", {"plan": ["keep"]}, "c0"))
    state = run(app, call("write_plan", {"plan": plan}, "c1"))
    assert state["plan"] == [{"content": "keep", "status": "in_progress"}]
    msg = last_tool(state)
    assert msg.status == "error"
    assert needle in msg.content


def test_update_plan_done_promotes_next_pending() -> None:
    """Finishing the current step moves the first pending step to in_progress."""
    app = plan_graph()
    run(app, call("write_plan", {"plan": ["a", "b", "c"]}, "c1"))
    state = run(
        app, call("update_plan", {"update_plans": [{"content": "a", "status": "done"}]}, "c2")
    )
    assert [i["status"] for i in state["plan"]] == ["done", "in_progress", "pending"]
    assert "Now in progress: b" in last_tool(state).content


def test_update_plan_explicit_switch_and_all_done() -> None:
    """Naming the next in_progress step is honoured; finishing all reports it."""
    app = plan_graph()
    run(app, call("write_plan", {"plan": ["a", "b"]}, "c1"))
    state = run(
        app,
        call(
            "update_plan",
            {
                "update_plans": [
                    {"content": "a", "status": "done"},
                    {"content": "b", "status": "in_progress"},
                ]
            },
            "c2",
        ),
    )
    assert [i["status"] for i in state["plan"]] == ["done", "in_progress"]
    state = run(
        app, call("update_plan", {"update_plans": [{"content": "b", "status": "done"}]}, "c3")
    )
    assert [i["status"] for i in state["plan"]] == ["done", "done"]
    assert "All steps are done" in last_tool(state).content


@pytest.mark.parametrize(
    ("updates", "needles"),
    [
        (
            [{"content": "zzz", "status": "done"}, {"content": "yyy", "status": "done"}],
            ["'zzz'", "'yyy'"],
        ),
        ([{"content": "a", "status": "finished"}], ["invalid status", "'finished'"]),
        ([{"content": "b", "status": "in_progress"}], ["'a' is still in_progress"]),
        (
            [{"content": "b", "status": "in_progress"}, {"content": "c", "status": "in_progress"}],
            ["only one step"],
        ),
        (
            [{"content": "a", "status": "done"}, {"content": "a", "status": "pending"}],
            ["two different statuses"],
        ),
        ([], ["no updates"]),
    ],
)
def test_update_plan_errors_are_atomic(updates: list[dict[str, str]], needles: list[str]) -> None:
    """A bad update changes nothing and explains every problem and the open steps."""
    app = plan_graph()
    first = run(app, call("write_plan", {"plan": ["a", "b", "c"]}, "c1"))
    before = [dict(i) for i in first["plan"]]
    mixed = (
        [*updates, {"content": "c", "status": "done"}]
        if updates and "zzz" in str(updates)
        else updates
    )
    state = run(app, call("update_plan", {"update_plans": mixed}, "c2"))
    assert state["plan"] == before
    msg = last_tool(state)
    assert msg.status == "error"
    for needle in needles:
        assert needle in msg.content
    assert "nothing was changed" in msg.content
    assert "Open steps" in msg.content


def test_update_plan_without_plan() -> None:
    """update_plan before any write_plan tells the model to write a plan first."""
    app = plan_graph()
    state = run(
        app, call("update_plan", {"update_plans": [{"content": "a", "status": "done"}]}, "c1")
    )
    assert "plan" not in state or state["plan"] == []
    assert "call write_plan first" in last_tool(state).content


def test_update_plan_does_not_mutate_injected_state() -> None:
    """The plan object passed in is never modified in place."""
    tool = create_update_plan_tool()
    plan = [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "pending"}]
    snapshot = [dict(i) for i in plan]
    state = {"messages": [], "plan": plan}
    out = tool.invoke(
        {
            "type": "tool_call",
            "name": "update_plan",
            "id": "x",
            "args": {"update_plans": [{"content": "a", "status": "done"}], "state": state},
        }
    )
    assert plan == snapshot
    assert out.update["plan"][1]["status"] == "in_progress"


def test_second_plan_call_in_one_turn_is_refused() -> None:
    """Only the first plan call of an AI turn applies; later ones get an error."""
    app = plan_graph()
    state = run(
        app,
        call("write_plan", {"plan": ["a", "b"]}, "c1"),
        call("update_plan", {"update_plans": [{"content": "a", "status": "done"}]}, "c2"),
    )
    assert state["plan"] == [
        {"content": "a", "status": "in_progress"},
        {"content": "b", "status": "pending"},
    ]
    results = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert results["c1"].status == "success"
    assert results["c2"].status == "error"
    assert "one plan change per turn" in results["c2"].content


async def test_plan_tools_async() -> None:
    """The plan tools work through the async graph API."""
    app = plan_graph()
    await app.ainvoke({"messages": [ai_calls(call("write_plan", {"plan": ["x", "y"]}, "a1"))]}, CFG)
    state = await app.ainvoke(
        {
            "messages": [
                ai_calls(
                    call(
                        "update_plan", {"update_plans": [{"content": "x", "status": "done"}]}, "a2"
                    )
                )
            ]
        },
        CFG,
    )
    assert [i["status"] for i in state["plan"]] == ["done", "in_progress"]


def test_messages_key_routes_tool_messages() -> None:
    """messages_key sends the ToolMessage to another messages channel."""

    class Alt(PlanStateMixin, TypedDict):
        chat: Annotated[list[Any], add_messages]

    graph = StateGraph(Alt)
    graph.add_node(
        "tools", ToolNode([create_write_plan_tool(messages_key="chat")], messages_key="chat")
    )
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    out = graph.compile().invoke({"chat": [ai_calls(call("write_plan", {"plan": ["a"]}, "k"))]})
    assert isinstance(out["chat"][-1], ToolMessage)
    assert out["plan"] == [{"content": "a", "status": "in_progress"}]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"name": "bad name"}, "name must be"),
        ({"name": ""}, "name must be"),
        ({"description": "  "}, "description must be"),
        ({"messages_key": ""}, "messages_key must be"),
    ],
)
def test_factories_reject_bad_arguments(kwargs: dict[str, Any], match: str) -> None:
    """Programmer mistakes raise at construction and name the parameter."""
    with pytest.raises(ValueError, match=match):
        create_write_plan_tool(**kwargs)
    with pytest.raises(ValueError, match=match):
        create_update_plan_tool(**kwargs)


def test_custom_name_and_description() -> None:
    """name and description are applied to the tool the model sees."""
    tool = create_write_plan_tool(name="make_plan", description="Plan it.")
    assert (tool.name, tool.description) == ("make_plan", "Plan it.")
    schema = create_update_plan_tool().tool_call_schema.model_json_schema()
    assert "tool_call_id" not in str(schema)
    assert "in_progress" in str(schema)


def test_plan_survives_unrelated_turns() -> None:
    """A plan written once stays in state across later AI turns in the thread."""
    app = plan_graph()
    run(app, call("write_plan", {"plan": ["a"]}, "c1"))
    state = app.invoke({"messages": [AIMessage("just talking")]}, CFG)
    assert state["plan"] == [{"content": "a", "status": "in_progress"}]
