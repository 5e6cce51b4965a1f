"""The no-op check of the compaction node, paid for the appended messages only.

Most model calls compact nothing: the node's whole answer is `{}`. `Quiet` gives that
answer without the full `Step` (its walks over the history: coercion, fencing, the
provider-compaction cut, the count), by remembering what the last check of the same
history found (`PrefixMemo`: by identity, weakly, at most `MAX_HISTORIES` per node) and
looking only at what was appended since. It answers only when it is sure; anything
else (a request flag, a trigger firing, a message to fence or mark, a provider's
compaction block, a counter whose count of a list is not the sum of its messages', a
trigger kind it does not track, view mode) goes to the full `Step`, which decides as
before.

"The same count" is the counter's own fingerprint, `TiktokenCounter.count_guard`: a
copy that replaced a message by id (the context's stamps) keeps its count only with an
equal guard. An edit in place of a remembered message is seen: its content objects
are compared by identity, and the parts that can change below that identity (list
content, tool calls and their arguments) with copies taken when it was checked, each
in one C-level comparison; the history is checked again from the first edit on. A
history that lost messages (a `RemoveMessage`), or was reloaded from a checkpoint
(new objects), matches no remembered one and is checked from scratch, once.
"""

from __future__ import annotations

import bisect
import operator
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from langgraph_context._memo import PrefixMemo
from langgraph_context.compaction._step import SUM_TRIGGERS, Config, sum_fires
from langgraph_context.compaction.provenance import SYSTEM_TRUST_KEY, fenced_compaction_message
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.messages import is_provider_compaction
from langgraph_context.state import get_state_value
from langgraph_context.tokens.counter import REPLY_PRIMING_TOKENS, TiktokenCounter
from langgraph_context.tokens.window import corrected_tokens, usage_ratio

__all__ = ["MAX_HISTORIES", "Quiet"]

identity_guard = TiktokenCounter.count_guard

MAX_HISTORIES = 64
"""Histories one node remembers (per message: a weak reference, a guard, two ints, and
a copy of its tool calls or list content if it has them)."""

Guard = tuple[Any, ...]
"""`identity_guard` of a message: what its count depends on."""

_content = operator.attrgetter("content")


@dataclass(frozen=True, slots=True)
class _Seen:
    """What the check of a remembered history found (every message clean)."""

    contents: tuple[int, ...]  # id() of each message's content, to see edits in place
    guards: tuple[Guard | None, ...]  # `identity_guard` of each message
    counts: tuple[int, ...]  # the counter's count of each message (no reply priming)
    lead: int  # where the leading block of trusted system messages ends
    calls: tuple[tuple[int, ...], tuple[Any, ...]]  # positions with tool calls, copies
    blocks: tuple[tuple[int, ...], tuple[Any, ...]]  # positions with list content, copies


_NONE: tuple[tuple[int, ...], tuple[Any, ...]] = ((), ())
_NOTHING = _Seen((), (), (), 0, _NONE, _NONE)
_tool_calls = operator.attrgetter("tool_calls")


def _calls_of(message: BaseMessage, default: Any) -> Any:
    """An AI message's tool calls (`default` for other messages)."""
    return (
        message.__dict__.get("tool_calls", default) if isinstance(message, AIMessage) else default
    )


def _content_of(message: BaseMessage, default: Any) -> Any:
    """A message's content."""
    return message.__dict__.get("content", default)


