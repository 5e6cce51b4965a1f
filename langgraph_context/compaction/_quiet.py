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

An edit in place of a remembered message's content (the same object given a new
`content`) is seen: the content objects of the remembered part are compared by
identity, one C-level pass, and the history is checked again from scratch. A history
that lost messages (a `RemoveMessage`), or was reloaded from a checkpoint (new
objects), matches no remembered one and is checked from scratch, once.
"""

from __future__ import annotations

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

MAX_HISTORIES = 64
"""Histories one node remembers (a weak reference and three ints a message each)."""

_content = operator.attrgetter("content")


@dataclass(frozen=True, slots=True)
class _Seen:
    """What the check of a remembered history found (every message clean)."""

    contents: tuple[int, ...]  # id() of each message's content, to see edits in place
    shapes: tuple[int, ...]  # `_shape` of each message: a copy of it counts the same
    counts: tuple[int, ...]  # the counter's count of each message (no reply priming)
    lead: int  # where the leading block of trusted system messages ends


_NOTHING = _Seen((), (), (), 0)


def _shape(message: BaseMessage) -> int:
    """A hash of what a message's count depends on, the content by identity.

    A copy made with `model_copy` (the context's stamped copy, replacing the message
    by id) shares the content and tool call objects: the same shape, the same count.
    """
    fields = message.__dict__  # a pydantic model's fields: no attribute lookups
    return hash(
        (
            type(message),
            fields.get("id"),
            id(fields.get("content")),
            id(fields.get("tool_calls")),
            fields.get("name"),
            fields.get("tool_call_id"),
        )
    )


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
        before, with the very content objects; the messages after it are looked at
        again (a copy of a remembered one, same shape, keeps its count).
        """
        matched, known = self._memo.matched(items)
        if known is None:
            return self._scan(items, _NOTHING, _NOTHING)
        contents = tuple(map(id, map(_content, items[:matched])))
        before = known.contents[:matched]
        if contents != before:  # edited in place: checked again from the first edit on
            pairs = zip(contents, before, strict=True)
            matched = next(i for i, (now, then) in enumerate(pairs) if now != then)
        kept = _Seen(
            known.contents[:matched],
            known.shapes[:matched],
            known.counts[:matched],
            min(known.lead, matched),
        )
        return self._scan(items, kept, known)

    def _scan(self, items: list[Any], seen: _Seen, known: _Seen) -> _Seen | None:
        """`seen` extended over the rest of `items`, or `None` if one needs the full step.

        `known` is what the history was remembered with: a message of the rest with the
        shape its position had there keeps the count it had.
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
        shapes = [_shape(m) for m in tail]
        counts: list[int | None] = [
            known.counts[i] if i < len(known.shapes) and known.shapes[i] == shape else None
            for i, shape in enumerate(shapes, start=start)
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
            (*seen.shapes, *shapes),
            (*seen.counts, *(n for n in counts if n is not None)),
            lead,
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
