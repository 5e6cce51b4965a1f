"""A scripted model that follows a cut notice: it reads the kept text back by its handle.

It calls one tool first; when that tool's result arrives cut, with a notice naming a
handle, it calls `read_tool_output` with the handle and a pattern (one call); then it
answers with the last tool result it read. Offline and deterministic: the benchmark
and the tests measure the plumbing, not a model's judgement.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

HANDLE = re.compile(r'handle="((?:out|msg)-[0-9a-f]{12})"')


def notice_handle(text: str) -> str | None:
    """The handle a cut notice names, or `None`."""
    found = HANDLE.search(text)
    return found.group(1) if found else None


class NoticeFollower(BaseChatModel):
    """Call `first`, follow a cut notice with `read_tool_output(pattern=...)`, then answer."""

    first: dict[str, Any]
    pattern: str
    read_tool: str = "read_tool_output"
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "notice-follower"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> NoticeFollower:
        """The model itself: it decides its calls from the history."""
        return self

    def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1] if messages else None
        turn = sum(1 for m in messages if isinstance(m, AIMessage))
        if isinstance(last, HumanMessage):
            call = {**self.first, "id": f"first-{turn}", "type": "tool_call"}
            return AIMessage("", tool_calls=[call])
        text = str(last.content) if last is not None else ""
        handle = notice_handle(text)
        if isinstance(last, ToolMessage) and last.name != self.read_tool and handle:
            args = {"handle": handle, "pattern": self.pattern}
            call = {"name": self.read_tool, "args": args, "id": f"read-{turn}", "type": "tool_call"}
            return AIMessage("", tool_calls=[call])
        return AIMessage(f"answer: {text}")

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])
