"""Memo keys for token counts: content, never the message objects themselves.

A key holds what a count depends on (type, content, name, ids, the counted tool-call
text), so a message reloaded from a checkpoint or given as an OpenAI-style dict finds
the count of its twin, and the memo keeps no message alive.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_context.tokens._json import _fingerprint, _refuse


def message_key(message: BaseMessage) -> tuple[Any, ...]:
    content = message.content
    content_key = content if isinstance(content, str) else _json_key(content, sort_keys=False)
    calls_key: tuple[Any, ...] = ()
    if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
        # Sorted like the counted arguments, so the key's text holds the counted text.
        calls_key = _json_key([message.tool_calls, message.invalid_tool_calls], sort_keys=True)
    return (
        message.type,
        content_key,
        message.name,
        message.tool_call_id if isinstance(message, ToolMessage) else None,
        calls_key,
    )


# Built once: `json.dumps` with options builds an encoder per call, a third of a key's cost.
_KEY_ENCODERS = {
    sort: json.JSONEncoder(ensure_ascii=False, sort_keys=sort, default=_refuse)
    for sort in (False, True)
}


_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain_key(message: BaseMessage) -> tuple[Any, ...] | None:
    """The memo key of a well-formed message of plain values, else `None`.

    Built only when the message passes every check `as_messages` makes (string
    content, string name, string `tool_call_id`, tool calls as dicts with a string
    name, string-or-missing id and plain JSON arguments), so a hit needs no
    validation. Arguments are keyed by `_plain_repr`, which determines the counted
    JSON text.
    """
    content, name = message.content, message.name
    if type(content) is not str or (name is not None and type(name) is not str):
        return None
    call_id = None
    if isinstance(message, ToolMessage):
        call_id = message.tool_call_id
        if type(call_id) is not str:
            return None
    calls: tuple[Any, ...] = ()
    if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
        if type(message.tool_calls) is not list or message.invalid_tool_calls:
            return None
        parts = []
        for call in message.tool_calls:
            if type(call) is not dict or type(call.get("name")) is not str:
                return None
            args, ident = call.get("args"), call.get("id")
            if type(args) is not dict or (ident is not None and type(ident) is not str):
                return None
            text = _plain_repr(args)
            if text is None:
                return None
            parts.append((call["name"], ident, text))
        calls = ("plain", *parts)
    return (message.type, content, name, call_id, calls)


def keyed_valid(message: Any) -> bool:
    """Whether a message with a `plain_key` passes `as_messages`'s check as well.

    The key is built only for a message passing every check the coercion makes but
    one: an AI message's call lists must be lists even when empty (one built without
    validation may hold `None`). `as_messages` passes such a message through as
    itself, so a counter skips it for the messages this vouches for.
    """
    if not isinstance(message, BaseMessage):
        return False
    if not isinstance(message, AIMessage):
        return True
    return type(message.tool_calls) is list and type(message.invalid_tool_calls) is list


_PLAIN_NODES = 10_000
_PLAIN_DEPTH = 64


def _plain_repr(value: Any) -> str | None:
    """`repr(value)` if `value` is plain JSON, else `None`.

    Plain: exact dict/list/str/int/float/bool/None types, string keys, at most
    `_PLAIN_NODES` values nested at most `_PLAIN_DEPTH` deep (`repr` recurses; a cycle
    runs out of values). On such values `repr` is exact (`1`, `1.0` and `True`
    differ, key order kept), so equal texts mean equal values, and it is several
    times cheaper than `json.dumps`.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        seen += 1
        if seen > _PLAIN_NODES or depth > _PLAIN_DEPTH:
            return None
        if kind is dict:
            for key, child in item.items():
                if type(key) is not str:
                    return None
                stack.append((child, depth + 1))
        elif kind is list:
            stack.extend((child, depth + 1) for child in item)
        elif kind not in _SCALARS:
            return None
    return repr(value)


def _json_key(value: Any, *, sort_keys: bool) -> tuple[Any, ...]:
    """A memo key for a JSON-like value: its JSON text, or its walk when JSON fails."""
    try:
        text = _KEY_ENCODERS[sort_keys].encode(value)
    except (TypeError, ValueError, RecursionError):
        return ("walk", *_fingerprint(value))
    return ("json", text)


def dict_key(item: dict[str, Any]) -> tuple[Any, ...] | None:
    """A memo key for a message dict's content (`None` if it has none).

    A dict converts to the same message whenever its items are the same, so its count
    is memoized by them and a recount skips the conversion.
    """
    pairs = tuple(item.items())
    try:
        hash(pairs)
    except TypeError:
        text = _plain_repr(item)
        if text is not None:
            return ("dict-repr", text)
        try:
            text = _KEY_ENCODERS[True].encode(item)
        except (TypeError, ValueError, RecursionError):
            return None
        return ("dict-json", text)
    return ("dict", pairs)


def digest(key: tuple[Any, ...]) -> tuple[int, int]:
    """A message key as its memo key: its hash and the length of its content part."""
    content = key[1]
    return hash(key), len(content) if type(content) is str else -len(key)
