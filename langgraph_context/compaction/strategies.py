"""Rule-based compaction: pure, tool-pair safe, never touching system messages.

Strategies work on the atomic units of `history.group_tool_rounds` (an AI message
with its tool results, or any single message), so a cut never separates a call from
its results:

* `clear_tool_results`: replace old tool outputs by a short placeholder, oldest first,
  never in the last `keep_tool_rounds` tool rounds (optionally clearing large tool
  call arguments too);
* `drop_oldest`: a sliding window, dropping the oldest units first;
* `drop_middle`: keep a head (the task and its constraints) and a tail (current
  work), drop the middle;
* `auto`: clear tool results first; if that is not enough, try both drops and keep
  the one with the better efficiency score
  `0.6 * token_reduction_ratio + 0.4 * message_retention_ratio`.

Whatever is dropped or cleared is first condensed into a rule-based state snapshot
(`snapshot.py`) inserted after the system messages, within a share of the budget.
System messages, the most recent user request and the latest unit are never dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, get_args

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)

# Constants of a private module, importable from here (not in `__all__`).
from langgraph_context.compaction._units import (
    CLEARED_TOOL_ARG as CLEARED_TOOL_ARG,  # noqa: PLC0414 (re-export)
)
from langgraph_context.compaction._units import (
    CLEARED_TOOL_RESULT as CLEARED_TOOL_RESULT,  # noqa: PLC0414 (re-export)
)
from langgraph_context.compaction._units import (
    Costs,
    Kept,
    Work,
    choose_drop,
    clear_results,
    collect,
    drop_units,
    efficiency_score,
    is_round,
    last_resort,
    pin_units,
)
from langgraph_context.compaction.options import check_one_of, check_positive
from langgraph_context.compaction.provenance import (
    COMPACTION_MARKER,
    compaction_kind,
    mark_later_system,
)
from langgraph_context.compaction.snapshot import (
    StateSnapshot,
    extract_snapshot,
    snapshot_message,
)
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import as_messages, group_tool_rounds, repair_history
from langgraph_context.tokens import TokenCounter, resolve_counter

__all__ = [
    "CompactionResult",
    "CompactionStats",
    "Strategy",
    "compact_messages",
    "efficiency_score",
]

logger = logging.getLogger(__name__)

Strategy = Literal["auto", "clear_tool_results", "drop_oldest", "drop_middle"]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)

DEFAULT_KEEP_TOOL_ROUNDS = 3
DEFAULT_SNAPSHOT_FRACTION = 0.2
DEFAULT_HEAD_FRACTION = 0.25


@dataclass(frozen=True)
class CompactionStats:
    """What a compaction did, for logs and state.

    Attributes:
        strategy: The strategy applied (`"none"` when the history already fitted).
        target_tokens: The size the history was compacted to fit.
        tokens_before: Tokens of the input history.
        tokens_after: Tokens of the output history.
        messages_before: Messages in the input history.
        messages_after: Messages in the output history.
        messages_dropped: Input messages no longer present.
        tool_rounds_dropped: AI tool-call rounds dropped with their results.
        tool_results_cleared: Tool results replaced by the placeholder.
        tool_args_cleared: Tool-call arguments replaced by the placeholder.
        snapshot_tokens: Tokens of the inserted state snapshot (0 if none).
        within_budget: Whether `tokens_after <= target_tokens`.
        repairs: Violations found in the input and repaired before compacting.
        note: Why the budget could not be met, when it could not.
    """

    strategy: str
    target_tokens: int
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    messages_dropped: int = 0
    tool_rounds_dropped: int = 0
    tool_results_cleared: int = 0
    tool_args_cleared: int = 0
    snapshot_tokens: int = 0
    within_budget: bool = True
    repairs: tuple[str, ...] = ()
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        """Return the stats as a JSON-serializable dict."""
        data = asdict(self)
        data["repairs"] = list(self.repairs)
        return data


@dataclass(frozen=True)
class CompactionResult:
    """The output of `compact_messages`.

    Attributes:
        messages: The compacted history (new list; input messages are never mutated).
        stats: What was done.
        evicted: The original messages whose content left the context (dropped, or
            tool results and calls that were cleared), in history order.
        snapshot: The state snapshot extracted from them (including earlier ones), if any.
        cleared: `(cleared copy, original)` pairs for the messages of `messages` whose
            tool output or arguments were replaced by a placeholder.
    """

    messages: list[BaseMessage]
    stats: CompactionStats
    evicted: tuple[BaseMessage, ...] = ()
    snapshot: StateSnapshot | None = None
    cleared: tuple[tuple[BaseMessage, BaseMessage], ...] = ()


def _check(
    max_tokens: int,
    strategy: str,
    keep_tool_rounds: int,
    keep_messages: int,
    snapshot_fraction: float,
    head_fraction: float,
    clear_tool_args_over: int | None,
) -> None:
    check_positive("target_tokens", max_tokens)
    check_one_of("strategy", strategy, STRATEGIES)
    if keep_tool_rounds < 0:
        msg = f"keep_tool_rounds must be >= 0, got {keep_tool_rounds!r}"
        raise InvalidArgumentError(msg)
    if keep_messages < 0:
        msg = f"keep_messages must be >= 0, got {keep_messages!r}"
        raise InvalidArgumentError(msg)
    if not 0.0 <= snapshot_fraction < 1.0:
        msg = f"snapshot_fraction must be in [0, 1), got {snapshot_fraction!r}"
        raise InvalidArgumentError(msg)
    if not 0.0 <= head_fraction < 1.0:
        msg = f"head_fraction must be in [0, 1), got {head_fraction!r}"
        raise InvalidArgumentError(msg)
    if clear_tool_args_over is not None and clear_tool_args_over < 0:
        msg = f"clear_tool_args_over must be None or >= 0, got {clear_tool_args_over!r}"
        raise InvalidArgumentError(msg)


def compact_messages(
    messages: Sequence[Any],
    *,
    target_tokens: int,
    strategy: Strategy = "auto",
    keep_tool_rounds: int = DEFAULT_KEEP_TOOL_ROUNDS,
    keep_messages: int = 0,
    clear_tool_args_over: int | None = None,
    snapshot: bool = True,
    snapshot_fraction: float = DEFAULT_SNAPSHOT_FRACTION,
    head_fraction: float = DEFAULT_HEAD_FRACTION,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    shorten_request: bool = True,
) -> CompactionResult:
    """Compact a history under `target_tokens` without a model, keeping tool pairs intact.

    The input is never mutated. An invalid input is repaired first (see
    `repair_history`) and the repairs are listed in the stats. System messages, the
    most recent user request, the latest unit and the last `keep_messages` messages
    are never dropped; if they alone exceed the budget, the tool results among them
    are cleared as a last resort, and if that is still not enough the result says so
    (`stats.within_budget` is false and `stats.note` explains) instead of overflowing
    silently. An earlier state snapshot is merged into the new one; when no new one
    is inserted (`snapshot=False`, no reserve or no room) it is kept verbatim if it
    fits, else it is evicted and counted in `stats.messages_dropped`.

    Args:
        messages: LangChain messages or OpenAI-style dicts.
        target_tokens: Budget for the whole output, snapshot included.
        strategy: `auto`, `clear_tool_results`, `drop_oldest` or `drop_middle`.
        keep_tool_rounds: Latest tool rounds whose results are never cleared (unless
            nothing else can meet the budget).
        keep_messages: Trailing messages kept verbatim (rounded up to whole units).
        clear_tool_args_over: When clearing a round, also replace string arguments of
            its calls longer than this many tokens (`None` keeps arguments).
        snapshot: Insert a rule-based state snapshot of what was evicted.
        snapshot_fraction: Share of `target_tokens` reserved for the snapshot.
        head_fraction: Share of the budget `drop_middle` gives to the head.
        token_counter: Counter for budgets (default: offline tiktoken).
        shorten_request: Allow cutting the latest user request's text (with a visible
            marker) as the very last resort; it is never dropped. `False` reports the
            result over budget instead; the compaction node passes `False` when it
            compacts a history that already fits its window (a trigger fired).

    Returns:
        A `CompactionResult` with the messages, stats, evicted messages and snapshot.

    Raises:
        ValueError: If an option is out of range or `strategy` is unknown.

    Example:
        >>> from langchain_core.messages import HumanMessage, AIMessage
        >>> history = [HumanMessage("task: edit lib/a.py")] + [
        ...     AIMessage("x" * 50), HumanMessage("y" * 50)] * 4
        >>> result = compact_messages(history, target_tokens=120)
        >>> result.stats.within_budget, result.stats.tokens_after <= 120
        (True, True)
        >>> "lib/a.py" in result.messages[0].content  # kept in the state snapshot
        True
    """
    _check(
        target_tokens,
        strategy,
        keep_tool_rounds,
        keep_messages,
        snapshot_fraction,
        head_fraction,
        clear_tool_args_over,
    )
    counter = resolve_counter(token_counter)
    repair = repair_history(mark_later_system(as_messages(messages)))
    repairs = tuple(str(v) for v in repair.changes)
    items = repair.messages
    if not items:
        stats = CompactionStats("none", target_tokens, 0, 0, 0, 0, repairs=repairs)
        return CompactionResult([], stats)
    costs = Costs(counter, items[0])
    item_costs = costs.each(items)
    tokens_before = costs.total(items, sum(item_costs))
    if tokens_before <= target_tokens:
        stats = CompactionStats(
            "none", target_tokens, tokens_before, tokens_before, len(items), len(items),
            repairs=repairs,
        )  # fmt: skip
        return CompactionResult(list(items), stats)

    reserve = int(target_tokens * snapshot_fraction) if snapshot else 0
    work, earlier = _set_aside_snapshots(items, item_costs, merge=bool(reserve))
    pin_units(work, keep_messages)  # earlier snapshots left in the body are pinned
    target = target_tokens - reserve - costs.overhead
    applied = _apply(
        work,
        costs,
        strategy,
        target=target,
        keep_tool_rounds=keep_tool_rounds,
        clear_tool_args_over=clear_tool_args_over,
        head_fraction=head_fraction,
    )
    if work.kept_cost() > target_tokens - costs.overhead:
        # Protected tool results are cleared only when the kept messages alone exceed
        # the budget; the snapshot reserve never justifies it (the snapshot shrinks).
        work = last_resort(
            work,
            costs,
            target_tokens,
            strategy,
            clear_tool_args_over,
            shorten_request=shorten_request,
        )
    before = CompactionStats(
        applied, target_tokens, tokens_before, 0, len(items), 0, repairs=repairs
    )
    return _finish(work, costs, earlier, snapshot=snapshot, reserve=reserve, before=before)


@dataclass
class _Earlier:
    """Snapshot messages of earlier compactions, merged into the next snapshot."""

    snapshot: StateSnapshot | None = None
    messages: list[BaseMessage] = field(default_factory=list)
    older_until: int | None = None
    """Body messages before this index are older than what the earlier snapshot holds."""


def _older(message: BaseMessage) -> int:
    """The `older` count a snapshot marker stored (0 if none or not a count)."""
    marker = message.additional_kwargs.get(COMPACTION_MARKER)
    older = marker.get("older", 0) if isinstance(marker, dict) else 0
    return max(0, older) if isinstance(older, int) and not isinstance(older, bool) else 0


def _set_aside_snapshots(
    items: list[BaseMessage], item_costs: list[int], *, merge: bool
) -> tuple[Work, _Earlier]:
    """Return the work over the history without earlier snapshots (when `merge`), and them."""
    earlier = _Earlier()
    body: list[BaseMessage] = []
    body_costs: list[int] = []
    for message, cost in zip(items, item_costs, strict=True):
        if merge and compaction_kind(message) == "snapshot":
            # merged into the new snapshot; put back in `_finish` if it has no room
            earlier.snapshot = extract_snapshot([message], previous=earlier.snapshot)
            earlier.messages.append(message)
            # body messages before it (a kept head) are older than its facts; a
            # snapshot stored before the head counts that head as `older`
            earlier.older_until = len(body) + _older(message)
        else:
            body.append(message)
            body_costs.append(cost)
    work = Work(items=body, units=group_tool_rounds(body), costs=body_costs, current=list(body))
    return work, earlier


def _apply(
    work: Work,
    costs: Costs,
    strategy: Strategy,
    *,
    target: int,
    keep_tool_rounds: int,
    clear_tool_args_over: int | None,
    head_fraction: float,
) -> str:
    """Clear tool results, then drop units if the strategy allows; return what applied."""
    applied: str = strategy
    clear_results(work, costs, target, keep_tool_rounds, clear_tool_args_over)
    if work.kept_cost() > target and strategy != "clear_tool_results":
        if strategy == "auto":
            applied = choose_drop(work, target, head_fraction, len(work.items))
            chosen = "drop_oldest" if applied == "drop_oldest" else "drop_middle"
        else:
            chosen = strategy
        work.dropped = drop_units(work, chosen, target, head_fraction)
    elif strategy == "auto":
        applied = "clear_tool_results"
    return applied


def _snapshot_at(kept: Kept) -> int:
    """Where the snapshot goes: after the lead and the kept head, and never last.

    Only a stored `older` count too large for the history (a corrupted or hand-edited
    marker) reaches the end; the snapshot then goes before the last unit instead, so
    the latest turn stays the last message.
    """
    at = kept.lead + kept.older
    if at < len(kept.messages) or len(kept.messages) <= kept.lead:
        return at
    return max(kept.lead, group_tool_rounds(kept.messages)[-1][0])


def _with_snapshot(
    kept: Kept, costs: Costs, snap: StateSnapshot, *, room: int, max_tokens: int
) -> tuple[list[BaseMessage], int] | None:
    """Insert `snap` after the kept head, halving its room until it fits (`None`: never).

    The snapshot goes where the evicted messages were: after the lead and any head a
    middle drop kept, before the tail. So the head stays where the previous requests
    had it, and a provider's prompt cache still covers it after the compaction.

    Returns:
        The messages with the snapshot and the snapshot text's tokens.
    """
    at = _snapshot_at(kept)
    while room > 0:
        text = snap.render(max_snapshot_tokens=room, token_counter=costs.token_counter)
        if not text:
            return None
        message = snapshot_message(text, snap)
        candidate = [*kept.messages[:at], message, *kept.messages[at:]]
        if costs.total(candidate, kept.cost + costs.of(message)) <= max_tokens:
            kept.cost += costs.of(message)
            return candidate, int(costs.token_counter(text))
        room = room // 2
    return None


def _over_budget_note(work: Work, strategy: str, tokens_after: int, max_tokens: int) -> str:
    """Say why the result is over budget or what it gave up to fit (`""` if nothing)."""
    within = tokens_after <= max_tokens
    if not within and strategy == "clear_tool_results":
        return (
            f"clearing tool results alone brings the history to {tokens_after} tokens, "
            f"over the budget of {max_tokens}; use strategy 'auto', 'drop_oldest' or "
            "'drop_middle' to drop messages as well"
        )
    if work.request_shortened and within:
        return (
            "the latest user request was shortened (with a marker) to fit the budget; its "
            "full text stays in the history you passed in"
        )
    if not within:
        note = (
            f"no valid history fits {max_tokens} tokens: the messages that must stay "
            "(system messages, the latest user request, the latest tool round and any "
            f"kept tail) need {tokens_after} tokens even with their tool results cleared"
        )
        logger.warning("compaction over budget: %s", note)
        return note
    return ""


def _finish(
    work: Work,
    costs: Costs,
    earlier: _Earlier,
    *,
    snapshot: bool,
    reserve: int,
    before: CompactionStats,
) -> CompactionResult:
    """Assemble the result: kept messages, a snapshot of what left, and the stats."""
    max_tokens = before.target_tokens
    kept = collect(work, earlier.older_until)
    snap = earlier.snapshot
    out = kept.messages
    snapshot_tokens = 0
    if snapshot and (kept.evicted or kept.older_evicted or earlier.snapshot is not None):
        calls = [c for m in kept.messages if isinstance(m, AIMessage) for c in m.tool_calls]
        previous = earlier.snapshot
        if kept.older_evicted:  # their facts come first, as they came first
            first = extract_snapshot(kept.older_evicted, calls=calls)
            previous = first if previous is None else first.merge(previous)
        snap = extract_snapshot(kept.evicted, previous=previous, calls=calls)
        wrapper = costs.of(HumanMessage(""))
        room = min(reserve, max_tokens - costs.total(kept.messages, kept.cost) - wrapper)
        inserted = _with_snapshot(kept, costs, snap, room=room, max_tokens=max_tokens)
        if inserted is not None:
            out, snapshot_tokens = inserted
    evicted = [*kept.older_evicted, *kept.evicted]
    lost_snapshots = 0
    if earlier.messages and out is kept.messages:
        # no new snapshot carries the earlier ones: keep them verbatim if they fit,
        # otherwise report them as dropped (their text is in `evicted`)
        old_cost = sum(costs.of(m) for m in earlier.messages)
        # back where they were: before the head for a snapshot that counts it as
        # `older` (the layout before the snapshot moved after the head), else after it
        moved = any(_older(m) for m in earlier.messages)
        at = kept.lead if moved else _snapshot_at(kept)
        candidate = [*kept.messages[:at], *earlier.messages, *kept.messages[at:]]
        if costs.total(candidate, kept.cost + old_cost) <= max_tokens:
            out = candidate
            kept.cost += old_cost
            snap = earlier.snapshot
        else:
            evicted = [*earlier.messages, *evicted]
            lost_snapshots = len(earlier.messages)
    tokens_after = costs.total(out, kept.cost)
    gone = {i for u in work.dropped for i in range(*work.units[u])}
    stats = replace(
        before,
        tokens_after=tokens_after,
        messages_after=len(out),
        messages_dropped=len(gone) + lost_snapshots,
        tool_rounds_dropped=sum(1 for u in work.dropped if is_round(work, u)),
        tool_results_cleared=sum(
            1 for i, m in work.cleared.items() if isinstance(m, ToolMessage) and i not in gone
        ),
        tool_args_cleared=work.args_cleared,
        snapshot_tokens=snapshot_tokens,
        within_budget=tokens_after <= max_tokens,
        note=_over_budget_note(work, before.strategy, tokens_after, max_tokens),
    )
    return CompactionResult(out, stats, tuple(evicted), snap, tuple(kept.pairs))
