"""One run of the compaction node (private to `node.py`): trigger, rules, summary, update."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from langgraph_context.compaction._archive import Archived as _Archive
from langgraph_context.compaction._archive import store_archive as _store_archive
from langgraph_context.compaction._archive import sunk as _sunk
from langgraph_context.compaction._floor import lost_facts
from langgraph_context.compaction._transcript import render_message
from langgraph_context.compaction.options import (
    DEFAULT_ARCHIVE_PREFIX,
    SUMMARY_REQUEST_KEY,
    Archive,
    CompactionKeys,
    CompactionMode,
    Keep,
    SummaryOptions,
    Trigger,
)
from langgraph_context.compaction.provenance import fenced_compaction_message, mark_later_system
from langgraph_context.compaction.strategies import (
    DEFAULT_SNAPSHOT_FRACTION,
    CompactionResult,
    CompactionStats,
    Strategy,
    compact_messages,
)
from langgraph_context.compaction.summarize import HistorySummary, SummarizedHistory
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import (
    as_messages,
    group_tool_rounds,
    last_provider_compaction,
    repair_history,
    tool_result_ids,
)
from langgraph_context.state import get_state_value
from langgraph_context.tokens import TokenCounter
from langgraph_context.tokens.window import corrected_tokens, usage_ratio

logger = logging.getLogger("langgraph_context.compaction.node")

_SUMMARY_WRAPPER = 96  # tokens of the summary message around the summary text (fence included)
_MUST_KEEP_SLACK = 16  # per-message overheads the strategies add on top
SNAPSHOT_SHARE = 0.15
"""Over the high mark, the snapshot of what leaves may take up to this share of it.

The record of what leaves is sized by how much history there was, not by the low mark:
a lower low mark (fewer compactions, a steadier cache) then shortens the verbatim tail,
never the facts copied out of the evicted turns. The snapshot still counts within the
low mark, and only takes what it renders (a short one leaves the rest unused)."""
_SNAPSHOT_FRACTION_MAX = 0.5  # of the low mark: the rest stays for the verbatim tail


@dataclass(frozen=True)
class Config:
    """The node's validated settings, built once by `create_compaction_node`."""

    max_tokens: int
    target_tokens: int
    mode: CompactionMode
    triggers: tuple[Trigger, ...]
    context_window: int | None
    keep: Keep | None
    model: Any
    strategy: Strategy
    keep_tool_rounds: int
    token_counter: TokenCounter
    messages_key: str
    summary_options: SummaryOptions
    keys: CompactionKeys
    archive: Archive | None


SUM_TRIGGERS = frozenset({"tokens", "fraction", "messages"})
"""Trigger kinds read from the history's sums alone (its tokens, its length)."""


def sum_fires(kind: str, value: float, tokens: int, size: int, window: Callable[[], int]) -> bool:
    """Whether a trigger of `SUM_TRIGGERS` fires on a history of `tokens` and `size`.

    `window` is called only for a `fraction` trigger (it may raise there).
    """
    if kind == "tokens":
        return tokens >= value
    if kind == "fraction":
        return tokens >= value * window()
    return kind == "messages" and size >= value


