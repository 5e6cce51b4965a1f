"""Counts of a history counted lately, read back by identity (private to `tokens`).

A model call counts its history several times (compaction's trigger, the context's
fit, the input as sent), and the next call counts the same message objects plus the
latest. `remembered_counts` reads back the count of each message a count already saw
(the same object, and what its count depends on unchanged: `identity_guard`) from a
`PrefixMemo` of recent histories, without building its content key; the others are
counted by the caller (through its content-keyed memo).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, cast

from langchain_core.messages import BaseMessage, SystemMessage

from langgraph_context._memo import PrefixMemo

__all__ = ["Remembered", "identity_guard", "remembered_counts"]

Remembered = tuple[list[int], list[tuple[Any, ...] | None]]
"""Each message's count, and its `identity_guard` (`None`: always recounted)."""

_SCALARS = frozenset({str, int, float, bool, type(None)})


def remembered_counts(
    memo: PrefixMemo[Remembered], items: list[Any], count_each: Callable[[list[Any]], list[int]]
) -> list[int]:
    """Each item's count: read back where `memo` saw it unchanged, else `count_each`'s.

    A leading system message is left out of the match (each request builds a new one).
    The guards are compared with `map` (a loop in C): a history of 100 messages that
    gained one costs its guards and one count, little else.
    """
    skip = 1 if isinstance(items[0], SystemMessage) and len(items) > 1 else 0
    body = items[skip:]
    matched, known = memo.matched(body)
    typed = all(issubclass(kind, BaseMessage) for kind in set(map(type, body)))
    # dicts are never remembered
    guards: list[tuple[Any, ...] | None] = (
        list(map(identity_guard, body)) if typed else [None] * len(body)
    )
    counts: list[int | None] = [None] * len(body)
    if known is not None:
        old_counts, old_guards = known
        same = list(map(operator.eq, guards[:matched], old_guards[:matched]))
        if None in guards[:matched]:  # `None == None`, yet such a message is recounted
            same = [s and g is not None for s, g in zip(same, guards, strict=False)]
        counts[:matched] = [n if s else None for n, s in zip(old_counts, same, strict=False)]
    todo = [i for i, n in enumerate(counts) if n is None]
    for i, n in zip(todo, count_each([body[i] for i in todo]), strict=True):
        counts[i] = n
    done = cast(list[int], counts)  # every position is counted now
    if matched < len(body) and typed:
        memo.remember(body, (done, guards))
    return [*count_each(items[:skip]), *done]


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
