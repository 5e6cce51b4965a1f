"""One token budget sizes the default compaction and context of `create_context_agent`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langgraph_context.context.config import DEFAULT_MAX_TOKENS
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION
from langgraph_context.tokens import (
    TokenCounter,
    count_tokens,
    count_tool_tokens,
    resolve_counter,
)

__all__ = ["AgentBudget", "check_positive_int", "fixed_tokens"]

HISTORY_SHARE_FLOOR = 4
"""The history's high mark is never below this fraction (1/4) of the call budget."""
TARGET_SHARE = 0.4
"""A compaction over the high mark aims at this share of it (the low mark), the snapshot of
what leaves included (up to `compaction.SNAPSHOT_SHARE` of the high mark)."""
STATE_RESERVE = 200
"""Tokens kept free in each call for the plan's closing message and the state block."""
OUTPUT_LIMIT_SHARE = 10
"""A tool result over a tenth of the call budget is cut as it arrives..."""
OUTPUT_LIMIT_MAX = 1_000
"""...and one is never kept longer than this many tokens (the limit's default)."""


def check_positive_int(value: Any, name: str) -> int | None:
    """`value` if it is `None` or a positive int.

    Raises:
        ValueError: Naming `name` otherwise.
    """
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        msg = f"{name} must be a positive int, got {value!r}"
        raise InvalidArgumentError(msg)
    return value


@dataclass(frozen=True)
class AgentBudget:
    """One call's token budget, split between what every call carries and the history.

    Attributes:
        call: The most tokens one model call is sent: `max_tokens`, else the model's
            window when known, else the builder's default (3,000).
        history: The compaction's high mark (`trigger_tokens`): `call` less the fixed part of every
            request (system prompt, hardening line, tool definitions and a reserve for
            the plan), so a history under it is sent whole and the prompt cache keeps
            it; never below a quarter of `call`.
        target: The low mark a compaction aims at (`target_tokens`): 40% of
            `history` (the snapshot of what leaves included), so the history grows
            append-only for many calls between two compactions.
        fixed: The fixed part counted (tokens).
    """

    call: int
    history: int
    target: int
    fixed: int = 0

    @classmethod
    def of(cls, max_tokens: int | None, window: int | None, fixed: int = 0) -> AgentBudget:
        """The budget for an agent's `max_tokens`, its model's window and fixed tokens.

        Args:
            max_tokens: The caller's budget per call, or `None`.
            window: The model's context window, or `None` when unknown.
            fixed: Tokens every request carries besides the history (see `fixed_tokens`).

        Raises:
            ValueError: If `max_tokens` is not a positive int.
        """
        given = check_positive_int(max_tokens, "max_tokens")
        call = given or window or DEFAULT_MAX_TOKENS
        history = max(call - max(0, fixed), 1, call // HISTORY_SHARE_FLOOR)
        return cls(
            call=call, history=history, target=max(1, int(history * TARGET_SHARE)), fixed=fixed
        )

    @classmethod
    def for_agent(
        cls,
        max_tokens: int | None = None,
        *,
        context_window: int | None = None,
        system_prompt: Any = None,
        tools: Sequence[Any] = (),
        token_counter: TokenCounter | None = None,
    ) -> AgentBudget:
        """The budget `create_context_agent` uses, to size your own middleware stack alike.

        Args:
            max_tokens: The most tokens one call is sent (`None`: `context_window`,
                else 3,000).
            context_window: The model's window, if known.
            system_prompt: The system prompt (a string is counted).
            tools: Every tool the model is bound to.
            token_counter: Counter (default: offline tiktoken).

        Returns:
            The budget: `history`/`target` are `CompactionMiddleware`'s
            `trigger_tokens`/`target_tokens`, `tool_output_limit` is
            `ToolOutputLimitMiddleware`'s `max_result_tokens`.

        Raises:
            ValueError: If `max_tokens` or `context_window` is not a positive int.

        Example:
            >>> budget = AgentBudget.for_agent(8_000, system_prompt="Be brief.")
            >>> budget.call, budget.target < budget.history < budget.call
            (8000, True)
        """
        counter = resolve_counter(token_counter)
        window = check_positive_int(context_window, "context_window")
        fixed = fixed_tokens(
            system_prompt, count_tool_tokens(tools, token_counter=counter), counter
        )
        return cls.of(max_tokens, window, fixed)

    @property
    def tool_output_limit(self) -> int:
        """Most tokens one tool result keeps by default: a tenth of `call`, at most 1,000."""
        return max(1, min(self.call // OUTPUT_LIMIT_SHARE, OUTPUT_LIMIT_MAX))


def fixed_tokens(system_prompt: Any, tool_tokens: int, token_counter: TokenCounter) -> int:
    """Tokens every request carries besides the history.

    The system prompt (a string; a prompt computed from state is not known here and
    counts 0), the hardening line and the tool definitions when there are tools (the
    context node sends the line from the first call), and `STATE_RESERVE`.

    Args:
        system_prompt: The agent's system prompt.
        tool_tokens: Tokens of the tool definitions (`count_tool_tokens`).
        token_counter: The counter.
    """
    prompt = (
        count_tokens(system_prompt, token_counter=token_counter)
        if isinstance(system_prompt, str)
        else 0
    )
    hardening = (
        count_tokens(HARDENING_INSTRUCTION, token_counter=token_counter) if tool_tokens else 0
    )
    return prompt + hardening + tool_tokens + STATE_RESERVE
