"""Note tools driven through a compiled StateGraph with the default ToolNode."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context import (
    NoteStateMixin,
    create_ls_tool,
    create_query_note_tool,
    create_update_note_tool,
    create_write_note_tool,
)
from langgraph_context.tools.state_notes import fresh_note_name
from tests.conftest import ai_calls, call

CFG = {"configurable": {"thread_id": "notes"}}


class State(MessagesState, NoteStateMixin):
    """Messages plus notes."""


def note_graph() -> Any:
    """Compile START -> ToolNode -> END over the four note tools, with a checkpointer."""
    graph = StateGraph(State)
    tools = [
        create_write_note_tool(),
        create_ls_tool(),
        create_query_note_tool(),
        create_update_note_tool(),
    ]
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile(checkpointer=InMemorySaver())


def run(app: Any, *calls: dict[str, Any]) -> dict[str, Any]:
    """Send one AI turn with `calls`; return the state."""
    return app.invoke({"messages": [ai_calls(*calls)]}, CFG)


def results(state: dict[str, Any]) -> dict[str, ToolMessage]:
    """Map tool_call_id -> ToolMessage for every tool result in the state."""
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


def test_write_then_query_and_ls() -> None:
    """A written note can be listed and read back exactly."""
    app = note_graph()
    run(app, call("write_note", {"file_name": "facts", "content": "db=postgres"}, "w"))
    state = run(app, call("ls", {}, "l"), call("query_note", {"file_name": "facts"}, "q"))
    assert state["note"] == {"facts": "db=postgres"}
    res = results(state)
    assert "facts (11 chars)" in res["l"].content
    assert res["q"].content == "db=postgres"


def test_collision_gets_fresh_name_that_never_clobbers() -> None:
    """A taken name becomes name_1, then name_2, skipping keys that already exist."""
    app = note_graph()
    run(app, call("write_note", {"file_name": "a", "content": "one"}, "w1"))
    run(app, call("write_note", {"file_name": "a_1", "content": "manual"}, "w2"))
    state = run(app, call("write_note", {"file_name": "a", "content": "two"}, "w3"))
    assert state["note"] == {"a": "one", "a_1": "manual", "a_2": "two"}
    assert "'a_2' written ('a' was taken)" in results(state)["w3"].content


def test_parallel_writes_in_one_turn_all_land() -> None:
    """Three writes of one name in one AI turn produce three distinct notes."""
    app = note_graph()
    run(app, call("write_note", {"file_name": "log", "content": "0"}, "w0"))
    state = run(
        app,
        call("write_note", {"file_name": "log", "content": "1"}, "p1"),
        call("write_note", {"file_name": "log", "content": "2"}, "p2"),
        call("write_note", {"file_name": "other", "content": "x"}, "p3"),
        call("write_note", {"file_name": "log", "content": "3"}, "p4"),
    )
    assert state["note"] == {"log": "0", "log_1": "1", "log_2": "2", "other": "x", "log_3": "3"}
    res = results(state)
    assert "'log_2'" in res["p2"].content
    assert "'log_3'" in res["p4"].content


@pytest.mark.parametrize("name", ["", "   ", "x" * 201])
def test_write_rejects_bad_names(name: str) -> None:
    """Blank or over-long note names are refused without touching the notes."""
    app = note_graph()
    state = run(app, call("write_note", {"file_name": name, "content": "c"}, "w"))
    assert state.get("note", {}) == {}
    assert results(state)["w"].status == "error"
    assert "file_name must be" in results(state)["w"].content


def test_update_replaces_once_and_all() -> None:
    """update_note replaces a unique snippet, or every occurrence with replace_all."""
    app = note_graph()
    run(app, call("write_note", {"file_name": "n", "content": "a b a"}, "w"))
    state = run(
        app,
        call("update_note", {"file_name": "n", "origin_content": "b", "new_content": "B"}, "u1"),
    )
    assert state["note"]["n"] == "a B a"
    state = run(
        app,
        call(
            "update_note",
            {"file_name": "n", "origin_content": "a", "new_content": "z", "replace_all": True},
            "u2",
        ),
    )
    assert state["note"]["n"] == "z B z"
    assert "2 replacement(s)" in results(state)["u2"].content


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            {"file_name": "missing", "origin_content": "a", "new_content": "b"},
            "no note named 'missing'",
        ),
        ({"file_name": "n", "origin_content": "", "new_content": "b"}, "origin_content is empty"),
        ({"file_name": "n", "origin_content": "qq", "new_content": "b"}, "was not found"),
        ({"file_name": "n", "origin_content": "a", "new_content": "b"}, "occurs 2 times"),
        ({"file_name": " ", "origin_content": "a", "new_content": "b"}, "file_name must be"),
    ],
)
def test_update_errors_leave_notes_unchanged(args: dict[str, Any], needle: str) -> None:
    """Every update mistake returns an error ToolMessage and changes nothing."""
    app = note_graph()
    run(app, call("write_note", {"file_name": "n", "content": "a-a"}, "w"))
    state = run(app, call("update_note", args, "u"))
    assert state["note"] == {"n": "a-a"}
    msg = results(state)["u"]
    assert msg.status == "error"
    assert needle in msg.content


def test_two_updates_of_one_note_in_one_turn() -> None:
    """The second same-turn edit of a note is refused instead of silently lost."""
    app = note_graph()
    run(app, call("write_note", {"file_name": "n", "content": "x y"}, "w"))
    state = run(
        app,
        call("update_note", {"file_name": "n", "origin_content": "x", "new_content": "X"}, "u1"),
        call("update_note", {"file_name": "n", "origin_content": "y", "new_content": "Y"}, "u2"),
    )
    assert state["note"] == {"n": "X y"}
    assert results(state)["u2"].status == "error"
    assert "earlier update_note call" in results(state)["u2"].content


def test_query_missing_lists_existing() -> None:
    """Querying an unknown note names the notes that exist."""
    app = note_graph()
    run(app, call("write_note", {"file_name": "alpha", "content": "1"}, "w"))
    state = run(app, call("query_note", {"file_name": "beta"}, "q"))
    msg = results(state)["q"]
    assert msg.status == "error"
    assert "Existing notes: alpha" in msg.content


def test_ls_empty() -> None:
    """ls on an empty notebook says so."""
    app = note_graph()
    state = run(app, call("ls", {}, "l"))
    assert results(state)["l"].content == "No notes yet."


async def test_note_tools_async() -> None:
    """The note tools work through the async graph API, parallel writes included."""
    app = note_graph()
    state = await app.ainvoke(
        {
            "messages": [
                ai_calls(
                    call("write_note", {"file_name": "k", "content": "1"}, "a"),
                    call("write_note", {"file_name": "k", "content": "2"}, "b"),
                )
            ]
        },
        CFG,
    )
    assert state["note"] == {"k": "1", "k_1": "2"}


def test_fresh_note_name() -> None:
    """fresh_note_name picks the first free suffix."""
    assert fresh_note_name("a", set()) == "a"
    assert fresh_note_name("a", {"a", "a_1", "a_3"}) == "a_2"


@pytest.mark.parametrize(
    "factory",
    [create_write_note_tool, create_ls_tool, create_query_note_tool, create_update_note_tool],
)
def test_factories_reject_bad_names(factory: Any) -> None:
    """Invalid tool names raise at construction."""
    with pytest.raises(ValueError, match="name must be"):
        factory(name="no spaces allowed")
    with pytest.raises(ValueError, match="description must be"):
        factory(description="")


def test_write_and_update_messages_key_validation() -> None:
    """An empty messages_key raises at construction."""
    with pytest.raises(ValueError, match="messages_key must be"):
        create_write_note_tool(messages_key="")
    with pytest.raises(ValueError, match="messages_key must be"):
        create_update_note_tool(messages_key="")
