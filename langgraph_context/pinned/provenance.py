"""Who a constraint comes from: checked against the user's own words, never claimed.

A constraint is trusted as a rule (rendered as an instruction, not fenced data) only
when its provenance is the user's or the developer's own text:

* `source="user"` from `record_constraint` only when the recorded text *is* one or
  more whole sentences of the latest user message, compared as a reader sees them
  (`safety.visible_form`: case, spacing, invisible characters and final punctuation
  aside). Whole sentences, not any substring: "delete the tests" cut out of "Never
  delete the tests." is not what the user asked. The message's id is kept in
  `quoted_from`.
* `source="user"` or `"developer"` in the graph input or in state the developer's own
  code writes: the client sends the user's rules, the developer sets theirs.
* Anything else (the model's paraphrase, `source="model"`; an extractor model's
  reading, `"extractor"`; text from a tool or a file) stays untrusted data, fenced.

The model cannot choose the source: the tool decides it by the check above.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from langgraph_context.messages import as_messages, content_text, tool_result_ids
from langgraph_context.safety.sanitize import visible_form

__all__ = [
    "latest_user_message",
    "quoted_sentences",
    "user_quote",
]

MAX_QUOTED_SENTENCES = 4
"""A quote may span at most this many consecutive sentences of the user's message."""

# A sentence ends at . ! ? ; followed by space (not "requirements.txt"), or a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\s*\n\s*")
_BULLET = re.compile(r"^(?:[-*\u2022]|\d+[.)])\s+")
_EDGES = " \t\"'`.!?;:,()[]"
# The marker compaction puts on the user-role messages it writes (`compaction` sits in
# pinned's layer, so the key is repeated here; a test keeps the two equal).
_COMPACTION_MARKER = "lgc_compaction"


def _normal(sentence: str) -> str:
    text = " ".join(visible_form(sentence).split())
    return _BULLET.sub("", text).strip(_EDGES)


def quoted_sentences(text: str) -> list[str]:
    r"""Split a user message into sentences, normalized for comparison.

    Args:
        text: The message text.

    Returns:
        Non-empty sentences, case-folded, spacing collapsed, bullets and final
        punctuation removed.

    Example:
        >>> quoted_sentences("Fix the build. Never create requirements.txt!\n- Use uv")
        ['fix the build', 'never create requirements.txt', 'use uv']
    """
    return [s for s in (_normal(part) for part in _SENTENCE_END.split(text)) if s]


def latest_user_message(messages: Sequence[Any]) -> HumanMessage | None:
    """Return the newest message the user wrote (not compaction's, not a tool result).

    Args:
        messages: The history (messages or OpenAI-style dicts).

    Returns:
        The message, or `None` when there is none.
    """
    for message in reversed(as_messages(messages)):
        if (
            isinstance(message, HumanMessage)
            and _COMPACTION_MARKER not in message.additional_kwargs
            and not tool_result_ids(message)
        ):
            return message
    return None


def user_quote(text: str, messages: Sequence[Any]) -> BaseMessage | None:
    """Return the latest user message if `text` is whole sentences of it, else `None`.

    Args:
        text: The rule as recorded.
        messages: The history; only its latest user message counts.

    Returns:
        That message when `text`, normalized, equals 1 to `MAX_QUOTED_SENTENCES`
        consecutive sentences of it.

    Example:
        >>> said = [HumanMessage("Please fix CI. Never create requirements.txt.")]
        >>> user_quote("never create requirements.txt", said) is said[0]
        True
        >>> user_quote("create requirements.txt", said) is None
        True
    """
    message = latest_user_message(messages)
    wanted = quoted_sentences(text)
    if message is None or not wanted or len(wanted) > MAX_QUOTED_SENTENCES:
        return None
    sentences = quoted_sentences(content_text(message.content))
    size = len(wanted)
    if any(sentences[i : i + size] == wanted for i in range(len(sentences) - size + 1)):
        return message
    return None
