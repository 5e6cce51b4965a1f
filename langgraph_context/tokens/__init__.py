"""Token counting that works offline, and the one token-budget text truncation.

See `langgraph_context.tokens.counter` for the counting rules.
"""

from langgraph_context.tokens.counter import (
    TiktokenCounter,
    TokenCounter,
    count_tokens,
    default_counter,
    estimate_tokens,
    resolve_counter,
)
from langgraph_context.tokens.tools import count_tool_tokens
from langgraph_context.tokens.truncate import truncate_text
from langgraph_context.tokens.window import TokenUsage, is_context_overflow, model_window

__all__ = [
    "TiktokenCounter",
    "TokenCounter",
    "TokenUsage",
    "count_tokens",
    "count_tool_tokens",
    "default_counter",
    "estimate_tokens",
    "is_context_overflow",
    "model_window",
    "resolve_counter",
    "truncate_text",
]
