"""Prompt-cache breakpoints for providers that cache only where the request says so.

OpenAI and Gemini cache the longest prefix a request shares with an earlier one, on
their own. Anthropic caches a prefix only up to a block marked `cache_control`, and a
later request reads it only if its own prefix matches at one of those marks. Marking
just the last block (what a top-level `cache_control` does) misses every time the
request ends with something that changes between calls, such as the plan's closing
message of the cache layout: the marked prefix then holds that message, and no later
request starts with it.

`mark_cache_breakpoints` marks the end of the stable part instead: the system message,
and the last message before the closing plan message. Each call writes the prefix up
to the latest history message; the next call, whose history extends it, reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableWithFallbacks
from langchain_core.runnables.base import RunnableBindingBase

from langgraph_context.context._window import STATE_NOTICE, is_state_tail
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import at_most_cache_marks

__all__ = [
    "CacheBreakpoints",
    "cache_control_for",
    "cache_marks",
    "has_cache_mark",
    "mark_cache_breakpoints",
    "mark_cache_points",
    "uses_cache_breakpoints",
    "uses_cache_points",
    "uses_prompt_cache_key",
]

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
"""Anthropic's cache mark (5-minute lifetime); `{"type": "ephemeral", "ttl": "1h"}` for an hour."""

CacheBreakpoints = bool | Mapping[str, str] | None
"""`None`: mark when the model is Anthropic's; `True`: always, with `EPHEMERAL`; a mapping:
always, with that mark; `False`: never."""

MAX_MESSAGE_MARKS = 2
"""Marks the messages may hold after marking: Anthropic allows four per request, and the
tool list and a top-level mark (`AnthropicPromptCachingMiddleware`) may take the others."""

MAX_REQUEST_MARKS = 4
"""Anthropic refuses a request with more marked blocks than this."""

CACHE_POINT: dict[str, dict[str, str]] = {"cachePoint": {"type": "default"}}
"""Bedrock Converse's cache checkpoint: a content block of its own after the cached part."""

# Anthropic refuses a cache mark on thinking blocks.
_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def _marked_content(content: Any, cache_control: Mapping[str, str]) -> list[Any] | None:
    """`content` with its last block carrying the mark, or `None` if it has no such block."""
    mark = dict(cache_control)
    if isinstance(content, str):
        return [{"type": "text", "text": content, "cache_control": mark}] if content else None
    if not isinstance(content, list):
        return None
    blocks = list(content)
    for i in range(len(blocks) - 1, -1, -1):
        block = blocks[i]
        if isinstance(block, str):
            if not block:
                continue
            blocks[i] = {"type": "text", "text": block, "cache_control": mark}
            return blocks
        if isinstance(block, dict) and block.get("type") not in _UNMARKABLE:
            text = block.get("text")
            if block.get("type") == "text" and (
                not text or (isinstance(text, str) and text.startswith(STATE_NOTICE))
            ):
                continue  # nothing to mark, or the plan merged into the last user turn
            blocks[i] = {**block, "cache_control": mark}
            return blocks
    return None


def _mark(message: BaseMessage, cache_control: Mapping[str, str]) -> BaseMessage | None:
    """A copy of `message` with the mark on its last block (`None`: nothing to mark)."""
    content = _marked_content(message.content, cache_control)
    if content is None:
        return None
    return message.model_copy(update={"content": content})


