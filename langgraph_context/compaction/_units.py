"""Working machinery of the rule-based strategies (private): costs, units, clearing, drops.

`strategies.compact_messages` drives these steps over a mutable `Work`; nothing here
mutates the caller's messages (cleared messages are copies).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_context.compaction.snapshot import compaction_kind
from langgraph_context.tokens import TiktokenCounter, TokenCounter, truncate_text
from langgraph_context.tokens.counter import REPLY_PRIMING_TOKENS

CLEARED_TOOL_RESULT = (
    "[Tool output cleared by compaction to save context. Call the tool again if you still need it.]"
)
CLEARED_TOOL_ARG = "[argument cleared by compaction]"


def efficiency_score(
    *, tokens_before: int, tokens_after: int, messages_before: int, messages_after: int
) -> float:
    """Score a compaction: `0.6 * token reduction ratio + 0.4 * message retention ratio`.

    Args:
        tokens_before: Tokens before compaction.
        tokens_after: Tokens after compaction.
        messages_before: Messages before compaction.
        messages_after: Messages after compaction.

    Returns:
        The score; higher is better.

    Example:
        >>> efficiency_score(tokens_before=100, tokens_after=50, messages_before=10,
        ...                  messages_after=5)
        0.5
    """
    reduction = (tokens_before - tokens_after) / tokens_before if tokens_before else 0.0
    retention = messages_after / messages_before if messages_before else 1.0
    return round(0.6 * reduction + 0.4 * retention, 6)


class Costs:
    """Per-message token costs derived from any counter.

    The package's tiktoken counter is additive (a list costs its messages plus a
    fixed reply priming), so totals are sums of memoized per-message counts; other
    counters are asked for totals directly.
    """

    def __init__(self, token_counter: TokenCounter, sample: BaseMessage) -> None:
        self.token_counter = token_counter
        self.additive = isinstance(token_counter, TiktokenCounter)
        # The package's own count of a list is the reply priming plus its messages':
        # the overhead is known without counting the sample twice.
        self._own = self.additive and _sums_its_messages(type(token_counter))
        if self._own:
            self.overhead = REPLY_PRIMING_TOKENS
        else:
            one = int(token_counter([sample]))
            self.overhead = 2 * one - int(token_counter([sample, sample]))

    def of(self, message: BaseMessage) -> int:
        if isinstance(self.token_counter, TiktokenCounter):
            return self.token_counter.count_message(message)
        return int(self.token_counter([message])) - self.overhead

    def each(self, messages: list[BaseMessage]) -> list[int]:
        """`[self.of(m) for m in messages]`, in one pass of the package's counter."""
        if self._own:
            return self.token_counter.count_each(messages)  # type: ignore[attr-defined, no-any-return]
        return [self.of(m) for m in messages]

    def total(self, messages: Sequence[BaseMessage], known: int | None = None) -> int:
        """Return the tokens of `messages`; `known` is their summed per-message cost."""
        if not messages:
            return 0
        if self.additive:
            return self.overhead + (known if known is not None else sum(map(self.of, messages)))
        return int(self.token_counter(list(messages)))


def _sums_its_messages(kind: type[Any]) -> bool:
    """Whether a `TiktokenCounter` class counts as the base class does (not overridden)."""
    return all(
        getattr(kind, name) is getattr(TiktokenCounter, name)
        for name in ("__call__", "count_messages", "count_message", "count_each")
    )


@dataclass
class Work:
    """Mutable working state of one compaction (private to this module)."""

    items: list[BaseMessage]
    units: list[tuple[int, int]]
    costs: list[int]
    current: list[BaseMessage]
    pinned: set[int] = field(default_factory=set)
    dropped: set[int] = field(default_factory=set)
    tail: set[int] = field(default_factory=set)
    request_unit: int | None = None
    request_shortened: bool = False
    cleared: dict[int, BaseMessage] = field(default_factory=dict)
    args_cleared: int = 0

    def unit_cost(self, u: int) -> int:
        start, end = self.units[u]
        return sum(self.costs[start:end])

    def kept_cost(self) -> int:
        return sum(self.unit_cost(u) for u in range(len(self.units)) if u not in self.dropped)


def copy_work(work: Work) -> Work:
    return replace(
        work,
        current=list(work.current),
        costs=list(work.costs),
        cleared=dict(work.cleared),
        pinned=set(work.pinned),
        dropped=set(work.dropped),
    )


REQUEST_SHORTENED = (
    "\n[... request shortened by compaction to fit the budget: {shown} of {total} tokens shown]"
)


