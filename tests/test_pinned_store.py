"""A user's constraints persist in the LangGraph store and surface in their new threads."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_context.pinned import (
    ConstraintStoreStateMixin,
    PinnedStateMixin,
    create_constraint_store_node,
    create_record_constraint_tool,
    create_resolve_constraint_tool,
    load_stored_constraints,
    pinned_packets,
)
from langgraph_context.pinned.store import async_constraints, constraint_store_namespace
from langgraph_context.testing import ScriptedChatModel
from tests.conftest import ai_calls, call
from tests.test_notebook_langgraph_store import postgres_url  # noqa: F401 (the fixture)

RULE = "Never create requirements.txt."


class State(MessagesState, PinnedStateMixin, ConstraintStoreStateMixin):
    """Messages, pinned items and the ids synced with the store."""


def _graph(store: BaseStore, replies: list[AIMessage]) -> tuple[Any, ScriptedChatModel]:
    """START -> constraints -> agent <-> tools, compiled with `store`."""
    model = ScriptedChatModel(responses=replies)
    tools = [create_record_constraint_tool(), create_resolve_constraint_tool()]

    def agent(state: State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(State)
    graph.add_node("constraints", create_constraint_store_node())
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "constraints")
    graph.add_edge("constraints", "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "constraints")
    return graph.compile(checkpointer=InMemorySaver(), store=store), model


def _config(thread: str, user: str = "ann", workspace: str = "repo-a") -> dict[str, Any]:
    """A run config naming the thread, the user and the workspace."""
    return {"configurable": {"thread_id": thread, "user_id": user, "workspace": workspace}}


def _record_in_thread(store: BaseStore, thread: str = "t1", **names: str) -> dict[str, Any]:
    """The user states the rule; the model records it in their words."""
    app, _ = _graph(
        store,
        [ai_calls(call("record_constraint", {"text": RULE}, "r1")), AIMessage("Noted.")],
    )
    return app.invoke({"messages": [HumanMessage(f"Fix CI. {RULE}")]}, _config(thread, **names))


def test_a_rule_from_one_thread_surfaces_in_the_users_next_thread() -> None:
    """The next thread of the same user and workspace starts with the rule, still trusted."""
    store = InMemoryStore()
    first = _record_in_thread(store)
    assert [c["source"] for c in first["constraints"]] == ["user"]
    app, model = _graph(store, [AIMessage("Sure.")])
    second = app.invoke({"messages": [HumanMessage("Add a dependency.")]}, _config("t2"))
    assert [c["text"] for c in second["constraints"]] == [RULE]
    assert [p.is_trusted for p in pinned_packets(second)] == [True]
    assert len(model.seen) == 1


def test_other_users_and_workspaces_do_not_see_the_rule() -> None:
    """The namespace is per user and workspace: nobody else's thread gets the rule."""
    store = InMemoryStore()
    _record_in_thread(store)
    for user, workspace in (("bob", "repo-a"), ("ann", "repo-b")):
        app, _ = _graph(store, [AIMessage("Sure.")])
        out = app.invoke(
            {"messages": [HumanMessage("Hi.")]}, _config(f"{user}-{workspace}", user, workspace)
        )
        assert out.get("constraints", []) == []


def test_a_rule_resolved_in_a_later_thread_stops_surfacing() -> None:
    """Resolving in thread 2 deletes it from the store; thread 3 and thread 1 drop it too."""
    store = InMemoryStore()
    _record_in_thread(store)
    app, _ = _graph(
        store,
        [ai_calls(call("resolve_constraint", {"constraint": RULE}, "x1")), AIMessage("Done.")],
    )
    second = app.invoke({"messages": [HumanMessage("Drop that rule.")]}, _config("t2"))
    assert second["constraints"] == []
    namespace = constraint_store_namespace(_config("t2"))
    assert load_stored_constraints(store, namespace) == []
    app, _ = _graph(store, [AIMessage("Sure.")])
    third = app.invoke({"messages": [HumanMessage("Hi.")]}, _config("t3"))
    assert third.get("constraints", []) == []


def test_a_run_without_a_user_is_refused() -> None:
    """With a store compiled in, a run that names no user fails instead of sharing rules."""
    app, _ = _graph(InMemoryStore(), [AIMessage("Sure.")])
    with pytest.raises(ValueError, match="constraints are kept per user"):
        app.invoke({"messages": [HumanMessage("Hi.")]}, {"configurable": {"thread_id": "t"}})


def test_without_a_store_the_node_does_nothing() -> None:
    """A graph compiled without a store runs as if the node were absent."""
    node = create_constraint_store_node()
    graph = StateGraph(State)
    graph.add_node("constraints", node)
    graph.add_edge(START, "constraints")
    graph.add_edge("constraints", END)
    out = graph.compile().invoke({"messages": [HumanMessage("Hi.")]})
    assert out.get("constraints", []) == []
    assert "stored_constraints" not in out


def test_a_bad_namespace_is_refused_at_construction() -> None:
    """A namespace label with a dot is refused when the node is built."""
    with pytest.raises(ValueError, match="namespace must be a tuple"):
        create_constraint_store_node(namespace=("a.b",))


async def test_the_async_twin_reconciles_both_ways() -> None:
    """`async_constraints` adds the stored rule and stores the thread's own."""
    store = InMemoryStore()
    namespace = constraint_store_namespace({"configurable": {"user_id": "u.1"}})
    assert namespace[-1] == "u%2E1"
    other = {"id": "c-1", "text": "Use uv", "status": "active", "source": "user"}
    await store.aput(namespace, "c-1", other)
    mine = {"id": "c-2", "text": "Be brief", "status": "active", "source": "model"}
    update, seen = await async_constraints(store, namespace, constraints=[mine], seen=[])
    assert update == [other]
    assert seen == ["c-1", "c-2"]
    assert [c["id"] for c in load_stored_constraints(store, namespace)] == ["c-1", "c-2"]


def test_two_workers_on_postgres_share_the_users_rules(postgres_url: str) -> None:  # noqa: F811
    """Two workers with their own connections: one records, the other's thread sees it."""
    from langgraph.store.postgres import PostgresStore

    with (
        PostgresStore.from_conn_string(postgres_url) as one,
        PostgresStore.from_conn_string(postgres_url) as two,
    ):
        one.setup()
        namespace = constraint_store_namespace(_config("w"))
        for item in one.search(namespace, limit=1000):
            one.delete(item.namespace, item.key)
        _record_in_thread(one, "w1")
        app, _ = _graph(two, [AIMessage("Sure.")])
        out = app.invoke({"messages": [HumanMessage("Hi.")]}, _config("w2"))
        assert [(c["text"], c["source"]) for c in out["constraints"]] == [(RULE, "user")]
