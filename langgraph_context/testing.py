"""Offline stand-ins for chat models, for tests, notebooks and docs.

LangChain's fake chat models cannot bind tools, so they cannot drive a tool-calling
agent. `ScriptedChatModel` replays scripted replies (tool calls included), accepts
`bind_tools`, and records every input it was sent, so a test can check what the
model saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

__all__ = ["ScriptedChatModel", "ai_calls", "tool_call"]


class ScriptedChatModel(FakeMessagesListChatModel):
    """A chat model that replays `responses` in order and records its inputs.

    Attributes:
        responses: The replies, in order (cycled when exhausted).
        seen: Every list of messages the model was called with.

    Example:
        >>> model = ScriptedChatModel(responses=[AIMessage("hello")])
        >>> model.bind_tools([]).invoke("hi").content
        'hello'
        >>> [m.content for m in model.seen[0]]
        ['hi']
    """

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        """Return the model itself: the script already decides which tools are called."""
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def tool_call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    """Build one tool call for a scripted AI message.

    Example:
        >>> tool_call("ls", {}, "c1")["name"]
        'ls'
    """
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def ai_calls(*calls: dict[str, Any], content: str = "") -> AIMessage:
    """Build an AI message making the given tool calls.

    Example:
        >>> len(ai_calls(tool_call("ls", {}, "c1")).tool_calls)
        1
    """
    return AIMessage(content, tool_calls=list(calls))
