"""The model's window at call time (private to `agents`): usage records, overflow retry.

Shared by the model node of `create_context_agent` and `CompactionMiddleware`:

* after every answer, a `TokenUsage` for state: the input tokens the provider
  reported, the tokens the offline counter counted for the same request, and the
  window (explicit, else the model's profile); the compaction node reads it;
* when the provider refuses a request as over the window, the history is compacted
  rule-based (`strategy="auto"`) to the retry target and the call is made once more;
  a second refusal raises `ContextWindowError` naming the sizes.

The retry target is half of what can fit: half the window converted to counted
tokens (window / reported-to-counted ratio) when the window is known, capped by half
the refused history, so a wrong estimate or an unknown window still shrinks it.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from langgraph_context._steps import Failed, adrive, drive
from langgraph_context.compaction import compact_messages
from langgraph_context.errors import ContextWindowError
from langgraph_context.state import get_state_value
from langgraph_context.tokens import (
    TokenCounter,
    TokenUsage,
    count_tool_tokens,
    is_context_overflow,
    model_window,
)
from langgraph_context.tokens.window import USAGE_KEY, reported_input_tokens, usage_ratio

__all__ = [
    "Failed",
    "Retry",
    "Window",
    "adrive",
    "drive",
    "history_rewrite",
    "overflowed",
    "retry_steps",
    "with_messages",
]

R = TypeVar("R")


@dataclass(frozen=True)
class Retry:
    """The compacted history of an overflow retry, and the sizes before and after."""

    messages: list[BaseMessage]
    sent_tokens: int
    tokens: int
    window: int | None

    def check(self, answer: Any) -> Any:
        """Return the retried call's answer; raise if it failed (typed if it overflowed)."""
        if not isinstance(answer, Failed):
            return answer
        if not is_context_overflow(answer.error):
            raise answer.error
        raise ContextWindowError(
            sent_tokens=self.sent_tokens, retried_tokens=self.tokens, window=self.window
        ) from answer.error


@dataclass(frozen=True)
class Window:
    """The model's window as the agent knows it: explicit, else the model's profile.

    `tool_tokens` (the bound tool definitions) is added to the counted side of each
    usage record, so the reported/counted ratio compares like with like.
    """

    context_window: int | None
    token_counter: TokenCounter
    tool_tokens: int = 0  # the tool definitions every request carries
    # The last model looked up and its window: a profile is read once per model, not
    # per call (looking through wrappers costs attribute misses).
    _last: list[Any] = field(default_factory=list, compare=False, repr=False)

    def size(self, model: Any) -> int | None:
        """The window: the explicit one, else the model's profile, else `None`."""
        if self.context_window is not None:
            return self.context_window
        last = self._last
        if len(last) == 2 and last[0] is model:
            return last[1]  # type: ignore[no-any-return]
        window = model_window(model)
        last[:] = [model, window]
        return window

    def usage(
        self, sent: list[BaseMessage], answer: Any, model: Any, tools: Sequence[Any] | None = None
    ) -> TokenUsage | None:
        """What this call taught: reported and counted input tokens, and the window.

        `tools` are the definitions bound for this call when they are only known then
        (middleware); they replace `tool_tokens` on the counted side (counting eight
        tools takes about 0.15 ms, nothing beside a model call).
        """
        usage: TokenUsage = {}
        reported = reported_input_tokens(answer)
        if reported is not None:
            usage["reported"] = reported
            # the provider counts the tool definitions too; so does the record
            schemas = (
                self.tool_tokens
                if tools is None
                else count_tool_tokens(tools, token_counter=self.token_counter)
            )
            usage["counted"] = (int(self.token_counter(sent)) if sent else 0) + schemas
        window = self.size(model)
        if window is not None:
            usage["window"] = window
        return usage or None

    def shrink(self, history: list[BaseMessage], model: Any, state: Any) -> Retry:
        """Compact `history` rule-based to the retry target (see the module docstring)."""
        counted = int(self.token_counter(history)) if history else 0
        window = self.size(model)
        target = counted // 2
        if window is not None:
            ratio = usage_ratio(get_state_value(state, USAGE_KEY, None)) or 1.0
            target = min(target, int(window / ratio) // 2)
        result = compact_messages(
            history, target_tokens=max(1, target), strategy="auto", token_counter=self.token_counter
        )
        messages = list(result.messages)
        tokens = int(self.token_counter(messages)) if messages else 0
        return Retry(messages, sent_tokens=counted, tokens=tokens, window=window)


def overflowed(answer: Any) -> bool:
    """Whether a call's answer is an overflow refusal; any other failure is raised."""
    if not isinstance(answer, Failed):
        return False
    if is_context_overflow(answer.error):
        return True
    raise answer.error


def retry_steps(
    request: R,
    history: list[BaseMessage],
    window: Window,
    model: Any,
    state: Any,
    retried: Callable[[Retry], R],
) -> Generator[R, Any, tuple[Any, Retry | None]]:
    """Call once; on an overflow, compact `history` and call once more with `retried`."""
    answer = yield request
    if not overflowed(answer):
        return answer, None
    retry = window.shrink(history, model, state)
    return retry.check((yield retried(retry))), retry


def history_rewrite(retry: Retry, answer: list[BaseMessage]) -> list[BaseMessage]:
    """The `messages` update of a retried call: the compacted history, then the answer."""
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *retry.messages, *answer]


def with_messages(state: Any, messages: list[BaseMessage], key: str = "messages") -> Any:
    """A copy of the state with `key` replaced (a mapping, or a pydantic model)."""
    if isinstance(state, Mapping):
        return {**state, key: messages}
    return state.model_copy(update={key: messages})
