"""The rules-only floor of a summarized history (private to `_step.py`).

A summarizer model must never make compaction forget what compacting by rules alone
would have kept. The facts of a history are what the rule-based snapshot reads from
text and tool calls: file paths, error lines and identifiers. A summarized history
*keeps* a fact when the fact's string occurs anywhere in its text (tool-call
arguments included), verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from langchain_core.messages import AIMessage, BaseMessage

from langgraph_context.compaction._facts import ID_RE, strings, text_facts
from langgraph_context.messages import content_text

_FENCE_TAG = re.compile(r"</?untrusted-data-[0-9a-f]+[^>\n]*>")


def _texts(message: BaseMessage) -> list[str]:
    """The text of a message the model reads: its content, then its tool-call arguments.

    Fence tags are left out: their boundary is random, not a fact of the history.
    """
    texts = [_FENCE_TAG.sub("", content_text(message.content))]
    if isinstance(message, AIMessage):
        for call in message.tool_calls:
            texts.extend(strings(call.get("args") or {}))
    return texts


def history_facts(messages: Iterable[BaseMessage]) -> set[str]:
    """Return the paths, error lines and identifiers found in `messages`."""
    facts: set[str] = set()
    for message in messages:
        for text in _texts(message):
            if not text:
                continue
            paths, errors, _ = text_facts(text)
            facts.update(paths, errors, ID_RE.findall(text))  # every id, uncapped
    return facts


def lost_facts(floor: Sequence[BaseMessage], candidate: Sequence[BaseMessage]) -> list[str]:
    """Return the facts of `floor` that occur nowhere in `candidate`, sorted.

    Args:
        floor: The rules-only history.
        candidate: The history with a summary, at the same budget.

    Returns:
        The facts `candidate` would lose; empty when it keeps them all.
    """
    seen = " ".join(" ".join(t.split()) for message in candidate for t in _texts(message))
    # an error line is clipped with "..." and its whitespace collapsed (see `_facts.clip`)
    return sorted(
        fact
        for fact in history_facts(floor)
        if " ".join(fact.split()).removesuffix("...") not in seen
    )
