"""Compaction: rule-based strategies, state snapshots, LLM summaries and a graph node."""

from langgraph_context.compaction.entry import (
    CUT_MARKER,
    arrived_tool_result,
    create_tool_output_limit_node,
    cut_tool_result,
)
from langgraph_context.compaction.minify import (
    MINIFIED_MARKER,
    minify_json,
    minify_tool_result,
)
from langgraph_context.compaction.node import (
    CompactionNode,
    CompactionRecord,
    CompactionStateMixin,
    create_compaction_node,
)
from langgraph_context.compaction.options import (
    COMPACTION_MODES,
    DEFAULT_ARCHIVE_PREFIX,
    DEFAULT_MAX_INPUT_TOKENS,
    DEFAULT_MAX_SUMMARY_TOKENS,
    DEFAULT_OUTPUT_KEY,
    DEFAULT_REQUEST_KEY,
    DEFAULT_RETRIES,
    DEFAULT_STATE_KEY,
    TRIGGER_KINDS,
    Archive,
    CompactionKeys,
    CompactionMode,
    Keep,
    SummaryOptions,
    Trigger,
    TriggerKind,
)
from langgraph_context.compaction.prompts import (
    HANDOFF_PROMPT,
    PROMPT_STYLES,
    SNAPSHOT_PROMPT,
    STATUS_LABELS,
    PromptStyle,
    summary_instructions,
)
from langgraph_context.compaction.provenance import (
    COMPACTION_MARKER,
    SYSTEM_TRUST_KEY,
    compaction_kind,
    fenced_compaction_message,
    is_trusted_system,
    is_untrusted_compaction,
    mark_later_system,
    split_fenced,
    trusted_system_message,
)
from langgraph_context.compaction.snapshot import StateSnapshot, extract_snapshot
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
from langgraph_context.compaction.summarize import (
    SUMMARY_PREFIX,
    HistorySummary,
    SummarizedHistory,
    asummarize_history,
    summarize_history,
    summary_message,
)
from langgraph_context.compaction.tool import (
    DEFAULT_REQUEST_COMPACTION_DESCRIPTION,
    create_request_compaction_tool,
)
from langgraph_context.errors import renamed_attribute

__all__ = [
    "CLEARED_TOOL_ARG",
    "CLEARED_TOOL_RESULT",
    "COMPACTION_MARKER",
    "COMPACTION_MODES",
    "CUT_MARKER",
    "DEFAULT_ARCHIVE_PREFIX",
    "DEFAULT_HEAD_FRACTION",
    "DEFAULT_KEEP_TOOL_ROUNDS",
    "DEFAULT_MAX_INPUT_TOKENS",
    "DEFAULT_MAX_SUMMARY_TOKENS",
    "DEFAULT_OUTPUT_KEY",
    "DEFAULT_REQUEST_COMPACTION_DESCRIPTION",
    "DEFAULT_REQUEST_KEY",
    "DEFAULT_RETRIES",
    "DEFAULT_SNAPSHOT_FRACTION",
    "DEFAULT_STATE_KEY",
    "HANDOFF_PROMPT",
    "MINIFIED_MARKER",
    "PROMPT_STYLES",
    "SNAPSHOT_PROMPT",
    "STATUS_LABELS",
    "STRATEGIES",
    "SUMMARY_PREFIX",
    "SYSTEM_TRUST_KEY",
    "TRIGGER_KINDS",
    "Archive",
    "CompactionKeys",
    "CompactionMode",
    "CompactionNode",
    "CompactionRecord",
    "CompactionResult",
    "CompactionStateMixin",
    "CompactionStats",
    "HistorySummary",
    "Keep",
    "PromptStyle",
    "StateSnapshot",
    "Strategy",
    "SummarizedHistory",
    "SummaryOptions",
    "Trigger",
    "TriggerKind",
    "arrived_tool_result",
    "asummarize_history",
    "compact_messages",
    "compaction_kind",
    "create_compaction_node",
    "create_request_compaction_tool",
    "create_tool_output_limit_node",
    "cut_tool_result",
    "efficiency_score",
    "extract_snapshot",
    "fenced_compaction_message",
    "is_trusted_system",
    "is_untrusted_compaction",
    "mark_later_system",
    "minify_json",
    "minify_tool_result",
    "split_fenced",
    "summarize_history",
    "summary_instructions",
    "summary_message",
    "trusted_system_message",
]

# Renamed in 0.1.1 (the old names are langmem's or deepagents'); kept for one release.
_RENAMED = {
    "RunningSummary": "HistorySummary",
    "SummarizationResult": "SummarizedHistory",
    "asummarize_messages": "asummarize_history",
    "summarize_messages": "summarize_history",
}


def __getattr__(name: str) -> object:
    """Resolve a deprecated name to its new one, with a `DeprecationWarning`."""
    return renamed_attribute(__name__, name, _RENAMED)