def last_resort(
    work: Work,
    costs: Costs,
    max_tokens: int,
    strategy: str,
    clear_args_over: int | None,
    *,
    shorten_request: bool = True,
) -> Work:
    """Fit `max_tokens` by clearing protected outputs, then by shortening the latest request.

    Used only when the kept messages alone exceed `max_tokens` (never to make room for
    the snapshot); outputs are cleared oldest first and only as far as the budget
    needs, and each step is taken only if it actually reaches the budget. The latest
    user request is never dropped: when only its length stands in the way, its text
    is cut with a visible marker (the full text stays in the caller's history).
    """
    limit = max_tokens - costs.overhead
    cleared = copy_work(work)
    clear_results(cleared, costs, limit, 0, clear_args_over, everything=True)
    if cleared.kept_cost() <= limit:
        return cleared  # clearing the protected outputs is enough
    request = work.request_unit
    if not shorten_request or strategy == "clear_tool_results" or request is None:
        return work
    for base in (work, cleared):
        trial = copy_work(base)
        if _shorten_request(trial, costs, request, limit):
            return trial
    return work


def _shorten_request(work: Work, costs: Costs, unit: int, limit: int) -> bool:
    """Cut the request's text (with a marker) until the kept units fit `limit`."""
    excess = work.kept_cost() - limit
    start, _ = work.units[unit]
    message = work.current[start]
    if not isinstance(message.content, str):
        return False
    count = costs.token_counter
    total = int(count(message.content))
    marker = int(count(REQUEST_SHORTENED.format(shown=total, total=total)))
    keep = total - excess - marker
    if keep < 1:
        return False
    head = truncate_text(message.content, keep, token_counter=count)
    shorter = message.model_copy(
        update={"content": head + REQUEST_SHORTENED.format(shown=count(head), total=total)}
    )
    work.current[start] = shorter
    work.costs[start] = costs.of(shorter)
    work.request_shortened = True
    return work.kept_cost() <= limit


def pin_units(work: Work, keep_messages: int) -> None:
    """Mark units that must never be dropped."""
    items, units = work.items, work.units
    last_human = None
    for u, (start, _) in enumerate(units):
        message = items[start]
        if isinstance(message, SystemMessage) or compaction_kind(message) is not None:
            work.pinned.add(u)
        elif isinstance(message, HumanMessage):
            last_human = u
    if last_human is not None:
        work.pinned.add(last_human)
        work.request_unit = last_human
    if units:
        work.pinned.add(len(units) - 1)
    if keep_messages:
        first_kept = len(items) - keep_messages
        work.tail = {u for u, (_, end) in enumerate(units) if end > first_kept}
        work.pinned.update(work.tail)


def is_round(work: Work, u: int) -> bool:
    start, end = work.units[u]
    return end - start > 1 or bool(
        isinstance(work.items[start], AIMessage) and work.items[start].tool_calls  # type: ignore[attr-defined]
    )


def clear_results(
    work: Work,
    costs: Costs,
    target: int,
    keep_tool_rounds: int,
    clear_args_over: int | None,
    *,
    everything: bool = False,
) -> None:
    """Clear tool results (and large arguments) oldest first until under `target`."""
    rounds = [u for u in range(len(work.units)) if is_round(work, u) and u not in work.dropped]
    candidates = rounds[: len(rounds) - keep_tool_rounds] if keep_tool_rounds else rounds
    if not everything:
        protected = work.tail | {len(work.units) - 1}
        candidates = [u for u in candidates if u not in protected]
    total = work.kept_cost()
    for u in candidates:
        if total <= target:
            return
        start, end = work.units[u]
        for i in range(start, end):
            message = work.current[i]
            if isinstance(message, ToolMessage) and i not in work.cleared:
                cleared = message.model_copy(update={"content": CLEARED_TOOL_RESULT})
                new_cost = costs.of(cleared)
                if new_cost < work.costs[i]:
                    total += new_cost - work.costs[i]
                    work.cleared[i] = work.items[i]
                    work.current[i] = cleared
                    work.costs[i] = new_cost
            elif isinstance(message, AIMessage) and clear_args_over is not None:
                total += clear_args(work, costs, i, clear_args_over)


def clear_args(work: Work, costs: Costs, i: int, limit: int) -> int:
    message = work.current[i]
    assert isinstance(message, AIMessage)
    counter = costs.token_counter
    changed = 0
    calls = []
    for call in message.tool_calls:
        args = dict(call["args"])
        for key, value in args.items():
            if isinstance(value, str) and int(counter(value)) > limit:
                args[key] = CLEARED_TOOL_ARG
                changed += 1
        calls.append({**call, "args": args})
    if not changed:
        return 0
    new = message.model_copy(update={"tool_calls": calls})
    new_cost = costs.of(new)
    delta = new_cost - work.costs[i]
    work.cleared.setdefault(i, work.items[i])
    work.current[i] = new
    work.costs[i] = new_cost
    work.args_cleared += changed
    return delta


