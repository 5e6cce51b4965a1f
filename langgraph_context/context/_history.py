"""The history a context node works from (private to `context`)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from langgraph_context.compaction.provenance import mark_later_system
from langgraph_context.context.stamp import stamped_history
from langgraph_context.messages import as_messages, repair_history
from langgraph_context.state import get_state_value


def node_history(
    state: Any, messages_key: str, *, stamp_times: bool
) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """`(history the model may see, newly stamped messages to write back)`.

    Messages are stamped before anything renders them (a day line never appears
    later). The model's view is then repaired so a provider accepts it (dangling
    calls answered "cancelled", orphan results and state edits dropped); state keeps
    what it has.
    """
    messages = mark_later_system(as_messages(get_state_value(state, messages_key, [])))
    stamped: list[BaseMessage] = []
    if stamp_times:
        messages, stamped = stamped_history(messages)
    return repair_history(messages).messages, stamped
