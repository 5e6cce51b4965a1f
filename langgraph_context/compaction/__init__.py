"""Compaction: rule-based strategies, state snapshots, LLM summaries and a graph node."""

from langgraph_context.compaction.snapshot import (
    COMPACTION_MARKER,
    StateSnapshot,
    compaction_kind,
    extract_snapshot,
)
from langgraph_context.compaction.strategies import (
    CLEARED_TOOL_ARG,
    CLEARED_TOOL_RESULT,
    DEFAULT_HEAD_FRACTION,
    DEFAULT_KEEP_TOOL_ROUNDS,
    DEFAULT_SNAPSHOT_FRACTION,
    STRATEGIES,
    CompactionResult,
    CompactionStats,
    Strategy,
    compact_messages,
    efficiency_score,
)

__all__ = [
    "CLEARED_TOOL_ARG",
    "CLEARED_TOOL_RESULT",
    "COMPACTION_MARKER",
    "DEFAULT_HEAD_FRACTION",
    "DEFAULT_KEEP_TOOL_ROUNDS",
    "DEFAULT_SNAPSHOT_FRACTION",
    "STRATEGIES",
    "CompactionResult",
    "CompactionStats",
    "StateSnapshot",
    "Strategy",
    "compact_messages",
    "compaction_kind",
    "efficiency_score",
    "extract_snapshot",
]
