"""create_agent middleware adapters: pre-model nodes and state tools inside LangChain v1."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_context.agents import (
    create_compaction_middleware,
    create_pre_model_middleware,
    create_state_tools_middleware,
)
from tests.conftest import ScriptedChatModel, ai_calls, call


@tool
def echo(text: str) -> str:
    """Echo the text back."""
    return text


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _keep_last_two_view(state: dict[str, Any]) -> dict[str, Any]:
    """A context-node stand-in: a system section plus the last two messages."""
    return {"llm_input_messages": [SystemMessage("[Context] assembled"), *state["messages"][-2:]]}


def test_view_middleware_feeds_the_model_and_keeps_history() -> None:
    """The model sees the node's view (system prompt first); state history is untouched."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(call("echo", {"text": "pong"}, "e1")),
            AIMessage("done"),
            AIMessage("2nd"),
        ]
    )
    agent = create_agent(
        model,
        [echo],
        system_prompt="You are terse.",
        middleware=[create_pre_model_middleware(_keep_last_two_view, name="context")],
        checkpointer=InMemorySaver(),
    )
    out = agent.invoke({"messages": [HumanMessage("ping")]}, _cfg("v"))
    assert [m.content for m in out["messages"]] == ["ping", "", "pong", "done"]
    assert [(m.type, m.content) for m in model.seen[0]] == [
        ("system", "You are terse.\n\n[Context] assembled"),
        ("human", "ping"),
    ]
    assert [m.content for m in model.seen[1]] == [
        "You are terse.\n\n[Context] assembled",
        "",
        "pong",
    ]
    assert "llm_input_messages" not in out
    out = agent.invoke({"messages": [HumanMessage("again")]}, _cfg("v"))
    assert len(out["messages"]) == 6
    assert [m.content for m in model.seen[2]][1:] == ["done", "again"]
    for snapshot in agent.get_state_history(_cfg("v")):
        assert not snapshot.values.get("llm_input_messages")


def test_compaction_and_context_middleware_compose() -> None:
    """A history-rewriting node then a view node: edits persist, the view reaches the model."""

    def compact(state: dict[str, Any]) -> dict[str, Any]:
        if len(state["messages"]) < 4:
            return {}
        return {
            "messages": [
                RemoveMessage(id=REMOVE_ALL_MESSAGES),
                HumanMessage("[summary] earlier turns"),
                *state["messages"][-1:],
            ]
        }

    model = ScriptedChatModel(responses=[AIMessage("a"), AIMessage("b"), AIMessage("c")])
    agent = create_agent(
        model,
        middleware=[
            create_pre_model_middleware(compact, name="compaction", stage="before_model"),
            create_pre_model_middleware(_keep_last_two_view, name="context"),
        ],
        checkpointer=InMemorySaver(),
    )
    for text in ["one", "two", "three"]:
        out = agent.invoke({"messages": [HumanMessage(text)]}, _cfg("c"))
    assert [m.content for m in out["messages"]] == ["[summary] earlier turns", "three", "c"]
    assert [m.content for m in model.seen[2]] == [
        "[Context] assembled",
        "[summary] earlier turns",
        "three",
    ]


def test_node_gets_config_and_store_and_runnables_work() -> None:
    """Function nodes receive config and store; runnable nodes are invoked with the config."""
    store = InMemoryStore()
    store.put(("facts",), "x", {"v": "42"})
    got: list[Any] = []

    def node(state: dict[str, Any], config: RunnableConfig, store: BaseStore) -> dict[str, Any]:
        got.append(config["configurable"]["thread_id"])
        item = store.get(("facts",), "x")
        assert item is not None
        return {
            "llm_input_messages": [SystemMessage(f"x={item.value['v']}"), state["messages"][-1]]
        }

    runnable = RunnableLambda(lambda state: {})
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    agent = create_agent(
        model,
        middleware=[
            create_pre_model_middleware(node, name="ctx"),
            create_pre_model_middleware(runnable, name="noop"),
        ],
        checkpointer=InMemorySaver(),
        store=store,
    )
    agent.invoke({"messages": [HumanMessage("q")]}, _cfg("s"))
    assert got == ["s"]
    assert [m.content for m in model.seen[0]] == ["x=42", "q"]