def _copied(value: Any) -> Any:
    """A copy of nested dicts and lists (tuples too), sharing the leaves; equal to `value`."""
    kind = type(value)
    if kind is dict:
        return {key: _copied(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return kind(map(_copied, value))
    return value


def _first_change(
    items: list[Any], watched: tuple[tuple[int, ...], tuple[Any, ...]], get: Any, end: int
) -> int:
    """The first watched position before `end` whose part `get` no longer equals its copy."""
    positions, copies = watched
    live = bisect.bisect_left(positions, end)
    if not live:
        return end
    now = list(map(get, [items[i] for i in positions[:live]]))
    if now == list(copies[:live]):  # one C-level comparison
        return end
    pairs = zip(now, copies[:live], strict=True)
    return positions[next(j for j, (part, then) in enumerate(pairs) if part != then)]


def _edited(items: list[Any], known: _Seen, matched: int) -> int:
    """The first of `items[:matched]` edited in place since `known` (`matched`: none).

    A new content object shows in one C-level pass of identities. A string content
    is replaced, never edited; what can change in place below that identity (tool
    calls and their arguments, list content) is compared with the copies taken when
    the message was checked, one C-level comparison each.
    """
    contents = tuple(map(id, map(_content, items[:matched])))
    if contents != known.contents[:matched]:
        pairs = zip(contents, known.contents, strict=False)
        matched = next(i for i, (now, then) in enumerate(pairs) if now != then)
    matched = _first_change(items, known.calls, _tool_calls, matched)
    return _first_change(items, known.blocks, _content, matched)


def _watched(
    tail: list[BaseMessage], start: int, kind: type[Any], get: Any
) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """Positions (from `start`) of the messages of `tail` with a `kind` part, and copies."""
    found = [(j, part) for j, m in enumerate(tail) if type(part := get(m, None)) is kind and part]
    return tuple(start + j for j, _ in found), tuple(_copied(part) for _, part in found)


def _extended(
    old: tuple[tuple[int, ...], tuple[Any, ...]], new: tuple[tuple[int, ...], tuple[Any, ...]]
) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    return (*old[0], *new[0]), (*old[1], *new[1])


def _cut(
    watched: tuple[tuple[int, ...], tuple[Any, ...]], end: int
) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    live = bisect.bisect_left(watched[0], end)
    return watched[0][:live], watched[1][:live]


class Quiet:
    """The node's no-op check, incremental over an appended history.

    Args:
        options: The node's settings.
    """

    __slots__ = ("_memo", "enabled", "o")

    def __init__(self, options: Config) -> None:
        self.o = options
        counter = options.token_counter
        self.enabled = (
            options.mode == "replace"
            and isinstance(counter, TiktokenCounter)
            # The count of a list is the reply priming plus each message's count.
            and type(counter).count_messages is TiktokenCounter.count_messages
            and all(kind in SUM_TRIGGERS for kind, _ in options.triggers)
        )
        self._memo: PrefixMemo[_Seen] = PrefixMemo(MAX_HISTORIES)

    def __call__(self, state: Any) -> bool:
        """True when the node has nothing to do for `state` (its update is `{}`).

        False means "not sure": the full `Step` runs.
        """
        o = self.o
        if not self.enabled or get_state_value(state, o.keys.request_key, False):
            return False
        items = get_state_value(state, o.messages_key, [])
        if not isinstance(items, list) or not items:
            return False
        seen = self._seen(items)
        if seen is None:
            return False
        usage = get_state_value(state, o.keys.usage_key, None)
        if self._fires(items, seen, usage):
            return False
        self._memo.remember(items, seen)
        return True

    def _seen(self, items: list[Any]) -> _Seen | None:
        """The check of `items`, from the remembered part on (`None`: not clean).

        The remembered part is the leading messages that are the very objects checked
        before, unedited (`_edited`); the messages after it are looked at again (a
        copy of a remembered one, with its guard, keeps its count).
        """
        matched, known = self._memo.matched(items)
        if known is None:
            return self._scan(items, _NOTHING, _NOTHING)
        matched = _edited(items, known, matched)
        kept = _Seen(
            known.contents[:matched],
            known.guards[:matched],
            known.counts[:matched],
            min(known.lead, matched),
            _cut(known.calls, matched),
            _cut(known.blocks, matched),
        )
        return self._scan(items, kept, known)

    def _scan(self, items: list[Any], seen: _Seen, known: _Seen) -> _Seen | None:
        """`seen` extended over the rest of `items`, or `None` if one needs the full step.

        `known` is what the history was remembered with: a message of the rest with the
        guard its position had there keeps the count it had.
        """
        start = len(seen.counts)
        tail = items[start:]
        if not tail:
            return seen
        if not all(isinstance(m, BaseMessage) for m in tail):
            return None  # dicts and tuples are converted (and checked) by the full step
        lead = seen.lead
        for i, message in enumerate(tail, start=start):
            mark = message.additional_kwargs.get(SYSTEM_TRUST_KEY)
            system = isinstance(message, SystemMessage)
            if lead == i and system and mark is not False:
                lead = i + 1
            elif system and mark is None:
                return None  # to be marked untrusted: the full step rewrites it
            if fenced_compaction_message(message) is not message:
                return None  # stored unfenced by an older version: refenced
            if is_provider_compaction(message):
                return None  # the provider's cut moves what is counted
        guards = list(map(identity_guard, tail))
        old = known.guards
        counts: list[int | None] = [
            known.counts[i] if guard is not None and i < len(old) and old[i] == guard else None
            for i, guard in enumerate(guards, start=start)
        ]
        todo = [j for j, n in enumerate(counts) if n is None]
        try:
            # Each message's count, as the counter sums them for a list (its memos).
            fresh = self.o.token_counter.count_each([tail[j] for j in todo])  # type: ignore[attr-defined]
        except (InvalidArgumentError, InvalidTypeError):
            return None  # malformed: the full step raises, naming its position
        for j, n in zip(todo, fresh, strict=True):
            counts[j] = int(n)
        return _Seen(
            (*seen.contents, *map(id, map(_content, tail))),
            (*seen.guards, *guards),
            (*seen.counts, *(n for n in counts if n is not None)),
            lead,
            _extended(seen.calls, _watched(tail, start, list, _calls_of)),
            _extended(seen.blocks, _watched(tail, start, list, _content_of)),
        )

    def _fires(self, items: list[Any], seen: _Seen, usage: Any) -> bool:
        """Whether a trigger fires on the history `seen` describes (as `Step._fired`)."""
        o = self.o
        tip = items[-1]
        pending = isinstance(tip, AIMessage) and bool(tip.tool_calls)
        size = len(items) - pending
        raw = REPLY_PRIMING_TOKENS + sum(seen.counts[:size]) if size else 0
        tokens = corrected_tokens(raw, usage_ratio(usage))
        found = o.context_window or (usage or {}).get("window")
        # No window: 0, so a fraction trigger "fires" and the full step raises its error.
        window = found if isinstance(found, int) and found > 0 else 0
        return any(sum_fires(k, v, tokens, size, lambda: window) for k, v in o.triggers)