class Step:
    """One run of the node: trigger check, rule-based pass, optional summary, update."""

    def __init__(self, options: Config, state: Any) -> None:
        usage = get_state_value(state, options.keys.usage_key, None)
        self.ratio = usage_ratio(usage)
        if self.ratio is not None:
            options = replace(options, token_counter=_Scaled(options.token_counter, self.ratio))
        self.window = options.context_window or (usage or {}).get("window")
        self.o = options
        raw = get_state_value(state, options.messages_key, [])
        stored = as_messages(raw)
        # A compaction message an older version stored unfenced is fenced (same id).
        # So are later system messages marked untrusted before compaction hoists them.
        messages = mark_later_system([fenced_compaction_message(m) for m in stored])
        self.refenced = [m for m, old in zip(messages, stored, strict=True) if m is not old]
        self.pending: list[BaseMessage] = []
        if (
            options.mode == "replace"
            and messages
            and isinstance(messages[-1], AIMessage)
            and messages[-1].tool_calls
        ):
            self.pending = [messages[-1]]
            messages = messages[:-1]
        # A provider's compaction block ends what the provider reads of the history
        # before it: that part stays as it is, never summarized over or cut.
        cut = last_provider_compaction(messages) + 1
        while cut and cut < len(messages) and isinstance(messages[cut], ToolMessage):
            cut += 1  # the results of the boundary turn's calls stay with it
        self.before, messages = messages[:cut], messages[cut:]
        self.messages = messages
        record = get_state_value(state, options.keys.state_key, {})
        self.record: dict[str, Any] = dict(record) if isinstance(record, dict) else {}
        self.requested = bool(get_state_value(state, options.keys.request_key, False))
        # The agent's last request as sent (`(messages, tools)`), for the summarizer's prefix.
        self.prefix = get_state_value(state, SUMMARY_REQUEST_KEY, None)
        self.tokens = int(options.token_counter(messages)) if messages else 0
        self.fired_by = self._fired()
        self.fired = self.fired_by is not None
        self.budget = self._budget() if self.fired else options.max_tokens
        self.summarized: SummarizedHistory | None = None
        self.floored = False  # the summary lost a fact the rules keep: rules alone are used
        self.rule: CompactionResult = self._rule_pass() if self.fired else _noop(messages)

    def _fired(self) -> str | None:
        if self.requested:
            return "request"
        o = self.o
        for kind, value in o.triggers:
            if sum_fires(kind, value, self.tokens, len(self.messages), self._window):
                return f"{kind}>={value:g}"
            if kind == "tool_output" and any(
                isinstance(m, ToolMessage) and int(o.token_counter([m])) >= value
                for m in self.messages
            ):
                return f"tool_output>={value:g}"
            if kind == "tool_rounds" and _tool_rounds(self.messages) >= value:
                return f"tool_rounds>={value:g}"
        return None

    def _window(self) -> int:
        if not isinstance(self.window, int) or self.window <= 0:
            msg = (
                "trigger ('fraction', f) needs a window: pass context_window, a summarizer "
                "model with a profile (max_input_tokens), or run under an agent whose model "
                f"has one; got context_window=None and no window in state ({self.window!r})"
            )
            raise InvalidArgumentError(msg)
        return self.window

    def _budget(self) -> int:
        """The budget this run compacts to.

        Over `max_tokens` that is `target_tokens`, the low mark: compacting well under
        the high mark leaves room for many turns before the next compaction, so the
        history (the prompt-cache prefix) stays append-only between compactions. A
        trigger (or request) firing while the
        history still fits must still compact: then everything before the kept part
        (`keep`, or the newer half of the history without one) is compacted, with room
        on top for the summary (`max_summary_tokens`) or the snapshot (a quarter).
        """
        o = self.o
        if self.tokens > o.max_tokens:
            floor = min(self._must_keep_tokens(), o.max_tokens)
            # Room on top of what must stay for the snapshot (or summary) of what
            # leaves (a low mark below that evicts messages with no record of them),
            # up to halfway to the high mark, so the next turn fits. The same aim with
            # or without a model: the rules-only floor a summary is checked against is
            # then what the node without a model would keep.
            halfway = (o.target_tokens + o.max_tokens) // 2
            floor = max(floor, min(floor + floor // 8, halfway))
            return max(o.target_tokens, floor)
        keep = o.keep
        if keep is None:
            goal = self.tokens // 2
        else:
            lead = [m for m in self.messages if isinstance(m, SystemMessage)]
            count = self._keep_messages() if keep[0] == "messages" else 0
            tail = self.messages[len(self.messages) - count :] if count else []
            kept = int(o.token_counter([*lead, *tail])) if lead or tail else 0
            goal = kept + (keep[1] if keep[0] == "tokens" else 0)
        goal += self._record_room(goal)
        budget = max(1, min(o.max_tokens, goal, self.tokens - 1))
        # Never below what must stay (system messages, the latest user request and all
        # after it): under max_tokens, nothing justifies dropping the request. When only
        # that is left, the budget is the history itself and nothing is compacted.
        return min(max(budget, self._must_keep_tokens()), self.tokens)

    def _record_room(self, kept: int) -> int:
        """Room on top of `kept` tokens for the summary, or for the snapshot (a quarter)."""
        if self.o.model is not None:
            return self.o.summary_options.max_summary_tokens + _SUMMARY_WRAPPER
        return kept // 4

    def _must_keep_tokens(self) -> int:
        """Tokens of what compaction never drops.

        System messages, the latest user request, the latest tool round (or message)
        and the kept tail.
        """
        messages = self.messages
        if not messages:
            return 0
        request = next(
            (
                i
                for i in range(len(messages) - 1, -1, -1)
                if isinstance(messages[i], HumanMessage) and not tool_result_ids(messages[i])
            ),
            None,
        )
        last_start = min(group_tool_rounds(messages)[-1][0], len(messages) - self._keep_messages())
        kept = [
            m
            for i, m in enumerate(messages)
            if isinstance(m, SystemMessage) or i == request or i >= last_start
        ]
        return int(self.o.token_counter(kept)) + _MUST_KEEP_SLACK

    def _keep_messages(self) -> int:
        keep = self.o.keep
        if keep is None:
            return 0
        if keep[0] == "messages":
            return keep[1]
        used, count = 0, 0
        for message in reversed(self.messages):
            used += int(self.o.token_counter([message]))
            if used > keep[1]:
                break
            count += 1
        return count

    def _rule_pass(self) -> CompactionResult:
        return self._rules("clear_tool_results" if self.o.model is not None else self.o.strategy)

    def _rules(self, strategy: Strategy) -> CompactionResult:
        """Compact with the rule-based `strategy` to this step's budget."""
        return compact_messages(
            self.messages,
            target_tokens=self.budget,
            strategy=strategy,
            keep_tool_rounds=self.o.keep_tool_rounds,
            keep_messages=self._keep_messages(),
            token_counter=self.o.token_counter,
            shorten_request=self.tokens > self.o.max_tokens,
            snapshot_fraction=self._snapshot_fraction(),
        )

    def _snapshot_fraction(self) -> float:
        """Share of this run's budget the snapshot may take (see `SNAPSHOT_SHARE`)."""
        if self.budget >= self.o.max_tokens:
            return DEFAULT_SNAPSHOT_FRACTION
        share = SNAPSHOT_SHARE * self.o.max_tokens / self.budget
        return min(_SNAPSHOT_FRACTION_MAX, max(DEFAULT_SNAPSHOT_FRACTION, share))

    @functools.cached_property
    def floor(self) -> CompactionResult:
        """What compacting by rules alone returns at this budget (the node without a model)."""
        if self.o.model is None or self.o.strategy == "clear_tool_results":
            return self.rule
        return self._rules(self.o.strategy)

    def _loses_floor(self, messages: list[BaseMessage]) -> list[str]:
        """The facts rules alone would keep that `messages` lose (none if the floor is over)."""
        floor = self.floor
        if floor is self.rule and messages is self.rule.messages:
            return []
        return lost_facts(floor.messages, messages) if floor.stats.within_budget else []

    def needs_model(self) -> bool:
        if self.o.mode == "view" and self.record.get("summary"):
            return True  # the running summary must stand in for what it covers
        # Clearing tool results may fit the budget yet lose facts that rules alone keep
        # in their snapshot (dropping units leaves it room): then the summary, with the
        # rule-based facts beside it, must do the compaction.
        return not self.rule.stats.within_budget or bool(self._loses_floor(self.rule.messages))

    def summary_input(self) -> list[BaseMessage]:
        """The rule-pass history with cleared messages restored to their originals.

        The summarizer must read the tool outputs it folds into the summary, not the
        placeholders the clearing pass left.
        """
        originals = {id(copy): original for copy, original in self.rule.cleared}
        return [originals.get(id(m), m) for m in self.rule.messages]

    def adopt(self, done: SummarizedHistory) -> None:
        """Keep `done`, with messages it kept verbatim cleared again as the rule pass did."""
        copies = {id(original): copy for copy, original in self.rule.cleared}
        if done.error is None and copies:
            messages = [copies.get(id(m), m) for m in done.messages]
            tokens = int(self.o.token_counter(messages)) if messages else 0
            done = replace(
                done,
                messages=messages,
                tokens_after=tokens,
                within_budget=tokens <= self.budget,
            )
        self.summarized = done

    def summary_kwargs(self) -> dict[str, Any]:
        o = self.o
        saved = self.record.get("summary")
        keep = o.keep
        model, prefix = o.model, None
        if self.prefix is not None:
            prefix, tools = self.prefix
            if tools and hasattr(model, "bind_tools"):
                # The agent's tools, part of the cached prefix; a summarizer that takes no
                # tools (its `bind_tools` is not implemented) is sent the prefix alone.
                with contextlib.suppress(NotImplementedError):
                    model = model.bind_tools(tools)
        return {
            "model": model,
            "prefix": prefix,
            "target_tokens": self.budget,
            "running_summary": HistorySummary.from_dict(saved) if saved else None,
            "keep_tokens": keep[1] if keep and keep[0] == "tokens" else None,
            "keep_messages": keep[1] if keep and keep[0] == "messages" else None,
            "summary_options": o.summary_options,
            "token_counter": o.token_counter,
        }

    def _result(self) -> tuple[list[BaseMessage], dict[str, Any], list[BaseMessage]]:
        """Return (messages, stats, evicted) of this step."""
        rule = self.rule
        stats = rule.stats.as_dict()
        evicted = list(rule.evicted)
        messages = rule.messages
        done = self.summarized
        if done is None:
            return messages, stats, evicted
        stats["summarizer_calls"] = done.model_calls
        if done.error is None and not done.within_budget:
            # An over-long summary must not leave the history over budget.
            done = replace(done, error="the summary left the history over budget")
        if done.error is None:
            floor = self.floor
            lost = self._loses_floor(done.messages)
            if lost:
                # Never below rules alone: the summary would lose facts the rules keep.
                self.floored = True
                stats = {**floor.stats.as_dict(), "summarizer_calls": done.model_calls}
                stats["floor"] = f"summary dropped: it lost {len(lost)} facts the rules keep"
                return floor.messages, stats, list(floor.evicted)
            stats.update(
                strategy="summary",
                tokens_after=done.tokens_after,
                messages_after=len(done.messages),
                within_budget=done.within_budget,
            )
            summarized = {id(m) for m in done.summarized}
            evicted = [m for m in evicted if id(m) not in summarized]
            return done.messages, stats, [*evicted, *done.summarized]
        # The summarizer failed (raised, timed out, answered empty or too long): in
        # both modes the rule-based strategies compact instead, dropping whole units
        # when clearing is not enough, so the history never stays over budget.
        logger.warning("summarizer failed (%s); compacting rule-based instead", done.error)
        fits = rule.stats.within_budget and not self._loses_floor(rule.messages)
        fallback = rule if fits else self._rules(_fallback(self.o.strategy))
        stats = {**fallback.stats.as_dict(), "summarizer_calls": done.model_calls}
        stats.update(error=done.error, fallback=True)
        return fallback.messages, stats, list(fallback.evicted)

    def update(self) -> dict[str, Any]:
        """Return the state update, archiving to the store with `store.put`."""
        update, archive = self._update()
        if archive is not None:
            store, ops = archive
            store.batch(ops)
        return update

    async def aupdate(self) -> dict[str, Any]:
        """Return the state update, archiving to the store with `await store.aput`."""
        update, archive = self._update()
        if archive is not None:
            store, ops = archive
            await store.abatch(ops)
        return update

    def _update(self) -> tuple[dict[str, Any], _Archive | None]:
        o = self.o
        archive: _Archive | None = None
        if not self.fired:
            if o.mode == "view":
                view = [*self.before, *self.rule.messages, *self.pending]
                return {o.keys.output_key: view}, None
            if self.refenced and all(m.id for m in self.refenced):
                return {o.messages_key: list(self.refenced)}, None  # replaced by id
            return {}, None
        messages, stats, evicted = self._result()
        # The step may aim below max_tokens (a trigger fired while the history fit);
        # the record says what it aimed for and judges the result against the window.
        stats["target_tokens"] = self.budget
        if self.tokens <= o.max_tokens:
            stats["within_budget"] = int(stats.get("tokens_after", self.tokens)) <= o.max_tokens
        stats["trigger"] = self.fired_by
        if self.ratio is not None:
            stats["usage_ratio"] = round(self.ratio, 4)
        stats["mode"] = o.mode
        count = int(self.record.get("count", 0)) + (1 if stats["strategy"] != "none" else 0)
        summary = self.summarized.running_summary if self.summarized else None
        if self.floored:
            summary = None  # the record keeps the summary the history still uses
        record: dict[str, Any] = {
            "count": count,
            "summary": summary.to_dict() if summary else self.record.get("summary"),
            "last": stats,
            "error": stats.get("error"),
        }
        logger.info("compaction: %s", stats)
        update: dict[str, Any] = {o.keys.state_key: record}
        if self.requested:
            update[o.keys.request_key] = False
        final = [*self.before, *messages, *self.pending]
        if o.mode == "view":
            update[o.keys.output_key] = final
            return update, None
        if stats["strategy"] != "none" or stats.get("repairs"):
            update[o.messages_key] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *final]
            if evicted and o.archive is not None:
                text = "\n\n".join(render_message(m) for m in evicted)
                if o.archive.note_key:
                    update[o.archive.note_key] = {f"{DEFAULT_ARCHIVE_PREFIX}{count}": text}
                if o.archive.namespace:
                    archive = _store_archive(o.archive.namespace, count, text, len(evicted))
                if o.archive.sink is not None:
                    archive = _sunk(o.archive.sink, evicted, update, archive)
        return update, archive


@dataclass(frozen=True)
class _Scaled:
    """A counter whose counts are multiplied by the provider's reported/counted ratio."""

    counter: TokenCounter
    ratio: float

    def __call__(self, messages: Any) -> int:
        return corrected_tokens(int(self.counter(messages)), self.ratio)


def _fallback(strategy: Strategy) -> Strategy:
    """The rule-based strategy used when the summarizer fails: one that may drop units."""
    return "auto" if strategy == "clear_tool_results" else strategy


def _noop(messages: list[BaseMessage]) -> CompactionResult:
    repair = repair_history(messages)
    n = len(repair.messages)
    repairs = tuple(str(v) for v in repair.changes)
    return CompactionResult(
        repair.messages, CompactionStats("none", 0, 0, 0, n, n, repairs=repairs)
    )


def _tool_rounds(messages: list[BaseMessage]) -> int:
    """How many model turns in `messages` called tools."""
    return sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
