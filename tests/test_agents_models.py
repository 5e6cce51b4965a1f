"""Model resolution from run config and environment, without any network."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import FakeListChatModel
from langchain_openai import ChatOpenAI

from langgraph_context.cli.models import (
    create_openai_model,
    model_factory_names,
    register_model_factory,
    resolve_chat_model,
)


def test_openai_factory_reads_model_from_config_and_endpoint_from_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The default factory builds ChatOpenAI for the env endpoint and the configured model."""
    monkeypatch.setenv("LGC_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LGC_API_KEY", "sk-test")
    model = resolve_chat_model({"configurable": {"model": "local-model", "temperature": 0}})
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "local-model"
    assert model.openai_api_base == "http://127.0.0.1:9/v1"
    assert model.openai_api_key is not None
    assert model.openai_api_key.get_secret_value() == "sk-test"
    assert model.temperature == 0.0


def test_openai_factory_ignores_a_base_url_in_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """A caller cannot redirect the server's key: base_url in configurable is ignored."""
    monkeypatch.delenv("LGC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    monkeypatch.setenv("LGC_MODEL", "env-model")
    monkeypatch.setenv("LGC_API_KEY", "sk-test")
    model = create_openai_model({"configurable": {"base_url": "http://evil.example"}})
    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_base != "http://evil.example"
    assert model.model_name == "env-model"


def test_registered_factory_selected_by_config() -> None:
    """configurable.model_factory picks a registered factory, which gets the config."""
    got: list[Any] = []

    def factory(config: Any) -> FakeListChatModel:
        got.append(config)
        return FakeListChatModel(responses=["scripted"])

    register_model_factory("models-test", factory)
    config = {"configurable": {"model_factory": "models-test", "x": 1}}
    assert resolve_chat_model(config).invoke("hi").content == "scripted"
    assert got == [config]
    assert "models-test" in model_factory_names()


def test_env_registers_factories_by_import_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """LGC_MODEL_FACTORIES registers name=module:attribute factories for a server."""
    monkeypatch.setenv(
        "LGC_MODEL_FACTORIES", "from-env=langgraph_context.cli.models:create_openai_model"
    )
    monkeypatch.setenv("LGC_API_KEY", "sk-test")
    assert "from-env" in model_factory_names()
    assert isinstance(
        resolve_chat_model({"configurable": {"model_factory": "from-env"}}), ChatOpenAI
    )


def test_errors() -> None:
    """Unknown factories, bad registrations, bad values and bad env specs raise clearly."""
    with pytest.raises(ValueError, match="model_factory 'nope' is not registered; registered"):
        resolve_chat_model({"configurable": {"model_factory": "nope"}})
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        register_model_factory(" ", lambda c: FakeListChatModel(responses=[]))
    with pytest.raises(TypeError, match="factory must be callable"):
        register_model_factory("x", 3)  # type: ignore[arg-type]
    register_model_factory("not-a-model", lambda c: "text")  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="returned str, not a BaseChatModel"):
        resolve_chat_model({"configurable": {"model_factory": "not-a-model"}})
    with pytest.raises(ValueError, match="configurable 'model' must be a non-empty string"):
        create_openai_model({"configurable": {"model": 5}})
    with pytest.raises(ValueError, match="configurable 'temperature' must be a number"):
        create_openai_model({"configurable": {"temperature": "hot"}})


@pytest.mark.usefixtures("no_model_env")
def test_openai_factory_without_a_key_names_both_variables() -> None:
    """With no API key the factory raises naming LGC_API_KEY and OPENAI_API_KEY."""
    with pytest.raises(ValueError, match="set LGC_API_KEY or OPENAI_API_KEY"):
        create_openai_model()


def test_bad_env_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    """A malformed LGC_MODEL_FACTORIES names the variable and the bad entry."""
    monkeypatch.setenv("LGC_MODEL_FACTORIES", "broken")
    with pytest.raises(ValueError, match="LGC_MODEL_FACTORIES entries must look like"):
        model_factory_names()
