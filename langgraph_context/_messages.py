"""Coerce message-like inputs (LangChain messages or OpenAI-style dicts) to messages.

Every public function that takes a history accepts either representation; this is
the one place that converts, so the rest of the package works on `BaseMessage`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    convert_to_messages,
)

MessageLike = BaseMessage | dict[str, Any]


def as_messages(messages: Iterable[Any]) -> list[BaseMessage]:
    """Return `messages` as a new list of `BaseMessage`, converting dicts and tuples.

    Message objects are passed through as the same objects (never copied or mutated).

    Raises:
        TypeError: If `messages` is a string or a single message instead of a sequence.
        ValueError: If an element cannot be converted (LangChain's own message).
    """
    if isinstance(messages, (str, bytes, BaseMessage, dict)):
        msg = (
            "messages must be a sequence of messages or OpenAI-style dicts, "
            f"got a single {type(messages).__name__}"
        )
        raise TypeError(msg)
    items = list(messages)
    if all(isinstance(m, BaseMessage) for m in items):
        return items
    return list(convert_to_messages(items))


def tool_call_ids(message: BaseMessage) -> list[str]:
    """Return the ids of the tool calls an AI message makes (empty for other messages)."""
    if not isinstance(message, AIMessage):
        return []
    return [str(tc.get("id")) for tc in message.tool_calls if tc.get("id") is not None]


def is_tool_result(message: BaseMessage) -> bool:
    """Return whether `message` is the result of a tool call."""
    return isinstance(message, ToolMessage)


def text_of(message: BaseMessage) -> str:
    """Return the plain text of a message's content (text blocks joined by newlines)."""
    return content_text(message.content)


def content_text(content: str | Sequence[Any]) -> str:
    """Return the text parts of a message content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


def message_blocks(message: BaseMessage) -> list[dict[str, Any]]:
    """The dict content blocks of a message (empty for plain-text content)."""
    content = message.content
    if isinstance(content, str):
        return []
    return [block for block in content if isinstance(block, dict)]


def tool_result_ids(message: BaseMessage) -> list[str]:
    """The call ids a message answers.

    A `ToolMessage`, or a user message holding provider-native `tool_result` blocks
    (Anthropic's format).
    """
    if isinstance(message, ToolMessage):
        return [message.tool_call_id]
    if not isinstance(message, HumanMessage):
        return []
    return [
        str(block["tool_use_id"])
        for block in message_blocks(message)
        if block.get("type") == "tool_result" and block.get("tool_use_id") is not None
    ]
