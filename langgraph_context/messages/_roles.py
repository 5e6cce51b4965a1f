"""Messages no provider takes as they are: state edits and unknown roles (private to `messages`).

LangGraph's `RemoveMessage` is an instruction to the `add_messages` reducer, not a
message; langchain-openai refuses it and langchain-anthropic fails on it. A
`ChatMessage` with a role providers know is converted to its class (langchain-anthropic
knows only the classes); a `ChatMessage(role="tool")` has no call id to pair with, and
any other role is one no provider has.
"""

from __future__ import annotations

from typing import Literal

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
)

ScreenKind = Literal["remove_message", "missing_tool_call_id", "unknown_role"]

_CLASSES: dict[str, type[BaseMessage]] = {
    "user": HumanMessage,
    "human": HumanMessage,
    "assistant": AIMessage,
    "ai": AIMessage,
    "system": SystemMessage,
    "developer": SystemMessage,
}


def screen(message: BaseMessage) -> tuple[BaseMessage | None, ScreenKind | None, str]:
    """`(message to keep, problem, detail)`: a known-role `ChatMessage` becomes its class.

    The kept message is `None` when the message cannot be sent at all; the problem is
    `None` when nothing is wrong.
    """
    if isinstance(message, RemoveMessage):
        return None, "remove_message", "a RemoveMessage is a state edit, not a message"
    if not isinstance(message, ChatMessage):
        return message, None, ""
    role = message.role.strip().lower() if isinstance(message.role, str) else ""
    if role == "tool":
        detail = "a ChatMessage with role 'tool' has no tool_call_id to pair with"
        return None, "missing_tool_call_id", detail
    cls = _CLASSES.get(role)
    if cls is None:
        return None, "unknown_role", f"no provider has the role {message.role!r}"
    converted = cls(
        content=message.content,
        name=message.name,
        id=message.id,
        additional_kwargs=message.additional_kwargs,
    )
    return converted, None, ""
