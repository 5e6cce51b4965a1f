"""Adapters for LangChain v1 `create_agent`: the same nodes, as agent middleware.

`create_context_agent` runs pre-model nodes (compaction, context assembly) as graph
nodes. `PreModelNodeMiddleware` runs any such node inside `create_agent` instead, at
one of two stages:

* `"model_call"` (default): the node runs inside `wrap_model_call`, once per model
  call, on the agent state. The view it returns under `llm_input_messages` is sent to
  the model instead of the history and is never written to state (so never
  checkpointed, never streamed). Leading system messages of the view are appended to
  the agent's own system prompt (the agent's prompt first, so the stable prefix stays
  cacheable). Its other updates (a compaction record) are applied after the call.
* `"before_model"`: the node runs as a `before_model` hook and its updates (a
  compaction node's `RemoveMessage`s and summary) rewrite the agent state; it may not
  return a view.

`create_compaction_middleware` and `create_context_middleware` build the package's
real nodes; `create_state_tools_middleware` adds the plan and note tools with their
state keys. The output guard's middleware is in `agents.guard`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import (
    ExtendedModelResponse,
    ModelCallResult,
    PrivateStateAttr,
)
from langchain_core.messages import AnyMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import merge_configs, run_in_executor
from langgraph.config import get_config
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime
from langgraph.types import Command

from langgraph_context.agents.context_agent import LLM_INPUT_KEY, _state_tools
from langgraph_context.compaction import CompactionRecord, create_compaction_node
from langgraph_context.context import ContextBuilder, create_context_node
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.memory import (
    MemoryStateMixin,
    create_hot_issue_node,
)
from langgraph_context.memory.watch import CheckSelector
from langgraph_context.messages import content_text
from langgraph_context.state import NoteStateMixin, PlanStateMixin

__all__ = [
    "STAGES",
    "CompactionAgentState",
    "CompactionMiddleware",
    "MemoryAgentState",
    "MemoryMiddleware",
    "PreModelNodeMiddleware",
    "PreModelViewState",
    "Stage",
    "StateToolsMiddleware",
    "StateToolsState",
    "create_compaction_middleware",
    "create_context_middleware",
    "create_memory_middleware",
    "create_pre_model_middleware",
    "create_state_tools_middleware",
]


class PreModelViewState(AgentState[Any]):
    """Agent state plus the private model view written by a pre-model node."""

    llm_input_messages: NotRequired[Annotated[list[AnyMessage], PrivateStateAttr]]


class CompactionAgentState(PreModelViewState):
    """Agent state plus the compaction node's record and request flag."""

    compaction: NotRequired[CompactionRecord]
    compaction_requested: NotRequired[bool]


class StateToolsState(AgentState[Any], PlanStateMixin, NoteStateMixin):
    """Agent state plus `plan` and `note`."""


def _node_kwargs(
    node: Callable[..., Any], runtime: Runtime[Any], config: RunnableConfig
) -> dict[str, Any]:
    try:
        params = inspect.signature(node).parameters
    except (TypeError, ValueError):
        return {}
    kwargs: dict[str, Any] = {}
    if "config" in params:
        kwargs["config"] = config
    if "store" in params:
        kwargs["store"] = runtime.store
    if "runtime" in params:
        kwargs["runtime"] = runtime
    return kwargs


def _split_view(view: list[AnyMessage]) -> tuple[list[str], list[AnyMessage]]:
    head = 0
    while head < len(view) and isinstance(view[head], SystemMessage):
        head += 1
    return [content_text(m.content) for m in view[:head]], list(view[head:])


def _apply_view(request: ModelRequest[Any], view: Any) -> ModelRequest[Any]:
    """The request with the view's messages, its system text after the agent's prompt."""
    if not view:
        return request
    system_parts, messages = _split_view(list(view))
    added = "\n\n".join(p for p in system_parts if p)
    if not added:
        return request.override(messages=messages)
    base = request.system_prompt or ""
    text = f"{base}\n\n{added}" if base else added
    return request.override(messages=messages, system_message=SystemMessage(text))


Stage = Literal["before_model", "model_call"]
STAGES: tuple[Stage, ...] = ("before_model", "model_call")


def _node_config(quiet: bool) -> RunnableConfig:
    """The run's config; `quiet` keeps the node's own model calls out of the stream."""
    config = get_config()
    return merge_configs(config, {"tags": [TAG_NOSTREAM]}) if quiet else config


def _invoke_node(node: Any, state: Any, runtime: Runtime[Any], *, quiet: bool) -> Any:
    config = _node_config(quiet)
    if isinstance(node, Runnable):
        return node.invoke(state, config)
    return node(state, **_node_kwargs(node, runtime, config))


async def _ainvoke_node(node: Any, state: Any, runtime: Runtime[Any], *, quiet: bool) -> Any:
    config = _node_config(quiet)
    if isinstance(node, Runnable):
        return await node.ainvoke(state, config)
    kwargs = _node_kwargs(node, runtime, config)
    if inspect.iscoroutinefunction(node):
        return await node(state, **kwargs)
    return await run_in_executor(config, node, state, **kwargs)


