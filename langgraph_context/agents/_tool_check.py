"""Tool-name checks of the tool middlewares: at their first model call, or once at build.

`create_agent` keys its tools by name, so of two tools sharing one the model sees
one and the other is silently dropped. `StateToolsMiddleware` and `PinnedMiddleware`
check the request's tools at their first model call; `create_context_agent` checks
every tool once at build (`check_tools_at_build`) and then removes those per-call
hooks, which would otherwise wrap every model call in a check that cannot fail.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

from langgraph_context._steps import signed
from langgraph_context.agents._hooks import chain_model_calls, drop_hooks, overrides
from langgraph_context.toolkit import check_distinct_tools, tool_name

__all__ = ["check_tools_at_build", "require_own_tools"]

_WRAPS = ("wrap_model_call", "awrap_model_call")


class _CheckedModelCall:
    """The model-call hooks of a middleware that checks each request before the call.

    Both middlewares below check something about the agent's tools (once: the tools of
    an agent are fixed) and then hand the request on unchanged.
    """

    def _check_request(self, request: ModelRequest) -> None:
        raise NotImplementedError

    @signed
    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        """Check the request (see `_check_request`), then call the model."""
        self._check_request(request)
        return handler(request)

    @signed
    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        """Async twin of `wrap_model_call`."""
        self._check_request(request)
        return await handler(request)


def check_tools_at_build(
    tools: Sequence[Any],
    middleware: Sequence[AgentMiddleware[Any, Any]],
    ours: Sequence[AgentMiddleware[Any, Any]],
) -> list[AgentMiddleware[Any, Any]]:
    """Refuse shared tool names before `create_agent` runs; drop and chain hooks of `ours`.

    `create_agent` binds `tools` and every middleware's `tools`; checked here, each of
    `ours` that checks them at its first call (`StateToolsMiddleware`, `PinnedMiddleware`)
    is swapped for a subclass without model-call hooks, so no call is wrapped in a check
    that can no longer fail (each wrapper costs a traced call per model call). When one of
    the caller's `middleware` wraps model calls (it may add tools to a request), the
    per-call checks stay. Then adjacent model-call wrappers of `ours` are chained under
    one traced wrapper (`chain_model_calls`).

    Args:
        tools: The agent's own tools.
        middleware: The caller's middleware (outermost first).
        ours: The middleware the factory made (their `checks` already checked).

    Returns:
        `[*middleware, *ours]` (ours chained), for `create_agent(middleware=...)`.

    Raises:
        ValueError: Naming both tools of a name used twice.
    """
    named = [(f"tools[{i}]", t) for i, t in enumerate(tools)]
    named += [(f"{m.name} tool", t) for m in [*middleware, *ours] for t in getattr(m, "tools", [])]
    check_distinct_tools(named)
    if not any(overrides(m, *_WRAPS) for m in middleware):
        for made in ours:
            if isinstance(made, _CheckedModelCall) and overrides(made, *_WRAPS):
                drop_hooks(made, *_WRAPS)
    return [*middleware, *chain_model_calls(ours)]


def require_own_tools(middleware: AgentMiddleware[Any, Any], request: ModelRequest) -> None:
    """Raise if a tool `middleware` adds is shadowed by, or shadows, another tool.

    `create_agent` keys its tools by name: of two tools sharing one, the model is
    bound to one and the other is silently dropped. This sees the shadowing when the
    other tool took the name (the middleware's own tool is missing from the request)
    or when both reach the model; when the middleware's tool took the name from a
    tool listed before it, the dropped tool is not visible here (use a prefix).

    Raises:
        ValueError: Naming both tools.
    """
    origin = f"{middleware.name} tool"
    check_distinct_tools([("agent tool", t) for t in request.tools])
    for own in middleware.tools:
        for bound in request.tools:
            if tool_name(bound) == own.name and bound is not own:
                check_distinct_tools([(origin, own), ("agent tool", bound)])
