"""LLM summarization with a running summary, a budgeted summarizer input and retries.

The older part of a history is replaced by one summary message; the recent part (by
tokens or messages, always whole tool rounds) and the most recent user request stay
verbatim. A summary from an earlier round is extended with the newly evicted messages,
never redone from scratch. The summarizer's own input is kept under
`max_input_tokens`: long evictions are summarized in chunks, each extending the
summary of the previous one, and single huge messages are clipped in the middle.

If the model keeps failing (an exception or an empty answer, after `retries` extra
attempts per call), the history is returned unchanged with `error` set: an error text
never becomes a summary and nothing is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from langgraph_context.compaction._calls import arun_calls, run_calls
from langgraph_context.compaction._transcript import MIN_CHUNK_TOKENS, transcript_chunks
from langgraph_context.compaction.prompts import PromptStyle, summary_instructions
from langgraph_context.compaction.snapshot import COMPACTION_MARKER, compaction_kind
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import (
    as_messages,
    group_tool_rounds,
    repair_history,
    tool_result_ids,
)
from langgraph_context.tokens import TokenCounter, resolve_counter

__all__ = [
    "DEFAULT_KEEP_FRACTION",
    "DEFAULT_MAX_INPUT_TOKENS",
    "DEFAULT_MAX_SUMMARY_TOKENS",
    "DEFAULT_RETRIES",
    "SUMMARY_PREFIX",
    "RunningSummary",
    "SummarizationResult",
    "asummarize_messages",
    "summarize_messages",
    "summary_message",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_SUMMARY_TOKENS = 1024
DEFAULT_MAX_INPUT_TOKENS = 16_000
DEFAULT_RETRIES = 2
DEFAULT_KEEP_FRACTION = 0.5
SUMMARY_PREFIX = "[Summary of the earlier conversation, written when it was compacted]\n"


@dataclass(frozen=True)
class RunningSummary:
    """A summary that later compactions extend.

    Attributes:
        text: The summary text (without `SUMMARY_PREFIX`).
        last_message_id: Id of the last message it covers, so a history that still
            holds the covered messages (view mode) is not summarized twice.
        message_count: How many messages it covers, over all rounds.
        rounds: How many summarizer calls built it.
    """

    text: str
    last_message_id: str | None = None
    message_count: int = 0
    rounds: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict (round-trips through `from_dict`)."""
        return {
            "text": self.text,
            "last_message_id": self.last_message_id,
            "message_count": self.message_count,
            "rounds": self.rounds,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunningSummary:
        """Rebuild a running summary from `to_dict` output.

        Args:
            data: The dict.

        Returns:
            The running summary.
        """
        last = data.get("last_message_id")
        return cls(
            text=str(data.get("text", "")),
            last_message_id=str(last) if last is not None else None,
            message_count=int(data.get("message_count", 0)),
            rounds=int(data.get("rounds", 0)),
        )


@dataclass(frozen=True)
class SummarizationResult:
    """The output of `summarize_messages`.

    Attributes:
        messages: The history to use: system messages, the summary message, the most
            recent user request and the kept tail; the repaired input on failure.
        running_summary: The summary to pass to the next round (unchanged on failure).
        summarized: The messages newly folded into the summary this time.
        error: Why summarization failed, or `None`.
        model_calls: Summarizer calls made (attempts included).
        tokens_before: Tokens of the input history.
        tokens_after: Tokens of `messages`.
        within_budget: Whether `tokens_after <= max_tokens`.
        repairs: Violations found in the input and repaired first.
    """

    messages: list[BaseMessage]
    running_summary: RunningSummary | None
    summarized: tuple[BaseMessage, ...] = ()
    error: str | None = None
    model_calls: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    within_budget: bool = True
    repairs: tuple[str, ...] = ()


def summary_message(summary: RunningSummary) -> HumanMessage:
    """Build the marked message that carries a running summary in a history.

    Args:
        summary: The running summary.

    Returns:
        A user-role message (valid right after the system prompt for every provider)
        whose marker lets later rounds find and extend the summary.
    """
    return HumanMessage(
        SUMMARY_PREFIX + summary.text,
        additional_kwargs={COMPACTION_MARKER: {"kind": "summary", "summary": summary.to_dict()}},
    )


@dataclass
class _Plan:
    """What to summarize and what to keep (private)."""

    items: list[BaseMessage]
    head: list[BaseMessage]
    pinned: list[BaseMessage]
    tail: list[BaseMessage]
    to_summarize: list[BaseMessage]
    previous: RunningSummary | None
    visible: list[BaseMessage]
    chunks: list[str]
    instructions: str
    max_summary_tokens: int
    tokens_before: int
    repairs: tuple[str, ...]


def _check(
    max_tokens: int, max_summary_tokens: int, max_input_tokens: int, retries: int, **keep: Any
) -> None:
    for name, value in (
        ("max_tokens", max_tokens),
        ("max_summary_tokens", max_summary_tokens),
        ("max_input_tokens", max_input_tokens),
    ):
        if not isinstance(value, int) or value <= 0:
            msg = f"{name} must be a positive int, got {value!r}"
            raise InvalidArgumentError(msg)
    if retries < 0:
        msg = f"retries must be >= 0, got {retries!r}"
        raise InvalidArgumentError(msg)
    for name, value in keep.items():
        if value is not None and value < 0:
            msg = f"{name} must be None or >= 0, got {value!r}"
            raise InvalidArgumentError(msg)


def _plan(
    messages: Sequence[Any],
    *,
    max_tokens: int,
    running_summary: RunningSummary | None,
    keep_tokens: int | None,
    keep_messages: int | None,
    max_summary_tokens: int,
    max_input_tokens: int,
    instructions: str,
    counter: TokenCounter,
) -> _Plan:
    repair = repair_history(as_messages(messages))
    items = repair.messages
    tokens_before = int(counter(items)) if items else 0
    lead = 0
    while lead < len(items) and isinstance(items[lead], SystemMessage):
        lead += 1
    head = items[:lead]
    rest: list[BaseMessage] = []
    previous = running_summary
    for message in items[lead:]:
        if compaction_kind(message) == "summary":
            if previous is None:
                marker = message.additional_kwargs[COMPACTION_MARKER]
                previous = RunningSummary.from_dict(marker.get("summary", {}))
            continue
        rest.append(message)
    last_human = _last_request(rest)
    if previous is not None and previous.last_message_id is not None:
        ids = [m.id for m in rest]
        if previous.last_message_id in ids:
            covered = ids.index(previous.last_message_id) + 1
            stay = [m for m in rest[:covered] if m is last_human or isinstance(m, SystemMessage)]
            rest = [*stay, *rest[covered:]]
    summary_head = [summary_message(previous)] if previous is not None else []
    visible = [*head, *summary_head, *rest]
    plan = _Plan(
        items=items,
        head=head,
        pinned=[],
        tail=rest,
        to_summarize=[],
        previous=previous,
        visible=visible,
        chunks=[],
        instructions=instructions,
        max_summary_tokens=max_summary_tokens,
        tokens_before=tokens_before,
        repairs=tuple(str(v) for v in repair.changes),
    )
    if int(counter(visible)) <= max_tokens:
        return plan

    systems = [m for m in rest if isinstance(m, SystemMessage)]  # kept verbatim, in order
    fixed = [*head, *systems, HumanMessage(SUMMARY_PREFIX)]
    room = max_tokens - int(counter(fixed)) - max_summary_tokens
    keep_budget = int(max_tokens * DEFAULT_KEEP_FRACTION) if keep_tokens is None else keep_tokens
    keep_budget = max(0, min(keep_budget, room))
    units = group_tool_rounds(rest)
    start = len(rest)
    used = 0
    for unit_start, unit_end in reversed(units):
        cost = int(counter(rest[unit_start:unit_end]))
        if start < len(rest):  # the latest unit is always kept
            if used + cost > keep_budget:
                break
            if keep_messages is not None and len(rest) - unit_start > keep_messages:
                break
        start, used = unit_start, used + cost
    pinned = [
        m for m in rest[:start] if m is last_human or isinstance(m, SystemMessage)
    ]  # the latest request and mid-conversation system messages stay, in order
    plan.tail = rest[start:]
    plan.pinned = pinned
    plan.to_summarize = [m for m in rest[:start] if not any(m is p for p in pinned)]
    plan.chunks = transcript_chunks(
        plan.to_summarize,
        budget=max_input_tokens
        - int(counter(instructions))
        - 2 * max_summary_tokens
        - MIN_CHUNK_TOKENS,
        counter=counter,
    )
    return plan


def _last_request(messages: Sequence[BaseMessage]) -> BaseMessage | None:
    for message in reversed(messages):
        if (
            isinstance(message, HumanMessage)
            and compaction_kind(message) is None
            and not tool_result_ids(message)  # native tool results are not a request
        ):
            return message
    return None


def _finish(
    plan: _Plan,
    text: str | None,
    *,
    error: str | None,
    calls: int,
    max_tokens: int,
    counter: TokenCounter,
) -> SummarizationResult:
    if not plan.to_summarize:
        tokens = int(counter(plan.visible)) if plan.visible else 0
        return SummarizationResult(
            list(plan.visible),
            plan.previous,
            tokens_before=plan.tokens_before,
            tokens_after=tokens,
            within_budget=tokens <= max_tokens,
            repairs=plan.repairs,
        )
    if error is not None or text is None:
        logger.warning("summarization failed; history left unchanged: %s", error)
        tokens = plan.tokens_before
        return SummarizationResult(
            list(plan.items),
            plan.previous,
            error=error,
            model_calls=calls,
            tokens_before=plan.tokens_before,
            tokens_after=tokens,
            within_budget=tokens <= max_tokens,
            repairs=plan.repairs,
        )
    base = plan.previous or RunningSummary("")
    last_id = plan.to_summarize[-1].id
    summary = RunningSummary(
        text=text,
        last_message_id=last_id,
        message_count=base.message_count + len(plan.to_summarize),
        rounds=base.rounds + len(plan.chunks),
    )
    out = [*plan.head, summary_message(summary), *plan.pinned, *plan.tail]
    tokens = int(counter(out))
    return SummarizationResult(
        out,
        summary,
        tuple(plan.to_summarize),
        model_calls=calls,
        tokens_before=plan.tokens_before,
        tokens_after=tokens,
        within_budget=tokens <= max_tokens,
        repairs=plan.repairs,
    )


def summarize_messages(
    messages: Sequence[Any],
    *,
    model: Runnable[Any, Any] | BaseLanguageModel,
    max_tokens: int,
    running_summary: RunningSummary | None = None,
    style: PromptStyle = "handoff",
    prompt: str | None = None,
    keep_tokens: int | None = None,
    keep_messages: int | None = None,
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS,
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
    retries: int = DEFAULT_RETRIES,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
) -> SummarizationResult:
    """Summarize the older part of a history when it exceeds `max_tokens`.

    Nothing is called when the history (with any earlier summary in place of the
    messages it covers) already fits. Otherwise the tail is kept verbatim (whole tool
    rounds, up to `keep_tokens` / `keep_messages`), the most recent user request is
    kept verbatim wherever it is, and the rest is folded into the running summary.

    Args:
        messages: LangChain messages or OpenAI-style dicts (an earlier summary message
            in them is found and extended).
        model: The summarizer: a chat model or any runnable returning a message or
            a string.
        max_tokens: Budget for the returned history.
        running_summary: The summary of an earlier round, if not carried in `messages`.
        style: Built-in instructions: `handoff` or `snapshot` (see `prompts.py`).
        prompt: Your own instructions instead of `style`.
        keep_tokens: Tokens of recent messages to keep verbatim (default: half of
            `max_tokens`, capped so the result fits).
        keep_messages: Keep at most this many recent messages verbatim (whole units;
            combined with the token cap).
        max_summary_tokens: Length the summary is asked to stay under (and room kept
            for it).
        max_input_tokens: Budget for each summarizer call's input.
        retries: Extra attempts per call after an exception or an empty answer.
        token_counter: Counter for budgets (default: offline tiktoken).

    Returns:
        A `SummarizationResult`; on failure its `error` is set and its messages are the
        input history (repaired if it was invalid), unchanged.

    Raises:
        ValueError: If a budget is not positive, `retries`/keep values are negative,
            `style` is unknown, `prompt` is blank, or `max_input_tokens` is too small to
            hold the instructions and two summaries.

    Example:
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> from langchain_core.messages import HumanMessage, AIMessage
        >>> history = [HumanMessage("q1"), AIMessage("a1"), HumanMessage("q2"), AIMessage("a2")]
        >>> result = summarize_messages(  # `len` counts one token per message
        ...     history, model=FakeListChatModel(responses=["q1 was answered"]),
        ...     max_tokens=3, max_summary_tokens=1, token_counter=len)
        >>> [m.content for m in result.messages][1:], result.running_summary.text
        (['q2', 'a2'], 'q1 was answered')
    """
    _check(
        max_tokens,
        max_summary_tokens,
        max_input_tokens,
        retries,
        keep_tokens=keep_tokens,
        keep_messages=keep_messages,
    )
    counter = resolve_counter(token_counter)
    plan = _plan(
        messages,
        max_tokens=max_tokens,
        running_summary=running_summary,
        keep_tokens=keep_tokens,
        keep_messages=keep_messages,
        max_summary_tokens=max_summary_tokens,
        max_input_tokens=max_input_tokens,
        instructions=summary_instructions(style, prompt=prompt),
        counter=counter,
    )
    if not plan.to_summarize:
        return _finish(plan, None, error=None, calls=0, max_tokens=max_tokens, counter=counter)
    text, error, calls = run_calls(plan, model.invoke, retries)
    return _finish(plan, text, error=error, calls=calls, max_tokens=max_tokens, counter=counter)


async def asummarize_messages(
    messages: Sequence[Any],
    *,
    model: Runnable[Any, Any] | BaseLanguageModel,
    max_tokens: int,
    running_summary: RunningSummary | None = None,
    style: PromptStyle = "handoff",
    prompt: str | None = None,
    keep_tokens: int | None = None,
    keep_messages: int | None = None,
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS,
    max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
    retries: int = DEFAULT_RETRIES,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
) -> SummarizationResult:
    """Async twin of `summarize_messages` (the model is called with `ainvoke`).

    Args:
        messages: LangChain messages or OpenAI-style dicts.
        model: The summarizer.
        max_tokens: Budget for the returned history.
        running_summary: The summary of an earlier round.
        style: `handoff` or `snapshot`.
        prompt: Your own instructions instead of `style`.
        keep_tokens: Tokens of recent messages to keep verbatim.
        keep_messages: Keep at most this many recent messages verbatim.
        max_summary_tokens: Length the summary is asked to stay under.
        max_input_tokens: Budget for each summarizer call's input.
        retries: Extra attempts per call.
        token_counter: Counter for budgets.

    Returns:
        A `SummarizationResult`, as `summarize_messages`.

    Raises:
        ValueError: As `summarize_messages`.
    """
    _check(
        max_tokens,
        max_summary_tokens,
        max_input_tokens,
        retries,
        keep_tokens=keep_tokens,
        keep_messages=keep_messages,
    )
    counter = resolve_counter(token_counter)
    plan = _plan(
        messages,
        max_tokens=max_tokens,
        running_summary=running_summary,
        keep_tokens=keep_tokens,
        keep_messages=keep_messages,
        max_summary_tokens=max_summary_tokens,
        max_input_tokens=max_input_tokens,
        instructions=summary_instructions(style, prompt=prompt),
        counter=counter,
    )
    if not plan.to_summarize:
        return _finish(plan, None, error=None, calls=0, max_tokens=max_tokens, counter=counter)
    text, error, calls = await arun_calls(plan, model.ainvoke, retries)
    return _finish(plan, text, error=error, calls=calls, max_tokens=max_tokens, counter=counter)
