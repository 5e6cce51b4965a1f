"""One build's own inputs, checked (private to `context`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langgraph_context.errors import InvalidTypeError
from langgraph_context.packet import ContextPacket


def check_query(user_query: Any) -> None:
    """Raise unless `user_query` is a string (`None` would fail deep in the pipeline)."""
    if not isinstance(user_query, str):
        msg = f"user_query must be a string, got {type(user_query).__name__}"
        raise InvalidTypeError(msg)


def build_inputs(
    conversation_history: Sequence[Any] | None,
    system_instructions: str | None,
    custom_packets: Iterable[ContextPacket] | None,
    state: Any,
) -> dict[str, Any]:
    """One build's own inputs, as `gather_packets` keywords."""
    return {
        "state": state,
        "conversation_history": conversation_history,
        "system_instructions": system_instructions,
        "custom_packets": custom_packets,
    }
