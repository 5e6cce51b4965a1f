"""Where a history may be cut: safe cut points and `truncate_messages` (private to `messages`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.messages._coerce import _short, as_messages
from langgraph_context.messages._history import _check_flag, group_tool_rounds


def safe_cut_points(messages: Sequence[Any]) -> list[int]:
    """Return the indices where a history can be cut without orphaning a tool result.

    Index `i` means `messages[:i]` and `messages[i:]` keep every call with its results.
    `0` and `len(messages)` are always included.

    Raises:
        InvalidTypeError: If `messages` or one of its items has the wrong type.
        InvalidArgumentError: If an item is malformed (named by position).
    """
    units = group_tool_rounds(messages)
    return [start for start, _ in units] + [units[-1][1] if units else 0]


def truncate_messages(
    messages: Sequence[Any],
    *,
    keep: int = 10,
    preserve_system: bool = True,
) -> list[BaseMessage]:
    """Keep the last `keep` messages without ever splitting a tool call from its results.

    The cut is moved forward to the next tool-round boundary, so the result can hold
    fewer than `keep` recent messages; if that would keep nothing at all, the cut moves
    back to the start of the last round instead (more than `keep`, never an orphan).
    The input is not modified.

    Args:
        messages: LangChain messages or OpenAI-style dicts.
        keep: How many recent messages to keep (leading system messages not counted).
        preserve_system: Keep the leading system message(s).

    Returns:
        A new list of messages.

    Raises:
        InvalidArgumentError: If `keep` is negative, or an item is malformed.
        InvalidTypeError: If `keep` is not an int, `preserve_system` not a bool, or
            `messages` or one of its items has the wrong type.

    Example:
        >>> from langchain_core.messages import HumanMessage, SystemMessage
        >>> history = [SystemMessage("rules")] + [HumanMessage(str(i)) for i in range(5)]
        >>> [m.content for m in truncate_messages(history, keep=2)]
        ['rules', '3', '4']
    """
    if not isinstance(keep, int) or isinstance(keep, bool):
        msg = f"keep must be an int, got {_short(keep)}"
        raise InvalidTypeError(msg)
    if keep < 0:
        msg = f"keep must be >= 0, got {keep}"
        raise InvalidArgumentError(msg)
    _check_flag("preserve_system", preserve_system)
    items = as_messages(messages)
    head_len = 0
    while head_len < len(items) and isinstance(items[head_len], SystemMessage):
        head_len += 1
    head = items[:head_len] if preserve_system else []
    body = items[head_len:]
    if keep == 0 or not body:
        return list(head)
    rounds = group_tool_rounds(body)
    cut = len(body) - keep
    starts = [start for start, _ in rounds if start >= cut]
    start = starts[0] if starts else len(body)
    if start >= len(body):
        start = rounds[-1][0]
    return [*head, *body[start:]]
