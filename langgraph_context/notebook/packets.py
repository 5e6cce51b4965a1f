"""Turn notes into `ContextPacket`s for the context builder.

Priority is by note type, blocker > action > task_state > conclusion > reference >
general, and is carried two ways:

* `relevance`: the type's weight from `NOTE_TYPE_WEIGHTS` (1.0 for a blocker down to
  0.3 for a general note); when a search score is given with the note, the weight is
  blended with the score normalized to the best hit (`score_share` of it), so a
  blocker still outranks an equally relevant conclusion;
* `metadata["priority"]`: the type's rank (0 = blocker), for stable ordering.

Packets are returned in priority order, most recent first within a type. Note text is
untrusted data (packet type `note` is not a trusted type).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.notebook.model import NOTE_TYPES, Note
from langgraph_context.packet import ContextPacket

__all__ = [
    "notebook_packets",
]

NOTE_PACKET_TYPE = "note"
NOTE_TYPE_PRIORITY: tuple[str, ...] = (
    "blocker",
    "action",
    "task_state",
    "conclusion",
    "reference",
    "general",
)
NOTE_TYPE_WEIGHTS: Mapping[str, float] = {
    "blocker": 1.0,
    "action": 0.85,
    "task_state": 0.7,
    "conclusion": 0.55,
    "reference": 0.4,
    "general": 0.3,
}
DEFAULT_PINNED_NOTE_TYPES: tuple[str, ...] = ()
DEFAULT_SCORE_SHARE = 0.5


def _timestamp(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _render(note: Note) -> str:
    tags = f" [tags: {', '.join(note.tags)}]" if note.tags else ""
    return f"[{note.type}] {note.title}{tags}\n{note.content}".rstrip()


def notebook_packets(
    notes: Iterable[Note | tuple[Note, float]],
    *,
    pinned_types: Sequence[str] = DEFAULT_PINNED_NOTE_TYPES,
    score_share: float = DEFAULT_SCORE_SHARE,
) -> list[ContextPacket]:
    """Make one packet per note, highest priority first.

    Args:
        notes: Notes, or `(note, score)` pairs as returned by `NotebookStore.search`.
        pinned_types: Note types whose packets are pinned (always kept if they fit).
        score_share: How much of `relevance` comes from the search score (0-1) when
            scores are given; the rest comes from the type weight.

    Returns:
        The packets: type `note`, source = note id, timestamp = `updated_at`, metadata
        with `note_type`, `tags`, `title`, `priority` and (if given) `score`.

    Raises:
        ValueError: If `pinned_types` names an unknown type or `score_share` is not
            within [0, 1].

    Example:
        >>> a = Note(id="a", title="CI down", content="runner offline", type="blocker")
        >>> b = Note(id="b", title="Done", content="parser ok", type="conclusion")
        >>> [(p.source, p.relevance) for p in notebook_packets([b, a])]
        [('a', 1.0), ('b', 0.55)]
    """
    unknown = [t for t in pinned_types if t not in NOTE_TYPES]
    if unknown:
        msg = f"pinned_types must be note types ({', '.join(NOTE_TYPES)}), got {unknown!r}"
        raise InvalidArgumentError(msg)
    if not 0.0 <= score_share <= 1.0:
        msg = f"score_share must be within [0, 1], got {score_share!r}"
        raise InvalidArgumentError(msg)
    pairs: list[tuple[Note, float | None]] = [
        (item[0], float(item[1])) if isinstance(item, tuple) else (item, None) for item in notes
    ]
    best = max((s for _, s in pairs if s is not None), default=0.0)
    packets: list[tuple[int, str, ContextPacket]] = []
    for note, score in pairs:
        weight = NOTE_TYPE_WEIGHTS.get(note.type, NOTE_TYPE_WEIGHTS["general"])
        relevance = weight
        metadata: dict[str, Any] = {
            "note_type": note.type,
            "tags": list(note.tags),
            "title": note.title,
            "priority": NOTE_TYPE_PRIORITY.index(note.type)
            if note.type in NOTE_TYPE_PRIORITY
            else len(NOTE_TYPE_PRIORITY),
        }
        if score is not None:
            metadata["score"] = score
            share = score / best if best > 0 else 0.0
            relevance = (1 - score_share) * weight + score_share * share
        packet = ContextPacket(
            _render(note),
            type=NOTE_PACKET_TYPE,
            source=note.id,
            timestamp=_timestamp(note.updated_at),
            relevance=round(min(1.0, max(0.0, relevance)), 6),
            pinned=note.type in pinned_types,
            metadata=metadata,
        )
        packets.append((metadata["priority"], note.updated_at, packet))
    packets.sort(key=lambda entry: entry[1], reverse=True)
    packets.sort(key=lambda entry: entry[0])
    return [packet for _, _, packet in packets]
