"""The agents package exports its public names, and its docstring examples run."""

from __future__ import annotations

import doctest

from langchain.agents.middleware import AgentMiddleware

import langgraph_context
from langgraph_context import agents
from langgraph_context.agents import (
    compaction_middleware,
    context_agent,
    context_middleware,
    maintainer,
    session,
    subagent,
)
from langgraph_context.cli import models as cli_models
from langgraph_context.notebook import sync
from langgraph_context.providers import models


def test_agents_public_names_resolve() -> None:
    """Every name in agents.__all__ resolves; each capability is one middleware class."""
    assert all(hasattr(agents, name) for name in agents.__all__)
    assert agents.__all__ == sorted(agents.__all__)
    assert not [n for n in agents.__all__ if n.endswith("_middleware") or n.isupper()]
    middleware = sorted(n for n in agents.__all__ if n.endswith("Middleware"))
    assert middleware == [
        "CompactionMiddleware",
        "ContextMiddleware",
        "MaintainerMiddleware",
        "NoteSyncMiddleware",
        "OutputGuardMiddleware",
        "PinnedMiddleware",
        "SessionMiddleware",
        "StateToolsMiddleware",
        "TerminalStateMiddleware",
        "ToolOutputLimitMiddleware",
    ]
    assert all(issubclass(getattr(agents, n), AgentMiddleware) for n in middleware)
    for name in (
        "create_context_agent",
        "create_codebase_maintainer_graph",
        "create_subagent_tool",
        "ContextMiddleware",
        "CompactionMiddleware",
    ):
        assert getattr(langgraph_context, name) is getattr(agents, name)


def test_docstring_examples_run() -> None:
    """Every Example block in the agents modules executes as written."""
    modules = (
        compaction_middleware,
        context_agent,
        context_middleware,
        maintainer,
        models,
        session,
        subagent,
        sync,
        cli_models,
    )
    for module in modules:
        result = doctest.testmod(module)
        assert result.failed == 0, module.__name__
