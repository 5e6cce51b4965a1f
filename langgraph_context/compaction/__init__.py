"""Compaction: rule-based strategies, state snapshots, LLM summaries and a graph node."""

from langgraph_context.compaction.entry import (
    arrived_tool_result,
    create_tool_output_limit_node,
    cut_tool_result,
)
from langgraph_context.compaction.minify import (
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
    Archive,
    CompactionKeys,
    CompactionMode,
    Keep,
    SummaryOptions,
    Trigger,
    TriggerKind,
)
from langgraph_context.compaction.prompts import (
    PromptStyle,
    summary_instructions,
)
from langgraph_context.compaction.provenance import (
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
    CompactionResult,
    CompactionStats,
    Strategy,
    compact_messages,
    efficiency_score,
)
from langgraph_context.compaction.summarize import (
    HistorySummary,
    SummarizedHistory,
    asummarize_history,
    summarize_history,
    summary_message,
)
from langgraph_context.compaction.tool import (
    create_request_compaction_tool,
)

__all__ = [
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