def drop_units(work: Work, strategy: str, target: int, head_fraction: float) -> set[int]:
    """Return the units to drop so the kept cost fits `target` (when it can)."""
    free = [u for u in range(len(work.units)) if u not in work.pinned]
    pinned_cost = sum(work.unit_cost(u) for u in work.pinned)
    dropped: set[int] = set()
    if strategy == "drop_oldest":
        total = work.kept_cost()
        for u in free:
            if total <= target:
                break
            dropped.add(u)
            total -= work.unit_cost(u)
        return dropped
    room = target - pinned_cost
    head_room = int(target * head_fraction)
    kept: set[int] = set()
    used = 0
    for u in free:
        cost = work.unit_cost(u)
        if used + cost > min(head_room, room):
            break
        kept.add(u)
        used += cost
    for u in reversed(free):
        if u in kept:
            break
        cost = work.unit_cost(u)
        if used + cost > room:
            break
        kept.add(u)
        used += cost
    dropped = set(free) - kept
    return dropped


def choose_drop(work: Work, target: int, head_fraction: float, messages_before: int) -> str:
    """Pick `drop_oldest` or `drop_middle` by efficiency score (ties go to the middle)."""
    before = work.kept_cost()
    best, best_score = "drop_middle", -1.0
    for name in ("drop_middle", "drop_oldest"):
        dropped = drop_units(work, name, target, head_fraction)
        after = sum(work.unit_cost(u) for u in range(len(work.units)) if u not in dropped)
        kept_messages = sum(
            end - start for u, (start, end) in enumerate(work.units) if u not in dropped
        )
        if after > target:
            continue
        score = efficiency_score(
            tokens_before=before,
            tokens_after=after,
            messages_before=messages_before,
            messages_after=kept_messages,
        )
        if score > best_score:
            best, best_score = name, score
    return best


@dataclass
class Kept:
    """The history being assembled: kept messages, their cost, what left the context."""

    messages: list[BaseMessage]
    cost: int
    evicted: list[BaseMessage]
    pairs: list[tuple[BaseMessage, BaseMessage]]
    lead: int = 0
    older_evicted: list[BaseMessage] = field(default_factory=list)
    """Evicted originals older than the earlier snapshot's facts (a head it left in place)."""
    older: int = 0
    """Kept messages after the lead older than everything the new snapshot holds (the
    head it goes after)."""


def collect(work: Work, older_until: int | None = None) -> Kept:
    """Return the kept messages (cleared copies included) and the evicted originals.

    A middle drop keeps a head that is older than what it evicts; `older_until` (where
    the earlier snapshot stood, or its marker's count) marks that head, so evicted
    messages in it are told apart (`older_evicted`), and the kept messages older than
    all evicted ones are counted (`older`): the new snapshot goes right after them.
    """
    kept = Kept([], 0, [], [])
    kept_at: list[int] = []
    gone: list[tuple[int, BaseMessage]] = []  # (index, original), in history order
    for u, (start, end) in enumerate(work.units):
        if u in work.dropped:
            gone.extend((i, work.items[i]) for i in range(start, end))
            continue
        kept.messages.extend(work.current[start:end])
        kept_at.extend(range(start, end))
        kept.cost += sum(work.costs[start:end])
        cleared = [i for i in range(start, end) if i in work.cleared]
        gone.extend((i, work.cleared[i]) for i in cleared)
        kept.pairs.extend((work.current[i], work.cleared[i]) for i in cleared)
    until = -1 if older_until is None else older_until
    kept.older_evicted = [m for i, m in gone if i < until]
    kept.evicted = [m for i, m in gone if i >= until]
    while kept.lead < len(kept.messages) and (
        isinstance(kept.messages[kept.lead], SystemMessage)
        or compaction_kind(kept.messages[kept.lead]) == "summary"
    ):
        kept.lead += 1
    # kept messages before the first evicted or cleared one (and before the earlier
    # head's end) are older than everything the new snapshot will hold; the boundary
    # is moved back to the start of its unit, so the snapshot never splits a tool round
    limit = len(work.items) if older_until is None else older_until
    if gone:
        limit = min(limit, gone[0][0])
    for start, end in work.units:
        if start < limit < end:
            limit = start
            break
    kept.older = sum(1 for i in kept_at[kept.lead :] if i < limit)
    return kept
