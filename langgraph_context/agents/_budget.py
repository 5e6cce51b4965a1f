"""One token budget sizes the default compaction and context of `create_context_agent`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda

from langgraph_context.compaction import create_compaction_node
from langgraph_context.context import ContextBuilder, ContextConfig, create_context_node
from langgraph_context.context.config import DEFAULT_MAX_TOKENS
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError

__all__ = ["Budget", "compaction_step", "context_runnable", "default_context_node"]

HISTORY_PER_CALL = 2
"""The stored history may grow to this many model calls' worth before compaction."""
HISTORY_WINDOW_SHARE = 0.75
"""...but never past this share of the model's window (the served graph's high mark)."""


def _positive(value: Any, name: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        msg = f"{name} must be a positive int, got {value!r}"
        raise InvalidArgumentError(msg)
    return value


@dataclass(frozen=True)
class Budget:
    """The tokens one model call is sent, and the stored history's high mark.

    Attributes:
        call: The most tokens the context node assembles for one call: `max_tokens`,
            else half the model's window when known, else the builder's default.
        history: The compaction node's `max_tokens`: twice `call`, at most three
            quarters of the window when it is known.
    """

    call: int
    history: int

    @classmethod
    def of(cls, max_tokens: int | None, window: int | None) -> Budget:
        """The budget for an agent's `max_tokens` and its model's window (either may be None).

        Raises:
            ValueError: If `max_tokens` is not a positive int.
        """
        given = _positive(max_tokens, "max_tokens")
        call = given or (window // 2 if window else DEFAULT_MAX_TOKENS)
        history = call * HISTORY_PER_CALL
        if window:
            history = min(history, max(1, int(window * HISTORY_WINDOW_SHARE)))
        return cls(call=call, history=history)


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


def compaction_step(compaction: Any, budget: Budget, window: int | None) -> Any:
    """The compaction node for the `compaction` argument, or `None` for none.

    Raises:
        TypeError: If `compaction` is neither a bool, `None` nor a node.
    """
    if compaction is True:
        return create_compaction_node(max_tokens=budget.history, context_window=window)
    if _is_flag(compaction):
        return None
    if not callable(compaction) and not isinstance(compaction, Runnable):
        msg = f"compaction must be True, False or a node, got {compaction!r}"
        raise InvalidTypeError(msg)
    return compaction


def context_runnable(
    context: Any, budget: Budget, *, tools: bool = False
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
