"""Middleware plumbing: idle hooks removed, model-call wrappers chained, inner configs.

Hooks that would do nothing are removed, so they add no graph step; `chain_model_calls`
runs adjacent model-call wrappers of ours under one traced wrapper; `quiet_config`
is the config an inner node runs with inside a model call, and `run_inner` /
`arun_inner` run a node's function under it without a runnable run of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.config import set_config_context
from langgraph.config import get_config
from langgraph.constants import TAG_NOSTREAM
from langgraph.types import Command, Send

from langgraph_context._steps import signed

__all__ = [
    "ModelCallChain",
    "arun_inner",
    "chain_model_calls",
    "drop_before_model",
    "drop_hooks",
    "overrides",
    "quiet_config",
    "run_inner",
]

_HOOKLESS: dict[tuple[type[Any], tuple[str, ...]], type[Any]] = {}


def drop_hooks(middleware: AgentMiddleware[Any, Any], *hooks: str) -> None:
    """Give `middleware` the base class's `hooks`, so `create_agent` does not use them.

    `create_agent` adds a graph node per class that overrides `before_model`, and wraps
    every model call in each class that overrides `wrap_model_call`; a hook that would
    do nothing still costs that per call. The instance's class is swapped for a
    (cached) subclass with `AgentMiddleware`'s versions; `isinstance` checks still hold.
    """
    if not overrides(middleware, *hooks):
        return
    cls = type(middleware)
    key = (cls, hooks)
    if key not in _HOOKLESS:
        body: dict[str, Any] = {h: getattr(AgentMiddleware, h) for h in hooks}
        body.update(__module__=cls.__module__, __qualname__=cls.__qualname__, __doc__=cls.__doc__)
        _HOOKLESS[key] = type(cls.__name__, (cls,), body)
    middleware.__class__ = _HOOKLESS[key]


def drop_before_model(middleware: AgentMiddleware[Any, Any]) -> None:
    """Remove `middleware`'s `before_model` hooks when they would do nothing (no graph step)."""
    drop_hooks(middleware, "before_model", "abefore_model")


def quiet_config(config: RunnableConfig) -> RunnableConfig:
    """The config a node runs with inside a model call: nothing of it is streamed.

    Its output goes back to the middleware (the model's input, a compacted view),
    never to state, so the node's check that the graph has a channel for its output
    key (which reads the task's channel reader) does not apply: the reader is left out.
    What `merge_configs(config, {"tags": [TAG_NOSTREAM]})` gives, less its copies (a
    runnable run under it copies the callbacks and metadata it takes: `ensure_config`),
    which cost about 0.1 ms per model call.
    """
    configurable = dict(config.get("configurable") or {})
    configurable.pop("__pregel_read", None)
    quiet: RunnableConfig = {**config, "configurable": configurable}
    tags = list(config.get("tags") or [])
    if TAG_NOSTREAM not in tags:
        quiet["tags"] = [*tags, TAG_NOSTREAM]
    return quiet


def run_inner(node: RunnableLambda[Any, Any], value: Any) -> Any:
    """Run `node`'s function on `value` inside a model call, under `quiet_config`.

    What `node.invoke(value, quiet_config(...))` does, less the runnable's own run
    (callback manager, run start and end events): the node's function takes only the
    state, and nothing of its run is streamed or stored, so a model call does not pay
    for one. A model the function calls still sees the quiet config.
    """
    with set_config_context(quiet_config(get_config())) as context:
        return context.run(node.func, value)


async def arun_inner(node: RunnableLambda[Any, Any], value: Any) -> Any:
    """Async twin of `run_inner`."""
    with set_config_context(quiet_config(get_config())) as context:
        return await asyncio.create_task(node.afunc(value), context=context)  # type: ignore[arg-type, call-arg]


_WRAPS = ("wrap_model_call", "awrap_model_call")
_OTHER_HOOKS = tuple(
    f"{a}{h}"
    for h in ("before_agent", "before_model", "after_model", "after_agent", "wrap_tool_call")
    for a in ("", "a")
)


def overrides(middleware: AgentMiddleware[Any, Any], *hooks: str) -> bool:
    """Whether `middleware`'s class overrides any of `AgentMiddleware`'s `hooks`."""
    cls = type(middleware)
    return any(getattr(cls, h) is not getattr(AgentMiddleware, h) for h in hooks)


def _wraps_only_model_calls(middleware: AgentMiddleware[Any, Any]) -> bool:
    return all(overrides(middleware, h) for h in _WRAPS) and not overrides(
        middleware, *_OTHER_HOOKS
    )


class _Keys(AgentMiddleware[Any, Any]):
    """A chained middleware's state keys, tools and name, with no hooks of its own."""

    def __init__(self, part: AgentMiddleware[Any, Any]) -> None:
        self._name = part.name
        self.state_schema = part.state_schema
        self.tools = list(part.tools)
        self.transformers = part.transformers

    @property
    def name(self) -> str:
        """The chained middleware's name."""
        return self._name