def mark_cache_breakpoints(
    messages: Sequence[BaseMessage], cache_control: Mapping[str, str] | None = None
) -> list[BaseMessage]:
    """Mark the system message and the end of the stable history for a prompt cache.

    Two marks at most, counting the marked blocks the messages already hold
    (Anthropic allows four per request, so a caller's own mark on the tools and a
    top-level one still fit; beyond four, the earliest marks are removed): the last
    block of a leading system message, and the last block of the last message before
    the plan's closing message (an assistant message with only tool
    calls is passed over for the one before it; a plan merged into the last user
    turn is passed over for the block before it). The messages themselves are not
    changed; marked ones are copies.

    Args:
        messages: The request, as the model will receive it.
        cache_control: The mark (default `EPHEMERAL`).

    Returns:
        The request with the marks.

    Raises:
        ValueError: If `cache_control` is not a mapping with a string `type`.

    Example:
        >>> from langchain_core.messages import HumanMessage, SystemMessage
        >>> sent = mark_cache_breakpoints([SystemMessage("Be brief."), HumanMessage("hi")])
        >>> sent[1].content
        [{'type': 'text', 'text': 'hi', 'cache_control': {'type': 'ephemeral'}}]
    """
    mark = EPHEMERAL if cache_control is None else _checked_mark(cache_control, "cache_control")
    out = at_most_cache_marks(list(messages), MAX_REQUEST_MARKS)
    # Anthropic refuses a fifth marked block: marks already in the messages count
    # against the two this leaves room for (a caller's mark on the tools and a
    # top-level one).
    room = MAX_MESSAGE_MARKS - sum(cache_marks(m) for m in out)
    return _marked_at_ends(out, room, has_cache_mark, lambda m: _mark(m, mark))


def _marked_at_ends(
    out: list[BaseMessage],
    room: int,
    marked_already: Callable[[BaseMessage], bool],
    mark: Callable[[BaseMessage], BaseMessage | None],
) -> list[BaseMessage]:
    """`out` with `mark` on the leading system message and the stable history's end."""
    first = 0
    if out and isinstance(out[0], SystemMessage):
        first = 1
        if room > 0 and not marked_already(out[0]):
            marked = mark(out[0])
            if marked is not None:
                out[0] = marked
                room -= 1
    if room <= 0:
        return out
    for i in range(len(out) - 1, first - 1, -1):
        message = out[i]
        if is_state_tail(message) or (
            isinstance(message, AIMessage) and message.tool_calls and not message.text
        ):
            continue
        if marked_already(message):
            break  # the history's end is marked already
        marked = mark(message)
        if marked is not None:
            out[i] = marked
            break
    return out