class PreModelNodeMiddleware(AgentMiddleware[PreModelViewState, Any]):
    """Run a pre-model LangGraph node (compaction, context assembly) inside `create_agent`.

    Args:
        node: A node function `(state[, config][, store][, runtime]) -> update`, a
            coroutine function, or a runnable; it may write `llm_input_messages`.
        name: Middleware name (must be unique among an agent's middleware).
        stage: `"model_call"` (run per model call; the view goes to the model and is
            never stored; the node may not rewrite `messages`) or `"before_model"`
            (run as a hook whose updates rewrite the state; no view).

    Raises:
        TypeError: If `node` is neither callable nor a runnable.
        ValueError: If `name` is empty or `stage` unknown. At run time, if the node
            returns a view at `"before_model"` or rewrites `messages` at
            `"model_call"`.
    """

    state_schema = PreModelViewState

    def __init__(
        self, node: Any, *, name: str = "pre_model_node", stage: Stage = "model_call"
    ) -> None:
        super().__init__()
        if not callable(node) and not isinstance(node, Runnable):
            msg = f"node must be a callable or a runnable, got {type(node).__name__}"
            raise InvalidTypeError(msg)
        if not isinstance(name, str) or not name:
            msg = f"name must be a non-empty string, got {name!r}"
            raise InvalidArgumentError(msg)
        if stage not in STAGES:
            msg = f"stage must be one of {list(STAGES)}, got {stage!r}"
            raise InvalidArgumentError(msg)
        self._node = node
        self._name = name
        self._stage = stage
        self.tools = []

    @property
    def name(self) -> str:
        """The middleware's name in the agent graph."""
        return self._name

    def _result(self, update: Any) -> dict[str, Any]:
        if not update:
            return {}
        if not isinstance(update, dict):
            msg = f"a pre-model node must return a dict update, got {type(update).__name__}"
            raise InvalidTypeError(msg)
        result = dict(update)
        if self._stage == "before_model" and result.get(LLM_INPUT_KEY):
            msg = (
                f"middleware {self._name!r} runs its node at stage='before_model', where a "
                f"view ({LLM_INPUT_KEY}) would be stored; use stage='model_call'"
            )
            raise InvalidArgumentError(msg)
        if self._stage == "model_call" and "messages" in result:
            msg = (
                f"middleware {self._name!r} runs its node at stage='model_call', where it "
                "may not rewrite messages; use stage='before_model'"
            )
            raise InvalidArgumentError(msg)
        result.pop(LLM_INPUT_KEY, None)
        return result

    def before_model(
        self, state: PreModelViewState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """At stage `before_model`, run the node and return its update."""
        if self._stage != "before_model":
            return None
        return self._result(_invoke_node(self._node, state, runtime, quiet=False)) or None

    async def abefore_model(
        self, state: PreModelViewState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async twin of `before_model`."""
        if self._stage != "before_model":
            return None
        return self._result(await _ainvoke_node(self._node, state, runtime, quiet=False)) or None

    def _prepared(
        self, request: ModelRequest[Any], update: Any
    ) -> tuple[ModelRequest[Any], Command[Any] | None]:
        view = update.get(LLM_INPUT_KEY) if isinstance(update, dict) else None
        rest = self._result(update)
        return _apply_view(request, view), (Command(update=rest) if rest else None)

    @staticmethod
    def _answer(response: ModelResponse[Any], command: Command[Any] | None) -> ModelCallResult[Any]:
        if command is None:
            return response
        return ExtendedModelResponse(model_response=response, command=command)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """At stage `model_call`, run the node and call the model on its view."""
        if self._stage != "model_call":
            return handler(request)
        update = _invoke_node(self._node, request.state, request.runtime, quiet=True)
        prepared, command = self._prepared(request, update)
        return self._answer(handler(prepared), command)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async twin of `wrap_model_call`."""
        if self._stage != "model_call":
            return await handler(request)
        update = await _ainvoke_node(self._node, request.state, request.runtime, quiet=True)
        prepared, command = self._prepared(request, update)
        return self._answer(await handler(prepared), command)


def create_pre_model_middleware(
    node: Any, *, name: str = "pre_model_node", stage: Stage = "model_call"
) -> PreModelNodeMiddleware:
    """Wrap a pre-model node (compaction, context assembly) as `create_agent` middleware.

    Args:
        node: The node (function, coroutine function or runnable).
        name: Middleware name, unique per agent.
        stage: `"model_call"` for a node that assembles a view (never stored),
            `"before_model"` for one that rewrites the history in state.

    Returns:
        The middleware.

    Raises:
        TypeError: If `node` is not callable.
        ValueError: If `name` is empty.
    """
    return PreModelNodeMiddleware(node, name=name, stage=stage)


class CompactionMiddleware(PreModelNodeMiddleware):
    """`PreModelNodeMiddleware` whose state also holds the compaction record."""

    state_schema = CompactionAgentState


def create_compaction_middleware(
    *, max_tokens: int, name: str = "compaction", **options: Any
) -> CompactionMiddleware:
    """Run `create_compaction_node` before every model call of a `create_agent` agent.

    In `replace` mode (the default) the agent's history is rewritten when a trigger
    fires (a `before_model` hook); in `view` mode the history stays and each model
    call gets the compacted view, computed in `wrap_model_call` and never stored.

    Args:
        max_tokens: Budget of the compacted history.
        name: Middleware name, unique per agent.
        **options: Any other `create_compaction_node` option (`mode`, `trigger`,
            `model`, `keep`, `token_counter`, ...).

    Returns:
        The middleware.

    Raises:
        ValueError: If an option is invalid (raised by `create_compaction_node`).
    """
    node = create_compaction_node(max_tokens=max_tokens, **options)
    stage: Stage = "model_call" if options.get("mode") == "view" else "before_model"
    return CompactionMiddleware(node, name=name, stage=stage)


def create_context_middleware(
    builder: ContextBuilder | None = None,
    *,
    safe: bool = True,
    name: str = "context",
    **options: Any,
) -> PreModelNodeMiddleware:
    """Assemble the model's context with `create_context_node` inside `create_agent`.

    The agent's history stays whole in state; each model call gets the assembled
    system message (after the agent's own system prompt) and the recent messages.

    Args:
        builder: The `ContextBuilder` (default: default settings; pinned memory is
            among its default state sources). A builder you pass keeps its own
            `protect_untrusted` setting.
        safe: For the default builder: wrap untrusted packets in per-build boundaries
            and add the hardening instruction (`ContextBuilder(protect_untrusted=...)`).
        name: Middleware name, unique per agent.
        **options: Any other `create_context_node` option (`keep_last`,
            `system_instructions`, `query_key`, ...).

    Returns:
        The middleware.

    Raises:
        ValueError: If an option is invalid (raised by `create_context_node`).
    """
    chosen = builder or ContextBuilder(protect_untrusted=safe)
    return PreModelNodeMiddleware(create_context_node(chosen, **options), name=name)


class MemoryAgentState(AgentState[Any], MemoryStateMixin):
    """Agent state plus pinned memory: `constraints` and `hot_issues`."""


class MemoryMiddleware(AgentMiddleware[MemoryAgentState, Any]):
    """Pinned memory for `create_agent`: constraint tools and a hot-issue watch.

    Args:
        checks: Tools whose results are checks (a name, names, or a predicate); the
            results of each tool round are watched before the next model call.
        memory_tools: Add `record_constraint` and `resolve_constraint`.

    Raises:
        ValueError: If there would be nothing to add, or `checks` names no tool.
    """

    state_schema = MemoryAgentState

    def __init__(self, *, checks: CheckSelector | None = None, memory_tools: bool = True) -> None:
        super().__init__()
        if checks is None and not memory_tools:
            msg = "checks is None and memory_tools is False: the middleware would add nothing"
            raise InvalidArgumentError(msg)
        self.tools = _state_tools(plan_tools=False, note_tools=False, memory_tools=memory_tools)
        self._watch = create_hot_issue_node(checks) if checks is not None else None

    def before_model(self, state: MemoryAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Open or resolve hot issues from the last tool round's check results."""
        if self._watch is None:
            return None
        return self._watch(state) or None

    async def abefore_model(
        self, state: MemoryAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async twin of `before_model`."""
        return self.before_model(state, runtime)


def create_memory_middleware(
    *, checks: CheckSelector | None = None, memory_tools: bool = True
) -> MemoryMiddleware:
    """Create pinned-memory middleware (constraint tools, hot issues from checks).

    Show the memory to the model with `create_context_middleware` (its default builder
    reads constraints and hot issues).

    Args:
        checks: Tools whose results are checks (a name, names, or a predicate).
        memory_tools: Add `record_constraint` and `resolve_constraint`.

    Returns:
        The middleware.

    Raises:
        ValueError: If there would be nothing to add, or `checks` names no tool.
    """
    return MemoryMiddleware(checks=checks, memory_tools=memory_tools)


class StateToolsMiddleware(AgentMiddleware[StateToolsState, Any]):
    """Give a `create_agent` agent the plan and/or note tools and their state keys.

    Args:
        plan_tools: Add `write_plan` and `update_plan`.
        note_tools: Add `write_note`, `ls`, `query_note` and `update_note`.

    Raises:
        ValueError: If both kinds of tools are switched off.
    """

    state_schema = StateToolsState

    def __init__(self, *, plan_tools: bool = True, note_tools: bool = True) -> None:
        super().__init__()
        if not plan_tools and not note_tools:
            msg = "plan_tools and note_tools are both False: the middleware would add nothing"
            raise InvalidArgumentError(msg)
        self.tools = _state_tools(plan_tools, note_tools, memory_tools=False)


def create_state_tools_middleware(
    *, plan_tools: bool = True, note_tools: bool = True
) -> StateToolsMiddleware:
    """Create middleware adding the plan and note tools (and `plan`/`note` state).

    Args:
        plan_tools: Add `write_plan` and `update_plan`.
        note_tools: Add `write_note`, `ls`, `query_note` and `update_note`.

    Returns:
        The middleware.

    Raises:
        ValueError: If both are False.
    """
    return StateToolsMiddleware(plan_tools=plan_tools, note_tools=note_tools)
