"""Record when each message entered the thread, so selection and `[Context]` can date it.

Users do not timestamp their messages. The context node, `create_context_agent` and
`ContextMiddleware` stamp the messages they see arrive with the time they first saw
them, as an ISO 8601 UTC string in `additional_kwargs["timestamp"]` (the key
`message_time` reads first). The stamp is metadata: providers' request builders do
not send that key, so the bytes a model was sent stay the same, and it is stored
with the message, so it survives checkpoints. The messages handed to the model are
copies without it (`without_stamps`): the same turns give the same input whenever
they were sent.

Only messages that arrived since the last dated one are stamped (a thread with no
dated message yet: its last user turn and what follows). An older history nobody
dated keeps no time rather than a wrong one, and a message that already carries a
time, ours or its provider's (`response_metadata`), is left as it is.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from langgraph_context._memo import PrefixMemo
from langgraph_context.context.gather import message_time
from langgraph_context.messages import tool_result_ids

__all__ = [
    "stamp_message",
    "stamp_messages",
    "stamped_arrivals",
    "stamped_history",
    "without_stamp",
    "without_stamps",
]

MESSAGE_TIME_KEY = "timestamp"
_content = operator.attrgetter("content")

_UNSTAMPED: PrefixMemo[tuple[list[BaseMessage | None], int, list[Any]]] = PrefixMemo(64)
"""The copies `without_stamps` made for recent histories (by identity; see `PrefixMemo`),
where the first message that went as itself (`None`) is, and each message's content.

