"""The `request_compaction` tool: the model asks the compaction node to run next time.

The compaction node already compacts whenever `CompactionKeys.request_key` is truthy
in state, and resets it after running. This tool sets that key from a tool call; any
other code (an API handler, a CLI command such as `/compact`) may set it the same way
with `graph.update_state(config, {"compaction_requested": True})`.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.tools import BaseTool, InjectedToolCallId
from langgraph.types import Command

from langgraph_context.compaction.options import DEFAULT_REQUEST_KEY, CompactionKeys
from langgraph_context.toolkit import ToolSpec

__all__ = [
    "create_request_compaction_tool",
]

DEFAULT_REQUEST_COMPACTION_DESCRIPTION = (
    "Ask for the conversation history to be compacted before your next step: use it when "
    "a finished sub-task left long tool output you no longer need. Record anything you "
    "still need in your notes or plan first."
)

_REQUEST = ToolSpec("request_compaction", DEFAULT_REQUEST_COMPACTION_DESCRIPTION)


def create_request_compaction_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    messages_key: str | None = None,
    request_key: str = DEFAULT_REQUEST_KEY,
) -> BaseTool:
    """Create the `request_compaction()` tool.

    Args:
        name: Tool name (default `request_compaction`).
        description: Tool description shown to the model.
        messages_key: State key of the messages list (default `messages`).
        request_key: State key the compaction node reads (its `keys.request_key`).

    Returns:
        A tool returning a `Command` that sets `request_key` to True and adds its
        `ToolMessage`.

    Raises:
        ValueError: If `name`, `description`, `messages_key` or `request_key` is invalid.

    Example:
        >>> create_request_compaction_tool().name
        'request_compaction'
    """
    spec = _REQUEST.customize(name=name, description=description, messages_key=messages_key)
    key = CompactionKeys(request_key=request_key).request_key

    def request_compaction(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        content = "Compaction requested: the history will be compacted before your next step."
        return spec.command({key: True}, content, tool_call_id)

    return spec.build(request_compaction)
