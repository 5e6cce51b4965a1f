"""Shared fixtures: scripted chat models that drive real graphs without a network."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage


class ScriptedChatModel(FakeMessagesListChatModel):
    """A fake chat model that replays scripted replies and records what it was sent.

    `bind_tools` returns the model itself so it can stand in for a tool-calling model in
    `create_react_agent`, `create_agent` and hand-built graphs.
    """

    seen: list[list[BaseMessage]] = []  # noqa: RUF012 - pydantic field, copied per instance

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        """Return self: the script already decides which tools are called."""
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    """Build one tool call dict for a scripted AI message."""
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def ai_calls(*calls: dict[str, Any], content: str = "") -> AIMessage:
    """Build an AI message making the given tool calls."""
    return AIMessage(content, tool_calls=list(calls))


@pytest.fixture
def scripted() -> type[ScriptedChatModel]:
    """The scripted model class (instantiate with `responses=[...]`)."""
    return ScriptedChatModel
