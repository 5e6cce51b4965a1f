"""Context engineering for LangGraph agents.

Decide, before every model call, which tokens the model sees: budgeted context
assembly, tool-pair-safe compaction, plan and note tools over state, pinned memory.
"""

from langgraph_context.compaction import (
    CompactionResult,
    CompactionStateMixin,
    CompactionStats,
    RunningSummary,
    StateSnapshot,
    SummarizationResult,
    asummarize_messages,
    compact_messages,
    create_compaction_node,
    extract_snapshot,
    summarize_messages,
)
from langgraph_context.context import TRUSTED_PACKET_TYPES, ContextPacket
from langgraph_context.history import (
    CANCELLED_TOOL_RESULT,
    HistoryRepair,
    HistoryViolation,
    group_tool_rounds,
    repair_history,
    safe_cut_points,
    validate_history,
)
from langgraph_context.state import (
    PLAN_STATUSES,
    NoteStateMixin,
    PlanItem,
    PlanStateMixin,
    PlanStatus,
    note_reducer,
    plan_reducer,
)
from langgraph_context.tokens import (
    DEFAULT_ENCODING,
    TiktokenCounter,
    TokenCounter,
    approximate_text_tokens,
    count_tokens,
    default_counter,
    estimate_tokens,
    resolve_counter,
    truncate_messages,
)
from langgraph_context.tools import (
    PlanUpdate,
    create_ls_tool,
    create_query_note_tool,
    create_update_note_tool,
    create_update_plan_tool,
    create_write_note_tool,
    create_write_plan_tool,
    render_plan,
)
from langgraph_context.transcripts import load_claude_code_session, load_openai_transcript

__version__ = "0.1.0"

__all__ = [
    "CANCELLED_TOOL_RESULT",
    "DEFAULT_ENCODING",
    "PLAN_STATUSES",
    "TRUSTED_PACKET_TYPES",
    "CompactionResult",
    "CompactionStateMixin",
    "CompactionStats",
    "ContextPacket",
    "HistoryRepair",
    "HistoryViolation",
    "NoteStateMixin",
    "PlanItem",
    "PlanStateMixin",
    "PlanStatus",
    "PlanUpdate",
    "RunningSummary",
    "StateSnapshot",
    "SummarizationResult",
    "TiktokenCounter",
    "TokenCounter",
    "__version__",
    "approximate_text_tokens",
    "asummarize_messages",
    "compact_messages",
    "count_tokens",
    "create_compaction_node",
    "create_ls_tool",
    "create_query_note_tool",
    "create_update_note_tool",
    "create_update_plan_tool",
    "create_write_note_tool",
    "create_write_plan_tool",
    "default_counter",
    "estimate_tokens",
    "extract_snapshot",
    "group_tool_rounds",
    "load_claude_code_session",
    "load_openai_transcript",
    "note_reducer",
    "plan_reducer",
    "render_plan",
    "repair_history",
    "resolve_counter",
    "safe_cut_points",
    "summarize_messages",
    "truncate_messages",
    "validate_history",
]
