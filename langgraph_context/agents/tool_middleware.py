"""`create_agent` middleware that adds tools and their state keys: plan, notes, memory.

`create_state_tools_middleware` adds the plan and note tools with `plan`/`note`;
`create_memory_middleware` adds the constraint tools and a hot-issue watch.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
)
from langgraph.runtime import Runtime

from langgraph_context.agents.context_agent import _state_tools
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.memory import MemoryStateMixin, create_hot_issue_node
from langgraph_context.memory.watch import CheckSelector
from langgraph_context.state import NoteStateMixin, PlanStateMixin

__all__ = [
    "MemoryAgentState",
    "MemoryMiddleware",
    "StateToolsMiddleware",
    "StateToolsState",
    "create_memory_middleware",
    "create_state_tools_middleware",
]


class StateToolsState(AgentState[Any], PlanStateMixin, NoteStateMixin):
    """Agent state plus `plan` and `note`."""


def _tool_name(tool: Any) -> str | None:
    """The name of a bound tool: a `BaseTool` or a provider's dict."""
    if isinstance(tool, dict):
        function = tool.get("function")
        return str(function.get("name")) if isinstance(function, dict) else tool.get("name")
    return getattr(tool, "name", None)


class MemoryAgentState(AgentState[Any], MemoryStateMixin):
    """Agent state plus pinned memory: `constraints` and `hot_issues`."""


class MemoryMiddleware(AgentMiddleware[MemoryAgentState, Any]):
    """Pinned memory for `create_agent`: constraint tools and a hot-issue watch.

    Args:
        checks: Tools whose results are checks (a name, names, or a predicate); the
            results of each tool round are watched before the next model call.
        memory_tools: Add `record_constraint` and `resolve_constraint`.

    Raises:
        ValueError: If there would be nothing to add, or `checks` names no tool.
    """

    state_schema = MemoryAgentState

    def __init__(self, *, checks: CheckSelector | None = None, memory_tools: bool = True) -> None:
        super().__init__()
        if checks is None and not memory_tools:
            msg = "checks is None and memory_tools is False: the middleware would add nothing"
            raise InvalidArgumentError(msg)
        self.tools = _state_tools(plan_tools=False, note_tools=False, memory_tools=memory_tools)
        self._watch = create_hot_issue_node(checks) if checks is not None else None
        named = {checks} if isinstance(checks, str) else checks
        self._check_names = frozenset() if callable(named) or named is None else frozenset(named)

    def _require_check_tools(self, request: ModelRequest) -> None:
        """Raise if `checks` names a tool the agent does not have (known at the first call).

        Raises:
            ValueError: Naming the missing checks and the agent's tools.
        """
        if not self._check_names:
            return
        names = {_tool_name(tool) for tool in request.tools}
        missing = sorted(self._check_names - names)
        if missing:
            msg = (
                f"checks names {missing}, which this agent has no tool for; "
                f"its tools: {sorted(n for n in names if n)}"
            )
            raise InvalidArgumentError(msg)
        self._check_names = frozenset()  # checked once: the tools are fixed per agent

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        """Check once that every tool named in `checks` exists, then call the model."""
        self._require_check_tools(request)
        return handler(request)

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        """Async twin of `wrap_model_call`."""
        self._require_check_tools(request)
        return await handler(request)

    def before_model(self, state: MemoryAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Open or resolve hot issues from the last tool round's check results."""
        if self._watch is None:
            return None
        return self._watch(state) or None

    async def abefore_model(
        self, state: MemoryAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async twin of `before_model`."""
        return self.before_model(state, runtime)


def create_memory_middleware(
    *, checks: CheckSelector | None = None, memory_tools: bool = True
) -> MemoryMiddleware:
    """Create pinned-memory middleware (constraint tools, hot issues from checks).

    Show the memory to the model with `create_context_middleware` (its default builder
    reads constraints and hot issues).

    Args:
        checks: Tools whose results are checks (a name, names, or a predicate).
        memory_tools: Add `record_constraint` and `resolve_constraint`.

    Returns:
        The middleware.

    Raises:
        ValueError: If there would be nothing to add, or `checks` names no tool.
    """
    return MemoryMiddleware(checks=checks, memory_tools=memory_tools)


class StateToolsMiddleware(AgentMiddleware[StateToolsState, Any]):
    """Give a `create_agent` agent the plan and/or note tools and their state keys.

    Args:
        plan_tools: Add `write_plan` and `update_plan`.
        note_tools: Add `write_note`, `ls`, `query_note` and `update_note`.

    Raises:
        ValueError: If both kinds of tools are switched off.
    """

    state_schema = StateToolsState

    def __init__(self, *, plan_tools: bool = True, note_tools: bool = True) -> None:
        super().__init__()
        if not plan_tools and not note_tools:
            msg = "plan_tools and note_tools are both False: the middleware would add nothing"
            raise InvalidArgumentError(msg)
        self.tools = _state_tools(plan_tools, note_tools, memory_tools=False)


def create_state_tools_middleware(
    *, plan_tools: bool = True, note_tools: bool = True
) -> StateToolsMiddleware:
    """Create middleware adding the plan and note tools (and `plan`/`note` state).

    Args:
        plan_tools: Add `write_plan` and `update_plan`.
        note_tools: Add `write_note`, `ls`, `query_note` and `update_note`.

    Returns:
        The middleware.

    Raises:
        ValueError: If both are False.
    """
    return StateToolsMiddleware(plan_tools=plan_tools, note_tools=note_tools)
