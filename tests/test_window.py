"""The model-aware window: profiles, provider-reported usage, and the overflow retry.

The overflow tests go over a real 127.0.0.1 socket with the real `ChatOpenAI` client
(`tests/_wire_server.py`), which answers a 400 `context_length_exceeded` as OpenAI does.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.exceptions import ContextOverflowError
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph

from langgraph_context import create_context_agent
from langgraph_context.agents import CompactionMiddleware, ContextMiddleware
from langgraph_context.compaction import CompactionStateMixin, create_compaction_node
from langgraph_context.errors import ContextWindowError, LangGraphContextError
from langgraph_context.messages import repair_history
from langgraph_context.tokens import count_tokens, is_context_overflow, model_window
from langgraph_context.tokens.window import usage_ratio
from tests._wire_server import WireServer, context_length_exceeded, pairing_error, reply


class _StatusError(Exception):
    """An SDK-like HTTP error: a class name, a status code, a code and a JSON body."""

    def __init__(self, message: str, *, status: int, code: str | None, body: Any) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status
        self.code = code
        self.body = body


class BadRequestError(_StatusError):
    """Named as the OpenAI and Anthropic SDKs name their 400 error."""


def _chat(profile: dict[str, Any] | None = None) -> FakeListChatModel:
    return FakeListChatModel(responses=["ok"], profile=profile)


def _thread(pairs: int = 12) -> list[BaseMessage]:
    """A long thread of exchanges, then the question the model must answer."""
    out: list[BaseMessage] = []
    for i in range(pairs):
        out.append(HumanMessage(f"question {i}: " + "tell me about the harbour " * 12))
        out.append(AIMessage(f"answer {i}: " + "the harbour is deep and old " * 12))
    out.append(HumanMessage("final: what did we decide?"))
    return out


# --- the window from the profile -------------------------------------------------


def test_model_window_reads_the_profile_through_wrappers() -> None:
    """`max_input_tokens` is read from the profile, also through bind/retry wrappers."""
    chat = _chat({"max_input_tokens": 8000})
    assert model_window(chat) == 8000
    assert model_window(chat.bind(stop=["x"])) == 8000
    assert model_window(chat.with_retry()) == 8000
    assert model_window(_chat()) is None
    assert model_window(_chat({"max_input_tokens": 0})) is None
    assert model_window("not a model") is None


def test_compaction_fraction_trigger_takes_the_summarizer_profile() -> None:
    """Without context_window, a fraction trigger uses the summarizer model's profile."""
    node = create_compaction_node(
        trigger_tokens=100,
        trigger=("fraction", 0.5),
        model=_chat({"max_input_tokens": 10}),
        token_counter=len,
    )
    out = node.invoke({"messages": [HumanMessage(str(i)) for i in range(6)]})
    assert out["compaction"]["last"]["trigger"] == "fraction>=0.5"


def test_compaction_fraction_trigger_takes_the_window_in_state() -> None:
    """Without context_window or a profile, the window the agent recorded is used."""
    node = create_compaction_node(trigger_tokens=100, trigger=("fraction", 0.5), token_counter=len)
    messages = [HumanMessage(str(i)) for i in range(6)]
    out = node.invoke({"messages": messages, "token_usage": {"window": 10}})
    assert out["compaction"]["last"]["trigger"] == "fraction>=0.5"
    assert node.invoke({"messages": messages, "token_usage": {"window": 100}}) == {}


def test_compaction_fraction_trigger_without_any_window_raises() -> None:
    """A fraction trigger with no window known anywhere raises at run time, naming it."""
    node = create_compaction_node(trigger_tokens=100, trigger=("fraction", 0.5), token_counter=len)
    with pytest.raises(ValueError, match=r"needs a window: pass context_window"):
        node.invoke({"messages": [HumanMessage("hi")]})


def test_explicit_context_window_wins_over_the_profile() -> None:
    """`context_window` beats the profile in the agent's recorded usage."""
    chat = _chat({"max_input_tokens": 8000})
    agent = create_context_agent(chat, plan_tools=False, note_tools=False, constraint_tools=False)
    out = agent.invoke({"messages": [("user", "hi")]})
    assert out["token_usage"]["window"] == 8000
    chat = _chat({"max_input_tokens": 8000})
    agent = create_context_agent(
        chat, plan_tools=False, note_tools=False, constraint_tools=False, context_window=4000
    )
    assert agent.invoke({"messages": [("user", "hi")]})["token_usage"]["window"] == 4000


