"""Prebuilt agents on `create_agent`, their middleware, and the sub-agent tool."""

from langgraph_context.agents._budget import AgentBudget
from langgraph_context.agents.briefing import build_briefing
from langgraph_context.agents.compaction_middleware import CompactionMiddleware
from langgraph_context.agents.context_agent import create_context_agent
from langgraph_context.agents.context_middleware import ContextMiddleware
from langgraph_context.agents.guard import OutputGuardMiddleware
from langgraph_context.agents.maintainer import (
    MaintainerMiddleware,
    MaintainerMode,
    MaintainerOptions,
    create_codebase_maintainer_graph,
)
from langgraph_context.agents.output_limit import ToolOutputLimitMiddleware
from langgraph_context.agents.session import (
    SessionMiddleware,
    SessionStateMixin,
    create_session_stats_node,
    session_report,
    session_stats,
)
from langgraph_context.agents.subagent import create_subagent_tool
from langgraph_context.agents.tool_middleware import (
    NoteSyncMiddleware,
    PinnedMiddleware,
    StateToolsMiddleware,
    TerminalStateMiddleware,
)

__all__ = [
    "AgentBudget",
    "CompactionMiddleware",
    "ContextMiddleware",
    "MaintainerMiddleware",
    "MaintainerMode",
    "MaintainerOptions",
    "NoteSyncMiddleware",
    "OutputGuardMiddleware",
    "PinnedMiddleware",
    "SessionMiddleware",
    "SessionStateMixin",
    "StateToolsMiddleware",
    "TerminalStateMiddleware",
    "ToolOutputLimitMiddleware",
    "build_briefing",
    "create_codebase_maintainer_graph",
    "create_context_agent",
    "create_session_stats_node",
    "create_subagent_tool",
    "session_report",
    "session_stats",
]
