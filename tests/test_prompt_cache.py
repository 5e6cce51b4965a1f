"""The provider's prompt cache, measured per call in state, and its per-provider marks."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context.agents import create_context_agent, session_report
from langgraph_context.context import mark_cache_points
from langgraph_context.context.breakpoints import uses_cache_points, uses_prompt_cache_key
from langgraph_context.providers.prompt_cache import (
    MAX_RECENT_CALLS,
    PromptCacheMiddleware,
    cache_cost,
    cache_hit_rate,
    merge_cache_usage,
)
from langgraph_context.testing import ScriptedChatModel

PRICES = {"input": 2.0, "cached_input": 0.5, "cache_write": 2.0, "output": 8.0}
LONG = "The agent reads the repository and reports what it finds. " * 200  # ~2,400 tokens


def _answer(text: str, tokens: int, read: int, write: int = 0) -> AIMessage:
    details = {"cache_read": read, "cache_creation": write}
    usage = {
        "input_tokens": tokens,
        "output_tokens": 10,
        "total_tokens": tokens + 10,
        "input_token_details": details,
    }
    return AIMessage(text, usage_metadata=usage)  # type: ignore[arg-type]


CALLS = st.fixed_dictionaries(
    {"calls": st.integers(0, 3), "input": st.integers(0, 99), "recent": st.lists(st.just({}))}
)


@given(CALLS, CALLS, CALLS)
def test_merge_cache_usage_is_associative(a: Any, b: Any, c: Any) -> None:
    """Merging the cache record is associative, so steps may be summed in any grouping."""
    assert merge_cache_usage(merge_cache_usage(a, b), c) == merge_cache_usage(
        a, merge_cache_usage(b, c)
    )


def test_merge_cache_usage_keeps_the_last_calls_only() -> None:
    """The per-call list is bounded; the totals still count every call."""
    one = {"calls": 1, "input": 5, "recent": [{"input": 5}]}
    record: Any = None
    for _ in range(MAX_RECENT_CALLS + 7):
        record = merge_cache_usage(record, one)  # type: ignore[arg-type]
    assert record["calls"] == MAX_RECENT_CALLS + 7
    assert len(record["recent"]) == MAX_RECENT_CALLS
    assert merge_cache_usage(None, None)["recent"] == []


def test_cache_cost_prices_each_kind_of_token() -> None:
    """Uncached input, reads, writes and output are each billed at their own price."""
    usage = {"input": 1_000_000, "cache_read": 600_000, "cache_write": 100_000, "output": 1000}
    assert cache_cost(usage, PRICES) == pytest.approx(0.6 + 0.3 + 0.2 + 0.008)  # type: ignore[arg-type]
    assert cache_hit_rate(usage) == 0.6
    assert cache_hit_rate({}) is None


def test_cache_cost_refuses_a_missing_price() -> None:
    """A price table without a price is a programmer's error naming the key."""
    with pytest.raises(ValueError, match=r"prices\['output'\] must be a non-negative number"):
        cache_cost({"input": 1}, {"input": 1.0, "cached_input": 0.1, "cache_write": 1.0})  # type: ignore[typeddict-item]


def test_prompt_cache_key_must_be_a_bool_or_a_string() -> None:
    """A wrong `prompt_cache_key` is refused at construction, naming the parameter."""
    with pytest.raises(TypeError, match="prompt_cache_key must be a bool or a string"):
        PromptCacheMiddleware(prompt_cache_key=3)  # type: ignore[arg-type]


def test_agent_records_reads_and_writes_and_the_report_shows_the_hit_rate() -> None:
    """Two turns of the prebuilt agent: the provider's figures are summed in `cache_usage`."""
    model = ScriptedChatModel(responses=[_answer("one", 3000, 0, 2900), _answer("two", 3200, 2900)])
    agent = create_context_agent(model, checkpointer=InMemorySaver(), max_tokens=20_000)
    config: Any = {"configurable": {"thread_id": "t1"}}
    agent.invoke({"messages": [HumanMessage(LONG)]}, config)
    state = agent.invoke({"messages": [HumanMessage("and then?")]}, config)
    usage = state["cache_usage"]
    assert (usage["calls"], usage["input"], usage["cache_read"], usage["cache_write"]) == (
        2,
        6200,
        2900,
        2900,
    )
    assert [c["cache_read"] for c in usage["recent"]] == [0, 2900]
    report = session_report(state, prices=PRICES)  # type: ignore[arg-type]
    assert "prompt cache: 47% of 6,200 input tokens read from cache" in report
    assert "(2,900 read, 2,900 written, 2 calls, 0 misses); cost $0.0082" in report


class _Rewrite(AgentMiddleware[Any, Any]):
    """From the second call on, rewrite one part of the request (outside the meter)."""

    def __init__(self, change: Callable[[ModelRequest[Any]], ModelRequest[Any]]) -> None:
        super().__init__()
        self.change, self.seen = change, 0

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        self.seen += 1
        return handler(self.change(request) if self.seen > 1 else request)


