"""The assembled model input is computed per call: never checkpointed, never streamed."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context.agents import (
    CompactionMiddleware,
    ContextMiddleware,
    StateToolsMiddleware,
    create_context_agent,
)
from tests.conftest import ScriptedChatModel, ai_calls, call

LLM_INPUT_KEY = "llm_input_messages"  # the old state key: no checkpoint may hold it

SYSTEM = "You are terse."


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return f"{topic}: forty-two"


def _script() -> list[AIMessage]:
    return [
        ai_calls(call("lookup", {"topic": "answer"}, "l1")),
        AIMessage("It is forty-two."),
        AIMessage("Still forty-two."),
    ]


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _streamed(graph: Any, text: str, cfg: dict[str, Any]) -> list[BaseMessage]:
    chunks = graph.stream({"messages": [HumanMessage(text)]}, cfg, stream_mode="messages")
    return [message for message, _meta in chunks]


def _assert_private(graph: Any, streamed: list[BaseMessage], cfg: dict[str, Any]) -> None:
    assert streamed
    assert not [m for m in streamed if isinstance(m, SystemMessage)]
    assert not [m for m in streamed if SYSTEM in str(m.content)]
    history = list(graph.get_state_history(cfg))
    assert history
    for snapshot in history:
        assert not snapshot.values.get(LLM_INPUT_KEY)
        for message in snapshot.values.get("messages", []):
            assert not isinstance(message, SystemMessage)


def test_context_agent_neither_stores_nor_streams_the_prompt() -> None:
    """create_context_agent(context=True): no checkpoint holds the view, no stream shows it."""
    model = ScriptedChatModel(responses=_script())
    graph = create_context_agent(
        model, [lookup], system_prompt=SYSTEM, context=True, checkpointer=InMemorySaver()
    )
    cfg = _cfg("private")
    streamed = _streamed(graph, "what is the answer?", cfg)
    streamed += _streamed(graph, "and now?", cfg)
    assert model.seen[0][0].content.startswith(SYSTEM)
    assert {m.content for m in streamed} >= {"It is forty-two.", "Still forty-two."}
    _assert_private(graph, streamed, cfg)


async def test_context_agent_async_stream_is_private_too() -> None:
    """The async path assembles the view the same way and keeps it out of state."""
    model = ScriptedChatModel(responses=_script())
    graph = create_context_agent(
        model, [lookup], system_prompt=SYSTEM, context=True, checkpointer=InMemorySaver()
    )
    cfg = _cfg("private-async")
    streamed = [
        m
        async for m, _ in graph.astream(
            {"messages": [HumanMessage("what is the answer?")]}, cfg, stream_mode="messages"
        )
    ]
    assert model.seen[0][0].content.startswith(SYSTEM)
    _assert_private(graph, streamed, cfg)


def test_same_state_sends_the_same_bytes() -> None:
    """The view is recomputed per call, deterministically: same state, same model input."""
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    graph = create_context_agent(model, [lookup], system_prompt=SYSTEM, context=True)
    state = {"messages": [HumanMessage("hi")], "plan": [{"content": "a", "status": "pending"}]}
    graph.invoke(state)
    graph.invoke(state)
    first, second = ([m.model_dump_json() for m in seen] for seen in model.seen)
    assert first == second


def test_middleware_neither_stores_nor_streams_the_prompt() -> None:
    """create_agent with the context and view-mode compaction middleware stays private."""
    model = ScriptedChatModel(responses=_script())
    agent = create_agent(
        model,
        [lookup],
        system_prompt=SYSTEM,
        middleware=[
            CompactionMiddleware(10_000, mode="view"),
            ContextMiddleware(),
            StateToolsMiddleware(),
        ],
        checkpointer=InMemorySaver(),
    )
    cfg = _cfg("mw-private")
    streamed = _streamed(agent, "what is the answer?", cfg)
    streamed += _streamed(agent, "and now?", cfg)
    assert model.seen[0][0].content.startswith(SYSTEM)
    assert len(model.seen) == 3
    _assert_private(agent, streamed, cfg)


def _long_history(rounds: int) -> list[Any]:
    """A history of `rounds` lookups with bulky results, then a question."""
    history: list[Any] = [HumanMessage("Look things up.")]
    for i in range(rounds):
        history.append(ai_calls(call("lookup", {"topic": f"t{i}"}, f"h{i}")))
        history.append(ToolMessage(f"t{i}: " + "detail " * 60, tool_call_id=f"h{i}"))
    return history


def _view_agent(model: ScriptedChatModel, **kwargs: Any) -> Any:
    compaction = CompactionMiddleware(400, mode="view")
    return create_context_agent(
        model,
        [lookup],
        system_prompt=SYSTEM,
        compaction=compaction,
        **kwargs,
        checkpointer=InMemorySaver(),
    )


def test_view_mode_compaction_in_the_agent_is_never_checkpointed() -> None:
    """A view-mode compaction: the model gets the compacted view per call, no checkpoint
    (between any two nodes) holds it, only the record is kept."""
    model = ScriptedChatModel(responses=_script())
    graph = _view_agent(model)
    cfg = _cfg("view-compaction")
    graph.invoke({"messages": [*_long_history(8), HumanMessage("what is the answer?")]}, cfg)
    stored = graph.get_state(cfg).values
    assert len(model.seen[0]) < len(stored["messages"]) - 4  # the model saw the view
    assert model.seen[0][0].content.startswith(SYSTEM)
    assert stored["compaction"]["count"] >= 1
    assert stored["compaction"]["last"]["mode"] == "view"
    history = list(graph.get_state_history(cfg))
    assert len(history) >= 4
    for snapshot in history:
        assert not snapshot.values.get(LLM_INPUT_KEY)
    assert not [n for n in graph.get_graph().nodes if n.startswith("compaction")]


async def test_view_mode_compaction_async_stream_is_private() -> None:
    """The async path compacts per call as well; the stream shows answers only."""
    model = ScriptedChatModel(responses=_script())
    graph = _view_agent(model)
    cfg = _cfg("view-compaction-async")
    streamed = [
        m
        async for m, _ in graph.astream(
            {"messages": [*_long_history(8), HumanMessage("what is the answer?")]},
            cfg,
            stream_mode="messages",
        )
    ]
    assert not [m for m in streamed if isinstance(m, SystemMessage)]
    assert not [m for m in streamed if isinstance(m, HumanMessage)]
    for snapshot in [s async for s in graph.aget_state_history(cfg)]:
        assert not snapshot.values.get(LLM_INPUT_KEY)