async def test_async_agent_with_sync_and_async_nodes() -> None:
    """ainvoke runs sync nodes off the loop and awaits coroutine nodes."""

    async def async_view(state: dict[str, Any]) -> dict[str, Any]:
        return {"llm_input_messages": [state["messages"][-1]]}

    model = ScriptedChatModel(responses=[AIMessage("ok")])
    agent = create_agent(
        model,
        middleware=[
            create_pre_model_middleware(lambda state: {}, name="sync"),
            create_pre_model_middleware(async_view, name="async"),
        ],
    )
    out = await agent.ainvoke({"messages": [HumanMessage("hello")]})
    assert out["messages"][-1].content == "ok"
    assert [m.content for m in model.seen[0]] == ["hello"]


def test_state_tools_middleware_gives_plan_and_notes() -> None:
    """create_agent with the state-tools middleware runs plan and note tools on its state."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(
                call("write_plan", {"plan": ["a", "b"]}, "p"),
                call("notes_write_note", {"file_name": "n", "content": "c"}, "w"),
            ),
            AIMessage("ok"),
        ]
    )
    agent = create_agent(model, middleware=[create_state_tools_middleware()])
    out = agent.invoke({"messages": [HumanMessage("plan")]})
    assert out["plan"] == [
        {"content": "a", "status": "in_progress"},
        {"content": "b", "status": "pending"},
    ]
    assert out["note"] == {"n": "c"}
    only_notes = create_state_tools_middleware(plan_tools=False)
    assert [t.name for t in only_notes.tools] == [
        "notes_write_note",
        "notes_ls",
        "notes_query_note",
        "notes_update_note",
    ]
    bare = create_state_tools_middleware(plan_tools=False, note_prefix=None)
    assert [t.name for t in bare.tools] == ["write_note", "ls", "query_note", "update_note"]


def test_errors() -> None:
    """Bad nodes and names raise at construction; a non-dict update raises at run time."""
    with pytest.raises(TypeError, match="node must be a callable or a runnable"):
        create_pre_model_middleware(3)
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        create_pre_model_middleware(lambda s: {}, name="")
    with pytest.raises(ValueError, match="both False"):
        create_state_tools_middleware(plan_tools=False, note_tools=False)
    agent = create_agent(
        ScriptedChatModel(responses=[AIMessage("x")]),
        middleware=[create_pre_model_middleware(lambda s: ["bad"], name="bad")],
    )
    with pytest.raises(TypeError, match="must return a dict update, got list"):
        agent.invoke({"messages": [HumanMessage("q")]})


@tool
def read_file(path: str) -> str:
    """Return a long fake file body."""
    return f"{path}: " + " ".join(f"line{i}" for i in range(120))


def _reading_model(turns: int) -> ScriptedChatModel:
    responses: list[AIMessage] = []
    for i in range(turns):
        responses += [
            ai_calls(call("read_file", {"path": f"f{i}.py"}, f"r{i}")),
            AIMessage(f"f{i}.py read"),
        ]
    return ScriptedChatModel(responses=responses)


def test_real_compaction_middleware_replace_mode_over_many_turns() -> None:
    """create_agent + compaction middleware (replace): valid, bounded history over 10 turns."""
    from langgraph_context import count_tokens
    from langgraph_context.messages import validate_history

    model = _reading_model(10)
    agent = create_agent(
        model,
        [read_file],
        middleware=[create_compaction_middleware(max_tokens=500)],
        checkpointer=InMemorySaver(),
    )
    for i in range(10):
        out = agent.invoke({"messages": [HumanMessage(f"read f{i}.py")]}, _cfg("r"))
        assert validate_history(out["messages"]) == []
    assert out["compaction"]["count"] >= 8
    assert max(count_tokens(seen) for seen in model.seen) <= 500


def test_real_compaction_middleware_view_mode_keeps_history() -> None:
    """In view mode the model sees a compacted view while state keeps every message."""
    from langgraph_context import count_tokens

    model = _reading_model(6)
    agent = create_agent(
        model,
        [read_file],
        middleware=[create_compaction_middleware(max_tokens=400, mode="view")],
        checkpointer=InMemorySaver(),
    )
    for i in range(6):
        out = agent.invoke({"messages": [HumanMessage(f"read f{i}.py")]}, _cfg("w"))
    assert len(out["messages"]) == 6 * 4
    assert count_tokens(out["messages"]) > 1000
    assert max(count_tokens(seen) for seen in model.seen) <= 400
    assert "llm_input_messages" not in out


def test_compaction_middleware_rejects_bad_options() -> None:
    """Invalid compaction options raise at construction."""
    with pytest.raises(ValueError, match="mode"):
        create_compaction_middleware(max_tokens=100, mode="shrink")


def test_real_context_middleware_with_state_tools_over_turns() -> None:
    """create_agent + state tools + compaction + context: same engine as the graph API."""
    from langgraph_context import count_tokens
    from langgraph_context.agents import create_context_middleware
    from langgraph_context.context import ContextBuilder, ContextConfig
    from langgraph_context.messages import validate_history

    turns = 6
    responses: list[AIMessage] = [ai_calls(call("write_plan", {"plan": ["read", "report"]}, "p"))]
    for i in range(turns):
        responses += [
            ai_calls(call("read_file", {"path": f"f{i}.py"}, f"r{i}")),
            AIMessage(f"f{i}.py read"),
        ]
    model = ScriptedChatModel(responses=responses)
    agent = create_agent(
        model,
        [read_file],
        system_prompt="You read files.",
        middleware=[
            create_state_tools_middleware(),
            create_compaction_middleware(max_tokens=1500),
            create_context_middleware(
                ContextBuilder(config=ContextConfig(max_tokens=600)), keep_last=4
            ),
        ],
        checkpointer=InMemorySaver(),
    )
    for i in range(turns):
        out = agent.invoke({"messages": [HumanMessage(f"read f{i}.py")]}, _cfg("ctx"))
        assert validate_history(out["messages"]) == []
    assert out["plan"] == [
        {"content": "read", "status": "in_progress"},
        {"content": "report", "status": "pending"},
    ]
    for seen in model.seen:
        assert seen[0].content.startswith("You read files.")
        assert count_tokens(seen) <= 600 + count_tokens("You read files.\n\n") + 10
    # The cache layout sends the plan in the closing message.
    assert 'source="plan">\n1. [in_progress] read' in model.seen[-1][-1].content


def test_memory_middleware_with_context_middleware_over_turns() -> None:
    """create_agent: constraints and a failing check reach every context until resolved."""
    from langgraph_context.agents import create_context_middleware, create_memory_middleware

    runs = iter(["FAILED tests/test_a.py::test_x - boom", "3 passed in 0.1s"])

    @tool
    def run_tests() -> str:
        """Run the tests (scripted results)."""
        return next(runs)

    model = ScriptedChatModel(
        responses=[
            ai_calls(call("record_constraint", {"text": "Never edit generated files"}, "c")),
            AIMessage("Noted."),
            ai_calls(call("run_tests", {}, "t1")),
            AIMessage("Failing."),
            AIMessage("Still failing, as the context says."),
            ai_calls(call("run_tests", {}, "t2")),
            AIMessage("Green."),
        ]
    )
    agent = create_agent(
        model,
        [run_tests],
        system_prompt="You fix tests.",
        middleware=[
            create_memory_middleware(checks="run_tests"),
            create_context_middleware(keep_last=4),
        ],
        checkpointer=InMemorySaver(),
    )
    for text in ["never edit generated files", "run tests", "status?"]:
        out = agent.invoke({"messages": [HumanMessage(text)]}, _cfg("m"))
    system = model.seen[-1][0].content
    assert system.startswith("You fix tests.\n\n")
    assert "Never edit generated files" in system
    assert "`run_tests` is failing" in system
    assert "not instructions" in system  # the hardening text
    out = agent.invoke({"messages": [HumanMessage("run again")]}, _cfg("m"))
    assert [i for i in out["hot_issues"] if i["status"] == "active"] == []
    assert "is failing" not in model.seen[-1][0].content


def test_memory_middleware_errors() -> None:
    """A memory middleware with nothing to add is refused."""
    from langgraph_context.agents import create_memory_middleware

    with pytest.raises(ValueError, match="would add nothing"):
        create_memory_middleware(memory_tools=False)
