"""Choose the chat model of a run from its configuration and the environment.

Graphs served by `langgraph dev` cannot take a model object: the model has to come
from the run's `configurable` values and the server's environment. The rules:

* `configurable["model_factory"]` names a registered factory (default `"openai"`).
  Factories are registered in code with `register_model_factory`, or by whoever starts
  the server through the `LGC_MODEL_FACTORIES` environment variable
  (`name=package.module:attribute`, comma separated). A run can only *name* a factory;
  it can never make the server import code.
* The built-in `"openai"` factory builds a `ChatOpenAI` for any OpenAI-compatible
  endpoint. The model name and temperature may come from `configurable` (`model`,
  `temperature`) or the environment (`LGC_MODEL`); the endpoint and key come from the
  environment only (`LGC_BASE_URL` or `OPENAI_BASE_URL`, `LGC_API_KEY` or
  `OPENAI_API_KEY`), so a caller of a shared server cannot send its key to another host.

Tests swap in a scripted model by registering a factory and naming it in
`configurable`; nothing touches the network.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.providers.models import ModelFactory

__all__ = [
    "API_KEY_ENV_VARS",
    "BASE_URL_ENV_VARS",
    "DEFAULT_MODEL_FACTORY",
    "DEFAULT_OPENAI_MODEL",
    "MODEL_ENV_VAR",
    "MODEL_FACTORIES_ENV_VAR",
    "create_openai_model",
    "model_factory_names",
    "register_model_factory",
    "resolve_chat_model",
]

DEFAULT_MODEL_FACTORY = "openai"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
MODEL_ENV_VAR = "LGC_MODEL"
MODEL_FACTORIES_ENV_VAR = "LGC_MODEL_FACTORIES"
BASE_URL_ENV_VARS = ("LGC_BASE_URL", "OPENAI_BASE_URL")
API_KEY_ENV_VARS = ("LGC_API_KEY", "OPENAI_API_KEY")

_lock = threading.Lock()
_factories: dict[str, ModelFactory] = {}
_env_loaded: str | None = None


def _configurable(config: RunnableConfig | Mapping[str, Any] | None) -> Mapping[str, Any]:
    if not config:
        return {}
    values = config.get("configurable") or {}
    return values if isinstance(values, Mapping) else {}


def _first_env(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def create_openai_model(config: RunnableConfig | None = None) -> BaseChatModel:
    """Build a `ChatOpenAI` for an OpenAI-compatible endpoint (the `"openai"` factory).

    Args:
        config: The run's config; `configurable["model"]` and
            `configurable["temperature"]` are honoured.

    Returns:
        A `ChatOpenAI`. No request is made until it is invoked.

    Raises:
        ValueError: If `configurable["model"]` is not a non-empty string,
            `configurable["temperature"]` is not a number, or neither `LGC_API_KEY`
            nor `OPENAI_API_KEY` is set.
    """
    from langchain_openai import ChatOpenAI  # noqa: PLC0415 - import only when used

    values = _configurable(config)
    model = values.get("model") or os.environ.get(MODEL_ENV_VAR) or DEFAULT_OPENAI_MODEL
    if not isinstance(model, str) or not model.strip():
        msg = f"configurable 'model' must be a non-empty string, got {model!r}"
        raise InvalidArgumentError(msg)
    kwargs: dict[str, Any] = {"model": model}
    temperature = values.get("temperature")
    if temperature is not None:
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
            msg = f"configurable 'temperature' must be a number, got {temperature!r}"
            raise InvalidArgumentError(msg)
        kwargs["temperature"] = float(temperature)
    base_url = _first_env(BASE_URL_ENV_VARS)
    if base_url:
        kwargs["base_url"] = base_url
    api_key = _first_env(API_KEY_ENV_VARS)
    if not api_key:
        names = " or ".join(API_KEY_ENV_VARS)
        msg = (
            f"no API key for the 'openai' model factory: set {names} "
            "(any value for a local server that needs none)"
        )
        raise InvalidArgumentError(msg)
    kwargs["api_key"] = api_key
    return ChatOpenAI(**kwargs)


_factories[DEFAULT_MODEL_FACTORY] = create_openai_model


def register_model_factory(name: str, factory: ModelFactory) -> None:
    """Register `factory` under `name` so a run can select it with `model_factory`.

    Registering a name again replaces the earlier factory.

    Args:
        name: The name runs use in `configurable["model_factory"]`.
        factory: A callable taking the run's config and returning a chat model.

    Raises:
        ValueError: If `name` is empty.
        TypeError: If `factory` is not callable.

    Example:
        >>> from langchain_core.language_models import FakeListChatModel
        >>> register_model_factory("canned", lambda config: FakeListChatModel(responses=["hi"]))
        >>> resolve_chat_model({"configurable": {"model_factory": "canned"}}).invoke("x").content
        'hi'
    """
    if not isinstance(name, str) or not name.strip():
        msg = f"name must be a non-empty string, got {name!r}"
        raise InvalidArgumentError(msg)
    if not callable(factory):
        msg = f"factory must be callable, got {type(factory).__name__}"
        raise InvalidTypeError(msg)
    with _lock:
        _factories[name.strip()] = factory


def _load_env_factories() -> None:
    """Register the factories named in `LGC_MODEL_FACTORIES` (once per distinct value)."""
    global _env_loaded  # noqa: PLW0603 - the variable is parsed once per value, process-wide
    spec = os.environ.get(MODEL_FACTORIES_ENV_VAR, "")
    if spec == _env_loaded:
        return
    for entry in filter(None, (part.strip() for part in spec.split(","))):
        name, sep, target = entry.partition("=")
        module_name, colon, attribute = target.strip().partition(":")
        if not sep or not colon or not name.strip() or not module_name or not attribute:
            msg = (
                f"{MODEL_FACTORIES_ENV_VAR} entries must look like name=package.module:attribute, "
                f"got {entry!r}"
            )
            raise InvalidArgumentError(msg)
        try:
            factory = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as exc:
            msg = f"{MODEL_FACTORIES_ENV_VAR} entry {entry!r} cannot be loaded: {exc}"
            raise InvalidArgumentError(msg) from exc
        register_model_factory(name.strip(), factory)
    _env_loaded = spec


def model_factory_names() -> list[str]:
    """Return the sorted names of the registered model factories.

    Returns:
        Names usable as `configurable["model_factory"]`.

    Raises:
        ValueError: If `LGC_MODEL_FACTORIES` is malformed or names a module or
            attribute that cannot be loaded.
    """
    _load_env_factories()
    with _lock:
        return sorted(_factories)


def resolve_chat_model(
    config: RunnableConfig | None = None, *, default: str = DEFAULT_MODEL_FACTORY
) -> BaseChatModel:
    """Build the chat model a run asks for.

    Args:
        config: The run's config (`configurable["model_factory"]` picks the factory).
        default: The factory used when the config names none.

    Returns:
        The chat model built by the chosen factory for this config.

    Raises:
        ValueError: If the named factory is not registered, or `LGC_MODEL_FACTORIES`
            is malformed.
        TypeError: If the factory returns something other than a chat model.
    """
    name = _configurable(config).get("model_factory") or default
    names = model_factory_names()
    with _lock:
        factory = _factories.get(name) if isinstance(name, str) else None
    if factory is None:
        msg = f"model_factory {name!r} is not registered; registered factories: {names}"
        raise InvalidArgumentError(msg)
    model = factory(config or {})
    if not isinstance(model, BaseChatModel):
        msg = f"model factory {name!r} returned {type(model).__name__}, not a BaseChatModel"
        raise InvalidTypeError(msg)
    return model
