"""The context agent, ready for `langgraph dev`.

The model comes from each run's configuration (`configurable.model_factory`, default
`openai`: any OpenAI-compatible endpoint from `LGC_BASE_URL`/`OPENAI_BASE_URL` with the
key from `LGC_API_KEY`/`OPENAI_API_KEY`, model from `configurable.model` or `LGC_MODEL`).
Notes are kept in the server's store, per `configurable.user_id`, so every thread of a
user sees them. The model is assumed to have a `WINDOW`-token context window: the
stored history is compacted at 24,000 tokens and each model call is sent at most
the window minus room for the reply and the system prompt.
"""

from langgraph_context.agents import (
    create_context_agent,
    create_load_notes_node,
    create_save_notes_node,
    resolve_chat_model,
)
from langgraph_context.compaction import create_compaction_node
from langgraph_context.tokens import count_tokens

WINDOW = 32_000
REPLY_TOKENS = 4_096

SYSTEM_PROMPT = (
    "You are a careful assistant. Keep a plan with write_plan/update_plan for multi-step "
    "work, and save facts worth keeping with write_note; your notes persist across "
    "conversations."
)

graph = create_context_agent(
    resolve_chat_model,
    system_prompt=SYSTEM_PROMPT,
    compaction=create_compaction_node(max_tokens=24_000, trigger=("tokens", 24_000)),
    context=True,
    context_tokens=WINDOW - REPLY_TOKENS - count_tokens(SYSTEM_PROMPT),
    pre_model={"load_notes": create_load_notes_node()},
    post_tools={"save_notes": create_save_notes_node()},
).compile(name="context_agent")
