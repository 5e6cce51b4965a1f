"""`create_tool_output_limit_node`: cut an oversized tool result once, as it arrives.

A provider's prompt cache bills again only what changed since the previous request, and
a compaction rewrites the history, so both reward a history that grows slowly and is
never edited. A tool result far larger than the rest of a turn (a whole file, a long
test log) is cut here, right after its tool round and before the model first reads it:
its start and its end are kept (where code opens and where logs put their summary)
around a notice saying how much was left out. The model only ever sees the cut text,
so cutting it never rewrites a prefix the model was already sent; each result is cut
at most once. With `note_key`, the full text is kept as a note the model can read back.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.runnables import RunnableLambda

from langgraph_context.compaction.minify import minify_tool_result
from langgraph_context.compaction.options import check_positive
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import as_messages
from langgraph_context.state import get_state_value
from langgraph_context.tokens import TokenCounter, resolve_counter, truncate_text

__all__ = [
    "arrived_tool_result",
    "create_tool_output_limit_node",
    "cut_tool_result",
]

CUT_MARKER = "lgc_cut_on_entry"
"""`additional_kwargs` key of a result cut on entry (its full size in tokens; estimated
from its two ends when those alone are over the limit, see `truncate_text`)."""
DEFAULT_NOTE_PREFIX = "tool-output/"
# "~": the total is rounded, and estimated for a text far over the limit (the same
# tokens as the exact "2013-token" it replaced, so the kept ends are as long).
_NOTICE = (
    "\n[... {{n}} characters of this ~{total}-token result were cut as it arrived, to "
    "keep the conversation small{where}; {then} ...]\n"
)
_ASK_AGAIN = "ask for a narrower part to see more"
# The notice as `_NOTICE` writes it, or as it was before its total was rounded (no "~"):
# no newline inside; what follows "; " is the read-back.
_NOTICE_RE = re.compile(
    r"\n\[\.\.\. \d+ characters of this ~?\d+-token result were cut as it arrived[^\n]*?"
    r" \.\.\.\]\n"
)


def without_cut_notice(text: str) -> str:
    """`text` without the cut notice(s) in it: the two kept ends, joined by a newline.

    What leaves the context is condensed from its own content: the notice's sizes and
    handle are not facts of the work (and the recall archive keeps the handles).
    """
    return _NOTICE_RE.sub("\n", text)


def _about(tokens: int) -> int:
    """`tokens` to two significant digits (the notice's "~"): the total may be estimated."""
    digits = len(str(tokens))
    return tokens if digits <= 2 else round(tokens, 2 - digits)


def trailing_results(messages: list[BaseMessage]) -> list[ToolMessage]:
    """The tool results after the last other message: the round that just ran."""
    results: list[ToolMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        results.append(message)
    return results[::-1]


def cut_tool_result(
    result: ToolMessage,
    max_result_tokens: int,
    *,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    noted: bool = False,
    read_back: str | None = None,
) -> ToolMessage | None:
    """The result cut to its two ends around a notice, or `None` when it stays as it is.

    A result stays when its content is not text or fits `max_result_tokens` (so a result cut
    before stays under any limit at least as large). The cut copy keeps the id and is
    marked with its full size (`CUT_MARKER`, the original size when cut twice).

    Args:
        result: The tool result.
        max_result_tokens: Most tokens it keeps (notice included).
        token_counter: Counter for the limit (default: offline tiktoken).
        noted: The notice says the full text is note `tool-output/<tool_call_id>`.
        read_back: What the notice tells the model to do to see the rest (default:
            ask for a narrower part), e.g. the tool and handle that read it back.

    Returns:
        The cut copy, or `None`.
    """
    text = result.content
    if not isinstance(text, str):
        return None
    # A result cut before and still over this (smaller) limit, e.g. a stricter limit
    # node after the agent's own cut in the same tool round, is cut again from what it
    # kept; the notice keeps naming the original size. The size comes from the cut's
    # own count (one encoding, nothing memoized: the full text is seen once).
    earlier = result.additional_kwargs.get(CUT_MARKER)
    where = f" (the full text is note {DEFAULT_NOTE_PREFIX}{result.tool_call_id})" if noted else ""
    totals: list[int] = []

    def notice(size: int) -> str:
        totals.append(earlier if isinstance(earlier, int) and earlier > size else size)
        shown = _about(totals[-1])
        return _NOTICE.format(total=shown, where=where, then=read_back or _ASK_AGAIN)

    counter = resolve_counter(token_counter)
    short = truncate_text(
        text, max_result_tokens, token_counter=counter, marker=notice, keep="ends"
    )
    if not totals:
        return None  # a result cut before fits any limit at least as large as its cut
    kwargs = {**result.additional_kwargs, CUT_MARKER: totals[-1]}
    return result.model_copy(update={"content": short, "additional_kwargs": kwargs})


def arrived_tool_result(
    result: ToolMessage,
    max_result_tokens: int,
    *,
    minify_json: bool = True,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    noted: bool = False,
    read_back: str | None = None,
) -> ToolMessage | None:
    """The result as it enters the history (JSON minified, then cut), or `None` if as is.

    The one path of the node and of `ToolOutputLimitMiddleware`: `minify_tool_result`
    first (when `minify_json`), then `cut_tool_result` on what that left.

    Args:
        result: The tool result, as the tool returned it.
        max_result_tokens: Most tokens it keeps (notice included).
        minify_json: Drop the whitespace outside strings of a JSON result first.
        token_counter: Counter for the limit (default: offline tiktoken).
        noted: The cut notice names note `tool-output/<tool_call_id>`.
        read_back: What the cut notice tells the model to do to see the rest.

    Returns:
        The replacement (same id), or `None` when nothing changes.
    """
    compact = (minify_tool_result(result) if minify_json else None) or result
    short = cut_tool_result(
        compact, max_result_tokens, token_counter=token_counter, noted=noted, read_back=read_back
    )
    if short is not None:
        return short
    return None if compact is result else compact


def create_tool_output_limit_node(
    max_result_tokens: int,
    *,
    note_key: str | None = None,
    minify_json: bool = True,
    messages_key: str = "messages",
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    name: str = "limit_tool_output",
) -> RunnableLambda[Any, dict[str, Any]]:
    r"""Create a node that cuts each new tool result over `max_result_tokens` to its two ends.

    Run it right after the tools (`create_context_agent(post_tools=[...])`, or an edge
    from your `ToolNode`). It looks at the tool results at the end of the history (the
    round that just ran); one with text content over `max_result_tokens` is replaced, under
    the same message id, by its start and end with a notice between them, and marked
    in `additional_kwargs[CUT_MARKER]` with its full size, so it is never cut twice.
    Results with block content, without an id, or within the limit are left alone.
    With `minify_json` (default), a result that is one JSON object or array first
    loses the whitespace outside its strings (`minify_tool_result`: lossless, and
    paid for on every later call of the thread), then is measured against the limit.

    Args:
        max_result_tokens: Most tokens one tool result keeps (notice included).
        note_key: A notes key (e.g. `"note"` of `NoteStateMixin`, whose reducer merges):
            the full text of each cut result is saved as note
            `tool-output/<tool_call_id>`, and the notice names it. `None` keeps no copy.
        minify_json: Drop the whitespace outside strings of JSON results first.
        messages_key: State key of the conversation (with the `add_messages` reducer,
            which replaces a message by id).
        token_counter: Counter for the limit (default: offline tiktoken).
        name: The runnable's name.

    Returns:
        A runnable node returning the replaced results (and notes), or `{}`.

    Raises:
        ValueError: If `max_result_tokens` is not a positive int or a key is blank.

    Example:
        >>> from langchain_core.messages import AIMessage, ToolMessage
        >>> node = create_tool_output_limit_node(60)
        >>> call = {"name": "cat", "args": {}, "id": "c1"}
        >>> state = {"messages": [AIMessage("", tool_calls=[call]),
        ...     ToolMessage("line\n" * 500, tool_call_id="c1", id="t1")]}
        >>> [cut] = node.invoke(state)["messages"]
        >>> cut.id, "were cut as it arrived" in cut.content
        ('t1', True)
    """
    check_positive("max_result_tokens", max_result_tokens)
    for key_name, key in (("messages_key", messages_key), ("note_key", note_key)):
        if key is not None and (not isinstance(key, str) or not key):
            msg = f"{key_name} must be a non-empty string, got {key!r}"
            raise InvalidArgumentError(msg)
    counter = resolve_counter(token_counter)

    def limit(state: Any) -> dict[str, Any]:
        messages = as_messages(get_state_value(state, messages_key, []))
        cut: list[ToolMessage] = []
        notes: dict[str, str] = {}
        for result in trailing_results(messages):
            if result.id is None:
                continue
            # a result cut before (by the agent's own limit) no longer holds its full
            # text: it is cut again if need be, but never saved as "the full text"
            noted = note_key is not None and CUT_MARKER not in result.additional_kwargs
            short = arrived_tool_result(
                result,
                max_result_tokens,
                minify_json=minify_json,
                token_counter=counter,
                noted=noted,
            )
            if short is None:
                continue
            cut.append(short)
            if noted and note_key and CUT_MARKER in short.additional_kwargs:
                notes[f"{DEFAULT_NOTE_PREFIX}{result.tool_call_id}"] = str(result.content)
        update: dict[str, Any] = {messages_key: cut} if cut else {}
        if notes and note_key:
            update[note_key] = notes
        return update

    return RunnableLambda(limit, name=name)
