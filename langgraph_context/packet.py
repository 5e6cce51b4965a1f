"""`ContextPacket`: one unit of candidate context, whatever its source."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.tokens import TokenCounter, resolve_counter

__all__ = [
    "ContextPacket",
]

# Packet types whose text comes from the developer or the user and is trusted as
# instructions. Everything else (tool output, retrieved documents, notes, files) is
# untrusted data unless the packet says otherwise.
TRUSTED_PACKET_TYPES = frozenset(
    {"system", "instructions", "task", "constraint", "hot_issue", "plan", "user"}
)


@dataclass(frozen=True)
class ContextPacket:
    """A piece of text that may enter the model's context.

    Attributes:
        content: The text.
        type: What it is: `message`, `note`, `plan`, `constraint`, `hot_issue`,
            `memory`, `retrieved`, `tool`, `task`, `system`, or any custom type
            (unknown types are still rendered).
        source: A stable id of where it came from (message id, note id, document id).
        timestamp: When it was produced; used for recency and chronological order.
        token_count: Its size; computed by `with_token_count` when absent.
        relevance: A caller-set relevance in [0, 1]; when set, selection uses it as is.
        pinned: Always kept when it fits the budget.
        trusted: Whether its text may act as instructions; `None` means "by type"
            (see `TRUSTED_PACKET_TYPES`).
        metadata: Anything else (speaker, role, session date, tags, ...).

    Example:
        >>> p = ContextPacket("Tests fail in auth.py", type="hot_issue", pinned=True)
        >>> p.with_token_count(len).token_count
        21
    """

    content: str
    type: str = "custom"
    source: str | None = None
    timestamp: datetime | float | None = None
    token_count: int | None = None
    relevance: float | None = None
    pinned: bool = False
    trusted: bool | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.content, str):
            msg = f"ContextPacket.content must be str, got {type(self.content).__name__}"
            raise InvalidTypeError(msg)
        if self.relevance is not None and not 0.0 <= self.relevance <= 1.0:
            msg = f"ContextPacket.relevance must be within [0, 1], got {self.relevance}"
            raise InvalidArgumentError(msg)
        if self.token_count is not None:
            _check_count(self.token_count)

    @property
    def is_trusted(self) -> bool:
        """Whether the packet's text may be treated as instructions."""
        if self.trusted is not None:
            return self.trusted
        return self.type in TRUSTED_PACKET_TYPES

    def with_token_count(self, token_counter: TokenCounter | None = None) -> ContextPacket:
        """Return this packet with `token_count` filled in (itself if already set)."""
        if self.token_count is not None:
            return self
        count = _check_count(int(resolve_counter(token_counter)(self.content)))
        # A field-for-field copy: this runs for every packet of every build, and
        # `dataclasses.replace` (which re-runs `__init__` and the checks above on fields
        # already checked) costs about 6x as much.
        counted = object.__new__(ContextPacket)
        counted.__dict__.update(self.__dict__)
        counted.__dict__["token_count"] = count
        return counted


def _check_count(count: int) -> int:
    """Return `count`; refuse a negative one (a custom counter's, or a caller's)."""
    if count < 0:
        msg = f"ContextPacket.token_count must be >= 0, got {count}"
        raise InvalidArgumentError(msg)
    return count
