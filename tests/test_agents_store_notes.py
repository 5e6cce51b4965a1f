"""Store-synced notes: notes outlive a thread through a LangGraph store."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langgraph_context.agents import NoteSyncMiddleware, create_context_agent
from langgraph_context.notebook import create_load_notes_node, create_save_notes_node
from langgraph_context.notebook.sync import STATE_NOTES_NAMESPACE, load_store_notes
from tests.conftest import ScriptedChatModel, ai_calls, call


def _graph(model: ScriptedChatModel, **options: Any) -> Any:
    return create_context_agent(model, middleware=[NoteSyncMiddleware()], **options)


def _cfg(thread: str, user: str = "u") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def test_notes_cross_threads_through_the_store() -> None:
    """A note written in one thread is in the store and loaded into the next thread."""
    store = InMemoryStore()
    model = ScriptedChatModel(
        responses=[
            ai_calls(call("write_note", {"file_name": "k", "content": "v1"}, "w")),
            AIMessage("saved"),
            ai_calls(
                call(
                    "update_note",
                    {"file_name": "k", "origin_content": "v1", "new_content": "v2"},
                    "u",
                )
            ),
            AIMessage("updated"),
        ]
    )
    graph = _graph(model, checkpointer=InMemorySaver(), store=store)
    graph.invoke({"messages": [HumanMessage("save")]}, _cfg("a"))
    assert load_store_notes(store, (*STATE_NOTES_NAMESPACE, "u")) == {"k": "v1"}
    out = graph.invoke({"messages": [HumanMessage("edit")]}, _cfg("b"))
    assert out["note"] == {"k": "v2"}
    assert "[note:k, 2 lines] Note k:\nv1" in model.seen[2][0].content  # the default context
    assert load_store_notes(store, (*STATE_NOTES_NAMESPACE, "u")) == {"k": "v2"}
    assert load_store_notes(store, (*STATE_NOTES_NAMESPACE, "other")) == {}


def test_store_version_wins_over_a_stale_thread() -> None:
    """A thread whose copy is stale gets the store's newer note before its next model call."""
    store = InMemoryStore()
    store.put((*STATE_NOTES_NAMESPACE, "u"), "k", {"content": "new"})
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    graph = _graph(model, checkpointer=InMemorySaver(), store=store)
    out = graph.invoke({"messages": [HumanMessage("hi")], "note": {"k": "old"}}, _cfg("s"))
    assert out["note"] == {"k": "new"}


def test_many_notes_are_paged() -> None:
    """More notes than one search page are all loaded."""
    store = InMemoryStore()
    for i in range(250):
        store.put(("ns", "u"), f"n{i:03d}", {"content": str(i)})
    store.put(("ns", "u", "deeper"), "skip", {"content": "no"})
    notes = load_store_notes(store, ("ns", "u"))
    assert len(notes) == 250
    assert "skip" not in notes


def test_without_a_store_the_nodes_do_nothing() -> None:
    """Compiled without a store, the sync nodes are no-ops."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(call("write_note", {"file_name": "k", "content": "v"}, "w")),
            AIMessage("x"),
        ]
    )
    out = _graph(model).invoke({"messages": [HumanMessage("hi")]})
    assert out["note"] == {"k": "v"}


def test_construction_errors() -> None:
    """Bad namespaces and user keys are rejected at construction."""
    with pytest.raises(ValueError, match="namespace must be a non-empty tuple"):
        create_load_notes_node(namespace=())
    with pytest.raises(ValueError, match="namespace must be a non-empty tuple"):
        create_save_notes_node(namespace=("a.b",))
    with pytest.raises(ValueError, match="user_key must be a non-empty string"):
        create_save_notes_node(user_key="")
