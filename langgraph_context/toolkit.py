"""Shared plumbing for the state tools: names, results, and same-turn sibling calls."""

from __future__ import annotations

import os
import re
from typing import Any

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.types import Command

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.state import get_state_value

DEFAULT_MESSAGE_KEY = "messages"
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def check_workspace(workspace: Any, name: str = "workspace") -> None:
    """Refuse an empty or blank path (it would silently mean the current directory).

    Raises:
        ValueError: Naming the parameter.
    """
    if isinstance(workspace, str | os.PathLike) and not os.fspath(workspace).strip():
        msg = f"{name} must be a directory path, got an empty or blank string {workspace!r}"
        raise InvalidArgumentError(msg)


def check_tool_name(name: str | None, default: str) -> str:
    """Return the tool name to use, rejecting names chat providers refuse.

    Raises:
        ValueError: If `name` is not 1-64 letters, digits, `_` or `-`.
    """
    if name is None:
        return default
    if not isinstance(name, str) or not _TOOL_NAME.match(name):
        msg = f"name must be 1-64 characters of [A-Za-z0-9_-], got {name!r}"
        raise InvalidArgumentError(msg)
    return name


def check_description(description: str | None, default: str) -> str:
    """Return the description to use.

    Raises:
        ValueError: If `description` is given but blank.
    """
    if description is None:
        return default
    if not isinstance(description, str) or not description.strip():
        msg = f"description must be a non-empty string, got {description!r}"
        raise InvalidArgumentError(msg)
    return description


def check_message_key(message_key: str | None) -> str:
    """Return the state key tool messages go to.

    Raises:
        ValueError: If `message_key` is given but empty.
    """
    if message_key is None:
        return DEFAULT_MESSAGE_KEY
    if not isinstance(message_key, str) or not message_key:
        msg = f"message_key must be a non-empty string, got {message_key!r}"
        raise InvalidArgumentError(msg)
    return message_key


def error_result(content: str, tool_call_id: str) -> ToolMessage:
    """A tool result telling the model what went wrong; the state is left unchanged."""
    return ToolMessage(content, tool_call_id=tool_call_id, status="error")


def command_result(
    update: dict[str, Any], content: str, tool_call_id: str, message_key: str
) -> Command[Any]:
    """A state update carrying the tool's `ToolMessage` under `message_key`."""
    return Command(
        update={**update, message_key: [ToolMessage(content, tool_call_id=tool_call_id)]}
    )


def earlier_sibling_calls(state: Any, tool_call_id: str, messages_key: str) -> list[ToolCall]:
    """Return the calls made before `tool_call_id` in the same AI message.

    Parallel calls in one AI turn all see the same state; tools use their earlier
    siblings to agree on a deterministic outcome (fresh note names, one plan change).
    """
    messages = get_state_value(state, messages_key, [])
    for message in reversed(messages):
        if isinstance(message, AIMessage) and any(
            tc.get("id") == tool_call_id for tc in message.tool_calls
        ):
            calls = list(message.tool_calls)
            index = next(i for i, tc in enumerate(calls) if tc.get("id") == tool_call_id)
            return calls[:index]
    return []
