"""Tool factories over graph state: plan tools, state-note tools, and the read-only terminal."""

from langgraph_context.tools.plan import PlanUpdate, create_update_plan_tool, create_write_plan_tool
from langgraph_context.tools.state_notes import (
    create_ls_tool,
    create_query_note_tool,
    create_update_note_tool,
    create_write_note_tool,
)
from langgraph_context.tools.terminal.tool import (
    Terminal,
    TerminalResult,
    create_terminal_tool,
)

__all__ = [
    "PlanUpdate",
    "Terminal",
    "TerminalResult",
    "create_ls_tool",
    "create_query_note_tool",
    "create_terminal_tool",
    "create_update_note_tool",
    "create_update_plan_tool",
    "create_write_note_tool",
    "create_write_plan_tool",
]
