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

__all__ = ["arun_inner", "drop_before_model", "quiet_config", "run_inner"]

_HOOKLESS: dict[type[Any], type[Any]] = {}


def _without_before_model(cls: type[Any]) -> type[Any]:
    """`cls` with the base class's `before_model` hooks: `create_agent` adds no node."""
    if cls in _HOOKLESS:
        return _HOOKLESS[cls]
    body = {
        "before_model": AgentMiddleware.before_model,
        "abefore_model": AgentMiddleware.abefore_model,
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
        "_hook_dropped": True,
    }
    _HOOKLESS[cls] = type(cls.__name__, (cls,), body)
    return _HOOKLESS[cls]


def drop_before_model(middleware: AgentMiddleware[Any, Any]) -> None:
    """Remove `middleware`'s `before_model` hook when it would do nothing.

    `create_agent` adds a graph node (`<name>.before_model`) for every middleware
    class that overrides the hook, so a hook that returns `None` on every call still
    costs a graph step (and a streamed update) per model call. The instance's class
    is swapped for a subclass without the hook; `isinstance` checks still hold.
    """
    if not getattr(type(middleware), "_hook_dropped", False):
        middleware.__class__ = _without_before_model(type(middleware))


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
