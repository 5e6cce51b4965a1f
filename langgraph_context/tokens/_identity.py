"""Running counts of histories counted lately, read back by identity (private to `tokens`).

A model call counts its history several times (compaction's no-op check, the context's
fit, the input as sent), and the next call counts the same message objects plus the
latest. `running_counts` keeps, per history (a `PrefixMemo`: by identity, weakly), the
running sums of its messages' counts, so a count of the same objects plus some more
pays for the new ones only, and every caller shares the one count.

A remembered message counts again only if it was edited in place, which is checked in
C: its content object's identity (a string content is replaced, never edited), and
the parts that can change below that identity (tool calls and their arguments, list
content) compared with copies taken when it was counted, one comparison each; the
history is counted again from the first edit on. A copy that replaced a message by
id (the context's stamps) keeps the count of the message it replaced with an equal
`identity_guard`; other messages are counted by the caller (its content-keyed memo).
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from langgraph_context._memo import PrefixMemo

__all__ = ["Counted", "RunningCounts", "identity_guard", "messages_only", "running_counts"]

Guard = tuple[Any, ...]
"""`identity_guard` of a message: what its count depends on."""

Watched = tuple[tuple[int, ...], tuple[Any, ...]]
"""Positions of the messages with a mutable part (tool calls, list content), and copies."""

_SCALARS = frozenset({str, int, float, bool, type(None)})
_content = operator.attrgetter("content")
_tool_calls = operator.attrgetter("tool_calls")


@dataclass(frozen=True, slots=True)
class Counted:
    """What the count of a remembered history found, position by position."""

    contents: tuple[int, ...]  # id() of each message's content, to see edits in place
    guards: tuple[Guard | None, ...]  # `identity_guard` of each message, for copies
    sums: tuple[int, ...]  # running totals: `sums[i]` is the count of messages[: i + 1]
    calls: Watched  # messages with tool calls, and copies of them
    blocks: Watched  # messages with list content, and copies of it
    head: tuple[Guard | None, int] = (None, 0)  # a leading message left out: guard, count


_NONE: Watched = ((), ())
_NOTHING = Counted((), (), (), _NONE, _NONE)


class RunningCounts:
    """The running counts of a list of messages (overhead per message, no reply priming).

    Attributes:
        kept: How many leading messages were read back as the very objects counted
            before, unedited (a caller's own checks of them still hold); a leading
            system message, left out of the match, is counted as kept.
    """

    __slots__ = ("_first", "_skip", "_sums", "kept")

    def __init__(self, first: int, skip: int, sums: tuple[int, ...], kept: int) -> None:
        self._first, self._skip, self._sums, self.kept = first, skip, sums, kept

    def total(self, end: int | None = None) -> int:
        """The count of `messages[:end]` (all of them by default)."""
        n = len(self._sums) + self._skip if end is None else end
        if n <= 0:
            return 0
        if n <= self._skip:
            return self._first
        return self._first + self._sums[n - self._skip - 1]


def running_counts(
    memo: PrefixMemo[Counted], items: list[Any], count_each: Callable[[list[Any]], list[int]]
) -> RunningCounts:
    """The running counts of `items`: read back where `memo` saw them unchanged.

    A leading system message is left out of the match (each request builds a new
    one), and so is a first message no count saw before the second (a fresh opening
    turn before a remembered window). Dicts are counted, never remembered.
    """
    system = 1 if isinstance(items[0], SystemMessage) and len(items) > 1 else 0
    skip = system
    matched, known = memo.matched(items[skip:])
    if known is None and not skip and len(items) > 1:
        matched, known = memo.matched(items[1:])
        skip = 1 if known is not None else 0
    body = items[skip:]
    if not messages_only(body):
        first = sum(count_each(items[:skip]))
        return RunningCounts(first, skip, tuple(accumulate(count_each(body))), 0)
    seen = _NOTHING if known is None else known
    head = seen.head
    if skip:  # the left-out message keeps its count with an equal guard
        guard = identity_guard(items[0]) if isinstance(items[0], BaseMessage) else None
        if guard is None or guard != head[0]:
            head = (guard, sum(count_each(items[:1])))
    answer = (matched, known)  # what the memo found, for `remember` (no second walk)
    matched = _unedited(body, seen, matched)
    # A fresh first message was not read back: nothing before it is vouched for.
    kept = matched + skip if system or not skip else 0
    first = head[1] if skip else 0
    if matched == len(body) and head is seen.head:
        return RunningCounts(first, skip, seen.sums[:matched], kept)
    if matched == len(seen.sums) == len(body) - 1 and matched and head is seen.head:
        # One message past a remembered history (the context's closing message, built
        # anew each call): counted by content, not remembered (nothing would match it).
        (last,) = count_each(body[matched:])
        return RunningCounts(first, skip, (*seen.sums, seen.sums[-1] + last), kept)
    counted = _extended(body, seen, matched, count_each, head)
    memo.remember(body, counted, known=answer)
    return RunningCounts(first, skip, counted.sums, kept)


def _extended(
    body: list[BaseMessage],
    seen: Counted,
    matched: int,
    count_each: Callable[..., list[int]],
    head: tuple[Guard | None, int],
) -> Counted:
    """`seen`'s first `matched` positions, then the rest of `body` counted.

    A message of the rest with the guard its position had in `seen` keeps its count.
    """
    tail = body[matched:]
    guards = list(map(identity_guard, tail))
    old, sums = seen.guards, seen.sums
    counts: list[int | None] = [
        (sums[i] - (sums[i - 1] if i else 0))
        if guard is not None and i < len(old) and old[i] == guard
        else None
        for i, guard in enumerate(guards, start=matched)
    ]
    todo = [j for j, n in enumerate(counts) if n is None]
    for j, n in zip(todo, count_each([tail[j] for j in todo]), strict=True):
        counts[j] = n
    base = sums[matched - 1] if matched else 0
    added = list(accumulate(counts, operator.add, initial=base))[1:]
    return Counted(
        (*seen.contents[:matched], *map(id, map(_content, tail))),
        (*seen.guards[:matched], *guards),
        (*sums[:matched], *added),
        _joined(_cut(seen.calls, matched), _watched(tail, matched, _calls_of)),
        _joined(_cut(seen.blocks, matched), _watched(tail, matched, _content_of)),
        head,
    )


def messages_only(items: list[Any]) -> bool:
    """Whether every item is a message (one C-level pass over their types)."""
    return all(issubclass(kind, BaseMessage) for kind in set(map(type, items)))


def _unedited(items: list[Any], known: Counted, matched: int) -> int:
    """How many of `items[:matched]` precede the first one edited in place since `known`.

    A new content object shows in one C-level pass of identities; what can change in
    place below that identity (tool calls and their arguments, list content) is
    compared with the copies taken when the message was counted.
    """
    contents = tuple(map(id, map(_content, items[:matched])))
    if contents != known.contents[:matched]:
        pairs = zip(contents, known.contents, strict=False)
        matched = next(i for i, (now, then) in enumerate(pairs) if now != then)
    matched = _first_change(items, known.calls, _tool_calls, matched)
    return _first_change(items, known.blocks, _content, matched)


def _first_change(items: list[Any], watched: Watched, get: Any, end: int) -> int:
    """The first watched position before `end` whose part `get` no longer equals its copy."""
    positions, copies = watched
    live = bisect.bisect_left(positions, end)
    if not live:
        return end
    now = list(map(get, map(items.__getitem__, positions[:live])))
    if now == list(copies[:live]):  # one C-level comparison
        return end
    pairs = zip(now, copies[:live], strict=True)
    return positions[next(j for j, (part, then) in enumerate(pairs) if part != then)]


def _calls_of(message: BaseMessage) -> Any:
    """An AI message's tool calls (`None` for other messages)."""
    return message.__dict__.get("tool_calls") if isinstance(message, AIMessage) else None


def _content_of(message: BaseMessage) -> Any:
    """A message's content."""
    return message.__dict__.get("content")


_COPY_DEPTH = 32


class _TooDeep(Exception):
    """A part nested deeper than `_COPY_DEPTH`: not copied (nor compared)."""


def _copied(value: Any, depth: int = 0) -> Any:
    """A copy of nested dicts and lists (tuples too), sharing the leaves; equal to `value`."""
    kind = type(value)
    if kind is dict or kind is list or kind is tuple:
        if depth == _COPY_DEPTH:
            raise _TooDeep
        if kind is dict:
            return {key: _copied(item, depth + 1) for key, item in value.items()}
        return kind(_copied(item, depth + 1) for item in value)
    return value


def _copy_or_mark(part: Any) -> Any:
    """`_copied(part)`, or for a part too deep to compare, a mark equal to nothing.

    A message with such a part never counts as unedited: it is counted again (by
    content) each time, like a message without a guard.
    """
    try:
        return _copied(part)
    except _TooDeep:
        return object()


def _watched(tail: list[BaseMessage], start: int, get: Callable[[Any], Any]) -> Watched:
    """Positions (from `start`) of the messages of `tail` with a non-empty list part."""
    found = [(j, part) for j, m in enumerate(tail) if type(part := get(m)) is list and part]
    return tuple(start + j for j, _ in found), tuple(_copy_or_mark(part) for _, part in found)


def _joined(old: Watched, new: Watched) -> Watched:
    return (*old[0], *new[0]), (*old[1], *new[1])


def _cut(watched: Watched, end: int) -> Watched:
    live = bisect.bisect_left(watched[0], end)
    return watched[0][:live], watched[1][:live]


def identity_guard(message: BaseMessage) -> tuple[Any, ...] | None:
    """What the count of `message` depends on, compared by identity and value, or `None`.

    The one fingerprint of "the same count": two messages (the same object later, or a
    copy that replaced it by id) with equal guards count the same. Only a message
    whose count cannot change unseen qualifies: string content, and tool calls (if
    any) whose arguments are flat dicts of scalars, snapshotted here (an edit in place
    replaces a value, and the snapshot no longer equals). List content and nested
    arguments can change below any snapshot: `None`, recounted by content. The class
    (the role), the content, name and ids are compared by identity and value.
    """
    fields = message.__dict__  # a pydantic model's fields: no attribute lookups
    content = fields.get("content")
    if type(content) is not str or fields.get("invalid_tool_calls"):
        return None
    calls = fields.get("tool_calls")
    shots: tuple[tuple[Any, ...], ...] = ()
    if calls:
        taken: list[tuple[Any, ...]] = []
        for call in calls:
            args = call.get("args") if type(call) is dict else None
            if type(args) is not dict or not _SCALARS.issuperset(map(type, args.values())):
                return None
            taken.append((call.get("name"), call.get("id"), tuple(args.items())))
        shots = tuple(taken)
    name, call_id = fields.get("name"), fields.get("tool_call_id")
    return (type(message), id(content), len(content), name, call_id, id(calls), shots)
