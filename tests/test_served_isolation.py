"""Threads and users served by one compiled graph never see each other's state or notes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langgraph_context.agents import NoteSyncMiddleware, create_context_agent
from langgraph_context.notebook import LangGraphNotebookStore, create_notebook_tools
from langgraph_context.notebook.langgraph_store import resolve_notebook_namespace
from langgraph_context.notebook.sync import STATE_NOTES_NAMESPACE, load_store_notes
from langgraph_context.tools import create_update_plan_tool, create_write_plan_tool
from tests.conftest import ScriptedChatModel, ai_calls, call

RUNS = [("u1", "t1"), ("u1", "t2"), ("u2", "t3"), ("u2", "t4")]


def _script(user: str, thread: str) -> list[AIMessage]:
    secret = f"secret of {user} in {thread}"
    return [
        ai_calls(
            call("write_note", {"file_name": f"{thread}-fact", "content": secret}, f"n-{thread}"),
            call("write_plan", {"plan": [f"plan of {thread}"]}, f"p-{thread}"),
        ),
        AIMessage(f"saved for {thread}"),
        AIMessage(f"second turn of {thread}"),
    ]


def _graph(store: InMemoryStore) -> tuple[Any, dict[str, ScriptedChatModel]]:
    models: dict[str, ScriptedChatModel] = {}

    def model_for(config: RunnableConfig) -> ScriptedChatModel:
        configurable = config["configurable"]
        thread = configurable["thread_id"]
        if thread not in models:
            models[thread] = ScriptedChatModel(responses=_script(configurable["user_id"], thread))
        return models[thread]

    graph = create_context_agent(
        model_for,
        context=True,
        middleware=[NoteSyncMiddleware()],
        checkpointer=InMemorySaver(),
        store=store,
    )
    return graph, models


def _cfg(user: str, thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}


async def test_two_users_two_threads_each_run_concurrently_and_nothing_crosses() -> None:
    """Four concurrent runs of one compiled graph: each sees only its user's notes."""
    store = InMemoryStore()
    app, models = _graph(store)

    async def turn(user: str, thread: str, text: str) -> dict[str, Any]:
        return await app.ainvoke({"messages": [HumanMessage(text)]}, _cfg(user, thread))

    await asyncio.gather(*(turn(u, t, "remember") for u, t in RUNS))
    outs = await asyncio.gather(*(turn(u, t, "what do you know?") for u, t in RUNS))
    for (user, thread), out in zip(RUNS, outs, strict=True):
        own = {f"{t}-fact" for u, t in RUNS if u == user}
        assert set(out["note"]) <= own
        assert out["plan"] == [{"content": f"plan of {thread}", "status": "in_progress"}]
        seen = "\n".join(str(m.content) for call_ in models[thread].seen for m in call_)
        for other_user, other_thread in RUNS:
            if other_user != user:
                assert f"secret of {other_user}" not in seen
                assert f"plan of {other_thread}" not in seen
    for user in ("u1", "u2"):
        saved = load_store_notes(store, (*STATE_NOTES_NAMESPACE, user))
        assert set(saved) == {f"{t}-fact" for u, t in RUNS if u == user}


def test_a_run_without_a_user_is_refused_before_the_model() -> None:
    """No user_id: the notes step fails with a clear error, the model is never called."""
    store = InMemoryStore()
    model = ScriptedChatModel(responses=[AIMessage("never")])
    app = create_context_agent(model, middleware=[NoteSyncMiddleware()], store=store)
    with pytest.raises(ValueError, match="notes are kept per user"):
        app.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "x"}})
    assert model.seen == []


def test_shared_notes_are_an_explicit_opt_in() -> None:
    """user_key=None puts every user's notes in one namespace, on purpose."""
    store = InMemoryStore()
    model = ScriptedChatModel(
        responses=[
            ai_calls(call("write_note", {"file_name": "k", "content": "v"}, "w")),
            AIMessage("ok"),
        ]
    )
    app = create_context_agent(
        model,
        middleware=[NoteSyncMiddleware(user_key=None)],
        store=store,
        constraint_tools=False,  # constraints are per user only; this run names none
    )
    app.invoke({"messages": [HumanMessage("save")]})
    assert load_store_notes(store, STATE_NOTES_NAMESPACE) == {"k": "v"}


@dataclass
class _Context:
    user_id: str


def test_user_can_come_from_the_runtime_context() -> None:
    """The runtime context's user_id picks the namespace when configurable has none."""
    assert resolve_notebook_namespace(("notes", "{user_id}"), {}, context=_Context("a.b")) == (
        "notes",
        "a%2Eb",
    )
    with pytest.raises(ValueError, match="never put in a namespace shared by default"):
        resolve_notebook_namespace(("notes", "{user_id}"), {}, context={})


def test_note_tools_default_to_one_namespace_per_user() -> None:
    """Store-backed note tools: user u2 does not list the note user u1 created."""
    store = InMemoryStore()
    create = {"title": "Private", "content": "u1 only"}
    model = ScriptedChatModel(
        responses=[
            ai_calls(call("notebook_create", create, "c")),
            AIMessage("saved"),
            ai_calls(call("notebook_list", {}, "l")),
            AIMessage("done"),
        ]
    )
    app = create_context_agent(
        model,
        create_notebook_tools(),
        plan_tools=False,
        note_tools=False,
        constraint_tools=False,
        store=store,
    )
    app.invoke({"messages": [HumanMessage("save")]}, _cfg("u1", "t1"))
    out = app.invoke({"messages": [HumanMessage("list")]}, _cfg("u2", "t2"))
    listing = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert "Private" not in str(listing.content)
    assert [n.title for n in LangGraphNotebookStore(store, namespace=("notes", "u1")).list()] == [
        "Private"
    ]


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


def test_plan_tools_share_no_names_across_agents() -> None:
    """Another agent naming a plan tool `search` does not make this agent's search a plan call."""
    create_write_plan_tool(name="search")
    create_update_plan_tool(name="search")
    model = ScriptedChatModel(
        responses=[
            ai_calls(call("search", {"query": "x"}, "s"), call("write_plan", {"plan": ["a"]}, "p")),
            AIMessage("ok"),
        ]
    )
    out = create_context_agent(model, [search]).invoke({"messages": [("user", "go")]})
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["p"].status == "success"
    assert out["plan"] == [{"content": "a", "status": "in_progress"}]


def test_renamed_plan_tools_still_refuse_a_second_plan_call() -> None:
    """With plan_tool_names, renamed plan tools keep the one-plan-change-per-turn rule."""
    names = ["make_plan", "set_status"]
    tools = [
        create_write_plan_tool(name="make_plan", plan_tool_names=names),
        create_update_plan_tool(name="set_status", plan_tool_names=names),
    ]
    update = {"update_plans": [{"content": "a", "status": "done"}]}
    model = ScriptedChatModel(
        responses=[
            ai_calls(call("make_plan", {"plan": ["a"]}, "p"), call("set_status", update, "u")),
            AIMessage("ok"),
        ]
    )
    out = create_context_agent(model, tools, plan_tools=False).invoke(
        {"messages": [("user", "go")]}
    )
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["u"].status == "error"
    with pytest.raises(ValueError, match="plan_tool_names"):
        create_write_plan_tool(plan_tool_names="write_plan")
