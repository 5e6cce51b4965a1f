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

from collections.abc import Sequence
from typing import Any, Literal, get_args

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import AnyMessage
from langchain_core.runnables import Runnable, RunnableLambda
from typing_extensions import TypedDict

from langgraph_context.compaction._step import DEFAULT_ARCHIVE_PREFIX, Options, Step
from langgraph_context.compaction.prompts import PROMPT_STYLES, PromptStyle, summary_instructions
from langgraph_context.compaction.strategies import (
    DEFAULT_KEEP_TOOL_ROUNDS,
    STRATEGIES,
    Strategy,
)
from langgraph_context.compaction.summarize import (
    DEFAULT_MAX_INPUT_TOKENS,
    DEFAULT_MAX_SUMMARY_TOKENS,
    DEFAULT_RETRIES,
    asummarize_messages,
    summarize_messages,
)
from langgraph_context.errors import InvalidArgumentError
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


CompactionMode = Literal["replace", "view"]
COMPACTION_MODES: tuple[CompactionMode, ...] = get_args(CompactionMode)
TriggerKind = Literal["fraction", "tokens", "messages", "tool_output"]
TRIGGER_KINDS: tuple[TriggerKind, ...] = get_args(TriggerKind)
Trigger = tuple[TriggerKind, float]
Keep = tuple[Literal["tokens", "messages"], int]

DEFAULT_STATE_KEY = "compaction"
DEFAULT_REQUEST_KEY = "compaction_requested"
DEFAULT_OUTPUT_KEY = "llm_input_messages"


class CompactionRecord(TypedDict, total=False):
    """What the node keeps in state about its compactions.

    Attributes:
        count: Compactions performed so far in this thread.
        summary: The running summary (`RunningSummary.to_dict()`), when a model is used.
        last: Stats of the latest compaction (tokens and messages before/after,
            strategy, trigger, repairs, error, `target_tokens` it aimed for, and
            `within_budget` judged against `max_tokens`).
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
        raise InvalidArgumentError(msg)
    if mode not in COMPACTION_MODES:
        msg = f"mode must be one of {list(COMPACTION_MODES)}, got {mode!r}"
        raise InvalidArgumentError(msg)
    for trig in triggers:
        if not (isinstance(trig, tuple) and len(trig) == 2 and trig[0] in TRIGGER_KINDS):
            msg = f"trigger must be (kind, value) with kind in {list(TRIGGER_KINDS)}, got {trig!r}"
            raise InvalidArgumentError(msg)
        kind, value = trig
        if not isinstance(value, (int, float)) or value <= 0:
            msg = f"trigger {kind!r} needs a positive value, got {value!r}"
            raise InvalidArgumentError(msg)
        if kind == "fraction" and (value > 1 or context_window is None):
            msg = (
                "trigger ('fraction', f) needs 0 < f <= 1 and context_window set, got "
                f"f={value!r}, context_window={context_window!r}"
            )
            raise InvalidArgumentError(msg)
    if keep is not None and not (
        isinstance(keep, tuple)
        and len(keep) == 2
        and keep[0] in ("tokens", "messages")
        and isinstance(keep[1], int)
        and keep[1] >= 0
    ):
        msg = f"keep must be ('tokens', n) or ('messages', n) with n >= 0, got {keep!r}"
        raise InvalidArgumentError(msg)
    if strategy not in STRATEGIES:
        msg = f"strategy must be one of {list(STRATEGIES)}, got {strategy!r}"
        raise InvalidArgumentError(msg)
    if style not in PROMPT_STYLES:
        msg = f"style must be one of {list(PROMPT_STYLES)}, got {style!r}"
        raise InvalidArgumentError(msg)
    summary_instructions(style, prompt=prompt)  # validates a custom prompt
    for key_name, key in keys.items():
        if key is not None and (not isinstance(key, str) or not key):
            msg = f"{key_name} must be a non-empty string, got {key!r}"
            raise InvalidArgumentError(msg)


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
    archive_namespace: tuple[str, ...] | None = None,
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
            `("tokens", max_tokens)`. A trigger that fires while the history still
            fits `max_tokens` compacts everything before the kept part (`keep`, or
            the newer half of the history when `keep` is not set).
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
        archive_namespace: In replace mode, a namespace of the graph's store (compile
            with `store=...`) to archive evicted messages to, one item per compaction
            keyed `evicted-<n>` with value `{"text": ..., "messages": <count>}`.
        name: The runnable's name.

    Returns:
        A runnable usable as a graph node or `pre_model_hook` (sync and async).

    Raises:
        ValueError: If an option is invalid (unknown mode, strategy or style, a bad
            trigger or keep, a fraction trigger without `context_window`, a blank
            key or prompt, a non-positive budget, an empty `archive_namespace`).
            At run time, archiving to a store raises `ValueError` if the graph has no
            store.

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
    if archive_namespace is not None and not (
        isinstance(archive_namespace, tuple)
        and archive_namespace
        and all(isinstance(part, str) and part for part in archive_namespace)
    ):
        msg = f"archive_namespace must be a non-empty tuple of strings, got {archive_namespace!r}"
        raise InvalidArgumentError(msg)
    counter = resolve_counter(token_counter)
    options = Options(
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
        archive_namespace=archive_namespace,
    )

    def compaction(state: Any) -> dict[str, Any]:
        step = Step(options, state)
        if step.fired and model is not None and step.needs_model():
            step.adopt(summarize_messages(step.summary_input(), **step.summary_kwargs()))
        return step.update()

    async def acompaction(state: Any) -> dict[str, Any]:
        step = Step(options, state)
        if step.fired and model is not None and step.needs_model():
            done = await asummarize_messages(step.summary_input(), **step.summary_kwargs())
            step.adopt(done)
        return await step.aupdate()

    return RunnableLambda(compaction, afunc=acompaction, name=name)
