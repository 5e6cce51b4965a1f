"""Context engineering for LangGraph agents.

Decide, before every model call, which tokens the model sees: budgeted context
assembly, tool-pair-safe compaction, plan and note tools over state, pinned memory.
"""

from langgraph_context.context import (
    TRUSTED_PACKET_TYPES,
    ContextBuilder,
    ContextConfig,
    ContextPacket,
    ContextResult,
    ContextStateMixin,
    StoreSource,
    create_context_node,
    select_packets,
)
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

__version__ = "0.1.0"

__all__ = [
    "CANCELLED_TOOL_RESULT",
    "DEFAULT_ENCODING",
    "PLAN_STATUSES",
    "TRUSTED_PACKET_TYPES",
    "ContextBuilder",
    "ContextConfig",
    "ContextPacket",
    "ContextResult",
    "ContextStateMixin",
    "HistoryRepair",
    "HistoryViolation",
    "NoteStateMixin",
    "PlanItem",
    "PlanStateMixin",
    "PlanStatus",
    "PlanUpdate",
    "StoreSource",
    "TiktokenCounter",
    "TokenCounter",
    "__version__",
    "approximate_text_tokens",
    "count_tokens",
    "create_context_node",
    "create_ls_tool",
    "create_query_note_tool",
    "create_update_note_tool",
    "create_update_plan_tool",
    "create_write_note_tool",
    "create_write_plan_tool",
    "default_counter",
    "estimate_tokens",
    "group_tool_rounds",
    "note_reducer",
    "plan_reducer",
    "render_plan",
    "repair_history",
    "resolve_counter",
    "safe_cut_points",
    "select_packets",
    "truncate_messages",
    "validate_history",
]
