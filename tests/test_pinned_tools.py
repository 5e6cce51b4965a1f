"""Constraint tools driven through a compiled StateGraph with ToolNode and a checkpointer."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context import (
    PinnedStateMixin,
    create_record_constraint_tool,
    create_resolve_constraint_tool,
)
from langgraph_context.pinned.tools import MAX_CONSTRAINT_CHARS
from langgraph_context.state import constraint_id
from tests.conftest import ai_calls, call

CFG = {"configurable": {"thread_id": "rules"}}


class State(MessagesState, PinnedStateMixin):
    """Messages plus pinned items."""


def tool_graph(**names: str) -> Any:
    """Compile START -> ToolNode(record, resolve) -> END with a checkpointer."""
    graph = StateGraph(State)
    tools = [
        create_record_constraint_tool(name=names.get("record")),
        create_resolve_constraint_tool(name=names.get("resolve")),
    ]
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile(checkpointer=InMemorySaver())


def run(app: Any, *calls: dict[str, Any]) -> dict[str, Any]:
    """Send one AI turn with `calls`; return the state."""
    return app.invoke({"messages": [ai_calls(*calls)]}, CFG)


def result(state: dict[str, Any], call_id: str) -> ToolMessage:
    """Return the tool result for `call_id`."""
    return next(
        m for m in state["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == call_id
    )


def texts(state: dict[str, Any]) -> list[str]:
    """Active constraint texts in order."""
    return [c["text"] for c in state["constraints"]]


def test_record_then_resolve_by_id_and_by_text() -> None:
    """Rules are recorded in order and removed by id or by text."""
    app = tool_graph()
    state = run(
        app,
        call("record_constraint", {"text": "Use pyproject.toml, never requirements.txt"}, "1"),
        call("record_constraint", {"text": "  Run   ruff before committing "}, "2"),
        call("record_constraint", {"text": "Answer in English"}, "3"),
    )
    rid = constraint_id("Use pyproject.toml, never requirements.txt")
    assert state["constraints"][0] == {
        "id": rid,
        "text": "Use pyproject.toml, never requirements.txt",
        "status": "active",
        "source": "model",
    }
    assert texts(state)[1] == "Run ruff before committing"
    assert result(state, "1").content.startswith(f"Recorded constraint [{rid}] as a note (data)")
    state = run(
        app,
        call("resolve_constraint", {"constraint": rid}, "4"),
        call("resolve_constraint", {"constraint": "answer in english."}, "5"),
    )
    assert texts(state) == ["Run ruff before committing"]
    assert result(state, "5").content.startswith("Resolved constraint [c-")


def test_duplicate_record_changes_nothing() -> None:
    """Recording an active rule again reports its id and leaves state unchanged."""
    app = tool_graph()
    run(app, call("record_constraint", {"text": "Use uv"}, "1"))
    state = run(app, call("record_constraint", {"text": "use UV."}, "2"))
    assert texts(state) == ["Use uv"]
    message = result(state, "2")
    assert message.status == "success"
    assert message.content == f"Already recorded as [{constraint_id('Use uv')}]; nothing changed."


def test_parallel_duplicates_in_one_turn_are_deduped() -> None:
    """Two records of the same rule in one AI turn leave one constraint."""
    app = tool_graph()
    state = run(
        app,
        call("record_constraint", {"text": "Use uv"}, "1"),
        call("record_constraint", {"text": "USE UV"}, "2"),
    )
    assert texts(state) == ["Use uv"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"text": "   "}, "Error: text is empty; pass the rule as one short sentence."),
        (
            {"text": "x" * (MAX_CONSTRAINT_CHARS + 1)},
            f"Error: the rule is {MAX_CONSTRAINT_CHARS + 1} characters; keep it under "
            f"{MAX_CONSTRAINT_CHARS} by stating only the rule itself.",
        ),
    ],
)
def test_record_errors_leave_state_unchanged(args: dict[str, Any], message: str) -> None:
    """Empty or over-long rules come back as error results and nothing is stored."""
    app = tool_graph()
    run(app, call("record_constraint", {"text": "Use uv"}, "0"))
    state = run(app, call("record_constraint", args, "1"))
    assert (result(state, "1").status, result(state, "1").content) == ("error", message)
    assert texts(state) == ["Use uv"]


def test_resolve_unknown_lists_active_rules() -> None:
    """Resolving an unknown rule is refused with the active rules listed."""
    app = tool_graph()
    run(app, call("record_constraint", {"text": "Use uv"}, "0"))
    state = run(app, call("resolve_constraint", {"constraint": "c-nope"}, "1"))
    message = result(state, "1")
    assert message.status == "error"
    assert message.content == (
        "Error: no active constraint matches 'c-nope'; nothing changed. Active constraints:\n"
        f"- [{constraint_id('Use uv')}] Use uv"
    )
    assert texts(state) == ["Use uv"]


def test_resolve_with_no_rules_says_none() -> None:
    """With no rules recorded the error says so."""
    state = run(tool_graph(), call("resolve_constraint", {"constraint": ""}, "1"))
    assert result(state, "1").content.endswith("Active constraints:\n(none)")


def test_custom_names_are_used() -> None:
    """Tools can be renamed."""
    app = tool_graph(record="remember_rule", resolve="forget_rule")
    state = run(app, call("remember_rule", {"text": "Use uv"}, "1"))
    state = run(app, call("forget_rule", {"constraint": "Use uv"}, "2"))
    assert state["constraints"] == []


def test_factories_reject_bad_options() -> None:
    """Bad names, descriptions and message keys are refused at construction."""
    with pytest.raises(ValueError, match="name must be 1-64 characters"):
        create_record_constraint_tool(name="bad name")
    with pytest.raises(ValueError, match="description must be a non-empty string"):
        create_resolve_constraint_tool(description=" ")
    with pytest.raises(ValueError, match="messages_key must be a non-empty string"):
        create_record_constraint_tool(messages_key="")
