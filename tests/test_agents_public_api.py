"""The agents package exports its public names, and its docstring examples run."""

from __future__ import annotations

import doctest

import langgraph_context
from langgraph_context import agents
from langgraph_context.agents import context_agent, maintainer, middleware, models, subagent
from langgraph_context.cli import models as cli_models
from langgraph_context.notes import sync


def test_agents_public_names_resolve() -> None:
    """Every name in agents.__all__ resolves, and the main factories are re-exported."""
    assert all(hasattr(agents, name) for name in agents.__all__)
    for name in (
        "create_context_agent",
        "create_codebase_maintainer_graph",
        "create_subagent_tool",
        "create_pre_model_middleware",
        "create_compaction_middleware",
        "create_context_middleware",
        "create_memory_middleware",
        "create_state_tools_middleware",
    ):
        assert name in agents.__all__
    for name in (
        "create_context_agent",
        "create_codebase_maintainer_graph",
        "create_subagent_tool",
        "create_context_middleware",
    ):
        assert getattr(langgraph_context, name) is getattr(agents, name)


def test_docstring_examples_run() -> None:
    """Every Example block in the agents modules executes as written."""
    for module in (context_agent, maintainer, middleware, models, subagent, sync, cli_models):
        result = doctest.testmod(module)
        assert result.failed == 0, module.__name__
