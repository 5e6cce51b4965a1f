"""Compaction: rule-based strategies, state snapshots, LLM summaries and a graph node."""

from langgraph_context.compaction.entry import create_tool_output_limit_node, cut_tool_result
from langgraph_context.compaction.minify import minify_tool_result
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
from langgraph_context.compaction.prompts import PromptStyle
from langgraph_context.compaction.provenance import trusted_system_message
from langgraph_context.compaction.snapshot import StateSnapshot, extract_snapshot
from langgraph_context.compaction.strategies import (
    CompactionResult,
    CompactionStats,
    Strategy,
    compact_messages,
)
from langgraph_context.compaction.summarize import (
    HistorySummary,
    SummarizedHistory,
    asummarize_history,
    summarize_history,
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
    "asummarize_history",
    "compact_messages",
    "create_compaction_node",
    "create_request_compaction_tool",
    "create_tool_output_limit_node",
    "cut_tool_result",
    "extract_snapshot",
    "minify_tool_result",
    "summarize_history",
    "trusted_system_message",
]
