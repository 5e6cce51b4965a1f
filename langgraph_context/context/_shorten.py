"""Shorten the messages passed verbatim until they fit their share of the window.

Private to `context`: the context node calls it when the recent messages are over
the room left for them; only the model's view is shortened, never the state.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_context.messages import content_text, tool_result_ids
from langgraph_context.tokens import TokenCounter, truncate_text

__all__ = ["shorten_messages"]

logger = logging.getLogger(__name__)

_MIN_SHORTENED_TOKENS = 32
_SHORTENED = (
    "\n[... shortened by langgraph-context to fit the context window: {shown} of {total} "
    "tokens shown; the full text stays in the conversation history]"
)


def _text_blocks_only(content: Any) -> bool:
    if isinstance(content, str):
        return True
    return all(
        isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text") for b in content
    )


def shorten_messages(
    recent: list[BaseMessage], allowed: int, token_counter: TokenCounter
) -> list[BaseMessage]:
    """Shorten the longest texts of `recent` until it fits `allowed` tokens.

    Tool results go first (stale output is what overflows), then the user's and the
    model's own text; images, tool calls and ids are kept, so every tool call still
    has its result. Texts keep at least `_MIN_SHORTENED_TOKENS` at first; if that is
    not enough (many parallel results), tool results are cut down to the notice alone.
    The latest user request is shortened last of all: older tool text never takes
    its room.
    Every pass visits each message once, so this always ends; when even the shortest
    form is too long it returns that, with a warning.
    """
    counter = token_counter
    messages = list(recent)
    originals: dict[int, tuple[str, int]] = {}
    shown: dict[int, int] = {}  # tokens of the original still shown, once shortened
    request = next(
        (
            i
            for i in range(len(messages) - 1, -1, -1)
            if isinstance(messages[i], HumanMessage) and not tool_result_ids(messages[i])
        ),
        None,
    )
    passes: tuple[tuple[tuple[type[BaseMessage], ...], int, bool | None], ...] = (
        ((ToolMessage,), _MIN_SHORTENED_TOKENS, None),
        ((HumanMessage, AIMessage), _MIN_SHORTENED_TOKENS, False),
        ((ToolMessage,), 0, None),
        ((HumanMessage,), _MIN_SHORTENED_TOKENS, True),
    )
    for kinds, floor, latest in passes:
        candidates = []
        for i, m in enumerate(messages):
            if latest is not None and (i == request) != latest:
                continue  # the latest request waits for the last pass
            if isinstance(m, kinds) and _text_blocks_only(m.content):
                if i not in originals:
                    text = content_text(m.content)
                    originals[i] = (text, counter(text))
                candidates.append((originals[i][1], i))
        for total, i in sorted(candidates, reverse=True):
            excess = counter(messages) - allowed
            if excess <= 0:
                return messages
            now = shown.get(i, total)
            # The first cut of a message also pays for its notice.
            extra = 0 if i in shown else counter(_SHORTENED.format(shown=total, total=total))
            keep = max(floor, now - excess - extra)
            if keep >= now:
                continue
            head = truncate_text(originals[i][0], keep, token_counter=counter)
            shorter = messages[i].model_copy(
                update={"content": head + _SHORTENED.format(shown=counter(head), total=total)}
            )
            if counter([shorter]) >= counter([messages[i]]):
                continue  # the notice would cost more than it saves
            shown[i] = counter(head)
            messages[i] = shorter
    if counter(messages) > allowed:
        logger.warning(
            "recent messages need %d tokens even shortened, over the %d left for them",
            counter(messages),
            allowed,
        )
    return messages
