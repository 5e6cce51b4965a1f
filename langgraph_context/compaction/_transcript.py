"""Render messages as plain transcript text for a summarizer, within token budgets (private)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import content_text
from langgraph_context.tokens import TokenCounter, truncate_text

MIN_CHUNK_TOKENS = 64
_CLIP_MARK = "\n[... {n} characters omitted ...]\n"


def render_message(message: BaseMessage) -> str:
    text = content_text(message.content)
    if isinstance(message, SystemMessage):
        return f"[system] {text}"
    if isinstance(message, HumanMessage):
        return f"[user] {text}"
    if isinstance(message, ToolMessage):
        status = " (error)" if message.status == "error" else ""
        return f"[tool result {message.name or message.tool_call_id}{status}] {text}"
    if isinstance(message, AIMessage):
        calls = "".join(
            f"\n[assistant calls {tc['name']}] {json.dumps(tc['args'], ensure_ascii=False)}"
            for tc in message.tool_calls
        )
        return f"[assistant] {text}{calls}".rstrip()
    return f"[{message.type}] {text}"


def transcript_chunks(
    messages: Sequence[BaseMessage], *, budget: int, token_counter: TokenCounter
) -> list[str]:
    """Render messages as transcript text, split so each chunk fits `budget` tokens."""
    if not messages:
        return []
    if budget < MIN_CHUNK_TOKENS:
        msg = (
            f"max_input_tokens leaves only {budget} tokens for the transcript after the "
            "instructions and two summaries; raise max_input_tokens or lower "
            "max_summary_tokens"
        )
        raise InvalidArgumentError(msg)
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for message in messages:
        text = truncate_text(
            render_message(message),
            budget,
            token_counter=token_counter,
            marker=_CLIP_MARK,
            keep="ends",
        )
        cost = int(token_counter(text)) + 1
        if current and used + cost > budget:
            chunks.append("\n\n".join(current))
            current, used = [], 0
        current.append(text)
        used += cost
    if current:
        chunks.append("\n\n".join(current))
    return chunks
