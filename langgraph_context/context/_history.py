"""The history a context node works from (private to `context`)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage

from langgraph_context.compaction.provenance import mark_later_system
from langgraph_context.context.result import ContextResult
from langgraph_context.context.stamp import stamped_history
from langgraph_context.messages import as_messages, repair_history
from langgraph_context.state import get_state_value
from langgraph_context.tokens import TokenCounter

_PINNED_TYPES = ("constraint", "hot_issue")


def node_history(
    state: Any, messages_key: str, *, stamp_times: bool
) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """`(history the model may see, newly stamped messages to write back)`.

    Messages are stamped before anything renders them (a day line never appears
    later). The model's view is then repaired so a provider accepts it (dangling
    calls answered "cancelled", orphan results and state edits dropped); state keeps
    what it has.
    """
    raw = get_state_value(state, messages_key, [])
    kinds = set(map(type, raw)) if isinstance(raw, list) else {object}
    plain = all(issubclass(k, BaseMessage) and not issubclass(k, SystemMessage) for k in kinds)
    if plain and not stamp_times:
        # Message objects, no system message, nothing to stamp (a middleware stamped
        # them): the repair checks them as `as_messages` would, in its one pass.
        return repair_history(raw).messages, []
    messages = as_messages(raw)
    if any(issubclass(kind, SystemMessage) for kind in set(map(type, messages))):
        # Only a system message can need the mark; most histories hold none (the
        # agent's prompt travels beside them), and `map(type, ...)` is a C loop.
        messages = mark_later_system(messages)
    stamped: list[BaseMessage] = []
    if stamp_times:
        messages, stamped = stamped_history(messages)
    return repair_history(messages).messages, stamped


def pinned_lost(result: ContextResult) -> list[str]:
    """The constraints and hot issues a build left out (by source), duplicates aside."""
    return [
        d.packet.source or d.packet.type
        for d in result.dropped
        if d.packet.type in _PINNED_TYPES and d.reason != "duplicate"
    ]


def warn_if_short(
    result: ContextResult,
    sent: Sequence[BaseMessage],
    token_counter: TokenCounter,
    limit: int,
    *,
    node: str,
    fits: bool = False,
) -> None:
    """Warn (not only log) when the model input lost pinned items or is over budget.

    A constraint or hot issue left out, or an input over `max_tokens`, changes what
    the model does; a developer must see it, so it is a `UserWarning` with the fix.
    `fits`: the caller counted this input within `limit` already (it is not counted
    again).
    """
    lost = pinned_lost(result)
    if lost:
        msg = (
            f"{node}: pinned items {lost} was left out of the model input: the budget "
            f"(max_tokens={limit}) is too small for it; raise the builder's max_tokens"
        )
        warnings.warn(msg, UserWarning, stacklevel=4)
    if fits:
        return
    used = int(token_counter(list(sent)))
    if used > limit:
        msg = (
            f"{node}: the model input takes {used} tokens, over max_tokens={limit}, even "
            "with every text shortened; raise the builder's max_tokens"
        )
        warnings.warn(msg, UserWarning, stacklevel=4)
