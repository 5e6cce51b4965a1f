"""The two graphs `benchmarks.lean.served` serves: bare `create_agent` and ours.

The model is scripted and stateless (the server runs threads concurrently): after a
user turn it calls `read_log`, after the result it answers. The tool returns a
distinct ~2,000-token log, so our output limit and context assembly do their work.
"""

from __future__ import annotations

import random
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from langgraph_context import create_context_agent
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call

_WORDS = [
    "request",
    "status",
    "latency",
    "route",
    "cache",
    "shard",
    "upstream",
    "backoff",
    "host",
    "query",
    "worker",
]


@tool
def read_log(n: int) -> str:
    """Return log number n."""
    rng = random.Random(n)
    return "\n".join(
        f"10:{i:02d} INFO [svc-{rng.randint(1, 9)}] "
        + " ".join(rng.choice(_WORDS) for _ in range(8))
        + f" id={rng.getrandbits(40):010x} ms={rng.randint(1, 9000)}"
        for i in range(48)
    )


class _Model(ScriptedChatModel):
    """One tool call after a user turn, an answer after a tool result."""

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        if isinstance(messages[-1], ToolMessage):
            reply: AIMessage = AIMessage("The timeouts come from the billing upstream.")
        else:
            n = random.getrandbits(30)
            reply = ai_calls(tool_call("read_log", {"n": n}, f"c{n}"))
        return ChatResult(generations=[ChatGeneration(message=reply)])


bare = create_agent(_Model(responses=[]), [read_log])
ours = create_context_agent(_Model(responses=[]), [read_log], max_tokens=16_000)
