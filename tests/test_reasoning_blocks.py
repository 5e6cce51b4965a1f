"""Reasoning blocks (Anthropic `thinking` / `redacted_thinking`, OpenAI Responses
`reasoning` items) survive every path whole: kept with their AI turn or dropped with it,
never edited, and each client's own request builder accepts the result."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI

from langgraph_context.agents import create_context_agent
from langgraph_context.compaction import compact_messages, summarize_history
from langgraph_context.context import (
    ContextBuilder,
    ContextConfig,
    create_context_node,
    mark_cache_breakpoints,
    mark_cache_points,
)
from langgraph_context.messages import provider_ready_history, repair_history, truncate_messages
from langgraph_context.testing import ScriptedChatModel

ANTHROPIC = ChatAnthropic(model="claude-sonnet-4-5", api_key="k")  # type: ignore[arg-type]
RESPONSES = ChatOpenAI(model="gpt-5", api_key="k", use_responses_api=True)  # type: ignore[arg-type]
REASONING = frozenset({"thinking", "redacted_thinking", "reasoning"})
_NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
FEW = settings(
    max_examples=30, deadline=None, phases=_NO_SHRINK, suppress_health_check=[HealthCheck.too_slow]
)
_words = st.text(alphabet="abcdefgh ", min_size=1, max_size=200)


def _reasoning(provider: str, n: int, text: str) -> dict[str, Any]:
    if provider == "openai":
        summary = [{"type": "summary_text", "text": text}]
        return {"type": "reasoning", "id": f"rs_{n}", "summary": summary, "encrypted_content": "gA"}
    if n % 3 == 0:
        return {"type": "redacted_thinking", "data": f"opaque-{n}"}
    return {"type": "thinking", "thinking": text, "signature": f"sig-{n}"}


@st.composite
def reasoning_histories(draw: st.DrawFn, provider: str) -> list[BaseMessage]:
    """A valid history whose AI turns start with reasoning blocks, tool rounds included."""
    out: list[BaseMessage] = [HumanMessage(draw(_words), id="u0")]
    for n in range(draw(st.integers(1, 8))):
        blocks = [_reasoning(provider, n, draw(_words)), {"type": "text", "text": draw(_words)}]
        if draw(st.booleans()):
            call = f"call_{n}"
            calls = [{"name": "lookup", "args": {"q": draw(_words)}, "id": call}]
            out.append(AIMessage(blocks, tool_calls=calls, id=f"a{n}"))
            out.append(ToolMessage(draw(_words) * 3, tool_call_id=call, name="lookup", id=f"t{n}"))
        else:
            out.append(AIMessage(blocks, id=f"a{n}"))
        out.append(HumanMessage(draw(_words), id=f"u{n + 1}"))
    return out


def _blocks(message: BaseMessage) -> list[Any]:
    content = message.content if isinstance(message.content, list) else []
    return [b for b in content if isinstance(b, dict) and b.get("type") in REASONING]


def assert_whole(original: list[BaseMessage], out: list[BaseMessage], provider: str | None) -> None:
    """Each reasoning block out is one of its turn's, unchanged; the builder accepts `out`."""
    by_id = {m.id: _blocks(m) for m in original if m.id}
    for message in out:
        found = _blocks(message)
        if found:
            assert isinstance(message, AIMessage)
            # kept whole with its turn (a mark-free copy compares equal: no mark goes here)
            assert found == by_id.get(message.id), (message.id, found)
    if provider is None:
        return  # Bedrock: tests/test_bedrock_cache_points.py builds it with langchain-aws
    sent = [m for m in out if not isinstance(m, SystemMessage)]
    head = [m for m in out if isinstance(m, SystemMessage)][:1]
    if provider == "anthropic":
        payload = ANTHROPIC._get_request_payload([*head, *sent])
        sent_blocks = [
            b
            for m in payload["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") in REASONING
        ]
        assert all("cache_control" not in b for b in sent_blocks)
    else:
        payload = RESPONSES._get_request_payload([*head, *sent])
        items = [i for i in payload["input"] if i.get("type") == "reasoning"]
        assert len(items) == sum(len(_blocks(m)) for m in sent)


PROVIDERS = st.sampled_from(["anthropic", "openai"])


@FEW
@given(st.data(), PROVIDERS, st.integers(0, 6), st.sampled_from([80, 400, 4000]))
def test_history_operations_keep_reasoning_whole(
    data: st.DataObject, provider: str, keep: int, budget: int
) -> None:
    """Repair, provider-ready, trimming, rule compaction and cache marks never edit one."""
    history = data.draw(reasoning_histories(provider))
    assert_whole(history, repair_history(history).messages, provider)
    assert_whole(history, provider_ready_history(history), provider)
    assert_whole(history, truncate_messages(history, keep=keep), provider)
    assert_whole(history, compact_messages(history, target_tokens=budget).messages, provider)
    ready = [SystemMessage("rules"), *provider_ready_history(history)]
    assert_whole(history, mark_cache_breakpoints(ready), provider)
    assert_whole(history, mark_cache_points(ready), None)


@FEW
@given(st.data(), PROVIDERS, st.sampled_from(["cache", "focus"]), st.sampled_from([300, 4000]))
def test_the_context_node_keeps_reasoning_whole(
    data: st.DataObject, provider: str, layout: str, budget: int
) -> None:
    """Both layouts of the context node, tight and roomy: blocks whole, builders accept."""
    history = data.draw(reasoning_histories(provider))
    node = create_context_node(  # type: ignore[call-overload]
        ContextBuilder(config=ContextConfig(max_tokens=budget)), layout=layout, stamp_times=False
    )
    sent = node.invoke({"messages": history})["llm_input_messages"]
    assert_whole(history, sent, provider)


@FEW
@given(st.data(), PROVIDERS)
def test_the_summary_keeps_reasoning_whole(data: st.DataObject, provider: str) -> None:
    """The summarized history keeps the turns it keeps whole (and their blocks)."""
    history = data.draw(reasoning_histories(provider))
    model = ScriptedChatModel(responses=[AIMessage("summary")])
    done = summarize_history(history, model=model, target_tokens=120, prefix=history)
    assert_whole(history, done.messages, provider)
    assert_whole(history, model.seen[-1] if model.seen else [], provider)


AGENT_FEW = settings(
    max_examples=10, deadline=None, phases=_NO_SHRINK, suppress_health_check=[HealthCheck.too_slow]
)


@AGENT_FEW
@given(st.data(), PROVIDERS, st.sampled_from([800, 6000]))
def test_the_agent_sends_reasoning_whole(data: st.DataObject, provider: str, budget: int) -> None:
    """The prebuilt agent (context, compaction, cache marks) sends every block unedited."""
    history = data.draw(reasoning_histories(provider))
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    agent = create_context_agent(model, max_tokens=budget, cache_breakpoints=True)
    agent.invoke({"messages": history})
    assert_whole(history, list(model.seen[0]), provider)
