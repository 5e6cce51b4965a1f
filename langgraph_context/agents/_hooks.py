"""Middleware hooks that would do nothing are removed, so they add no graph step."""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import AgentMiddleware

__all__ = ["drop_before_model"]

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
