"""`provider_ready_history`, the last step before a model call (private to `messages`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langgraph_context.messages._history import _calls, _results, repair_history


def provider_ready_history(messages: Sequence[Any]) -> list[BaseMessage]:
    """Return the history in a form every chat provider accepts.

    `repair_history` first (state edits and unknown roles dropped, orphan and
    duplicate results dropped, every unanswered call answered "cancelled"), then
    messages with nothing to send (no text, no blocks, no calls) are dropped and runs
    of user messages are merged into one, so user and assistant turns alternate as
    chat templates and some providers require. Merged content is a list of blocks in
    order; a message that needed no change is passed on as the same object.

    Args:
        messages: LangChain messages or OpenAI-style dicts.

    Returns:
        A new list; the input is not modified.

    Raises:
        InvalidTypeError: If `messages` or one of its items has the wrong type.
        InvalidArgumentError: If an item is malformed (named by position).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
        >>> call = AIMessage("", tool_calls=[{"name": "ls", "args": {}, "id": "c1"}])
        >>> ready = provider_ready_history(
        ...     [HumanMessage("hi"), call, RemoveMessage(id="x"), HumanMessage("go on")]
        ... )
        >>> [m.type for m in ready]
        ['human', 'ai', 'tool', 'human']
    """
    out: list[BaseMessage] = []
    for message in repair_history(messages).messages:
        if _is_empty(message):
            continue
        if out and _is_plain_user(message) and _is_plain_user(out[-1]):
            out[-1] = merge_user_messages(out[-1], message)
        else:
            out.append(message)
    return out


def merge_user_messages(first: BaseMessage, second: BaseMessage) -> HumanMessage:
    """One user message holding `first`'s content, then `second`'s, as blocks.

    Args:
        first: A user message.
        second: The user message after it.

    Returns:
        A new message with `first`'s id and metadata.
    """
    blocks = [*_as_blocks(first.content), *_as_blocks(second.content)]
    return HumanMessage(
        content=blocks,
        id=first.id,
        name=first.name,
        additional_kwargs=first.additional_kwargs,
    )


def _as_blocks(content: str | list[Any]) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content)


def _is_plain_user(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and not _results(message)


def _is_empty(message: BaseMessage) -> bool:
    """Whether a user or assistant message has nothing a provider would take."""
    if not isinstance(message, (HumanMessage, AIMessage)) or _calls(message):
        return False
    content = message.content
    if isinstance(content, str):
        return not content.strip()
    return not any(_has_content(block) for block in content)


def _has_content(block: Any) -> bool:
    """Whether a block is something to send: non-blank text, or any other block."""
    if isinstance(block, str):
        return bool(block.strip())
    if isinstance(block, dict) and block.get("type") == "text":
        text = block.get("text")
        return isinstance(text, str) and bool(text.strip())
    return True
