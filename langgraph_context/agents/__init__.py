"""Prebuilt agents: the context agent, sub-agent tools, model resolution."""

from langgraph_context.agents.context_agent import (
    LLM_INPUT_KEY,
    ContextAgentState,
    create_context_agent,
    default_context_node,
    render_state_block,
)
from langgraph_context.agents.demo import MaintainerDemo, run_maintainer_demo
from langgraph_context.agents.maintainer import (
    MAINTAINER_MODES,
    MaintainerMode,
    MaintainerState,
    build_briefing,
    create_codebase_maintainer_graph,
)
from langgraph_context.agents.middleware import (
    CompactionMiddleware,
    MemoryMiddleware,
    PreModelNodeMiddleware,
    StateToolsMiddleware,
    create_compaction_middleware,
    create_context_middleware,
    create_memory_middleware,
    create_pre_model_middleware,
    create_state_tools_middleware,
)
from langgraph_context.agents.models import (
    DEFAULT_MODEL_FACTORY,
    MODEL_FACTORIES_ENV_VAR,
    ModelFactory,
    create_openai_model,
    model_factory_names,
    register_model_factory,
    resolve_chat_model,
)
from langgraph_context.agents.store_notes import (
    DEFAULT_NOTES_NAMESPACE,
    create_load_notes_node,
    create_save_notes_node,
    load_store_notes,
)
from langgraph_context.agents.subagent import (
    DEFAULT_MAX_RESULT_TOKENS,
    acondense_result,
    condense_result,
    create_subagent_tool,
    truncate_to_tokens,
)

__all__ = [
    "DEFAULT_MAX_RESULT_TOKENS",
    "DEFAULT_MODEL_FACTORY",
    "DEFAULT_NOTES_NAMESPACE",
    "LLM_INPUT_KEY",
    "MAINTAINER_MODES",
    "MODEL_FACTORIES_ENV_VAR",
    "CompactionMiddleware",
    "ContextAgentState",
    "MaintainerDemo",
    "MaintainerMode",
    "MaintainerState",
    "MemoryMiddleware",
    "ModelFactory",
    "PreModelNodeMiddleware",
    "StateToolsMiddleware",
    "acondense_result",
    "build_briefing",
    "condense_result",
    "create_codebase_maintainer_graph",
    "create_compaction_middleware",
    "create_context_agent",
    "create_context_middleware",
    "create_load_notes_node",
    "create_memory_middleware",
    "create_openai_model",
    "create_pre_model_middleware",
    "create_save_notes_node",
    "create_state_tools_middleware",
    "create_subagent_tool",
    "default_context_node",
    "load_store_notes",
    "model_factory_names",
    "register_model_factory",
    "render_state_block",
    "resolve_chat_model",
    "run_maintainer_demo",
    "truncate_to_tokens",
]
