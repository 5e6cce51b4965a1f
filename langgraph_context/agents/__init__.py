"""Prebuilt agents: graph factories, the sub-agent tool and create_agent middleware."""

from langgraph_context.agents._budget import AgentBudget
from langgraph_context.agents.briefing import (
    BRIEFING_PACKET_TYPE,
    DEFAULT_BRIEFING_MAX_TOKENS,
    briefing_packets,
    build_briefing,
)
from langgraph_context.agents.context_agent import (
    DEFAULT_MAX_NOTE_NAMES,
    LLM_INPUT_KEY,
    ContextAgentState,
    PromptLike,
    StepsLike,
    create_context_agent,
    default_context_node,
    render_state_block,
)
from langgraph_context.agents.context_middleware import ContextMiddleware, create_context_middleware
from langgraph_context.agents.guard import (
    GuardAgentState,
    OutputGuardMiddleware,
    create_output_guard_middleware,
)
from langgraph_context.agents.maintainer import (
    DEFAULT_HISTORY_TOKENS,
    DEFAULT_MAINTAINER_MAX_TOKENS,
    DEFAULT_MAINTAINER_OUTPUT_CHARS,
    DEFAULT_MAINTAINER_TIMEOUT,
    MAINTAINER_MODES,
    MaintainerMode,
    MaintainerOptions,
    MaintainerState,
    create_codebase_maintainer_graph,
)
from langgraph_context.agents.middleware import (
    CompactionAgentState,
    CompactionMiddleware,
    PreModelNodeMiddleware,
    PreModelViewState,
    create_compaction_middleware,
    create_pre_model_middleware,
)
from langgraph_context.agents.models import (
    ContextSettings,
    ModelFactory,
    bind_model_tools,
    is_chat_model,
    with_run_context,
)
from langgraph_context.agents.output_limit import (
    ToolOutputLimitMiddleware,
    create_tool_output_limit_middleware,
)
from langgraph_context.agents.session import (
    SessionCounts,
    SessionStateMixin,
    create_session_stats_node,
    merge_session_counts,
    session_report,
    session_stats,
)
from langgraph_context.agents.subagent import (
    DEFAULT_MAX_RESULT_TOKENS,
    DEFAULT_SUBAGENT_DESCRIPTION,
    DEFAULT_SUBAGENT_NAME,
    DEFAULT_SUBAGENT_RECURSION_LIMIT,
    TRUNCATION_MARKER,
    acondense_result,
    condense_result,
    create_subagent_tool,
)
from langgraph_context.agents.tool_middleware import (
    MemoryAgentState,
    PinnedMemoryMiddleware,
    StateToolsMiddleware,
    StateToolsState,
    create_memory_middleware,
    create_state_tools_middleware,
)
from langgraph_context.errors import renamed_attribute

__all__ = [
    "BRIEFING_PACKET_TYPE",
    "DEFAULT_BRIEFING_MAX_TOKENS",
    "DEFAULT_HISTORY_TOKENS",
    "DEFAULT_MAINTAINER_MAX_TOKENS",
    "DEFAULT_MAINTAINER_OUTPUT_CHARS",
    "DEFAULT_MAINTAINER_TIMEOUT",
    "DEFAULT_MAX_NOTE_NAMES",
    "DEFAULT_MAX_RESULT_TOKENS",
    "DEFAULT_SUBAGENT_DESCRIPTION",
    "DEFAULT_SUBAGENT_NAME",
    "DEFAULT_SUBAGENT_RECURSION_LIMIT",
    "LLM_INPUT_KEY",
    "MAINTAINER_MODES",
    "TRUNCATION_MARKER",
    "AgentBudget",
    "CompactionAgentState",
    "CompactionMiddleware",
    "ContextAgentState",
    "ContextMiddleware",
    "ContextSettings",
    "GuardAgentState",
    "MaintainerMode",
    "MaintainerOptions",
    "MaintainerState",
    "MemoryAgentState",
    "ModelFactory",
    "OutputGuardMiddleware",
    "PinnedMemoryMiddleware",
    "PreModelNodeMiddleware",
    "PreModelViewState",
    "PromptLike",
    "SessionCounts",
    "SessionStateMixin",
    "StateToolsMiddleware",
    "StateToolsState",
    "StepsLike",
    "ToolOutputLimitMiddleware",
    "acondense_result",
    "bind_model_tools",
    "briefing_packets",
    "build_briefing",
    "condense_result",
    "create_codebase_maintainer_graph",
    "create_compaction_middleware",
    "create_context_agent",
    "create_context_middleware",
    "create_memory_middleware",
    "create_output_guard_middleware",
    "create_pre_model_middleware",
    "create_session_stats_node",
    "create_state_tools_middleware",
    "create_subagent_tool",
    "create_tool_output_limit_middleware",
    "default_context_node",
    "is_chat_model",
    "merge_session_counts",
    "render_state_block",
    "session_report",
    "session_stats",
    "with_run_context",
]

# Renamed in 0.1.1 (the old names are langmem's or deepagents'); kept for one release.
_RENAMED = {
    "MemoryMiddleware": "PinnedMemoryMiddleware",
}


def __getattr__(name: str) -> object:
    """Resolve a deprecated name to its new one, with a `DeprecationWarning`."""
    return renamed_attribute(__name__, name, _RENAMED)
