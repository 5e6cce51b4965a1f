"""Model plumbing shared by the agent factories: tell a chat model from a graph, bind tools."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig, RunnableWithFallbacks
from langchain_core.runnables.base import RunnableBindingBase
from langchain_core.tools import BaseTool
from langgraph.pregel.protocol import PregelProtocol

from langgraph_context.errors import InvalidTypeError

__all__ = ["ModelFactory", "bind_model_tools", "is_chat_model"]

ModelFactory = Callable[[RunnableConfig], BaseChatModel]
"""Builds a chat model for one run from the run's config."""


def is_chat_model(obj: Any) -> bool:
    """Whether `obj` is used as a chat model rather than a graph or a model factory.

    A `BaseChatModel`, one wrapped by `with_retry`, `with_fallbacks`, `bind` or
    `with_config`, or a configurable `init_chat_model` (anything with `bind_tools`
    under its wrappers). A compiled graph (`Pregel`, `RemoteGraph`), also wrapped, and
    any other runnable (e.g. a `RunnableLambda` agent) is not.

    Example:
        >>> from langchain_core.language_models import FakeListChatModel
        >>> is_chat_model(FakeListChatModel(responses=["x"]).with_retry())
        True
    """
    if not isinstance(obj, Runnable) or isinstance(obj, PregelProtocol):
        return False
    inner = _innermost(obj)
    if isinstance(inner, PregelProtocol):
        return False  # a compiled graph wrapped by with_retry / with_config
    return isinstance(inner, BaseChatModel) or callable(getattr(inner, "bind_tools", None))


def _innermost(runnable: Runnable[Any, Any]) -> Runnable[Any, Any]:
    """The runnable under `bind`/`with_retry`/`with_config` bindings and fallbacks."""
    while True:
        if isinstance(runnable, RunnableBindingBase):
            runnable = runnable.bound
        elif isinstance(runnable, RunnableWithFallbacks):
            runnable = runnable.runnable
        else:
            return runnable


def bind_model_tools(model: Runnable[Any, Any], tools: list[BaseTool]) -> Runnable[Any, Any]:
    """Bind `tools` to a chat model, also through `with_retry`-style bindings.

    Args:
        model: A chat model or a runnable wrapping one.
        tools: The tools; none leaves the model as it is.

    Returns:
        The model with the tools bound.

    Raises:
        TypeError: If the model (or the model it wraps) cannot bind tools.
    """
    if not tools:
        return model
    if isinstance(model, RunnableBindingBase):
        # with_retry, bind(...), with_config(...): bind the wrapped model and keep the
        # wrapper's own kwargs and config (its `bind_tools` attribute would reach the
        # inner model and drop them).
        inner = bind_model_tools(model.bound, tools)
        return model.model_copy(update={"bound": inner})
    bind = getattr(model, "bind_tools", None)
    if callable(bind):
        return cast("Runnable[Any, Any]", bind(tools))
    msg = f"model {type(model).__name__} cannot bind tools (it has no bind_tools)"
    raise InvalidTypeError(msg)
