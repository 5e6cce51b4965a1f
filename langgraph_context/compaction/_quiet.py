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

The count is the counter's own, shared with every other count of the same history in
the call (`TiktokenCounter.running_counts`: running sums by identity, a message edited
in place counted again). The messages the counter read back unedited (`kept`) and this
check saw before keep their verdict; the rest are looked at again. A history that lost
messages (a `RemoveMessage`), or was reloaded from a checkpoint (new objects), matches
no remembered one and is checked from scratch, once.
"""

from __future__ import annotations

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
"""Histories one node remembers (per message: a weak reference; per history: one int)."""


class Quiet:
    """The node's no-op check, incremental over an appended history.

    Args:
        options: The node's settings.
    """

    __slots__ = ("_memo", "_refused", "enabled", "o")

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
        self._memo: PrefixMemo[int] = PrefixMemo(MAX_HISTORIES)
        # The list (by id and length) of the latest "not sure": the middleware asks
        # first, then the node it runs asks again about the very same list. A stale
        # match (a new list at a freed one's address) only costs the full step.
        self._refused: tuple[int, int] = (0, -1)

    def __call__(self, state: Any) -> bool:
        """True when the node has nothing to do for `state` (its update is `{}`).

        False means "not sure": the full `Step` runs.
        """
        o = self.o
        if not self.enabled or get_state_value(state, o.keys.request_key, False):
            return False
        items = get_state_value(state, o.messages_key, [])
        if not isinstance(items, list) or not items or self._refused == (id(items), len(items)):
            return False
        if not all(issubclass(kind, BaseMessage) for kind in set(map(type, items))):
            return False  # dicts and tuples are converted (and checked) by the full step
        try:
            counts = o.token_counter.running_counts(items)  # type: ignore[attr-defined]
        except (InvalidArgumentError, InvalidTypeError):
            return False  # malformed: the full step raises, naming its position
        known = self._memo.matched(items)
        lead = self._lead(items, counts.kept, known)
        usage = get_state_value(state, o.keys.usage_key, None)
        if lead is None or self._fires(items, counts.total, usage):
            self._refused = (id(items), len(items))
            return False
        self._memo.remember(items, lead, known=known)
        return True

    def _lead(
        self, items: list[BaseMessage], kept: int, known: tuple[int, int | None]
    ) -> int | None:
        """Where the leading trusted system messages of clean `items` end (`None`: not clean).

        The leading messages this check saw before (`known`, the memo's answer), and
        the counter read back as the very objects unedited (`kept`), keep their
        verdict; the rest are looked at.
        """
        matched, lead = known
        start = min(matched, kept)
        lead = 0 if lead is None else min(lead, start)
        for i in range(start, len(items)):
            message = items[i]
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
        return lead

    def _fires(self, items: list[Any], total: Any, usage: Any) -> bool:
        """Whether a trigger fires on `items` counted by `total` (as `Step._fired`)."""
        o = self.o
        tip = items[-1]
        pending = isinstance(tip, AIMessage) and bool(tip.tool_calls)
        size = len(items) - pending
        raw = REPLY_PRIMING_TOKENS + total(size) if size else 0
        tokens = corrected_tokens(raw, usage_ratio(usage))
        found = o.context_window or (usage or {}).get("window")
        # No window: 0, so a fraction trigger "fires" and the full step raises its error.
        window = found if isinstance(found, int) and found > 0 else 0
        return any(sum_fires(k, v, tokens, size, lambda: window) for k, v in o.triggers)
