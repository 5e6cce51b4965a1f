"""A scripted model factory for the `langgraph dev` round-trip test.

The server process registers it through
`LGC_MODEL_FACTORIES=scripted=tests._server_models:scripted`. A run names it with
`configurable.model_factory = "scripted"` and passes its replies as
`configurable.script` (a list of `{"content": ..., "tool_calls": [...]}`); each model
call of a run takes the next reply. `named` (registered as `named`) answers with the
run's `model` and `temperature` settings, so a test sees which settings reached it.
"""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage

_lock = threading.Lock()
_position: dict[str, int] = {}


class _ServerScriptedModel(FakeMessagesListChatModel):
    """Replays `responses`; bind_tools returns self."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> _ServerScriptedModel:  # type: ignore[override]
        return self


def _message(spec: dict[str, Any]) -> BaseMessage:
    calls = [
        {"name": c["name"], "args": c["args"], "id": c["id"], "type": "tool_call"}
        for c in spec.get("tool_calls", [])
    ]
    return AIMessage(spec.get("content", ""), tool_calls=calls)


def scripted(config: Any) -> _ServerScriptedModel:
    """Return a model answering with the next scripted reply of this run."""
    configurable = config.get("configurable", {})
    script = [_message(s) for s in configurable["script"]]
    run = str(configurable.get("run_id") or configurable.get("thread_id"))
    with _lock:
        index = _position.get(run, 0)
        _position[run] = index + 1
    return _ServerScriptedModel(responses=[script[min(index, len(script) - 1)]])


def named(config: Any) -> _ServerScriptedModel:
    """Return a model answering with the run's `model` and `temperature` settings."""
    configurable = config.get("configurable", {})
    reply = f"{configurable.get('model')} at {configurable.get('temperature')}"
    return _ServerScriptedModel(responses=[AIMessage(reply)])
