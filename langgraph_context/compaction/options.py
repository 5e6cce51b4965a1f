"""Option types of compaction: modes, triggers, kept tail, summarizer settings, state keys.

These sit below `summarize.py` and `node.py` so both (and the node's private step)
share them without importing each other. The frozen dataclasses check themselves
when built, so a bad option raises where the user wrote it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from langchain_core.messages import BaseMessage
from langgraph.store.base import PutOp

from langgraph_context.compaction.prompts import PromptStyle, summary_instructions
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.tokens.window import USAGE_KEY

__all__ = [
    "Archive",
    "ArchiveSink",
    "CompactionKeys",
    "CompactionMode",
    "Keep",
    "SummaryOptions",
    "Trigger",
    "TriggerKind",
]

SUMMARY_REQUEST_KEY = "summary_request"
"""Node input key (never a state key): the agent's last request as `(messages, tools)`,
which the summarizer is sent with its instruction appended (`summarize_history(prefix=)`)."""

CompactionMode = Literal["replace", "view"]
COMPACTION_MODES: tuple[CompactionMode, ...] = get_args(CompactionMode)
TriggerKind = Literal["fraction", "tokens", "messages", "tool_output", "tool_rounds"]
TRIGGER_KINDS: tuple[TriggerKind, ...] = get_args(TriggerKind)
Trigger = tuple[TriggerKind, float]
Keep = tuple[Literal["tokens", "messages"], int]

DEFAULT_MAX_SUMMARY_TOKENS = 1024
DEFAULT_MAX_INPUT_TOKENS = 16_000
DEFAULT_RETRIES = 2
DEFAULT_RETRY_BACKOFF = 0.5
DEFAULT_MAX_RETRY_WAIT = 20.0
DEFAULT_STATE_KEY = "compaction"
DEFAULT_REQUEST_KEY = "compaction_requested"
DEFAULT_OUTPUT_KEY = "llm_input_messages"
DEFAULT_ARCHIVE_PREFIX = "compaction/evicted-"

ArchiveSink = Callable[[Sequence[BaseMessage]], tuple[dict[str, Any], list[PutOp]]]
"""Called with the evicted messages in the compaction step (the run's config and store
are reachable); returns a state update and the store writes the step makes."""


def check_positive(name: str, value: object) -> None:
    """Raise `InvalidArgumentError` naming `name` unless `value` is a positive int."""
    if not isinstance(value, int) or value <= 0:
        msg = f"{name} must be a positive int, got {value!r}"
        raise InvalidArgumentError(msg)


def check_one_of(name: str, value: object, choices: tuple[str, ...]) -> None:
    """Raise `InvalidArgumentError` naming `name` unless `value` is one of `choices`."""
    if value not in choices:
        msg = f"{name} must be one of {list(choices)}, got {value!r}"
        raise InvalidArgumentError(msg)


def _check_key(name: str, key: object) -> None:
    if not isinstance(key, str) or not key:
        msg = f"{name} must be a non-empty string, got {key!r}"
        raise InvalidArgumentError(msg)


@dataclass(frozen=True, kw_only=True)
class SummaryOptions:
    """How the summarizer model is asked and called.

    Attributes:
        style: Built-in instructions: `handoff` or `snapshot` (see `prompts.py`).
        prompt: Your own instructions instead of `style`.
        max_summary_tokens: Length the summary is asked to stay under (and room kept
            for it).
        max_input_tokens: Budget of each summarizer call's input.
        retries: Extra attempts per call after an exception or an empty answer (a
            provider's 4xx refusal, such as `context_length_exceeded`, is not retried).
        retry_backoff: Seconds before the first retry after an exception, doubled for
            each further one, unless the error carries the provider's retry hint (a
            429's `retry-after` header, "try again in 1.5s"), which is waited instead.
        max_retry_wait: Longest pause before a retry, in seconds; a provider hint above
            it ends the retries (the node then compacts by rules instead of blocking).
        keep_facts: Keep the rule-based state snapshot of the summarized messages
            (requests, files, errors, identifiers, ...) beside the model's prose in
            the summary message, so a summary never holds fewer of those facts than
            compacting by rules alone.

    Raises:
        ValueError: If `style` is unknown, `prompt` is blank, a budget is not a
            positive int, `retries` is negative or a retry wait is not a finite
            number of seconds >= 0.

    Example:
        >>> SummaryOptions(style="snapshot", max_summary_tokens=200).instructions()[:7]
        'You are'
    """

    style: PromptStyle = "handoff"
    prompt: str | None = None
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS
    retries: int = DEFAULT_RETRIES
    retry_backoff: float = DEFAULT_RETRY_BACKOFF
    max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT
    keep_facts: bool = True

    def __post_init__(self) -> None:
        check_positive("max_summary_tokens", self.max_summary_tokens)
        check_positive("max_input_tokens", self.max_input_tokens)
        if not isinstance(self.retries, int) or self.retries < 0:
            msg = f"retries must be >= 0, got {self.retries!r}"
            raise InvalidArgumentError(msg)
        for name in ("retry_backoff", "max_retry_wait"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value < 0
            ):
                msg = f"{name} must be a finite number of seconds >= 0, got {value!r}"
                raise InvalidArgumentError(msg)
        self.instructions()  # validates style and a custom prompt

    def instructions(self) -> str:
        """Return the summarizer's system instructions for these options.

        Returns:
            The custom `prompt` if set, else the built-in instructions of `style`.
        """
        return summary_instructions(self.style, prompt=self.prompt)


@dataclass(frozen=True, kw_only=True)
class CompactionKeys:
    """State keys the compaction node keeps its own bookkeeping under.

    Attributes:
        output_key: Key the compacted view is written to (view mode).
        state_key: Key of the `CompactionRecord`.
        request_key: Key of an explicit compaction request (a bool).
        usage_key: Key of the `TokenUsage` the agent's model step records (read only).

    Raises:
        ValueError: If a key is not a non-empty string.
    """

    output_key: str = DEFAULT_OUTPUT_KEY
    state_key: str = DEFAULT_STATE_KEY
    request_key: str = DEFAULT_REQUEST_KEY
    usage_key: str = USAGE_KEY

    def __post_init__(self) -> None:
        _check_key("usage_key", self.usage_key)
        _check_key("output_key", self.output_key)
        _check_key("state_key", self.state_key)
        _check_key("request_key", self.request_key)


@dataclass(frozen=True, kw_only=True)
class Archive:
    """Where replace mode archives the messages a compaction evicts (one or both).

    Attributes:
        note_key: A notes key (e.g. `"note"` of `NoteStateMixin`): one note per
            compaction named `compaction/evicted-<n>`.
        namespace: A namespace of the graph's store (compile with `store=...`): one
            item per compaction keyed `evicted-<n>`, valued
            `{"text": ..., "messages": <count>}`.
        sink: A callable given the evicted messages, returning a state update and
            store writes (`recall.RecallMiddleware.archive_sink` keeps each message
            under a handle its tools read back).

    Raises:
        ValueError: If `note_key` is blank, `namespace` is not a non-empty tuple of
            non-empty strings, `sink` is not callable, or none is set.

    Example:
        >>> Archive(note_key="note").namespace is None
        True
    """

    note_key: str | None = None
    namespace: tuple[str, ...] | None = None
    sink: ArchiveSink | None = None

    def __post_init__(self) -> None:
        if self.note_key is None and self.namespace is None and self.sink is None:
            msg = "Archive needs note_key, namespace or sink, got none"
            raise InvalidArgumentError(msg)
        if self.sink is not None and not callable(self.sink):
            msg = f"sink must be callable, got {self.sink!r}"
            raise InvalidArgumentError(msg)
        if self.note_key is not None:
            _check_key("note_key", self.note_key)
        namespace = self.namespace
        if namespace is not None and not (
            isinstance(namespace, tuple)
            and namespace
            and all(isinstance(part, str) and part for part in namespace)
        ):
            msg = f"namespace must be a non-empty tuple of strings, got {namespace!r}"
            raise InvalidArgumentError(msg)
