"""Model plumbing shared by the agent factories: tell a chat model from a graph, bind tools."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig, RunnableWithFallbacks
from langchain_core.runnables.base import RunnableBindingBase
from langgraph.config import get_config
from langgraph.pregel.protocol import PregelProtocol
from langgraph.runtime import get_runtime
from typing_extensions import TypedDict

from langgraph_context.errors import InvalidTypeError

__all__ = [
    "ContextSettings",
    "ModelFactory",
    "RunModel",
    "agent_model",
    "bind_model_tools",
    "is_chat_model",
    "resolved_model",
    "with_run_context",
]

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


def bind_model_tools(
    model: Runnable[Any, Any], tools: list[Any], **kwargs: Any
) -> Runnable[Any, Any]:
    """Bind `tools` to a chat model, also through `with_retry`-style bindings.

    Args:
        model: A chat model or a runnable wrapping one.
        tools: The tools; none leaves the model as it is.
        **kwargs: Passed to the model's `bind_tools` (`tool_choice`, ...).

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
        inner = bind_model_tools(model.bound, tools, **kwargs)
        return model.model_copy(update={"bound": inner})
    bind = getattr(model, "bind_tools", None)
    if callable(bind):
        return cast("Runnable[Any, Any]", bind(tools, **kwargs))
    msg = f"model {type(model).__name__} cannot bind tools (it has no bind_tools)"
    raise InvalidTypeError(msg)


class RunModel:
    """A chat model `create_agent` can call that is not a plain `BaseChatModel`.

    `create_agent` binds tools with `request.model.bind_tools(...)`. A model under
    `with_retry`/`with_fallbacks` would lose its wrapper that way, and a factory is no
    model until a run's config is known; this stand-in resolves the model inside the
    model call (`get_config()`) and binds through the wrappers (`bind_model_tools`).

    Args:
        model: A wrapped chat model, or a factory taking the run's config.
    """

    def __init__(self, model: Runnable[Any, Any] | ModelFactory) -> None:
        self.model = model
        self._last: tuple[str, Runnable[Any, Any]] | None = None

    def resolve(self) -> Runnable[Any, Any]:
        """The chat model for the current run (a factory is called with its config).

        A factory is called once per model step: the middleware and the binding of
        one step share the model it built (keyed by the step's task namespace).
        """
        if isinstance(self.model, Runnable):
            return self.model
        config = get_config()
        task = str((config.get("configurable") or {}).get("checkpoint_ns") or "")
        last = self._last
        if task and last is not None and last[0] == task:
            return last[1]
        built = self.model(with_run_context(config))
        self._last = (task, built)
        return built

    def bind_tools(self, tools: list[Any], **kwargs: Any) -> Runnable[Any, Any]:
        """The run's model with `tools` bound (through retry/fallback wrappers)."""
        return bind_model_tools(self.resolve(), tools, **kwargs)

    def bind(self, **kwargs: Any) -> Runnable[Any, Any]:
        """The run's model with `kwargs` bound."""
        return self.resolve().bind(**kwargs)

    def __repr__(self) -> str:
        """Name the wrapped model or factory."""
        return f"RunModel({self.model!r})"


def agent_model(model: Any) -> Any:
    """What `create_agent` is given for `model`: itself, or a `RunModel` stand-in.

    Raises:
        TypeError: If `model` is a compiled graph, or neither a chat model, a model
            name nor callable.
    """
    if isinstance(model, str | BaseChatModel):
        return model
    if isinstance(model, PregelProtocol) or not (is_chat_model(model) or callable(model)):
        msg = f"model must be a chat model or a factory taking a config, got {model!r}"
        raise InvalidTypeError(msg)
    return RunModel(model)


def resolved_model(model: Any) -> Any:
    """The chat model behind a `RunModel` for the current run, else `model` itself."""
    return model.resolve() if isinstance(model, RunModel) else model


class ContextSettings(TypedDict, total=False):
    """Run settings of the prebuilt agents, passed as LangGraph's run `context`.

    Give it as `context_schema` to `create_context_agent` (the served graphs do), then
    run with `graph.invoke(inputs, context={"model": "gpt-4o-mini", "user_id": "u1"})`:
    Studio and the SDK discover the keys from `graph.get_context_jsonschema()`. The
    model node reads `runtime.context` first, then `config["configurable"]` (the
    LangGraph server's assistants still pass `configurable`), and hands a model
    factory both, the context winning.

    Attributes:
        model_factory: The registered model factory (`cli.models`), e.g. `"openai"`.
        model: The model name the factory builds.
        temperature: The sampling temperature.
        user_id: Whose notes a store-backed agent reads and writes.
    """

    model_factory: str
    model: str
    temperature: float
    user_id: str


def _context_values(context: Any) -> dict[str, Any]:
    """A run context as a dict: a mapping, a dataclass or a pydantic model."""
    if context is None:
        return {}
    if isinstance(context, Mapping):
        values = dict(context)
    elif dataclasses.is_dataclass(context) and not isinstance(context, type):
        values = dataclasses.asdict(context)
    elif callable(getattr(context, "model_dump", None)):
        values = context.model_dump()
    else:
        return {}
    return {k: v for k, v in values.items() if v is not None}


def with_run_context(config: RunnableConfig) -> RunnableConfig:
    """`config` with the run's `runtime.context` laid over its `configurable` values.

    A model factory reads one place, `configurable`, whether a run was given
    `context=` (LangGraph 1.x) or `config={"configurable": ...}`; a key in both takes
    the context's value. Outside a graph run, `config` is returned as it is.

    Example:
        >>> with_run_context({"configurable": {"model": "a"}})
        {'configurable': {'model': 'a'}}
    """
    try:
        runtime = get_runtime()
    except (RuntimeError, KeyError):
        return config
    values = _context_values(getattr(runtime, "context", None))
    if not values:
        return config
    return {**config, "configurable": {**(config.get("configurable") or {}), **values}}
