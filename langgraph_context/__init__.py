"""Context engineering for LangGraph agents.

Decide, before every model call, which tokens the model sees: budgeted context
assembly, tool-pair-safe compaction, plan and note tools over state, pinned items.

The top level holds what an agent is composed from; everything else is imported from
its subpackage (`langgraph_context.context`, `.compaction`, `.pinned`, `.notebook`,
`.safety`, `.tools`, `.agents`) or lower module (`.tokens`, `.messages`, `.state`,
`.packet`). Names load on first use, so `import langgraph_context` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph_context.agents import (
        CompactionMiddleware,
        ContextMiddleware,
        create_codebase_maintainer_graph,
        create_context_agent,
        create_subagent_tool,
    )
    from langgraph_context.compaction import (
        CompactionStateMixin,
        asummarize_history,
        compact_messages,
        create_compaction_node,
        summarize_history,
    )
    from langgraph_context.context import ContextBuilder, ContextStateMixin, create_context_node
    from langgraph_context.errors import LangGraphContextError
    from langgraph_context.notebook import create_notebook_tools
    from langgraph_context.packet import ContextPacket
    from langgraph_context.pinned import (
        create_record_constraint_tool,
        create_resolve_constraint_tool,
    )
    from langgraph_context.state import NoteStateMixin, PinnedStateMixin, PlanStateMixin
    from langgraph_context.tokens import count_tokens
    from langgraph_context.tools import (
        create_ls_tool,
        create_query_note_tool,
        create_terminal_tool,
        create_update_note_tool,
        create_update_plan_tool,
        create_write_note_tool,
        create_write_plan_tool,
    )

__version__ = "0.1.0"

_HOMES: dict[str, str] = {
    "CompactionMiddleware": "agents",
    "ContextMiddleware": "agents",
    "CompactionStateMixin": "compaction",
    "ContextBuilder": "context",
    "ContextPacket": "packet",
    "ContextStateMixin": "context",
    "LangGraphContextError": "errors",
    "PinnedStateMixin": "state",
    "NoteStateMixin": "state",
    "PlanStateMixin": "state",
    "asummarize_history": "compaction",
    "compact_messages": "compaction",
    "count_tokens": "tokens",
    "create_codebase_maintainer_graph": "agents",
    "create_compaction_node": "compaction",
    "create_context_agent": "agents",
    "create_context_node": "context",
    "create_ls_tool": "tools",
    "create_notebook_tools": "notebook",
    "create_query_note_tool": "tools",
    "create_record_constraint_tool": "pinned",
    "create_resolve_constraint_tool": "pinned",
    "create_subagent_tool": "agents",
    "create_terminal_tool": "tools",
    "create_update_note_tool": "tools",
    "create_update_plan_tool": "tools",
    "create_write_note_tool": "tools",
    "create_write_plan_tool": "tools",
    "summarize_history": "compaction",
}


def __getattr__(name: str) -> Any:
    """Load a public name from its home module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"langgraph_context.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names (the helpers this module imports for itself are not)."""
    return sorted([*__all__, "__version__"])


__all__ = [
    "CompactionMiddleware",
    "CompactionStateMixin",
    "ContextBuilder",
    "ContextMiddleware",
    "ContextPacket",
    "ContextStateMixin",
    "LangGraphContextError",
    "NoteStateMixin",
    "PinnedStateMixin",
    "PlanStateMixin",
    "asummarize_history",
    "compact_messages",
    "count_tokens",
    "create_codebase_maintainer_graph",
    "create_compaction_node",
    "create_context_agent",
    "create_context_node",
    "create_ls_tool",
    "create_notebook_tools",
    "create_query_note_tool",
    "create_record_constraint_tool",
    "create_resolve_constraint_tool",
    "create_subagent_tool",
    "create_terminal_tool",
    "create_update_note_tool",
    "create_update_plan_tool",
    "create_write_note_tool",
    "create_write_plan_tool",
    "summarize_history",
]
