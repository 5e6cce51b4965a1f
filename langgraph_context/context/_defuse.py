"""Sanitize the tool results passed verbatim to the model (private to `context`)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from langgraph_context.compaction.provenance import fenced_compaction_message
from langgraph_context.safety.detector import Detector
from langgraph_context.safety.sanitize import sanitize_untrusted

__all__ = ["defused"]


def defused(message: BaseMessage, detector: Detector | None = None) -> BaseMessage:
    """A recent tool result, sanitized (role markers, override phrases, forged tags).

    Tool results kept verbatim for the model are untrusted too; they keep their place
    and id (the state is not touched), only injected instructions are defused. Text
    blocks of list content (MCP, Anthropic style) are sanitized one by one. A
    compaction message an older version stored unfenced is fenced whole.
    """
    if not isinstance(message, ToolMessage):
        return fenced_compaction_message(message)
    content = message.content
    if isinstance(content, str):
        clean: Any = sanitize_untrusted(content, detector=detector)
    else:
        clean = [_defused_block(block, detector) for block in content]
    return message if clean == content else message.model_copy(update={"content": clean})


def _defused_block(block: Any, detector: Detector | None) -> Any:
    if isinstance(block, str):
        return sanitize_untrusted(block, detector=detector)
    if (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ):
        return {**block, "text": sanitize_untrusted(block["text"], detector=detector)}
    return block
