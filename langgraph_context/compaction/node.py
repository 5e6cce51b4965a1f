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

The node only writes its own keys (`messages_key` in replace mode, the
`CompactionKeys` it is given, and `Archive.note_key` when archiving to a note): plan,
notes and other pinned state are never touched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import AnyMessage
from langchain_core.runnables import Runnable, RunnableLambda
from typing_extensions import TypedDict

from langgraph_context.compaction._quiet import Quiet
from langgraph_context.compaction._step import Config, Step
from langgraph_context.compaction.options import (
    COMPACTION_MODES,
    TRIGGER_KINDS,
    Archive,
    CompactionKeys,
    CompactionMode,
    Keep,
    SummaryOptions,
    Trigger,
    check_one_of,
    check_positive,
)
from langgraph_context.compaction.strategies import (
    DEFAULT_KEEP_TOOL_ROUNDS,
    STRATEGIES,
    Strategy,
)
from langgraph_context.compaction.summarize import asummarize_history, summarize_history
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.state import require_state_keys
from langgraph_context.tokens import TokenCounter, TokenUsage, model_window, resolve_counter

__all__ = ["CompactionNode", "CompactionRecord", "CompactionStateMixin", "create_compaction_node"]


class CompactionNode(RunnableLambda[Any, dict[str, Any]]):
    """The runnable `create_compaction_node` returns: a graph node that knows its mode.

    `create_context_agent` reads `mode` and `output_key`: a view-mode node runs inside
    the model step, once per call, so its view is never written to state.

    Attributes:
        mode: `replace` or `view`.
        output_key: The state key a view-mode node writes its view to.
        quiet: `quiet(state)` is True when the node would return `{}` for `state`
            (False: not sure), from the messages appended since its last check of the
            same history; what the node itself asks first.
    """

    def __init__(
        self,
        func: Any,
        afunc: Any,
        quiet: Callable[[Any], bool] | None = None,
        *,
        name: str,
        mode: CompactionMode,
        output_key: str,
    ) -> None:
        super().__init__(func, afunc=afunc, name=name)
        self.mode: CompactionMode = mode
        self.output_key = output_key
        self.quiet: Callable[[Any], bool] = quiet or (lambda state: False)


