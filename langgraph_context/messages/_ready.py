"""`provider_ready_history`, the last step before a model call (private to `messages`)."""

from __future__ import annotations

import bisect
import operator
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from langgraph_context._memo import PrefixMemo
from langgraph_context.messages._history import _calls, _results, repair_history

_Walk = tuple[list[BaseMessage | None], list[int], list[Any]]
_CONTENT = operator.attrgetter("content")
_READY: PrefixMemo[_Walk] = PrefixMemo(64)
"""Recent repaired histories, by identity (weakly), with the walk over them: each
message sent (`None` where it was the history's own message, which is not kept), the
last history position that went into it, and each history message's content. The
next history made of the same objects resumes the walk after the last message it
cannot change (see `_resumed`)."""


def provider_ready_history(messages: Sequence[Any]) -> list[BaseMessage]:
    """Return the history in a form every chat provider accepts.

    `repair_history` first (state edits and unknown roles dropped, orphan and
    duplicate results dropped, every unanswered call answered "cancelled"), then
    messages with nothing to send (no text, no blocks, no calls) are dropped, a system
    message after the conversation started becomes a user turn (providers take system
    text only at the start), and runs of user messages, and of assistant messages,
    are merged into one, so the turns alternate as chat templates and some providers
    require. Merged content is a list of blocks in order. At most four blocks keep a
    `cache_control` mark (Anthropic's limit; the latest are kept). A message that
    needed no change is passed on as the same object.

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
    repaired = repair_history(messages).messages
    contents = list(map(_CONTENT, repaired))
    out, ends, made, known = _resumed(repaired, contents)
    resumed = len(out)
    started = any(not isinstance(m, SystemMessage) for m in out)  # a non-system one sent
    for index in range(ends[-1] + 1 if ends else 0, len(repaired)):
        original = repaired[index]
        message = original
        if isinstance(original, SystemMessage) and started:
            # Providers take system text only at the start (langchain-anthropic refuses
            # it later on): later system text is sent as a user turn, never promoted.
            message = HumanMessage(content=_as_blocks(original.content), id=original.id)
        if _is_empty(message):
            continue
        started = started or not isinstance(message, SystemMessage)
        if out and _is_plain_user(message) and _is_plain_user(out[-1]):
            out[-1], ends[-1] = merge_user_messages(out[-1], message), index
        elif out and isinstance(message, AIMessage) and _is_plain_ai(out[-1]):
            out[-1], ends[-1] = _merge_ai_messages(out[-1], message), index
        else:
            out.append(message)
            ends.append(index)
    # The last message resumed may have merged a later one: it is looked at again.
    at = max(0, resumed - 1)
    made = made[:at] + [
        None if m is repaired[end] else m for m, end in zip(out[at:], ends[at:], strict=True)
    ]
    _READY.remember(repaired, (made, ends, contents), known=known)
    return at_most_cache_marks(out)


def _resumed(
    repaired: list[BaseMessage], contents: list[Any]
) -> tuple[list[BaseMessage], list[int], list[BaseMessage | None], tuple[int, _Walk | None]]:
    """The messages sent for the part of `repaired` a recent walk already did.

    A message sent is kept when every history message that went into it is one of
    the matched objects with the content object it had (`contents`: content replaced
    in place since, `message.content = ...`, is walked again; a merged message holds
    its parts' text, so it would be stale): the walk was then where it is now (a
    message after it may still merge into the last one). Merged and converted
    messages so stay the same objects from call to call. Also returned: the kept part
    of the walk's `made`, and what `_READY.matched` answered.
    """
    known = _READY.matched(repaired)
    matched, walk = known
    if walk is None:
        return [], [], [], known
    made, ends, held = walk
    if not all(map(operator.is_, contents[:matched], held)):  # one C-level pass
        matched = next(i for i, same in enumerate(map(operator.is_, contents, held)) if not same)
    keep = bisect.bisect_left(ends, matched)  # `ends` ascend
    kept = zip(made[:keep], ends[:keep], strict=True)
    out = [repaired[end] if m is None else m for m, end in kept]
    return out, ends[:keep], made[:keep], known


def at_most_cache_marks(messages: list[BaseMessage], limit: int = 4) -> list[BaseMessage]:
    """`messages` with the earliest `cache_control` marks removed beyond `limit` blocks.

    Anthropic refuses a request with more than four marked blocks; the latest marks
    are the ones a cache reads at. Messages that keep their marks are the same objects.

    Args:
        messages: A request.
        limit: How many marked blocks may stay.

    Returns:
        A new list.
    """
    out = list(messages)
    if set(map(type, map(_CONTENT, out))) <= {str}:  # a C loop: the usual, no list content
        return out
    # Marks sit in list content only: plain-text messages (most of them) are not looked into.
    extra = sum(_marks(m) for m in out if type(m.content) is not str) - limit
    for i, message in enumerate(out):
        if extra <= 0:
            break
        if not _marks(message) or not isinstance(message.content, list):
            continue
        blocks: list[Any] = []
        for block in message.content:
            if extra > 0 and isinstance(block, dict) and "cache_control" in block:
                blocks.append({k: v for k, v in block.items() if k != "cache_control"})
                extra -= 1
            else:
                blocks.append(block)
        out[i] = message.model_copy(update={"content": blocks})
    return out


def _marks(message: BaseMessage) -> int:
    content = message.content
    if not isinstance(content, list):
        return 0
    return sum(isinstance(b, dict) and "cache_control" in b for b in content)


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


def _merge_ai_messages(first: BaseMessage, second: AIMessage) -> AIMessage:
    """One assistant message: `first`'s text (it has no calls), then all of `second`."""
    blocks = [*_as_blocks(first.content), *_as_blocks(second.content)]
    return second.model_copy(update={"content": blocks, "id": first.id or second.id})


def _as_blocks(content: str | list[Any]) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content)


def _is_plain_ai(message: BaseMessage) -> bool:
    return isinstance(message, AIMessage) and not _calls(message)


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
