"""The context agent, ready for `langgraph dev`.

Run settings are the run's `context` (`ContextSettings`: `model_factory`, `model`,
`temperature`, `user_id`; Studio and the SDK read them from the graph's context
schema), else its `configurable` values. The model comes from `model_factory` (default
`openai`: any OpenAI-compatible endpoint from `LGC_BASE_URL`/`OPENAI_BASE_URL` with the
key from `LGC_API_KEY`/`OPENAI_API_KEY`, model from `model` or `LGC_MODEL`). Notes are
kept in the server's store, per `user_id` (a run without one is refused before the
model is called; no user reads another's notes), so every thread of a user sees them.
The input schema offers `messages`, `plan`, `note` and pinned items only. The model's
context window is `LGC_CONTEXT_WINDOW` tokens (default 32,000, at least 8,192): each
model call is sent at most the window minus room for the reply, and the agent's default
budget does the rest (the history is compacted when it would no longer fit beside the
system prompt and the tool definitions, down to half of that; long tool results are cut
as they arrive, their full text and the evicted history kept in the server's store per
user and thread, read back with `read_tool_output` and `search_history`).
"""

import os

from langgraph_context.agents import (
    NoteSyncMiddleware,
    OutputGuardMiddleware,
    create_context_agent,
)
from langgraph_context.cli.models import resolve_chat_model
from langgraph_context.providers import ContextSettings

DEFAULT_WINDOW = 32_000
MIN_WINDOW = 8_192
REPLY_TOKENS = 4_096


def context_window() -> int:
    """The model's window from `LGC_CONTEXT_WINDOW` (a clear error when it is unusable)."""
    raw = os.environ.get("LGC_CONTEXT_WINDOW", "").strip()
    if not raw:
        return DEFAULT_WINDOW
    try:
        window = int(raw.replace("_", "").replace(",", ""))
    except ValueError:
        window = 0
    if window < MIN_WINDOW:
        msg = f"LGC_CONTEXT_WINDOW must be a whole number of tokens >= {MIN_WINDOW}, got {raw!r}"
        raise ValueError(msg)
    return window


WINDOW = context_window()

SYSTEM_PROMPT = (
    "You are a careful assistant. Keep a plan with write_plan/update_plan for multi-step "
    "work, and save facts worth keeping with write_note; your notes persist across "
    "conversations."
)


graph = create_context_agent(
    resolve_chat_model,
    system_prompt=SYSTEM_PROMPT,
    max_tokens=WINDOW - REPLY_TOKENS,
    # The output guard is on in the served graph: a flagged answer is recorded in
    # `injection_flags` (state the client reads; not an input).
    middleware=[NoteSyncMiddleware(), OutputGuardMiddleware()],
    context_schema=ContextSettings,
    name="context_agent",
)
