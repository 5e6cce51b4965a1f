"""The prebuilt agents keep a user's constraints in the graph's store, across threads."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langgraph_context.agents import create_codebase_maintainer_graph, create_context_agent
from langgraph_context.agents.tool_middleware import ConstraintStoreMiddleware
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.pinned import load_stored_constraints
from langgraph_context.pinned.store import constraint_store_namespace
from langgraph_context.testing import ScriptedChatModel
from tests.conftest import ai_calls, call

RULE = "Never create requirements.txt."


def _config(thread: str, user: str = "ann") -> dict[str, Any]:
    """A run config naming the thread and the user."""
    return {"configurable": {"thread_id": thread, "user_id": user}}


def _text(messages: list[BaseMessage]) -> str:
    """Everything the model was shown in one call, as one string."""
    return "\n".join(str(m.content) for m in messages)


def _script() -> list[AIMessage]:
    """Ann records the rule (t1), Bob chats (b1), Ann resolves it (t2), Ann chats (t3)."""
    return [
        ai_calls(call("record_constraint", {"text": RULE, "quoted_from": RULE}, "r1")),
        AIMessage("Noted."),
        AIMessage("Hello Bob."),
        ai_calls(call("resolve_constraint", {"constraint": RULE}, "x1")),
        AIMessage("Dropped."),
        AIMessage("Sure."),
    ]


def _turn(agent: Any, text: str, thread: str, user: str = "ann") -> dict[str, Any]:
    """One user turn in `thread`."""
    return agent.invoke({"messages": [HumanMessage(text)]}, _config(thread, user))


def test_a_rule_reaches_the_users_next_thread_only_and_its_resolution_carries() -> None:
    """Ann's rule from thread 1 is in her thread 2's model input, never in Bob's; resolved, gone."""
    store = InMemoryStore()
    model = ScriptedChatModel(responses=_script())
    agent = create_context_agent(model, store=store, checkpointer=InMemorySaver())
    first = _turn(agent, f"Fix CI. {RULE}", "t1")
    assert [(c["text"], c["source"]) for c in first["constraints"]] == [(RULE, "user")]
    ann = constraint_store_namespace(_config("t1"))
    assert [c["text"] for c in load_stored_constraints(store, ann)] == [RULE]
    bob = _turn(agent, "Hi.", "b1", user="bob")
    assert RULE not in _text(model.seen[2])
    assert bob.get("constraints", []) == []
    second = _turn(agent, "Drop that rule.", "t2")
    assert RULE in _text(model.seen[3])
    assert second["constraints"] == []
    assert load_stored_constraints(store, ann) == []
    third = _turn(agent, "Add a dependency.", "t3")
    assert RULE not in _text(model.seen[5])
    assert third.get("constraints", []) == []


def test_the_async_run_carries_the_rule_to_the_next_thread() -> None:
    """With `ainvoke` (the store's async methods) Ann's thread 2 still sees her rule."""
    store = InMemoryStore()
    model = ScriptedChatModel(responses=[*_script()[:2], AIMessage("Sure.")])
    agent = create_context_agent(model, store=store, checkpointer=InMemorySaver())

    async def run() -> dict[str, Any]:
        await agent.ainvoke({"messages": [HumanMessage(f"Fix CI. {RULE}")]}, _config("t1"))
        return await agent.ainvoke({"messages": [HumanMessage("Go on.")]}, _config("t2"))

    second = asyncio.run(run())
    assert [c["text"] for c in second["constraints"]] == [RULE]
    assert RULE in _text(model.seen[2])


def test_a_run_with_a_store_but_no_user_is_refused() -> None:
    """A store without a user would mix users' rules: the run fails naming `user_id`."""
    model = ScriptedChatModel(responses=[AIMessage("hi")])
    agent = create_context_agent(model, store=InMemoryStore(), checkpointer=InMemorySaver())
    with pytest.raises(InvalidArgumentError, match="user_id"):
        agent.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t"}})


def test_without_a_store_the_agent_has_no_constraint_store_step() -> None:
    """No store: no hook node and no `stored_constraints` key; with one, the hook is there."""
    model = ScriptedChatModel(responses=[AIMessage("hi")])
    plain = create_context_agent(model, checkpointer=InMemorySaver())
    assert "constraint_store.before_model" not in plain.get_graph().nodes
    out = plain.invoke({"messages": [HumanMessage("hi")]}, _config("t"))
    assert "stored_constraints" not in out
    stored = create_context_agent(model, store=InMemoryStore())
    assert "constraint_store.before_model" in stored.get_graph().nodes


def test_an_unchanged_sync_writes_no_state() -> None:
    """The hook returns `None` when nothing changed, and a write when a rule arrives."""
    store = InMemoryStore()
    model = ScriptedChatModel(responses=[*_script()[:2], AIMessage("b")])
    agent = create_context_agent(model, store=store, checkpointer=InMemorySaver())

    def hook_updates(text: str, thread: str) -> list[Any]:
        chunks = agent.stream(
            {"messages": [HumanMessage(text)]}, _config(thread), stream_mode="updates"
        )
        return [
            c["constraint_store.before_model"]
            for c in chunks
            if "constraint_store.before_model" in c
        ]

    recorded = hook_updates(f"Fix CI. {RULE}", "t1")
    assert recorded[0] is None
    assert recorded[1] == {"stored_constraints": [recorded[1]["stored_constraints"][0]]}
    assert hook_updates("Again.", "t1") == [None]


def test_a_blank_workspace_is_refused() -> None:
    """`workspace` names a workspace or is `None`."""
    with pytest.raises(InvalidArgumentError, match="workspace"):
        ConstraintStoreMiddleware(workspace="")


def test_the_maintainer_keeps_rules_per_user_and_workspace_path(tmp_path: Path) -> None:
    """The maintainer stores Ann's rule under her user and its resolved workspace path."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    store = InMemoryStore()
    model = ScriptedChatModel(responses=_script()[:2])
    graph = create_codebase_maintainer_graph(
        model, workspace=workspace, store=store, checkpointer=InMemorySaver()
    )
    _turn(graph, f"Fix CI. {RULE}", "t1")
    config = {"configurable": {"user_id": "ann", "workspace": str(workspace.resolve())}}
    stored = load_stored_constraints(store, constraint_store_namespace(config))
    assert [c["text"] for c in stored] == [RULE]
