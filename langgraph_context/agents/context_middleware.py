"""`ContextMiddleware`: the context node inside LangChain v1 `create_agent`.

The node assembles each model call's input (never stored); the middleware also dates
the thread, stamping new messages in state before the call and the reply after it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, ModelCallResult
from langchain_core.messages import BaseMessage
from langgraph.types import Command

from langgraph_context.agents.middleware import PreModelNodeMiddleware
from langgraph_context.context import (
    CacheBreakpoints,
    ContextBuilder,
    cache_control_for,
    create_context_node,
    mark_cache_breakpoints,
    stamp_message,
    stamp_messages,
)

__all__ = ["ContextMiddleware", "create_context_middleware"]


def create_context_middleware(
    builder: ContextBuilder | None = None,
    *,
    safe: bool = True,
    name: str = "context",
    **options: Any,
) -> ContextMiddleware:
    """Assemble the model's context with `create_context_node` inside `create_agent`.

    The agent's history stays whole in state; each model call gets the assembled
    system message (after the agent's own system prompt) and the recent messages.

    Args:
        builder: The `ContextBuilder` (default: default settings; pinned memory is
            among its default state sources). A builder you pass keeps its own
            `protect_untrusted` setting.
        safe: For the default builder: wrap untrusted packets in per-build boundaries
            and add the hardening instruction (`ContextBuilder(protect_untrusted=...)`).
        name: Middleware name, unique per agent.
        **options: Any other `create_context_node` option (`keep_last`,
            `system_instructions`, `query_key`, ...), and `cache_breakpoints`:
            prompt-cache marks on the system message and the end of the history
            (`context.mark_cache_breakpoints`); `None` (default) for Anthropic
            models only, `True` or a mark for every model, `False` for none.

    Returns:
        The middleware.

    Raises:
        ValueError: If an option is invalid (raised by `create_context_node`).
    """
    return ContextMiddleware(builder, safe=safe, name=name, **options)


class ContextMiddleware(PreModelNodeMiddleware):
    """Assemble each model call's context with `create_context_node` in `create_agent`.

    It also dates the thread: before each model call, messages that arrived without
    a time (the user's turn, tool results) are stamped in state, and the model's
    reply is stamped when it comes back (`context.stamp`); a provider's own time wins.

    Args:
        builder: The `ContextBuilder` (default: default settings with `safe`).
        safe: For the default builder: protect untrusted packets and harden the prompt.
        name: Middleware name, unique per agent.
        **options: Any other `create_context_node` option (`stamp_times=False` turns
            the stamping off), and `cache_breakpoints` (as `create_context_agent`'s:
            prompt-cache marks on the system message and the end of the history,
            by default for Anthropic models only).

    Raises:
        ValueError: If an option is invalid (raised by `create_context_node`).
    """

    def __init__(
        self,
        builder: ContextBuilder | None = None,
        *,
        safe: bool = True,
        name: str = "context",
        **options: Any,
    ) -> None:
        chosen = builder or ContextBuilder(protect_untrusted=safe)
        # The node runs per model call, where it may not write messages: stamping
        # is done here, in state before the call and on the reply after it.
        self._stamp_times = bool(options.pop("stamp_times", True))
        self._cache_breakpoints: CacheBreakpoints = options.pop("cache_breakpoints", None)
        cache_control_for(self._cache_breakpoints, None)  # refuse a bad setting now
        super().__init__(create_context_node(chosen, stamp_times=False, **options), name=name)

    def _arrivals(self, request: ModelRequest[Any]) -> tuple[ModelRequest[Any], list[Any]]:
        """The request with undated arrivals stamped, and those stamped copies.

        Stamping happens here, inside the model call, so it adds no graph step: the
        copies keep their ids and reach state with the answer (the `add_messages`
        reducer replaces each in place).
        """
        if not self._stamp_times:
            return request, []
        state: dict[str, Any] = dict(request.state)
        history: list[BaseMessage] = list(state.get("messages", []))
        stamped = stamp_messages(history)
        if not stamped:
            return request, []
        by_id = {m.id: m for m in stamped}
        state["messages"] = [by_id.get(m.id, m) for m in history]
        return request.override(state=state), stamped  # type: ignore[arg-type]

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """Call the model on the assembled view; stamp arrivals and the reply."""
        request, arrived = self._arrivals(request)
        answer = super().wrap_model_call(request, lambda r: self._stamped(handler(self._marked(r))))
        return self._with_arrivals(answer, arrived)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async twin of `wrap_model_call`."""

        async def stamped(prepared: ModelRequest[Any]) -> Any:
            return self._stamped(await handler(self._marked(prepared)))

        request, arrived = self._arrivals(request)
        return self._with_arrivals(await super().awrap_model_call(request, stamped), arrived)

    def _marked(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The assembled request with prompt-cache marks, when its model needs them."""
        mark = cache_control_for(self._cache_breakpoints, request.model)
        if mark is None:
            return request
        system = request.system_message
        head: list[BaseMessage] = [system] if system is not None else []
        marked = mark_cache_breakpoints([*head, *request.messages], mark)
        if system is None:
            return request.override(messages=marked)  # type: ignore[arg-type]
        return request.override(
            system_message=marked[0],  # type: ignore[arg-type]
            messages=marked[1:],  # type: ignore[arg-type]
        )

    def _with_arrivals(
        self, answer: ModelCallResult[Any], arrived: list[Any]
    ) -> ModelCallResult[Any]:
        """`answer` carrying the stamped arrivals as a state update."""
        if not arrived:
            return answer
        return self._answer(answer, Command(update={"messages": arrived}))

    def _stamped(self, response: Any) -> Any:
        """The model's answer with its messages stamped (when stamping is on)."""
        if not self._stamp_times:
            return response
        if isinstance(response, BaseMessage):
            return stamp_message(response)
        if isinstance(response, ExtendedModelResponse):
            return dataclasses.replace(
                response, model_response=self._stamped(response.model_response)
            )
        if isinstance(response, ModelResponse):
            return dataclasses.replace(response, result=[stamp_message(m) for m in response.result])
        return response
