"""`OutputGuardMiddleware`: the output guard on every `create_agent` answer.

The core of `safety.create_output_guard_node` (for your own `StateGraph`), run as an
`after_model` hook.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import OmitFromInput
from langgraph.runtime import Runtime

from langgraph_context.safety import (
    DetectorLike,
    GuardAction,
    InjectionFlag,
    create_output_guard_node,
)
from langgraph_context.safety.guard import DEFAULT_GUARD_REPLACEMENT, append_flags

__all__ = ["GuardAgentState", "OutputGuardMiddleware"]


class GuardAgentState(AgentState[Any]):
    """Agent state plus `injection_flags`, the output guard's record (not an input).

    A client must not write the guard's record, so the key is left out of the graph's
    input schema; the reducer stays last, where LangGraph looks for it.
    """

    injection_flags: NotRequired[Annotated[list[InjectionFlag], OmitFromInput, append_flags]]


class OutputGuardMiddleware(AgentMiddleware[GuardAgentState, Any]):
    """Check every model answer of a `create_agent` agent with `safety.check_output`.

    An `after_model` hook running `safety.create_output_guard_node`: a flagged answer
    is recorded in `injection_flags` (`flag`), replaced by a safe reply without its
    tool calls, so nothing it asked for runs (`replace`), or stops the run with
    `PromptInjectionError` (`raise`).

    Args:
        action: `flag`, `replace` or `raise`.
        canaries: Strings that must never appear in an answer.
        replacement: The safe reply used by `replace`.
        detector: A `safety.Detector` or scorer whose rating also flags an answer.

    Raises:
        ValueError: If an option is invalid (raised by `create_output_guard_node`).
    """

    state_schema = GuardAgentState

    def __init__(
        self,
        *,
        action: GuardAction = "flag",
        canaries: Sequence[str] = (),
        replacement: str = DEFAULT_GUARD_REPLACEMENT,
        detector: DetectorLike | None = None,
    ) -> None:
        super().__init__()
        self._guard = create_output_guard_node(
            action=action, canaries=canaries, replacement=replacement, detector=detector
        )
        self.tools = []

    def after_model(self, state: GuardAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Check the newest answer; flag, replace or raise as configured."""
        return self._guard(state) or None

    async def aafter_model(
        self, state: GuardAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async twin of `after_model`."""
        return self.after_model(state, runtime)
