"""The measured prompt cache on the wire: a real `ChatOpenAI` client, a server reporting
`prompt_tokens_details.cached_tokens` as OpenAI does, the hit rate in the session report."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.tools import tool as lc_tool
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context import create_context_agent
from langgraph_context.agents import session_report
from tests._wire_server import WireServer, cached_tokens, prompt_text, reply, tool

README = "The service keeps one queue per tenant and drains it in order. " * 120


@lc_tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    return f"{path}: {README}"


def test_cached_tokens_are_the_common_prefix_in_openai_steps() -> None:
    """The server's cache serves the shared prefix, 128-token steps, nothing under 1,024."""

    def text(content: str, tools: Any = ()) -> str:
        return prompt_text({"messages": [{"role": "user", "content": content}], "tools": tools})

    long = "x" * 8000
    assert cached_tokens(None, text(long)) == 0
    assert cached_tokens(text(long), text(long + "y")) == 1920  # 2,000 tokens, rounded down
    assert cached_tokens(text(long), text(long, [{"t": 1}])) == 0  # other tools
    assert cached_tokens(text("x" * 4000), text("x" * 4000 + "y")) == 0  # 1,000: too short


@pytest.mark.parametrize("stream", [False, True])
def test_session_report_shows_the_measured_hit_rate(server: WireServer, stream: bool) -> None:
    """Three calls of one thread: `cache_usage` sums what the server reported cached."""
    server.script(
        reply(None, tool("read_file", {"path": "README"}, "c1")),
        reply("It drains each tenant's queue in order."),
        reply("Yes, one queue per tenant."),
    )
    agent = create_context_agent(
        server.chat_model(streaming=stream, stream_usage=True),
        [read_file],
        checkpointer=InMemorySaver(),
        max_tokens=60_000,
    )
    config: Any = {"configurable": {"thread_id": "wire-thread"}}
    agent.invoke({"messages": [("user", f"What does this say? {README}")]}, config)
    state = agent.invoke({"messages": [("user", "One queue each?")]}, config)
    assert [b.get("prompt_cache_key") for b in server.requests] == ["wire-thread"] * 3
    usage = state["cache_usage"]
    assert usage["calls"] == 3
    assert usage["cache_read"] == sum(server.cached) > 0
    assert usage["misses"] == 0  # every call starts with the whole previous request
    rate = usage["cache_read"] / usage["input"]
    assert f"prompt cache: {rate:.0%} of {usage['input']:,} input tokens" in session_report(state)
    assert rate > 0.5


def test_prompt_cache_key_opt_out(server: WireServer) -> None:
    """`prompt_cache_key=False` sends no key; the figures are still recorded."""
    server.script(reply("ok"))
    agent = create_context_agent(server.chat_model(), prompt_cache_key=False)
    state = agent.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t"}})
    assert "prompt_cache_key" not in server.requests[0]
    assert state["cache_usage"]["calls"] == 1


def test_summary_call_is_the_agents_prefix_and_hits_the_cache(server: WireServer) -> None:
    """The summarizer is sent the agent's last request plus an instruction: cached share > 0.5."""
    from langgraph_context.agents import CompactionMiddleware

    long = "The customer asked about queue order and tenant limits again. " * 100
    server.script(
        reply("Noted."),
        reply("Noted again."),
        reply("The earlier turns were about queues."),  # the summary
        reply("Done."),
    )
    agent = create_context_agent(
        server.chat_model(),
        [read_file],
        system_prompt="You answer questions about the service.",
        checkpointer=InMemorySaver(),
        max_tokens=60_000,
        compaction=CompactionMiddleware(3000, target_tokens=1500, model=server.chat_model()),
    )
    config: Any = {"configurable": {"thread_id": "summary-thread"}}
    for turn in range(3):
        state = agent.invoke({"messages": [("user", f"Turn {turn}: {long}")]}, config)
    summary = [
        i
        for i, body in enumerate(server.requests)
        if "[Compaction request" in str(body["messages"][-1].get("content"))
    ]
    assert len(summary) == 1, [b["messages"][-1] for b in server.requests]
    (i,) = summary
    body, before = server.requests[i], server.requests[i - 1]
    assert body["messages"][: len(before["messages"])] == before["messages"]
    assert body.get("tools") == before.get("tools")
    assert "Do not call any tool" in body["messages"][-1]["content"]
    prompt = len(json.dumps(body["messages"])) // 4
    assert server.cached[i] / prompt >= 0.5
    assert state["compaction"]["count"] == 1