Every model call sends the history again: its leading messages get the copies they
got last time, so only the appended ones are copied, and the request's messages are
the same objects call after call (which the history checks remember). A copy shares
its message's content object, so an edit inside it (a list block) shows in both; a
message whose content was replaced in place since (`message.content = ...`) gets a new
copy, found by one C-level pass of content identities (the token counter's guard,
`tokens._identity`; the old objects are held here, so an identity is never reused).
Other fields replaced in place are not seen. At most 64 histories; an entry holds the
copies (they share their content with the stamped messages) and the contents, and is
dropped with the history's first message.
"""


def _is_turn(message: BaseMessage) -> bool:
    """A message that can carry a time of entry (not instructions, not a removal)."""
    return not isinstance(message, SystemMessage) and message.type != "remove"


def _arrived(messages: Sequence[BaseMessage]) -> int:
    """Index of the first message that arrived since the last dated one."""
    for i in range(len(messages) - 1, -1, -1):
        if _is_turn(messages[i]) and message_time(messages[i]) is not None:
            return i + 1
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage) and not tool_result_ids(messages[i]):
            return i
    return 0


def stamp_messages(
    messages: Sequence[BaseMessage], *, now: float | None = None
) -> list[BaseMessage]:
    """Stamped copies of the messages that arrived undated (the input is not changed).

    Args:
        messages: The thread, oldest first.
        now: The time to record, POSIX seconds (default: the current time).

    Returns:
        A copy of each newly arrived message without a time and with an id (ids are
        how a state update replaces it), `additional_kwargs["timestamp"]` set; in
        thread order. Empty when there is nothing to stamp.

    Example:
        >>> out = stamp_messages([HumanMessage("hi", id="1")], now=0.0)
        >>> out[0].additional_kwargs
        {'timestamp': '1970-01-01T00:00:00+00:00'}
    """
    return stamped_history(messages, now=now)[1]


def _stamp(now: float | None) -> str:
    when = datetime.fromtimestamp(time.time() if now is None else now, tz=UTC)
    return when.isoformat(timespec="milliseconds" if when.microsecond else "seconds")


def _with_stamp(message: BaseMessage, stamp: str) -> BaseMessage:
    kwargs = {**message.additional_kwargs, MESSAGE_TIME_KEY: stamp}
    return message.model_copy(update={"additional_kwargs": kwargs})


def stamp_message(message: BaseMessage, *, now: float | None = None) -> BaseMessage:
    """The message stamped with `now` unless it already carries a time (e.g. a reply).

    Args:
        message: A message entering the thread now (a model's reply, a tool result).
        now: The time to record, POSIX seconds (default: the current time).

    Returns:
        A stamped copy, or the message itself when it has a time or is a system
        message.
    """
    if not _is_turn(message) or message_time(message) is not None:
        return message
    return _with_stamp(message, _stamp(now))


def stamped_history(
    messages: Sequence[BaseMessage], *, now: float | None = None
) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """The thread with new arrivals stamped, and the stamped messages alone.

    Args:
        messages: The thread, oldest first.
        now: The time to record (default: the current time).

    Returns:
        `(history, stamped)`: the whole thread with each stamped copy in its place,
        and the copies (what a node returns under its messages key, where the
        `add_messages` reducer replaces each by id).
    """
    # Only the arrivals are looked at: a call's work grows with what arrived since.
    # They start after the last dated message, so none carries a time (never `None`).
    return stamped_arrivals(messages, _arrived(messages), now=now) or (list(messages), [])


def stamped_arrivals(
    messages: Sequence[BaseMessage], start: int, *, now: float | None = None
) -> tuple[list[BaseMessage], list[BaseMessage]] | None:
    """The thread with `messages[start:]` stamped as its arrivals, and the stamped copies.

    The arrivals are the messages after the last dated one: `start` follows a dated
    message (or is where an undated thread's arrivals begin). Each of them with an id
    and no time is stamped, all with one time. `stamped_history` finds `start`; a
    caller that knows the message before it is dated (a stamped reply) skips that walk.

    Args:
        messages: The thread (or its end), oldest first.
        start: Where the arrivals begin.
        now: The time to record (default: the current time).

    Returns:
        `(history, stamped)` as `stamped_history`, or `None` when a message from
        `start` on carries a time of its own (the arrivals start after it).
    """
    history = list(messages)
    stamped: list[BaseMessage] = []
    stamp: str | None = None
    for i in range(start, len(history)):
        message = history[i]
        if not _is_turn(message):
            continue
        if message_time(message) is not None:
            return None
        if message.id:
            stamp = stamp or _stamp(now)
            history[i] = _with_stamp(message, stamp)
            stamped.append(history[i])
    return history, stamped


def without_stamps(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages as the model is sent them: copies without the time stamp key.

    Args:
        messages: Messages, stamped or not.

    Returns:
        The same messages, each stamped one replaced by a copy without the key.
    """
    items = list(messages)
    contents = list(map(_content, items))
    answer = _UNSTAMPED.matched(items)
    known, walk = answer
    copies, first, held = walk or ([], 0, [])
    if known and not all(map(operator.is_, contents[:known], held)):
        # Content replaced in place since (`message.content = ...`): a copy still holds
        # the old object, so the copies are made again from the first such message.
        same = map(operator.is_, contents, held)
        known = next(i for i, kept in enumerate(same) if not kept)
    # Only the copies are kept (`None` where the message went as itself): holding a
    # history's own messages would keep its first one, and so the entry, alive.
    tail = items[known:]
    new = [None if c is m else c for c, m in zip(map(without_stamp, tail), tail, strict=True)]
    made = [*copies[:known], *new]
    if first >= known:  # where the first `None` is (`len(made)`: none)
        first = known + next((i for i, c in enumerate(new) if c is None), len(new))
    _UNSTAMPED.remember(items, (made, first, contents), known=answer)
    if first == len(made):  # every message went as a copy (the usual: all are stamped)
        return list(made)  # type: ignore[arg-type]
    return [m if c is None else c for c, m in zip(made, items, strict=True)]


def without_stamp(message: BaseMessage) -> BaseMessage:
    """The message as the model is sent it: without the time stamp key (itself when it has none).

    `without_stamps` for one message, remembering nothing.
    """
    kwargs = message.additional_kwargs
    if MESSAGE_TIME_KEY not in kwargs:
        return message
    kept = {k: v for k, v in kwargs.items() if k != MESSAGE_TIME_KEY}
    return message.model_copy(update={"additional_kwargs": kept})
