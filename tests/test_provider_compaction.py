"""Provider compaction blocks (Anthropic `compaction`, OpenAI Responses `compaction`
items): passed through unchanged, and a boundary our compaction never summarizes over."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context.agents import CompactionMiddleware, create_context_agent
from langgraph_context.messages import is_provider_compaction, last_provider_compaction
from langgraph_context.testing import ScriptedChatModel

BLOCKS = {
    "anthropic": {"type": "compaction", "content": "Summary the provider wrote."},
    "openai": {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA-opaque"},
}


def _history(block: dict[str, Any]) -> list[BaseMessage]:
    old = [HumanMessage(f"old {i} " + "w " * 150, id=f"o{i}") for i in range(3)]
    boundary = AIMessage([dict(block), {"type": "text", "text": "Continuing."}], id="cmp")
    new = [
        m
        for i in range(4)
        for m in (HumanMessage(f"new {i} " + "z " * 150, id=f"n{i}"), AIMessage(f"ok {i}"))
    ]
    return [*old, boundary, *new]


def test_client_builders_pass_the_blocks_through() -> None:
    """Each client's own request builder sends its provider's block unchanged."""
    anthropic = ChatAnthropic(model="claude-sonnet-4-5", api_key="k")  # type: ignore[arg-type]
    payload = anthropic._get_request_payload(_history(BLOCKS["anthropic"]))
    sent = [b for m in payload["messages"] if isinstance(m["content"], list) for b in m["content"]]
    assert BLOCKS["anthropic"] in sent
    responses = ChatOpenAI(model="gpt-5", api_key="k", use_responses_api=True)  # type: ignore[arg-type]
    items = responses._get_request_payload(_history(BLOCKS["openai"]))["input"]
    assert BLOCKS["openai"] in items


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_our_compaction_never_summarizes_over_the_boundary(provider: str) -> None:
    """Over budget, only what follows the block is compacted; the rest stays as it was."""
    history = _history(BLOCKS[provider])
    summarizer = ScriptedChatModel(responses=[AIMessage("newer turns summarized")])
    agent = create_context_agent(
        ScriptedChatModel(responses=[AIMessage("done")]),
        checkpointer=InMemorySaver(),
        max_tokens=60_000,
        compaction=CompactionMiddleware(400, target_tokens=200, model=summarizer),
    )
    state = agent.invoke({"messages": history}, {"configurable": {"thread_id": provider}})
    assert state["compaction"]["count"] == 1
    kept = state["messages"]
    cut = last_provider_compaction(kept)
    assert cut == 3
    assert [(m.id, m.content) for m in kept[: cut + 1]] == [
        (m.id, m.content) for m in history[: cut + 1]
    ]
    assert is_provider_compaction(kept[cut])
    for request in summarizer.seen:  # the summarizer never reads what the block covers
        assert not any("old 0" in str(m.content) for m in request)
    assert len(kept) < len(history) + 1  # the part after the block was compacted