def test_context_window_is_checked() -> None:
    """A non-positive `context_window` raises at construction, naming it."""
    with pytest.raises(ValueError, match="context_window must be a positive int, got 0"):
        create_context_agent(_chat(), context_window=0)


# --- provider-reported usage ------------------------------------------------------


def test_usage_ratio_is_clamped() -> None:
    """The reported/counted ratio is clamped to 0.5..4 and needs both numbers."""
    assert usage_ratio({"reported": 150, "counted": 100}) == 1.5
    assert usage_ratio({"reported": 1000, "counted": 10}) == 4.0
    assert usage_ratio({"reported": 1, "counted": 10}) == 0.5
    assert usage_ratio({"window": 10}) is None
    assert usage_ratio(None) is None


def test_reported_usage_scales_the_compaction_trigger() -> None:
    """A provider counting twice the estimate makes the token trigger fire earlier."""
    node = create_compaction_node(trigger_tokens=10, target_tokens=10, token_counter=len)
    messages = [HumanMessage(str(i)) for i in range(6)]
    assert node.invoke({"messages": messages}) == {}
    usage = {"reported": 200, "counted": 100}
    out = node.invoke({"messages": messages, "token_usage": usage})
    last = out["compaction"]["last"]
    assert last["trigger"] == "tokens>=10"
    assert last["usage_ratio"] == 2.0
    assert last["tokens_after"] <= 10


def test_agent_records_reported_and_counted_tokens_on_the_wire(server: WireServer) -> None:
    """The agent keeps the provider's input tokens and its own count of the same request."""
    server.script(reply("hello"))
    agent = create_context_agent(server.chat_model(), system_prompt="Be brief.")
    out = agent.invoke({"messages": [("user", "hi")]})
    usage = out["token_usage"]
    assert usage["reported"] > 0
    assert usage["counted"] > 0


# --- recognizing an overflow ------------------------------------------------------


def test_overflow_is_recognized_by_type_code_and_message() -> None:
    """OpenAI's code, Anthropic's message and langchain-core's type count as overflow."""
    openai_like = BadRequestError(
        "Error code: 400",
        status=400,
        code="context_length_exceeded",
        body={"code": "context_length_exceeded"},
    )
    anthropic_like = BadRequestError(
        "Error code: 400",
        status=400,
        code=None,
        body={
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 210000 tokens > 200000 maximum",
            },
        },
    )
    assert is_context_overflow(openai_like)
    assert is_context_overflow(anthropic_like)
    assert is_context_overflow(ContextOverflowError("too long"))
    other = BadRequestError("bad", status=400, code="invalid_value", body={"message": "bad"})
    assert not is_context_overflow(other)
    limited = _StatusError("prompt is too long", status=429, code="rate_limit_exceeded", body={})
    assert not is_context_overflow(limited)
    assert not is_context_overflow(ValueError("prompt is too long"))


# --- the overflow retry -----------------------------------------------------------


def _assert_valid(history: list[BaseMessage]) -> None:
    assert not repair_history(history).changes


@pytest.mark.parametrize("use_async", [False, True])
def test_agent_overflow_compacts_and_retries_once(server: WireServer, use_async: bool) -> None:
    """An overflow is retried once on a compacted history; the state keeps that history."""
    server.script(context_length_exceeded(), reply("we decided to sail"))
    app = create_context_agent(
        server.chat_model(), plan_tools=False, note_tools=False, checkpointer=InMemorySaver()
    )
    thread = _thread()
    before = count_tokens(thread)
    config: Any = {"configurable": {"thread_id": "t"}}
    if use_async:
        import asyncio

        out = asyncio.run(app.ainvoke({"messages": thread}, config))
    else:
        out = app.invoke({"messages": thread}, config)
    assert len(server.requests) == 2
    assert len(server.messages(1)) < len(server.messages(0))
    assert pairing_error(server.messages(1)) is None
    history = out["messages"]
    assert history[-1].content == "we decided to sail"
    assert history[-2].content == "final: what did we decide?"
    assert count_tokens(history[:-1]) <= before // 2
    _assert_valid(history)
    saved = app.get_state(config).values["messages"]
    assert [m.id for m in saved] == [m.id for m in history]


