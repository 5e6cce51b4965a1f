"""Middleware plumbing: idle hooks removed, and the config of a node inside a call.

Hooks that would do nothing are removed, so they add no graph step; `quiet_config`
is the config an inner node runs with inside a model call.
"""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.constants import TAG_NOSTREAM

__all__ = ["drop_before_model", "quiet_config"]

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
