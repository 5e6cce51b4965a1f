"""Tool factories: plan and note tools over graph state."""

from langgraph_context.tools._common import DEFAULT_MESSAGE_KEY
from langgraph_context.tools.notes import (
    create_ls_tool,
    create_query_note_tool,
    create_update_note_tool,
    create_write_note_tool,
    fresh_note_name,
)
from langgraph_context.tools.plan import (
    PlanUpdate,
    apply_plan_updates,
    create_update_plan_tool,
    create_write_plan_tool,
    render_plan,
)

__all__ = [
    "DEFAULT_MESSAGE_KEY",
    "PlanUpdate",
    "apply_plan_updates",
    "create_ls_tool",
    "create_query_note_tool",
    "create_update_note_tool",
    "create_update_plan_tool",
    "create_write_note_tool",
    "create_write_plan_tool",
    "fresh_note_name",
    "render_plan",
]