def mark_cache_points(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Add Bedrock Converse `cachePoint` blocks where `mark_cache_breakpoints` marks.

    Converse caches the prefix before a `{"cachePoint": {"type": "default"}}` content
    block (in the system content or a message's); this appends one after the leading
    system message's content and after the stable history's last message, unless
    either already holds one. Reasoning blocks are never followed by a point.

    Args:
        messages: The request, as the model will receive it.

    Returns:
        The request with the points (marked messages are copies).

    Example:
        >>> from langchain_core.messages import HumanMessage, SystemMessage
        >>> sent = mark_cache_points([SystemMessage("Be brief."), HumanMessage("hi")])
        >>> sent[0].content
        [{'type': 'text', 'text': 'Be brief.'}, {'cachePoint': {'type': 'default'}}]
    """
    return _marked_at_ends(list(messages), MAX_MESSAGE_MARKS, has_cache_point, _with_point)


def has_cache_point(message: BaseMessage) -> bool:
    """Whether `message`'s content holds a Bedrock `cachePoint` block."""
    content = message.content
    return isinstance(content, list) and any(
        isinstance(b, dict) and "cachePoint" in b for b in content
    )


def _with_point(message: BaseMessage) -> BaseMessage | None:
    """A copy of `message` with a `cachePoint` block after its content (`None`: empty)."""
    content = message.content
    if isinstance(content, str):
        blocks: list[Any] = [{"type": "text", "text": content}] if content else []
    else:
        blocks = list(content)
    last = blocks[-1] if blocks else None
    if last is None or (isinstance(last, dict) and last.get("type") in _UNMARKABLE):
        return None
    return message.model_copy(update={"content": [*blocks, dict(CACHE_POINT)]})


def cache_marks(message: BaseMessage) -> int:
    """How many blocks of `message`'s content carry a `cache_control` mark.

    Args:
        message: Any message.

    Returns:
        The count (Anthropic counts marks per block, not per message).
    """
    content = message.content
    if not isinstance(content, list):
        return 0
    return sum(isinstance(b, dict) and "cache_control" in b for b in content)


def has_cache_mark(message: BaseMessage) -> bool:
    """Whether a block of `message`'s content carries a `cache_control` mark.

    Args:
        message: Any message.

    Returns:
        `True` if one does.
    """
    content = message.content
    return isinstance(content, list) and any(
        isinstance(b, dict) and "cache_control" in b for b in content
    )


def _checked_mark(mark: Any, name: str, allowed: str = "") -> Mapping[str, str]:
    """`mark` if it is a mapping with a string `type`.

    Raises:
        ValueError: Otherwise, naming the argument `name` and what else it may be.
    """
    if isinstance(mark, Mapping) and isinstance(mark.get("type"), str):
        return mark
    msg = f"{name} must be {allowed}a mapping with a string 'type', got {mark!r}"
    raise InvalidArgumentError(msg)


def _providers(model: Any, seen: set[int] | None = None) -> set[str | None]:
    """The `ls_provider` of every chat model behind `model` (bindings, retries, fallbacks)."""
    seen = set() if seen is None else seen
    if model is None or id(model) in seen:
        return set()
    seen.add(id(model))
    # Wrappers first: `RunnableWithFallbacks` answers attribute lookups for its primary.
    if isinstance(model, RunnableWithFallbacks):
        found: set[str | None] = set()
        for part in (model.runnable, *model.fallbacks):
            found |= _providers(part, seen)
        return found
    if isinstance(model, RunnableBindingBase):  # bind_tools, with_retry, with_config
        return _providers(model.bound, seen)
    params = getattr(model, "_get_ls_params", None)
    if not callable(params):
        return {None}
    try:
        provider = params().get("ls_provider")
    except Exception:  # a model that cannot say is not Anthropic's
        provider = None
    return {provider if isinstance(provider, str) else None}


def uses_cache_breakpoints(model: Runnable[Any, Any] | Any) -> bool:
    """Whether `model` is served by Anthropic, whose cache needs marks in the request.

    Every model behind it must be: a fallback to another provider would be sent the
    marks too, and OpenAI's API does not know them.

    Args:
        model: A chat model, possibly bound to tools or wrapped in retries/fallbacks.

    Returns:
        `True` for Anthropic chat models.
    """
    return _providers(model) == {"anthropic"}


def uses_prompt_cache_key(model: Runnable[Any, Any] | Any) -> bool:
    """Whether `model` is served by OpenAI, whose requests take a `prompt_cache_key`.

    Args:
        model: A chat model, possibly bound to tools or wrapped in retries/fallbacks.

    Returns:
        `True` for OpenAI chat models (every model behind a fallback must be).
    """
    return _providers(model) == {"openai"}


def uses_cache_points(model: Runnable[Any, Any] | Any) -> bool:
    """Whether `model` is Bedrock's Converse API, which caches up to `cachePoint` blocks.

    Args:
        model: A chat model, possibly bound to tools or wrapped in retries/fallbacks.

    Returns:
        `True` for `ChatBedrockConverse` models (every model behind a fallback must be).
    """
    return _providers(model) == {"amazon_bedrock"} and _all_converse(model)


def _all_converse(model: Any) -> bool:
    """Whether every chat model behind `model` is a `ChatBedrockConverse`."""
    if isinstance(model, RunnableWithFallbacks):
        return all(_all_converse(m) for m in (model.runnable, *model.fallbacks))
    if isinstance(model, RunnableBindingBase):
        return _all_converse(model.bound)
    return type(model).__name__ == "ChatBedrockConverse"


def cache_control_for(setting: CacheBreakpoints, model: Any) -> Mapping[str, str] | None:
    """The mark to put in `model`'s requests under `setting` (`None`: put none).

    Args:
        setting: See `CacheBreakpoints`.
        model: The chat model the request goes to.

    Returns:
        The mark, or `None`.

    Raises:
        ValueError: If `setting` is not `None`, a bool or a mapping with a string
            `type`.
    """
    if setting is None:
        return EPHEMERAL if uses_cache_breakpoints(model) else None
    if isinstance(setting, bool):
        return EPHEMERAL if setting else None
    return _checked_mark(setting, "cache_breakpoints", "None, a bool or ")
