"""The OpenAI pairing rules, checked on langchain-openai's own conversion of a history.

`openai_refusal` is the test oracle for `validate_history`: it converts each message
exactly as `ChatOpenAI` does before a request and applies the rules the Chat
Completions API enforces (a 400 otherwise):

* every id in an assistant message's `tool_calls` is a string answered by a `tool`
  message that follows it, before the next message of any other role;
* every `tool` message answers a call of the assistant message before its block;
* an id is answered once per call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_openai.chat_models.base import _convert_message_to_dict


def openai_payload(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """The `messages` list `ChatOpenAI` would send for this history."""
    return [_convert_message_to_dict(m) for m in messages]


def openai_refusal(messages: Sequence[BaseMessage]) -> str | None:
    """Why the Chat Completions API would refuse this history, or None if it accepts it."""
    payload = openai_payload(messages)
    pending: Counter[Any] = Counter()
    in_block = False
    for i, item in enumerate(payload):
        if item["role"] == "tool":
            tid = item.get("tool_call_id")
            if not in_block or pending[tid] == 0:
                return f"payload[{i}]: tool message {tid!r} answers no call"
            pending[tid] -= 1
            continue
        if +pending:
            return f"payload[{i}]: calls {sorted(map(str, +pending))} unanswered"
        pending = Counter()
        calls = item.get("tool_calls") or []
        for call in calls:
            if not isinstance(call.get("id"), str):
                return f"payload[{i}]: a tool call without a string id"
            pending[call["id"]] += 1
        in_block = bool(calls)
    if +pending:
        return f"end: calls {sorted(map(str, +pending))} unanswered"
    return None
