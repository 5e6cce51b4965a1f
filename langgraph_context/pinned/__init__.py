"""Pinned items: the user's standing constraints and open hot issues (failing checks).

Both live in graph state (`PinnedStateMixin`), survive any compaction of the message
history, and are surfaced on every turn through `pinned_packets` (for the context
builder) or `render_pinned` (for a hand-written prompt).
"""

from langgraph_context.pinned.extract import (
    aextract_constraints,
    create_constraint_extractor_node,
    extract_constraints,
)
from langgraph_context.pinned.packets import pinned_packets, render_pinned
from langgraph_context.pinned.store import (
    ConstraintStoreStateMixin,
    aload_stored_constraints,
    create_constraint_store_node,
    load_stored_constraints,
)
from langgraph_context.pinned.tools import (
    create_record_constraint_tool,
    create_resolve_constraint_tool,
    render_constraints,
)
from langgraph_context.pinned.watch import create_hot_issue_node, track_hot_issues
from langgraph_context.state import (
    Constraint,
    HotIssue,
    PinnedStateMixin,
    PinnedStatus,
    constraint_reducer,
    hot_issue_reducer,
)

__all__ = [
    "Constraint",
    "ConstraintStoreStateMixin",
    "HotIssue",
    "PinnedStateMixin",
    "PinnedStatus",
    "aextract_constraints",
    "aload_stored_constraints",
    "constraint_reducer",
    "create_constraint_extractor_node",
    "create_constraint_store_node",
    "create_hot_issue_node",
    "create_record_constraint_tool",
    "create_resolve_constraint_tool",
    "extract_constraints",
    "hot_issue_reducer",
    "load_stored_constraints",
    "pinned_packets",
    "render_constraints",
    "render_pinned",
    "track_hot_issues",
]
