"""Provider-owned content blocks that must reach the provider again byte for byte (private).

* Reasoning: Anthropic `thinking` / `redacted_thinking` blocks (signed) and OpenAI
  Responses `reasoning` items. They stay in their AI message; a message holding one is
  kept whole or dropped whole, never edited (no operation of this package rewrites an
  AI message's content blocks; `tests/test_reasoning_blocks.py` holds every path to it).
* Provider compaction: Anthropic's `compaction` block (the `compact_20260112` context
  edit) and OpenAI Responses' `compaction` item, both an AI message's content block in
  LangChain. The provider reads nothing before it: it is a boundary our compaction
  never summarizes over (`last_provider_compaction`).
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage

REASONING_BLOCKS = frozenset({"thinking", "redacted_thinking", "reasoning"})
PROVIDER_COMPACTION_BLOCK = "compaction"


def is_provider_compaction(message: BaseMessage) -> bool:
    """Whether `message` is an AI turn holding a provider's `compaction` block or item.

    Example:
        >>> is_provider_compaction(AIMessage([{"type": "compaction", "content": "..."}]))
        True
    """
    content = message.content if isinstance(message, AIMessage) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == PROVIDER_COMPACTION_BLOCK for b in content
    )


def last_provider_compaction(messages: Sequence[BaseMessage]) -> int:
    """Index of the last message holding a provider compaction block, `-1` if none."""
    for i in range(len(messages) - 1, -1, -1):
        if is_provider_compaction(messages[i]):
            return i
    return -1