class ModelCallChain(AgentMiddleware[Any, Any]):
    """Adjacent model-call wrappers run as one, outermost first.

    `create_agent` puts a traced wrapper (a LangSmith span, about 0.13 ms untraced)
    around each middleware's `wrap_model_call`, per model call. Ours are chained under
    one, composed as `create_agent` composes them: each part's handler returns a plain
    `ModelResponse`, the state updates of the parts are kept (inner first, of an inner
    part's last call when an outer one calls again) and returned together. The trace
    shows one span named after all the parts.
    """

    def __init__(self, parts: Sequence[AgentMiddleware[Any, Any]]) -> None:
        """Chain `parts` (each overriding both model-call wrappers and no other hook)."""
        self._parts = tuple(parts)
        self.tools = []

    @property
    def name(self) -> str:
        """The parts' names joined by `+`."""
        return "+".join(p.name for p in self._parts)

    @signed
    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> Any:
        """Run each part's `wrap_model_call` around the next, the last around `handler`."""

        def innermost(r: ModelRequest[Any]) -> _Layered:
            return _split(handler(r))

        call: Callable[[ModelRequest[Any]], _Layered] = innermost
        for part in reversed(self._parts):
            call = _sync_layer(part, call)
        return _joined(*call(request))

    @signed
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> Any:
        """Async twin of `wrap_model_call`."""

        async def innermost(r: ModelRequest[Any]) -> _Layered:
            return _split(await handler(r))

        call: Callable[[ModelRequest[Any]], Awaitable[_Layered]] = innermost
        for part in reversed(self._parts):
            call = _async_layer(part, call)
        return _joined(*await call(request))


_Layered = tuple[ModelResponse[Any], list[Command[Any]]]


def _split(result: Any) -> _Layered:
    """A part's result as `create_agent` reads it: the response and its state update."""
    if isinstance(result, AIMessage):
        return ModelResponse(result=[result]), []
    if isinstance(result, ExtendedModelResponse):
        return result.model_response, [] if result.command is None else [result.command]
    return result, []


def _joined(response: ModelResponse[Any], commands: list[Command[Any]]) -> Any:
    """One result for the chain: the response, with the parts' updates in order."""
    if not commands:
        return response
    if len(commands) == 1:
        return ExtendedModelResponse(model_response=response, command=commands[0])
    # One task's writes reach each channel in order, whether in one command or several.
    writes = [w for c in commands for w in _writes(c.update)]
    gotos = [g for c in commands for g in _gotos(c.goto)]
    return ExtendedModelResponse(
        model_response=response, command=Command(update=writes, goto=gotos)
    )


def _gotos(goto: Any) -> list[Any]:
    return [goto] if isinstance(goto, (str, Send)) else list(goto)


def _writes(update: Any) -> list[tuple[str, Any]]:
    if update is None:
        return []
    return list(update.items() if isinstance(update, dict) else update)


def _sync_layer(
    part: AgentMiddleware[Any, Any], inner: Callable[[ModelRequest[Any]], _Layered]
) -> Callable[[ModelRequest[Any]], _Layered]:
    def layer(request: ModelRequest[Any]) -> _Layered:
        kept: list[Command[Any]] = []

        def handler(r: ModelRequest[Any]) -> ModelResponse[Any]:
            response, kept[:] = inner(r)
            return response

        response, own = _split(part.wrap_model_call(request, handler))
        return response, [*kept, *own]

    return layer


def _async_layer(
    part: AgentMiddleware[Any, Any], inner: Callable[[ModelRequest[Any]], Awaitable[_Layered]]
) -> Callable[[ModelRequest[Any]], Awaitable[_Layered]]:
    async def layer(request: ModelRequest[Any]) -> _Layered:
        kept: list[Command[Any]] = []

        async def handler(r: ModelRequest[Any]) -> ModelResponse[Any]:
            response, kept[:] = await inner(r)
            return response

        response, own = _split(await part.awrap_model_call(request, handler))
        return response, [*kept, *own]

    return layer


def chain_model_calls(ours: Sequence[AgentMiddleware[Any, Any]]) -> list[AgentMiddleware[Any, Any]]:
    """`ours` with each run of adjacent model-call-only wrappers chained into one.

    A part of a run is replaced by a hookless copy of its state keys, tools and name
    (the object itself is not changed: a caller may use it in another agent), and the
    run's `ModelCallChain` follows them, so the wrappers keep their order. A middleware
    with any other hook keeps its place and its own wrapper.
    """
    out: list[AgentMiddleware[Any, Any]] = []
    run: list[AgentMiddleware[Any, Any]] = []
    for middleware in [*ours, None]:
        if middleware is not None and _wraps_only_model_calls(middleware):
            run.append(middleware)
            continue
        if len(run) > 1:
            out += [*map(_Keys, run), ModelCallChain(run)]
        else:
            out += run
        run = []
        if middleware is not None:
            out.append(middleware)
    return out
