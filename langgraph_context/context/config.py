"""`ContextConfig`: the budget, scoring weights and section template of a context build."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, get_args

from langgraph_context.errors import InvalidArgumentError

__all__ = [
    "ContextConfig",
    "SectionName",
]

SectionName = Literal["role", "task", "state", "evidence", "context", "output"]
SECTION_NAMES: tuple[SectionName, ...] = get_args(SectionName)

DEFAULT_MAX_TOKENS = 3000
DEFAULT_RESERVE_RATIO = 0.0
DEFAULT_MIN_RELEVANCE = 0.0
DEFAULT_RELEVANCE_WEIGHT = 0.95
DEFAULT_RECENCY_WEIGHT = 0.05
# Measured on LoCoMo (benchmarks/locomo): a turn next to a strongly matching turn often
# holds the answer (question in one turn, answer in the next), and a question naming a
# speaker is usually about that speaker's own turns.
DEFAULT_NEIGHBOR_WEIGHT = 0.7
DEFAULT_NEIGHBOR_WINDOW = 2
# A turn's BM25 plus its passage's (the turn with its neighbours up to
# `neighbor_window` away in its session), each scaled by its best, at equal weight.
# LoCoMo dev at 1,000 tokens: 0.843 -> 0.860 evidence recall, up on every conversation.
DEFAULT_PASSAGE_WEIGHT = 1.0
DEFAULT_SPEAKER_BOOST = 0.5
# A query naming a date ("What did Nate cook on 9 November, 2022?") is about what was
# said that day: +0.01 mean recall on LoCoMo, no conversation worse.
DEFAULT_DATE_BOOST = 0.5
# Conversations and documents keep a topic within a segment (a chat session, a file):
# a packet gains this share of the best score in its segment, the passage-retrieval
# habit of adding document evidence to passage evidence. LoCoMo at 1,000 tokens:
# +0.008 recall without embeddings, +0.006 with MiniLM.
DEFAULT_SEGMENT_WEIGHT = 0.2
DEFAULT_SEGMENT_KEY = "session"
DUPLICATE_THRESHOLD = 0.9
# Share of cosine similarity when an embedding model is given (measured best on LoCoMo).
DEFAULT_EMBEDDING_WEIGHT = 0.5

# Sections are laid out most-stable first so provider prompt caches keep hitting: the
# role and output rules never change between calls, state changes slowly, selected
# history and evidence change per query, and the task changes every turn.
DEFAULT_SECTION_ORDER: tuple[SectionName, ...] = (
    "role",
    "output",
    "state",
    "context",
    "evidence",
    "task",
)
# The order of the book's template, for callers who prefer it over cache-friendliness.
SEED_SECTION_ORDER: tuple[SectionName, ...] = (
    "role",
    "task",
    "state",
    "evidence",
    "context",
    "output",
)
DEFAULT_SECTION_TITLES: Mapping[str, str] = MappingProxyType(
    {
        "role": "[Role & Policies]",
        "task": "[Task]",
        "state": "[State]",
        "evidence": "[Evidence]",
        "context": "[Context]",
        "output": "[Output]",
    }
)
# Where each packet type is rendered; any type not listed goes to `evidence`.
DEFAULT_TYPE_SECTIONS: Mapping[str, SectionName] = MappingProxyType(
    {
        "system": "role",
        "instructions": "role",
        "task": "task",
        "constraint": "state",
        "hot_issue": "state",
        "plan": "state",
        "note": "state",
        "memory": "state",
        "message": "context",
        "tool": "context",
        "retrieved": "evidence",
        "document": "evidence",
    }
)
# Multipliers applied to a packet's score before packing (type priority).
DEFAULT_TYPE_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"plan": 1.5, "note": 1.2, "memory": 1.2, "retrieved": 1.0, "message": 1.0, "tool": 0.8}
)
# Sections trimmed first when the text is over budget; the others are never trimmed.
DEFAULT_COMPRESS_ORDER: tuple[SectionName, ...] = ("context", "evidence", "state")
PROTECTED_SECTIONS: frozenset[SectionName] = frozenset({"role", "task", "output"})
DEFAULT_OUTPUT_INSTRUCTIONS = (
    "Answer the task using the sections above. Prefer [State] and [Evidence] over "
    "assumptions, cite evidence by its [source] tag, and say so when the context does "
    "not contain the answer."
)


def _check_unit(name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and 0.0 <= value <= 1.0):
        msg = f"ContextConfig.{name} must be a number within [0, 1], got {value!r}"
        raise InvalidArgumentError(msg)


def _check_section(name: str, value: object) -> None:
    if value not in SECTION_NAMES:
        msg = f"ContextConfig.{name} has {value!r}; valid sections: {', '.join(SECTION_NAMES)}"
        raise InvalidArgumentError(msg)


@dataclass(frozen=True)
class ContextConfig:
    """How a context is assembled: budget, selection weights and the section template.

    Attributes:
        max_tokens: Hard ceiling of the assembled text, by the configured counter.
        reserve_ratio: Share of `max_tokens` held for system instructions, given or
            not: packets may use at most `max_tokens * (1 - reserve_ratio)` minus the
            task, output and headers, and more only if the instructions are longer
            than the reserve. 0 by default: the instructions are counted exactly, so a
            reserve would only sit idle; set it when the caller adds role text later.
        min_relevance: Packets whose relevance (in [0, 1]) is below this are dropped;
            pinned packets are exempt.
        relevance_weight: Weight of relevance in a packet's score.
        recency_weight: Weight of recency in a packet's score.
        neighbor_weight: Share of a neighbouring turn's relevance a turn inherits.
        neighbor_window: How many turns away a neighbour may be (0 disables).
        passage_weight: Weight of a turn's passage score (BM25 of the turn read with
            its neighbours up to `neighbor_window` away in the same thread and
            segment) beside its own, both scaled by their best; 0 disables.
        speaker_boost: Extra relevance (as a fraction) for turns by a speaker the
            query names (metadata key `speaker`).
        embedding_weight: Share of embedding similarity in relevance when the
            builder has an `Embeddings` model (the rest is BM25).
        date_boost: Share of the best score added to packets whose timestamp falls on
            a date the query names (half for the same month); 0 disables.
        segment_weight: Share of the best score within a packet's segment that the
            packet gains (applies when packets span at least two segments); 0 disables.
        segment_key: Metadata key naming a packet's segment (a conversation session,
            the document a chunk came from); packets without it gain nothing.
        duplicate_threshold: Term-set overlap (Jaccard) at which two packets count as
            duplicates and only the better one is kept; 1.0 removes exact duplicates only.
        type_weights: Score multipliers by packet type (1.0 when absent).
        type_sections: Section each packet type is rendered in (unlisted: `evidence`).
        section_order: Order of the sections in the text; must list all six.
        section_titles: Header of each section.
        compress_order: Sections trimmed first, in order, when the text is over budget;
            `role`, `task` and `output` may not appear.
        output_instructions: Text of the [Output] section (empty omits the section).

    Raises:
        ValueError: On any out-of-range or unknown value, naming the field.

    Example:
        >>> ContextConfig(max_tokens=1000).max_tokens
        1000
    """

    max_tokens: int = DEFAULT_MAX_TOKENS
    reserve_ratio: float = DEFAULT_RESERVE_RATIO
    min_relevance: float = DEFAULT_MIN_RELEVANCE
    relevance_weight: float = DEFAULT_RELEVANCE_WEIGHT
    recency_weight: float = DEFAULT_RECENCY_WEIGHT
    neighbor_weight: float = DEFAULT_NEIGHBOR_WEIGHT
    neighbor_window: int = DEFAULT_NEIGHBOR_WINDOW
    passage_weight: float = DEFAULT_PASSAGE_WEIGHT
    speaker_boost: float = DEFAULT_SPEAKER_BOOST
    embedding_weight: float = DEFAULT_EMBEDDING_WEIGHT
    date_boost: float = DEFAULT_DATE_BOOST
    segment_weight: float = DEFAULT_SEGMENT_WEIGHT
    segment_key: str = DEFAULT_SEGMENT_KEY
    duplicate_threshold: float = DUPLICATE_THRESHOLD
    type_weights: Mapping[str, float] = field(default_factory=lambda: DEFAULT_TYPE_WEIGHTS)
    type_sections: Mapping[str, str] = field(default_factory=lambda: DEFAULT_TYPE_SECTIONS)
    section_order: tuple[str, ...] = DEFAULT_SECTION_ORDER
    section_titles: Mapping[str, str] = field(default_factory=lambda: DEFAULT_SECTION_TITLES)
    compress_order: tuple[str, ...] = DEFAULT_COMPRESS_ORDER
    output_instructions: str = DEFAULT_OUTPUT_INSTRUCTIONS

    def __post_init__(self) -> None:
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int):
            msg = f"ContextConfig.max_tokens must be an int, got {self.max_tokens!r}"
            raise InvalidArgumentError(msg)
        if self.max_tokens <= 0:
            msg = f"ContextConfig.max_tokens must be > 0, got {self.max_tokens}"
            raise InvalidArgumentError(msg)
        for name in (
            "reserve_ratio",
            "min_relevance",
            "relevance_weight",
            "recency_weight",
            "neighbor_weight",
            "embedding_weight",
            "duplicate_threshold",
        ):
            _check_unit(name, getattr(self, name))
        if self.duplicate_threshold == 0.0:
            msg = (
                "ContextConfig.duplicate_threshold must be > 0 (at 0 every packet would "
                "count as a duplicate of the first), got 0.0"
            )
            raise InvalidArgumentError(msg)
        if self.reserve_ratio == 1.0:
            msg = "ContextConfig.reserve_ratio must be < 1 so packets have room, got 1.0"
            raise InvalidArgumentError(msg)
        if self.relevance_weight + self.recency_weight <= 0.0:
            msg = "ContextConfig.relevance_weight + recency_weight must be > 0, got 0"
            raise InvalidArgumentError(msg)
        if not isinstance(self.segment_key, str) or not self.segment_key:
            msg = f"ContextConfig.segment_key must be a non-empty str, got {self.segment_key!r}"
            raise InvalidArgumentError(msg)
        if not isinstance(self.neighbor_window, int) or self.neighbor_window < 0:
            msg = f"ContextConfig.neighbor_window must be an int >= 0, got {self.neighbor_window!r}"
            raise InvalidArgumentError(msg)
        for name in ("speaker_boost", "date_boost", "segment_weight", "passage_weight"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0.0:
                msg = f"ContextConfig.{name} must be >= 0, got {value!r}"
                raise InvalidArgumentError(msg)
        for type_name, weight in self.type_weights.items():
            if not math.isfinite(weight) or weight < 0.0:
                msg = f"ContextConfig.type_weights[{type_name!r}] must be >= 0, got {weight!r}"
                raise InvalidArgumentError(msg)
        for type_name, section in self.type_sections.items():
            _check_section(f"type_sections[{type_name!r}]", section)
        for section in self.section_order:
            _check_section("section_order", section)
        if sorted(self.section_order) != sorted(SECTION_NAMES):
            msg = (
                "ContextConfig.section_order must list each of "
                f"{', '.join(SECTION_NAMES)} once, got {self.section_order!r}"
            )
            raise InvalidArgumentError(msg)
        missing = [
            s
            for s in SECTION_NAMES
            if not isinstance(self.section_titles.get(s), str) or not self.section_titles[s].strip()
        ]
        if missing:
            msg = f"ContextConfig.section_titles lacks a title for {', '.join(missing)}"
            raise InvalidArgumentError(msg)
        for section in self.compress_order:
            _check_section("compress_order", section)
            if section in PROTECTED_SECTIONS:
                msg = (
                    f"ContextConfig.compress_order may not contain {section!r}: the role, "
                    "task and output sections are never trimmed"
                )
                raise InvalidArgumentError(msg)

    @property
    def reserve_tokens(self) -> int:
        """Tokens held back for system instructions."""
        return int(self.max_tokens * self.reserve_ratio)

    def section_for(self, packet_type: str) -> str:
        """Return the section a packet of `packet_type` is rendered in.

        Args:
            packet_type: A `ContextPacket.type`.

        Returns:
            The configured section, `evidence` for unknown types.
        """
        return self.type_sections.get(packet_type, "evidence")


DEFAULT_CONFIG = ContextConfig()
"""The configuration every stage uses when none is given."""
