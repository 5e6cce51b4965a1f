"""Pinned items: the user's standing constraints and open hot issues (failing checks).

Both live in graph state (`PinnedStateMixin`), survive any compaction of the message
history, and are surfaced on every turn through `pinned_packets` (for the context
builder) or `render_pinned` (for a hand-written prompt).
"""

from langgraph_context.pinned.extract import (
    aextract_constraints,
    create_constraint_extractor_node,
    extract_constraints,
    parse_constraints,
)
from langgraph_context.pinned.packets import (
    hot_issue_text,
    pinned_packets,
    render_pinned,
)
from langgraph_context.pinned.provenance import (
    latest_user_message,
    quoted_sentences,
    user_quote,
)
from langgraph_context.pinned.store import (
    ConstraintStoreStateMixin,
    aload_stored_constraints,
    async_constraints,
    constraint_store_namespace,
    create_constraint_store_node,
    load_stored_constraints,
    sync_constraints,
)
from langgraph_context.pinned.tools import (
    create_record_constraint_tool,
    create_resolve_constraint_tool,
    render_constraints,
)
from langgraph_context.pinned.watch import (
    create_hot_issue_node,
    extract_error_lines,
    is_failed_check,
    track_hot_issues,
)
from langgraph_context.state import (
    Constraint,
    HotIssue,
    PinnedStateMixin,
    PinnedStatus,
    constraint_id,
    constraint_reducer,
    hot_issue_id,
    hot_issue_reducer,
    normalize_constraint,
)

__all__ = [
    "Constraint",
    "ConstraintStoreStateMixin",
    "HotIssue",
    "PinnedStateMixin",
    "PinnedStatus",
    "aextract_constraints",
    "aload_stored_constraints",
    "async_constraints",
    "constraint_id",
    "constraint_reducer",
    "constraint_store_namespace",
    "create_constraint_extractor_node",
    "create_constraint_store_node",
    "create_hot_issue_node",
    "create_record_constraint_tool",
    "create_resolve_constraint_tool",
    "extract_constraints",
    "extract_error_lines",
    "hot_issue_id",
    "hot_issue_reducer",
    "hot_issue_text",
    "is_failed_check",
    "latest_user_message",
    "load_stored_constraints",
    "normalize_constraint",
    "parse_constraints",
    "pinned_packets",
    "quoted_sentences",
    "render_constraints",
    "render_pinned",
    "sync_constraints",
    "track_hot_issues",
    "user_quote",
]
