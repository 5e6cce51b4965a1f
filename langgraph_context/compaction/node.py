"""`create_compaction_node`: compaction as a LangGraph node (or `pre_model_hook`).

When a trigger fires, the node compacts rule-based first (old tool outputs cleared,
with a state snapshot of what was cleared) and calls the summarizer model only if
that is not enough. Without a model, the rule-based strategies drop whole units too.

Two modes:

* `replace`: the history in state is rewritten (a `RemoveMessage` of everything,
  then the compacted messages); the summary lives on in the history and in the
  state record. Evicted text can be archived to a note.
* `view`: the history in state is untouched; the compacted messages are written to
  `output_key` (`llm_input_messages` by default, what `create_react_agent`'s
  `pre_model_hook` returns). A running summary is kept in the state record so each
  turn only summarizes what is new.

The node only writes its own keys (`input_key` in replace mode, `output_key`,
`state_key`, `request_key` when a request was made, `archive_key` when archiving):
plan, notes and other pinned state are never touched.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, RemoveMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableLambda
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from typing_extensions import TypedDict

from langgraph_context._messages import as_messages
from langgraph_context._state import get_state_value
from langgraph_context.compaction.prompts import PROMPT_STYLES, PromptStyle, summary_instructions
from langgraph_context.compaction.strategies import (
    DEFAULT_KEEP_TOOL_ROUNDS,
    STRATEGIES,
    CompactionResult,
    CompactionStats,
    Strategy,
    compact_messages,
)
from langgraph_context.compaction.summarize import (
    DEFAULT_MAX_INPUT_TOKENS,
    DEFAULT_MAX_SUMMARY_TOKENS,
    DEFAULT_RETRIES,
    RunningSummary,
    SummarizationResult,
    asummarize_messages,
    summarize_messages,
)
from langgraph_context.compaction.summarize import _render as render_message
from langgraph_context.history import repair_history
from langgraph_context.tokens import TokenCounter, resolve_counter

__all__ = [
    "COMPACTION_MODES",
    "DEFAULT_ARCHIVE_PREFIX",
    "DEFAULT_OUTPUT_KEY",
    "DEFAULT_REQUEST_KEY",
    "DEFAULT_STATE_KEY",
    "TRIGGER_KINDS",
    "CompactionMode",
    "CompactionRecord",
    "CompactionStateMixin",
    "Keep",
    "Trigger",
    "TriggerKind",
    "create_compaction_node",
]

logger = logging.getLogger(__name__)

CompactionMode = Literal["replace", "view"]
COMPACTION_MODES: tuple[CompactionMode, ...] = get_args(CompactionMode)
TriggerKind = Literal["fraction", "tokens", "messages", "tool_output"]
TRIGGER_KINDS: tuple[TriggerKind, ...] = get_args(TriggerKind)
Trigger = tuple[TriggerKind, float]
Keep = tuple[Literal["tokens", "messages"], int]

DEFAULT_STATE_KEY = "compaction"
DEFAULT_REQUEST_KEY = "compaction_requested"
DEFAULT_OUTPUT_KEY = "llm_input_messages"
DEFAULT_ARCHIVE_PREFIX = "compaction/evicted-"


class CompactionRecord(TypedDict, total=False):
    """What the node keeps in state about its compactions.

    Attributes:
        count: Compactions performed so far in this thread.
        summary: The running summary (`RunningSummary.to_dict()`), when a model is used.
        last: Stats of the latest compaction (tokens and messages before/after,
            strategy, trigger, repairs, error, within_budget).
        error: The latest summarizer failure, or `None`.
    """

    count: int
    summary: dict[str, Any] | None
    last: dict[str, Any]
    error: str | None


class CompactionStateMixin(TypedDict, total=False):
    """State keys the compaction node reads and writes (compose with `MessagesState`)."""

    compaction: CompactionRecord
    compaction_requested: bool
    llm_input_messages: list[AnyMessage]


def _check_config(
    *,
    max_tokens: int,
    mode: str,
    triggers: list[Trigger],
    context_window: int | None,
    keep: Keep | None,
    strategy: str,
    style: str,
    prompt: str | None,
    keys: dict[str, str | None],
) -> None:
    if not isinstance(max_tokens, int) or max_tokens <= 0:
        msg = f"max_tokens must be a positive int, got {max_tokens!r}"
        raise ValueError(msg)
    if mode not in COMPACTION_MODES:
        msg = f"mode must be one of {list(COMPACTION_MODES)}, got {mode!r}"
        raise ValueError(msg)
    for trig in triggers:
        if not (isinstance(trig, tuple) and len(trig) == 2 and trig[0] in TRIGGER_KINDS):
            msg = f"trigger must be (kind, value) with kind in {list(TRIGGER_KINDS)}, got {trig!r}"
            raise ValueError(msg)
        kind, value = trig
        if not isinstance(value, (int, float)) or value <= 0:
            msg = f"trigger {kind!r} needs a positive value, got {value!r}"
            raise ValueError(msg)
        if kind == "fraction" and (value > 1 or context_window is None):
            msg = (
                "trigger ('fraction', f) needs 0 < f <= 1 and context_window set, got "
                f"f={value!r}, context_window={context_window!r}"
            )
            raise ValueError(msg)
    if keep is not None and not (
        isinstance(keep, tuple)
        and len(keep) == 2
        and keep[0] in ("tokens", "messages")
        and isinstance(keep[1], int)
        and keep[1] >= 0
    ):
        msg = f"keep must be ('tokens', n) or ('messages', n) with n >= 0, got {keep!r}"
        raise ValueError(msg)
    if strategy not in STRATEGIES:
        msg = f"strategy must be one of {list(STRATEGIES)}, got {strategy!r}"
        raise ValueError(msg)
    if style not in PROMPT_STYLES:
        msg = f"style must be one of {list(PROMPT_STYLES)}, got {style!r}"
        raise ValueError(msg)
    summary_instructions(style, prompt=prompt)  # validates a custom prompt
    for key_name, key in keys.items():
        if key is not None and (not isinstance(key, str) or not key):
            msg = f"{key_name} must be a non-empty string, got {key!r}"
            raise ValueError(msg)


def create_compaction_node(
    *,
    max_tokens: int,
    mode: CompactionMode = "replace",
    trigger: Trigger | Sequence[Trigger] | None = None,
    context_window: int | None = None,
    keep: Keep | None = None,
    model: Runnable[Any, Any] | BaseLanguageModel | None = None,
    style: PromptStyle = "handoff",
    prompt: str | None = None,
    strategy: Strategy = "auto",
    keep_tool_rounds: int = DEFAULT_KEEP_TOOL_ROUNDS,
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS,
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
    retries: int = DEFAULT_RETRIES,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    input_key: str = "messages",
    output_key: str = DEFAULT_OUTPUT_KEY,
    state_key: str = DEFAULT_STATE_KEY,
    request_key: str = DEFAULT_REQUEST_KEY,
    archive_key: str | None = None,
    name: str = "compaction",
) -> RunnableLambda[Any, dict[str, Any]]:
    """Create a node that compacts the conversation when a trigger fires.

    Args:
        max_tokens: Budget of the compacted history.
        mode: `replace` (rewrite the history in state) or `view` (write the compacted
            history to `output_key`, e.g. as a `pre_model_hook`).
        trigger: When to compact: one or more of `("fraction", f)` (tokens reach `f`
            of `context_window`), `("tokens", n)`, `("messages", n)` and
            `("tool_output", n)` (one tool result of `n` tokens or more); any firing
            is enough. A truthy `request_key` in state always triggers. Default:
            `("tokens", max_tokens)`.
        context_window: The model's context window, for `fraction` triggers.
        keep: Recent part kept verbatim: `("tokens", n)` or `("messages", n)`
            (whole tool rounds). Default: the strategies' defaults.
        model: Summarizer model; `None` for rule-based compaction only.
        style: Summary style: `handoff` or `snapshot`.
        prompt: Custom summarizer instructions instead of `style`.
        strategy: Rule-based strategy when no model is given (or as the view-mode
            fallback when the model fails).
        keep_tool_rounds: Latest tool rounds whose outputs are never cleared.
        max_summary_tokens: Length the summary is asked to stay under.
        max_input_tokens: Budget of each summarizer call's input.
        retries: Extra summarizer attempts per call.
        token_counter: Counter for budgets and triggers (default: offline tiktoken).
        input_key: State key to read messages from (e.g. `llm_input_messages` to run
            after a context node). In replace mode it must have the `add_messages`
            reducer.
        output_key: State key the view is written to (view mode).
        state_key: State key of the `CompactionRecord`.
        request_key: State key of an explicit compaction request (a bool).
        archive_key: In replace mode, a notes key (e.g. `"note"` of
            `NoteStateMixin`) to archive evicted messages to, one note per compaction
            named `compaction/evicted-<n>`; `None` disables archiving.
        name: The runnable's name.

    Returns:
        A runnable usable as a graph node or `pre_model_hook` (sync and async).

    Raises:
        ValueError: If an option is invalid (unknown mode, strategy or style, a bad
            trigger or keep, a fraction trigger without `context_window`, a blank
            key or prompt, a non-positive budget).

    Example:
        >>> node = create_compaction_node(max_tokens=1000, mode="view")
        >>> node.name
        'compaction'
    """
    triggers: list[Trigger]
    if trigger is None:
        triggers = [("tokens", max_tokens)]
    elif isinstance(trigger, tuple) and len(trigger) == 2 and isinstance(trigger[0], str):
        triggers = [trigger]
    else:
        triggers = list(trigger)
    _check_config(
        max_tokens=max_tokens,
        mode=mode,
        triggers=triggers,
        context_window=context_window,
        keep=keep,
        strategy=strategy,
        style=style,
        prompt=prompt,
        keys={
            "input_key": input_key,
            "output_key": output_key,
            "state_key": state_key,
            "request_key": request_key,
            "archive_key": archive_key,
        },
    )
    counter = resolve_counter(token_counter)
    options = _Options(
        max_tokens=max_tokens,
        mode=mode,
        triggers=triggers,
        context_window=context_window,
        keep=keep,
        model=model,
        style=style,
        prompt=prompt,
        strategy=strategy,
        keep_tool_rounds=keep_tool_rounds,
        max_summary_tokens=max_summary_tokens,
        max_input_tokens=max_input_tokens,
        retries=retries,
        counter=counter,
        input_key=input_key,
        output_key=output_key,
        state_key=state_key,
        request_key=request_key,
        archive_key=archive_key,
    )

    def compaction(state: Any) -> dict[str, Any]:
        step = _Step(options, state)
        if step.fired and model is not None and step.needs_model():
            step.summarized = summarize_messages(step.rule.messages, **step.summary_kwargs())
        return step.update()

    async def acompaction(state: Any) -> dict[str, Any]:
        step = _Step(options, state)
        if step.fired and model is not None and step.needs_model():
            step.summarized = await asummarize_messages(step.rule.messages, **step.summary_kwargs())
        return step.update()

    return RunnableLambda(compaction, afunc=acompaction, name=name)


@dataclass(frozen=True)
class _Options:
    max_tokens: int
    mode: str
    triggers: list[Trigger]
    context_window: int | None
    keep: Keep | None
    model: Any
    style: PromptStyle
    prompt: str | None
    strategy: Strategy
    keep_tool_rounds: int
    max_summary_tokens: int
    max_input_tokens: int
    retries: int
    counter: TokenCounter
    input_key: str
    output_key: str
    state_key: str
    request_key: str
    archive_key: str | None


class _Step:
    """One run of the node: trigger check, rule-based pass, optional summary, update."""

    def __init__(self, options: _Options, state: Any) -> None:
        self.o = options
        raw = get_state_value(state, options.input_key, [])
        messages = as_messages(raw)
        self.pending: list[BaseMessage] = []
        if messages and isinstance(messages[-1], AIMessage) and messages[-1].tool_calls:
            self.pending = [messages[-1]]
            messages = messages[:-1]
        self.messages = messages
        record = get_state_value(state, options.state_key, {})
        self.record: dict[str, Any] = dict(record) if isinstance(record, dict) else {}
        self.requested = bool(get_state_value(state, options.request_key, False))
        self.tokens = int(options.counter(messages)) if messages else 0
        self.fired_by = self._fired()
        self.fired = self.fired_by is not None
        self.summarized: SummarizationResult | None = None
        self.rule: CompactionResult = self._rule_pass() if self.fired else _noop(messages)

    def _fired(self) -> str | None:
        if self.requested:
            return "request"
        o = self.o
        for kind, value in o.triggers:
            if kind == "tokens" and self.tokens >= value:
                return f"tokens>={value:g}"
            if kind == "fraction" and self.tokens >= value * (o.context_window or 0):
                return f"fraction>={value:g}"
            if kind == "messages" and len(self.messages) >= value:
                return f"messages>={value:g}"
            if kind == "tool_output" and any(
                isinstance(m, ToolMessage) and int(o.counter([m])) >= value for m in self.messages
            ):
                return f"tool_output>={value:g}"
        return None

    def _keep_messages(self) -> int:
        keep = self.o.keep
        if keep is None:
            return 0
        if keep[0] == "messages":
            return keep[1]
        used, count = 0, 0
        for message in reversed(self.messages):
            used += int(self.o.counter([message]))
            if used > keep[1]:
                break
            count += 1
        return count

    def _rule_pass(self) -> CompactionResult:
        o = self.o
        with_model = o.model is not None
        return compact_messages(
            self.messages,
            max_tokens=o.max_tokens,
            strategy="clear_tool_results" if with_model else o.strategy,
            keep_tool_rounds=o.keep_tool_rounds,
            keep_messages=self._keep_messages(),
            token_counter=o.counter,
        )

    def needs_model(self) -> bool:
        if self.o.mode == "view" and self.record.get("summary"):
            return True  # the running summary must stand in for what it covers
        return not self.rule.stats.within_budget

    def summary_kwargs(self) -> dict[str, Any]:
        o = self.o
        saved = self.record.get("summary")
        keep = o.keep
        return {
            "model": o.model,
            "max_tokens": o.max_tokens,
            "running_summary": RunningSummary.from_dict(saved) if saved else None,
            "style": o.style,
            "prompt": o.prompt,
            "keep_tokens": keep[1] if keep and keep[0] == "tokens" else None,
            "keep_messages": keep[1] if keep and keep[0] == "messages" else None,
            "max_summary_tokens": o.max_summary_tokens,
            "max_input_tokens": o.max_input_tokens,
            "retries": o.retries,
            "token_counter": o.counter,
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
        if done.error is None:
            stats.update(
                strategy="summary",
                tokens_after=done.tokens_after,
                messages_after=len(done.messages),
                within_budget=done.within_budget,
            )
            return done.messages, stats, [*evicted, *done.summarized]
        stats["error"] = done.error
        if self.o.mode == "replace":
            stats.update(strategy="none", tokens_after=self.tokens, within_budget=False)
            return self.messages, stats, []
        fallback = compact_messages(
            self.messages,
            max_tokens=self.o.max_tokens,
            strategy=self.o.strategy,
            keep_tool_rounds=self.o.keep_tool_rounds,
            keep_messages=self._keep_messages(),
            token_counter=self.o.counter,
        )
        stats.update(fallback.stats.as_dict(), error=done.error)
        return fallback.messages, stats, list(fallback.evicted)

    def update(self) -> dict[str, Any]:
        o = self.o
        if not self.fired:
            if o.mode == "view":
                return {o.output_key: [*self.rule.messages, *self.pending]}
            return {}
        messages, stats, evicted = self._result()
        stats["trigger"] = self.fired_by
        stats["mode"] = o.mode
        count = int(self.record.get("count", 0)) + (1 if stats["strategy"] != "none" else 0)
        summary = self.summarized.running_summary if self.summarized else None
        record: dict[str, Any] = {
            "count": count,
            "summary": summary.to_dict() if summary else self.record.get("summary"),
            "last": stats,
            "error": stats.get("error"),
        }
        logger.info("compaction: %s", stats)
        update: dict[str, Any] = {o.state_key: record}
        if self.requested:
            update[o.request_key] = False
        final = [*messages, *self.pending]
        if o.mode == "view":
            update[o.output_key] = final
            return update
        if stats["strategy"] != "none" or stats.get("repairs"):
            update[o.input_key] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *final]
            if o.archive_key and evicted:
                text = "\n\n".join(render_message(m) for m in evicted)
                update[o.archive_key] = {f"{DEFAULT_ARCHIVE_PREFIX}{count}": text}
        return update


def _noop(messages: list[BaseMessage]) -> CompactionResult:
    repair = repair_history(messages)
    n = len(repair.messages)
    repairs = tuple(str(v) for v in repair.changes)
    return CompactionResult(
        repair.messages, CompactionStats("none", 0, 0, 0, n, n, repairs=repairs)
    )