class CompactionRecord(TypedDict, total=False):
    """What the node keeps in state about its compactions.

    Attributes:
        count: Compactions performed so far in this thread.
        summary: The running summary (`HistorySummary.to_dict()`), when a model is used.
        last: Stats of the latest compaction (tokens and messages before/after,
            strategy, trigger, repairs, error, `target_tokens` it aimed for, and
            `within_budget` judged against `trigger_tokens`).
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
    token_usage: TokenUsage


def _triggers(
    trigger: Trigger | Sequence[Trigger] | None, *, max_tokens: int
) -> tuple[Trigger, ...]:
    """Return the triggers as a tuple, checked (default: `("tokens", max_tokens)`)."""
    if trigger is None:
        return (("tokens", max_tokens),)
    if isinstance(trigger, tuple) and len(trigger) == 2 and isinstance(trigger[0], str):
        triggers: tuple[Trigger, ...] = (trigger,)
    else:
        triggers = tuple(trigger)
    for trig in triggers:
        if not (isinstance(trig, tuple) and len(trig) == 2 and trig[0] in TRIGGER_KINDS):
            msg = f"trigger must be (kind, value) with kind in {list(TRIGGER_KINDS)}, got {trig!r}"
            raise InvalidArgumentError(msg)
        kind, value = trig
        if not isinstance(value, (int, float)) or value <= 0:
            msg = f"trigger {kind!r} needs a positive value, got {value!r}"
            raise InvalidArgumentError(msg)
        if kind == "fraction" and value > 1:
            msg = f"trigger ('fraction', f) needs 0 < f <= 1, got f={value!r}"
            raise InvalidArgumentError(msg)
    return triggers


def _check_config(
    *,
    max_tokens: int,
    target_tokens: int,
    mode: str,
    keep: Keep | None,
    strategy: str,
    messages_key: str,
) -> None:
    check_positive("trigger_tokens", max_tokens)
    check_positive("target_tokens", target_tokens)
    if target_tokens > max_tokens:
        msg = f"target_tokens must be <= trigger_tokens ({max_tokens}), got {target_tokens}"
        raise InvalidArgumentError(msg)
    check_one_of("mode", mode, COMPACTION_MODES)
    if keep is not None and not (
        isinstance(keep, tuple)
        and len(keep) == 2
        and keep[0] in ("tokens", "messages")
        and isinstance(keep[1], int)
        and keep[1] >= 0
    ):
        msg = f"keep must be ('tokens', n) or ('messages', n) with n >= 0, got {keep!r}"
        raise InvalidArgumentError(msg)
    check_one_of("strategy", strategy, STRATEGIES)
    if not isinstance(messages_key, str) or not messages_key:
        msg = f"messages_key must be a non-empty string, got {messages_key!r}"
        raise InvalidArgumentError(msg)


def create_compaction_node(
    *,
    trigger_tokens: int,
    target_tokens: int | None = None,
    mode: CompactionMode = "replace",
    trigger: Trigger | Sequence[Trigger] | None = None,
    context_window: int | None = None,
    keep: Keep | None = None,
    model: Runnable[Any, Any] | BaseLanguageModel | None = None,
    summary_options: SummaryOptions | None = None,
    strategy: Strategy = "auto",
    keep_tool_rounds: int = DEFAULT_KEEP_TOOL_ROUNDS,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    messages_key: str = "messages",
    keys: CompactionKeys | None = None,
    archive: Archive | None = None,
    name: str = "compaction",
) -> CompactionNode:
    """Create a node that compacts the conversation when a trigger fires.

    Args:
        trigger_tokens: The history's high mark: a history over it is compacted
            down to `target_tokens` (not a per-call budget: that is `max_tokens`
            elsewhere).
        target_tokens: The low mark a compaction over `trigger_tokens` aims for (default
            half of `trigger_tokens`), raised to what must stay when that is more (never
            above `trigger_tokens`), plus room for the snapshot or summary of what leaves
            (up to halfway to `trigger_tokens`), so nothing is evicted without a record.
            Within it the rule-based snapshot may take up to 15% of `trigger_tokens`
            (`SNAPSHOT_SHARE`): a low mark far under the high mark shortens the
            verbatim tail, not the facts copied out of what leaves.
            The gap is hysteresis: the history then grows append-only for many turns before the
            next compaction, so providers' prompt caches keep hitting and a
            summarizer runs rarely. Set it equal to `trigger_tokens` to cut just under
            the budget every time.
        mode: `replace` (rewrite the history in state) or `view` (write the compacted
            history to `keys.output_key`, e.g. as a `pre_model_hook`).
        trigger: When to compact: one or more of `("fraction", f)` (tokens reach `f`
            of `context_window`), `("tokens", n)`, `("messages", n)` and
            `("tool_output", n)` (one tool result of `n` tokens or more) and
            `("tool_rounds", n)` (`n` AI messages with tool calls in the history);
            any firing is enough. A truthy `keys.request_key` in state always triggers.
            Default: `("tokens", trigger_tokens)`. A trigger that fires while the history
            still fits `trigger_tokens` compacts everything before the kept part (`keep`,
            or the newer half of the history when `keep` is not set).
        context_window: The model's context window, for `fraction` triggers. Without
            it, the window is read from `model`'s profile (`max_input_tokens`), else
            from the `TokenUsage` the agent's model step keeps in state (the agent
            model's profile); a fraction trigger with no window known anywhere raises
            at run time.
        keep: Recent part kept verbatim: `("tokens", n)` or `("messages", n)`
            (whole tool rounds). Default: the strategies' defaults.
        model: Summarizer model; `None` for rule-based compaction only.
        summary_options: How the summarizer is asked and called (style or prompt,
            summary length, input budget, retries); default `SummaryOptions()`.
        strategy: Rule-based strategy when no model is given (or as the view-mode
            fallback when the model fails).
        keep_tool_rounds: Latest tool rounds whose outputs are never cleared.
        token_counter: Counter for budgets and triggers (default: offline tiktoken).
            When state holds the provider-reported usage of the last model call
            (`keys.usage_key`, written by `create_context_agent` and the compaction
            middleware), every count is multiplied by the ratio of reported to counted
            input tokens (clamped to 0.5..4): triggers, budgets and the record are
            then in the provider's tokens.
        messages_key: State key to read messages from (e.g. `llm_input_messages` to
            run after a context node). In replace mode it must have the
            `add_messages` reducer.
        keys: The state keys of the view, the `CompactionRecord` and the request
            flag (default: `CompactionKeys()`).
        archive: In replace mode, where evicted messages are archived (a note, a
            store namespace or both); `None` disables archiving.
        name: The runnable's name.

    Returns:
        A runnable usable as a graph node or `pre_model_hook` (sync and async).

    Raises:
        ValueError: If an option is invalid (unknown mode or strategy, a bad trigger
            or keep, a blank `messages_key`, a non-positive budget or window). At run
            time, archiving to a store raises `ValueError` if the graph has no store,
            and a fraction trigger raises `ValueError` if no window is known.

    Example:
        >>> node = create_compaction_node(trigger_tokens=1000, mode="view")
        >>> node.name
        'compaction'
    """
    check_positive("trigger_tokens", trigger_tokens)  # before any arithmetic on it
    max_tokens = trigger_tokens  # the Config's name for the high mark
    triggers = _triggers(trigger, max_tokens=max_tokens)
    if context_window is not None:
        check_positive("context_window", context_window)
    window = context_window if context_window is not None else model_window(model)
    target = max_tokens // 2 if target_tokens is None else target_tokens
    _check_config(
        max_tokens=max_tokens,
        target_tokens=target,
        mode=mode,
        keep=keep,
        strategy=strategy,
        messages_key=messages_key,
    )
    config = Config(
        max_tokens=max_tokens,
        target_tokens=target,
        mode=mode,
        triggers=triggers,
        context_window=window,
        keep=keep,
        model=model,
        strategy=strategy,
        keep_tool_rounds=keep_tool_rounds,
        token_counter=resolve_counter(token_counter),
        messages_key=messages_key,
        summary_options=summary_options or SummaryOptions(),
        keys=keys or CompactionKeys(),
        archive=archive,
    )

    # The view is the node's only effect; the record carries the running summary.
    required = {config.keys.output_key: "CompactionStateMixin"} if mode == "view" else {}
    if model is not None:
        required[config.keys.state_key] = "CompactionStateMixin"

    quiet = Quiet(config)  # most calls compact nothing: said from the appended messages

    def compaction(state: Any) -> dict[str, Any]:
        require_state_keys(required, node=name)
        if quiet(state):
            return {}
        step = Step(config, state)
        if step.fired and model is not None and step.needs_model():
            step.adopt(summarize_history(step.summary_input(), **step.summary_kwargs()))
        return step.update()

    async def acompaction(state: Any) -> dict[str, Any]:
        require_state_keys(required, node=name)
        if quiet(state):
            return {}
        step = Step(config, state)
        if step.fired and model is not None and step.needs_model():
            done = await asummarize_history(step.summary_input(), **step.summary_kwargs())
            step.adopt(done)
        return await step.aupdate()

    return CompactionNode(
        compaction, acompaction, quiet, name=name, mode=mode, output_key=config.keys.output_key
    )