def test_agent_overflow_target_follows_the_window(server: WireServer) -> None:
    """With a known window, the retry compacts to half of it (in counted tokens)."""
    server.script(context_length_exceeded(), reply("ok"))
    graph = create_context_agent(
        server.chat_model(), plan_tools=False, note_tools=False, context_window=400
    )
    out = graph.invoke({"messages": _thread()})
    assert count_tokens(out["messages"][:-1]) <= 200
    assert len(server.requests) == 2


def test_agent_second_overflow_raises_a_typed_error(server: WireServer) -> None:
    """A second refusal raises `ContextWindowError` naming both sizes; no third call."""
    server.script(context_length_exceeded(), context_length_exceeded(), reply("never"))
    graph = create_context_agent(server.chat_model(), plan_tools=False, note_tools=False)
    thread = _thread()
    sent = count_tokens(thread)
    with pytest.raises(ContextWindowError, match=rf"twice: {sent} tokens sent, then \d+ after"):
        graph.invoke({"messages": thread})
    assert len(server.requests) == 2


def test_context_window_error_is_a_package_runtime_error() -> None:
    """The typed error derives from the package base and `RuntimeError`, with its sizes."""
    error = ContextWindowError(sent_tokens=900, retried_tokens=450, window=None)
    assert isinstance(error, LangGraphContextError)
    assert isinstance(error, RuntimeError)
    assert (error.sent_tokens, error.retried_tokens, error.window) == (900, 450, None)
    with pytest.raises(ContextWindowError, match="window unknown"):
        raise error


@pytest.mark.parametrize("use_async", [False, True])
def test_middleware_overflow_compacts_and_retries_once(server: WireServer, use_async: bool) -> None:
    """`create_agent` with the compaction middleware retries once and keeps the history."""
    server.script(context_length_exceeded(), reply("we decided to sail"))
    middleware = [CompactionMiddleware(trigger_tokens=100_000), ContextMiddleware(assemble=False)]
    agent = create_agent(server.chat_model(), middleware=middleware)
    thread = _thread()
    before = count_tokens(thread)
    if use_async:
        import asyncio

        out = asyncio.run(agent.ainvoke({"messages": thread}))
    else:
        out = agent.invoke({"messages": thread})
    assert len(server.requests) == 2
    assert len(server.messages(1)) < len(server.messages(0))
    history = out["messages"]
    assert history[-1].content == "we decided to sail"
    assert count_tokens(history[:-1]) <= before // 2
    _assert_valid(history)
    assert out["token_usage"]["reported"] > 0


def test_middleware_second_overflow_raises_a_typed_error(server: WireServer) -> None:
    """Through the middleware, a second refusal raises `ContextWindowError` too."""
    server.script(context_length_exceeded(), context_length_exceeded())
    agent = create_agent(
        server.chat_model(), middleware=[CompactionMiddleware(trigger_tokens=100_000)]
    )
    with pytest.raises(ContextWindowError, match="twice"):
        agent.invoke({"messages": _thread()})
    assert len(server.requests) == 2


def test_compaction_node_in_a_graph_reads_the_recorded_usage() -> None:
    """A graph's compaction node sees `token_usage` written by an earlier step."""

    class State(CompactionStateMixin):
        messages: list[BaseMessage]

    graph: StateGraph[Any, Any, Any, Any] = StateGraph(State)
    node = create_compaction_node(
        trigger_tokens=50, mode="view", trigger=("fraction", 0.5), token_counter=len
    )
    graph.add_node("compaction", node)
    graph.add_edge(START, "compaction")
    state = {"messages": [HumanMessage("a")] * 6, "token_usage": {"window": 10}}
    out = graph.compile().invoke(state)
    assert out["compaction"]["last"]["trigger"] == "fraction>=0.5"
