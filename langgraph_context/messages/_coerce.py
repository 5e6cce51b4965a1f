"""Message coercion and the small readers every module shares (private to `messages`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    convert_to_messages,
)

from langgraph_context._memo import PrefixMemo
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError

MessageLike = BaseMessage | dict[str, Any]

CLEAN_HISTORIES: PrefixMemo[Any] = PrefixMemo(64)
"""Histories `repair_history` left unchanged (by identity, weakly; see `PrefixMemo`).

Their messages passed `as_messages`'s checks and the pairing walk: a request that
sends them again, with messages appended, checks and walks only the tail. The data is
`_history.Walked` (where the tool blocks start). At most 128 histories (two for each
of 64 first messages), each a list of weak references (about 80 bytes a message);
nothing is kept alive.
"""

_ROLE_KEYS = ("role", "type")
_TOOL_ROLES = ("tool",)
_AI_ROLES = ("ai", "assistant")


def as_messages(messages: Iterable[Any]) -> list[BaseMessage]:
    """Return `messages` as a new list of checked `BaseMessage`, converting the rest.

    Message objects are passed through as the same objects (never copied or mutated)
    once their shape is checked (content a string or a list, a tool message's
    `tool_call_id` a string, tool calls dicts with a string `name`, dict `args` and a
    string or missing `id`). Dicts (OpenAI or LangChain style), `(role, content)`
    pairs and strings (a user message) are converted; an assistant dict whose tool
    call arguments are not valid JSON becomes an AI message with `invalid_tool_calls`.

    Raises:
        InvalidTypeError: If `messages` is not a sequence of messages (a string, a
            single message, `None`, a number), or an element has a type that is not
            message-like.
        InvalidArgumentError: If an element is malformed; the message names its
            position (`messages[3]: ...`).
    """
    return checked_messages(messages)[0]


def checked_messages(messages: Iterable[Any]) -> tuple[list[BaseMessage], int, Any]:
    """`as_messages`, with its `CLEAN_HISTORIES` match.

    Returns `(messages, n, data)`: the first `n` are the objects of the clean history
    remembered with `data` (the history walk resumes from it without a second lookup).
    """
    if isinstance(messages, (str, bytes, BaseMessage, dict)) or not isinstance(messages, Iterable):
        msg = (
            "messages must be a sequence of messages or OpenAI-style dicts, "
            f"got a single {type(messages).__name__}"
        )
        raise InvalidTypeError(msg)
    items = list(messages)
    # The leading messages of a history already checked (the same objects) pass as is.
    known, data = CLEAN_HISTORIES.matched(items)
    out: list[BaseMessage] = items[:known]
    for i, item in enumerate(items[known:], start=known):
        message = item if isinstance(item, BaseMessage) else _convert(item, f"messages[{i}]")
        _check_message(message, f"messages[{i}]")
        out.append(message)
    return out, known, data


def _convert(item: Any, where: str) -> BaseMessage:
    """Convert one message-like item, with an error naming `where` when it cannot be."""
    if isinstance(item, str):
        return HumanMessage(item)
    if isinstance(item, dict):
        role = next((item[k] for k in _ROLE_KEYS if k in item), None)
        if not isinstance(role, str):
            msg = f"{where}: a message dict needs a string 'role', got {_short(item)}"
            raise InvalidArgumentError(msg)
        if "content" not in item:
            msg = f"{where}: a {role!r} message dict needs 'content'"
            raise InvalidArgumentError(msg)
        if role in _TOOL_ROLES and not isinstance(item.get("tool_call_id"), str):
            msg = f"{where}: a tool message needs tool_call_id (a string), got {_short(item)}"
            raise InvalidArgumentError(msg)
    elif isinstance(item, (tuple, list)):
        if len(item) != 2 or not isinstance(item[0], str):
            msg = f"{where}: a message pair must be (role, content), got {_short(item)}"
            raise InvalidArgumentError(msg)
    else:
        msg = (
            f"{where}: expected a message, a dict, a (role, content) pair or a string, "
            f"got {type(item).__name__}"
        )
        raise InvalidTypeError(msg)
    try:
        return convert_to_messages([item])[0]
    except Exception as exc:
        if _openai_calls_with_bad_json(item):
            # Unparsable arguments: let AIMessage sort them into invalid_tool_calls (if
            # even that fails, the first error is the one to report).
            with contextlib.suppress(Exception):
                raw = item["tool_calls"]
                return AIMessage(item["content"] or "", additional_kwargs={"tool_calls": raw})
        msg = f"{where}: cannot convert {_short(item)}: {_first_line(exc)}"
        raise InvalidArgumentError(msg) from exc


def _openai_calls_with_bad_json(item: Any) -> bool:
    """Whether `item` is an assistant dict of well-formed OpenAI calls (bad JSON aside)."""
    if not isinstance(item, dict) or item.get("role") not in _AI_ROLES:
        return False
    calls = item.get("tool_calls")
    return isinstance(calls, list) and all(
        isinstance(c, dict)
        and isinstance(c.get("function"), dict)
        and isinstance(c["function"].get("arguments"), str)
        for c in calls
    )


def _check_message(message: BaseMessage, where: str) -> None:
    """Raise if a message object (possibly built without validation) is malformed."""
    content = message.content
    if not isinstance(content, (str, list)):
        msg = f"{where}: content must be a string or a list of blocks, got {type(content).__name__}"
        raise InvalidTypeError(msg)
    if message.name is not None and not isinstance(message.name, str):
        msg = f"{where}: name must be a string, got {type(message.name).__name__}"
        raise InvalidTypeError(msg)
    if isinstance(message, ToolMessage) and not isinstance(message.tool_call_id, str):
        msg = f"{where}: a tool message needs tool_call_id (a string), got {message.tool_call_id!r}"
        raise InvalidArgumentError(msg)
    if not isinstance(message, AIMessage):
        return
    for attr in ("tool_calls", "invalid_tool_calls"):
        calls = getattr(message, attr)
        if not isinstance(calls, list):
            msg = f"{where}: {attr} must be a list, got {type(calls).__name__}"
            raise InvalidTypeError(msg)
        for k, call in enumerate(calls):
            problem = _call_problem(call, valid=attr == "tool_calls")
            if problem:
                msg = f"{where}: {attr}[{k}] {problem}"
                raise InvalidArgumentError(msg)


def _call_problem(call: Any, *, valid: bool) -> str | None:
    if not isinstance(call, dict):
        return f"must be a dict, got {type(call).__name__}"
    if call.get("id") is not None and not isinstance(call["id"], str):
        return f"id must be a string or None, got {_short(call['id'])}"
    if valid and not isinstance(call.get("name"), str):
        return f"needs a string name, got {_short(call.get('name'))}"
    if valid and not isinstance(call.get("args"), dict):
        return f"needs dict args, got {type(call.get('args')).__name__}"
    return None


def _short(value: Any, limit: int = 80) -> str:
    """A bounded repr for error messages (never recursing into huge values)."""
    if isinstance(value, dict):
        text = "{" + ", ".join(repr(k)[:20] for k in list(value)[:5]) + ", ...}"
        return f"a dict with keys {text}" if value else "an empty dict"
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    text = repr(value) if isinstance(value, (str, int, float, bool, type(None))) else ""
    return text[:limit] or type(value).__name__


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def _message_arg(message: Any) -> BaseMessage:
    if not isinstance(message, BaseMessage):
        msg = f"message must be a BaseMessage, got {type(message).__name__}"
        raise InvalidTypeError(msg)
    _check_message(message, "message")
    return message


def text_of(message: BaseMessage) -> str:
    """Return the plain text of a message's content (text blocks joined by newlines)."""
    return content_text(_message_arg(message).content)


def content_text(content: str | Sequence[Any]) -> str:
    """Return the text parts of a message content (a string or a list of blocks).

    Raises:
        InvalidTypeError: If `content` is neither a string nor a list/tuple of blocks.
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, (list, tuple)):
        msg = f"content must be a string or a list of blocks, got {type(content).__name__}"
        raise InvalidTypeError(msg)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


def message_blocks(message: BaseMessage) -> list[dict[str, Any]]:
    """The dict content blocks of a message (empty for plain-text content)."""
    content = _message_arg(message).content
    if isinstance(content, str):
        return []
    return [block for block in content if isinstance(block, dict)]
