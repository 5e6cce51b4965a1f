"""One token budget sizes the default compaction and context of `create_context_agent`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda

from langgraph_context.agents.output_limit import ToolOutputLimitMiddleware
from langgraph_context.compaction import create_compaction_node
from langgraph_context.context import ContextBuilder, ContextConfig, create_context_node
from langgraph_context.context.config import DEFAULT_MAX_TOKENS
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION
from langgraph_context.tokens import (
    TokenCounter,
    count_tokens,
    count_tool_tokens,
    resolve_counter,
)

__all__ = [
    "AgentBudget",
    "compaction_step",
    "context_runnable",
    "default_context_node",
    "fixed_tokens",
    "output_limiter",
]

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


def _positive(value: Any, name: str) -> int | None:
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
        history: The compaction node's high mark: `call` less the fixed part of every
            request (system prompt, hardening line, tool definitions and a reserve for
            the plan), so a history under it is sent whole and the prompt cache keeps
            it; never below a quarter of `call`.
        target: The low mark a compaction aims at: 40% of `history` (the snapshot of
            what leaves included), so the history grows append-only for many calls
            between two compactions.
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
        given = _positive(max_tokens, "max_tokens")
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
            The budget: `history`/`target` size `create_compaction_middleware`,
            `tool_output_limit` sizes `create_tool_output_limit_middleware`.

        Raises:
            ValueError: If `max_tokens` or `context_window` is not a positive int.

        Example:
            >>> budget = AgentBudget.for_agent(8_000, system_prompt="Be brief.")
            >>> budget.call, budget.target < budget.history < budget.call
            (8000, True)
        """
        counter = resolve_counter(token_counter)
        window = _positive(context_window, "context_window")
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


def default_context_node(max_tokens: int | None = None, *, tools: bool = False) -> Any:
    """Return the context node `context=True` uses.

    A default `ContextBuilder`: messages, plan, notes and pinned memory (constraints,
    hot issues) are its sources, and untrusted packets are fenced in a fresh random
    boundary on every build.

    Args:
        max_tokens: Budget of the assembled model input (context plus recent
            messages); `None` for the builder's default (`ContextConfig().max_tokens`).
        tools: The model has tools: the hardening line is in the system message from
            the first call (`create_context_node(harden_from_start=True)`).

    Returns:
        The node, writing `llm_input_messages`.

    Raises:
        ValueError: If `max_tokens` is not a positive int.
    """
    budget = _positive(max_tokens, "max_tokens")
    if budget is None:
        return create_context_node(ContextBuilder(), harden_from_start=tools)
    builder = ContextBuilder(config=ContextConfig(max_tokens=budget))
    return create_context_node(builder, harden_from_start=tools)


def _is_flag(value: Any) -> bool:
    return value is True or value is False or value is None


def check_sized(compaction: Any, context: Any, max_tokens: int | None) -> None:
    """Refuse a `max_tokens` that sizes nothing (both parts are the caller's own nodes).

    Raises:
        ValueError: If `max_tokens` is given and neither part is `True`.
    """
    if max_tokens is not None and compaction is not True and context is not True:
        msg = (
            "max_tokens sizes compaction=True and context=True; here neither is True "
            "(size your own nodes, or drop max_tokens)"
        )
        raise InvalidArgumentError(msg)


def compaction_step(compaction: Any, budget: AgentBudget, window: int | None) -> Any:
    """The compaction node for the `compaction` argument, or `None` for none.

    Raises:
        TypeError: If `compaction` is neither a bool, `None` nor a node.
    """
    if compaction is True:
        return create_compaction_node(
            max_tokens=budget.history, target_tokens=budget.target, context_window=window
        )
    if _is_flag(compaction):
        return None
    if not callable(compaction) and not isinstance(compaction, Runnable):
        msg = f"compaction must be True, False or a node, got {compaction!r}"
        raise InvalidTypeError(msg)
    return compaction


def context_runnable(
    context: Any, budget: AgentBudget, *, tools: bool = False
) -> Runnable[Any, Any] | None:
    """The context node for the `context` argument, as a runnable (or `None`).

    Raises:
        TypeError: If `context` is neither a bool, `None`, a `ContextBuilder` nor a node.
    """
    if context is True:
        step = default_context_node(budget.call, tools=tools)
    elif _is_flag(context):
        return None
    elif isinstance(context, ContextBuilder):
        step = create_context_node(context)
    else:
        step = context
    if isinstance(step, Runnable):
        return step
    if not callable(step):
        msg = f"context must be True, False, a ContextBuilder or a node, got {step!r}"
        raise InvalidTypeError(msg)
    return RunnableLambda(step, name="context")


def output_limiter(
    limit: int | bool | None, budget: AgentBudget
) -> ToolOutputLimitMiddleware | None:
    """What cuts long tool results as the tools return them, or `None` for no limit.

    Its `wrap_tool_call`/`awrap_tool_call` go to the agent's `ToolNode`, so cutting
    adds no graph step.

    Args:
        limit: `True` for `budget.tool_output_limit`, a positive int for that many
            tokens, `False`/`None` for no limit.
        budget: The agent's budget.

    Raises:
        ValueError: If `limit` is an int below 1 or another type.
    """
    if limit is None or limit is False:
        return None
    if limit is True:
        return ToolOutputLimitMiddleware(budget.tool_output_limit)
    _positive(limit, "tool_output_limit")
    return ToolOutputLimitMiddleware(limit)
