"""Middleware plumbing: idle hooks removed, and the config of a node inside a call.

Hooks that would do nothing are removed, so they add no graph step; `quiet_config`
is the config an inner node runs with inside a model call, and `run_inner` /
`arun_inner` run a node's function under it without a runnable run of its own.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.config import merge_configs, set_config_context
from langgraph.config import get_config
from langgraph.constants import TAG_NOSTREAM

__all__ = ["arun_inner", "drop_before_model", "drop_hooks", "quiet_config", "run_inner"]

_HOOKLESS: dict[tuple[type[Any], tuple[str, ...]], type[Any]] = {}


def drop_hooks(middleware: AgentMiddleware[Any, Any], *hooks: str) -> None:
    """Give `middleware` the base class's `hooks`, so `create_agent` does not use them.

    `create_agent` adds a graph node per class that overrides `before_model`, and wraps
    every model call in each class that overrides `wrap_model_call`; a hook that would
    do nothing still costs that per call. The instance's class is swapped for a
    (cached) subclass with `AgentMiddleware`'s versions; `isinstance` checks still hold.
    """
    cls = type(middleware)
    if all(getattr(cls, h) is getattr(AgentMiddleware, h) for h in hooks):
        return
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
    """
    quiet = merge_configs(config, {"tags": [TAG_NOSTREAM]})
    configurable = dict(quiet.get("configurable") or {})
    configurable.pop("__pregel_read", None)
    return {**quiet, "configurable": configurable}


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