def _first_message(request: ModelRequest[Any]) -> ModelRequest[Any]:
    first = HumanMessage(LONG + " (edited)")
    return request.override(messages=[first, *request.messages[1:]])


def _system(request: ModelRequest[Any]) -> ModelRequest[Any]:
    return request.override(system_message=SystemMessage(f"It is now {request.state}"))


@pytest.mark.parametrize(
    ("change", "part"),
    [(_first_message, "message 0"), (_system, "system"), (lambda r: r, "nothing")],
)
def test_a_miss_names_the_part_that_changed(
    change: Callable[[ModelRequest[Any]], ModelRequest[Any]],
    part: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A call reading less than the last call sent is logged and recorded with the change."""
    model = ScriptedChatModel(responses=[_answer("one", 3000, 0), _answer("two", 3100, 0)])
    agent = create_agent(
        model,
        system_prompt="Be brief.",
        middleware=[_Rewrite(change), PromptCacheMiddleware()],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t-miss"}}
    agent.invoke({"messages": [HumanMessage(LONG)]}, config)
    with caplog.at_level(logging.WARNING, "langgraph_context.providers.prompt_cache"):
        state = agent.invoke({"messages": [HumanMessage("more")]}, config)
    assert state["cache_usage"]["misses"] == 1
    assert state["cache_usage"]["recent"][-1]["changed"] == part
    assert "thread t-miss read 0 of the 3000 input tokens of its previous call" in caplog.text
    assert (part if part != "nothing" else "the prefix was the same") in caplog.text


def test_a_call_that_reads_what_it_repeated_is_no_miss() -> None:
    """A cache read covering the previous request (in 128-token steps) is not a miss."""
    model = ScriptedChatModel(responses=[_answer("one", 3000, 0), _answer("two", 3100, 2944)])
    agent = create_agent(model, middleware=[PromptCacheMiddleware()], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t-hit"}}
    agent.invoke({"messages": [HumanMessage(LONG)]}, config)
    state = agent.invoke({"messages": [HumanMessage("more")]}, config)
    assert state["cache_usage"]["misses"] == 0
    assert "changed" not in state["cache_usage"]["recent"][-1]


def test_prompt_cache_key_only_for_openai_models() -> None:
    """Only a model served by OpenAI (fallbacks included) gets a `prompt_cache_key`."""
    openai = ChatOpenAI(model="gpt-4o", api_key="k")  # type: ignore[arg-type]
    anthropic = ChatAnthropic(model="claude-sonnet-4-5", api_key="k")  # type: ignore[arg-type]
    assert uses_prompt_cache_key(openai.bind_tools([]).with_retry())
    assert not uses_prompt_cache_key(anthropic)
    assert not uses_prompt_cache_key(openai.with_fallbacks([anthropic]))
    assert not uses_cache_points(openai)
    payload = openai._get_request_payload([HumanMessage("hi")], prompt_cache_key="t1")
    assert payload["prompt_cache_key"] == "t1"  # the client's own builder sends it


class ChatBedrockConverse(ScriptedChatModel):
    """Stands in for langchain-aws's class (same name, same provider) where no client is needed."""

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        return {**super()._get_ls_params(stop=stop, **kwargs), "ls_provider": "amazon_bedrock"}


def test_bedrock_converse_requests_carry_cache_points() -> None:
    """A Converse model's request gets `cachePoint` blocks after the system and history."""
    model = ChatBedrockConverse(responses=[AIMessage("ok")])
    assert uses_cache_points(model.bind_tools([]))
    assert not uses_cache_points(ScriptedChatModel(responses=[]))
    agent = create_context_agent(model, system_prompt="Be brief.")
    agent.invoke({"messages": [HumanMessage("hi")]})
    sent = model.seen[-1]
    point = {"cachePoint": {"type": "default"}}  # the Converse API's documented block
    assert sent[0].content[-1] == point
    assert any(isinstance(m.content, list) and m.content[-1] == point for m in sent[1:])
    assert not any("cache_control" in str(m.content) for m in sent)


def test_mark_cache_points_never_follows_a_thinking_block() -> None:
    """A message ending in a reasoning block gets no point (its blocks stay as they were)."""
    thinking = AIMessage([{"type": "thinking", "thinking": "t", "signature": "s"}])
    out = mark_cache_points([SystemMessage("s"), HumanMessage("q"), thinking])
    assert out[2] is thinking
    assert out[1].content[-1] == {"cachePoint": {"type": "default"}}


def test_a_reply_without_cache_figures_is_not_recorded() -> None:
    """Usage without `input_token_details` says nothing of the cache: no record, no miss."""
    plain = AIMessage(
        "ok", usage_metadata={"input_tokens": 5000, "output_tokens": 1, "total_tokens": 5001}
    )
    agent = create_agent(
        ScriptedChatModel(responses=[plain]),
        middleware=[PromptCacheMiddleware()],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "plain"}}
    agent.invoke({"messages": [HumanMessage("a")]}, config)
    state = agent.invoke({"messages": [HumanMessage("b")]}, config)
    assert not state.get("cache_usage")
    assert "prompt cache" not in session_report(state)
