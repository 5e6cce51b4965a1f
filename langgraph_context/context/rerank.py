"""Rerank: an optional stage between selection and structure.

A reranker is any callable `(query, packets) -> packets`, e.g. a cross-encoder or an
LLM judging relevance. It sees the packets selection kept (pinned ones excepted: they
are always shown) and returns the ones to keep, best first. Packets it leaves out are
dropped with reason `reranked`; its order becomes the order of the sections that are
not ordered by type or time ([Evidence] and any custom section), while [State] and
[Context] keep their stable order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langgraph_context.context.select import Drop, ScoredPacket, Selection
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.packet import ContextPacket

__all__ = [
    "Reranker",
    "rerank_selection",
]

Reranker = Callable[[str, Sequence[ContextPacket]], Sequence[ContextPacket]]
"""`(query, packets) -> packets`: the packets to keep, best first."""

STABLE_SECTIONS = frozenset({"state", "context"})
"""Sections whose order a reranker does not change (type order, chronology)."""


def rerank_selection(
    selection: Selection,
    query: str,
    reranker: Reranker,
    *,
    section_for: Callable[[str], str],
) -> Selection:
    """Apply `reranker` to the unpinned packets of `selection`.

    Args:
        selection: What selection kept.
        query: The query the packets answer.
        reranker: Returns the packets to keep, best first (a subset of its input).
        section_for: Maps a packet type to its section name.

    Returns:
        The selection with the reranker's drops and order.

    Raises:
        ValueError: If the reranker returns a packet it was not given, or one twice.

    Example:
        >>> a, b = (ScoredPacket(ContextPacket(t), 1, 1, i) for i, t in enumerate("ab"))
        >>> kept = rerank_selection(
        ...     Selection((a, b)), "q", lambda q, ps: ps[::-1], section_for=lambda t: "evidence"
        ... )
        >>> [s.packet.content for s in sorted(kept.selected, key=lambda s: s.index)]
        ['b', 'a']
    """
    pinned = [s for s in selection.selected if s.packet.pinned]
    ranked = [s for s in selection.selected if not s.packet.pinned]
    by_id = {id(s.packet): s for s in ranked}
    order = [id(p) for p in reranker(query, [s.packet for s in ranked])]
    if any(key not in by_id for key in order) or len(set(order)) != len(order):
        msg = "reranker must return a subset of the packets it was given, each at most once"
        raise InvalidArgumentError(msg)
    kept = [by_id[key] for key in order]
    movable = [s for s in kept if section_for(s.packet.type) not in STABLE_SECTIONS]
    slots = iter(sorted(s.index for s in movable))
    moved = {id(s): next(slots) for s in movable}
    kept = [
        ScoredPacket(s.packet, s.relevance, s.score, moved[id(s)]) if id(s) in moved else s
        for s in kept
    ]
    dropped = tuple(Drop(s.packet, "reranked") for s in ranked if id(s.packet) not in set(order))
    freed = sum(d.packet.token_count or 0 for d in dropped)
    return Selection(
        tuple(sorted((*pinned, *kept), key=lambda s: s.index)),
        (*selection.dropped, *dropped),
        selection.max_selected_tokens,
        max(0, selection.tokens - freed),
    )
