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

`create_compaction_middleware` builds the package's compaction node; the context
node's middleware is in `agents.context_middleware`, the tool-adding middleware
(plan, notes, pinned memory) in `agents.tool_middleware`, the output guard's in
`agents.guard`.
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
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import merge_configs, run_in_executor
from langgraph.config import get_config
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime
from langgraph.types import Command

from langgraph_context.agents._hooks import drop_before_model
from langgraph_context.agents._overflow import (
    Retry,
    Window,
    adrive,
    drive,
    history_rewrite,
    retry_steps,
    with_messages,
)
from langgraph_context.agents.context_agent import LLM_INPUT_KEY
from langgraph_context.compaction import CompactionRecord, create_compaction_node
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.messages import content_text
from langgraph_context.tokens import USAGE_KEY, TokenUsage, resolve_counter

__all__ = [
    "STAGES",
    "CompactionAgentState",
    "CompactionMiddleware",
    "PreModelNodeMiddleware",
    "PreModelViewState",
    "Stage",
    "create_compaction_middleware",
    "create_pre_model_middleware",
]


class PreModelViewState(AgentState[Any]):
    """Agent state plus the private model view written by a pre-model node."""

    llm_input_messages: NotRequired[Annotated[list[AnyMessage], PrivateStateAttr]]


class CompactionAgentState(PreModelViewState):
    """Agent state plus the compaction node's record and request flag."""

    compaction: NotRequired[CompactionRecord]
    compaction_requested: NotRequired[bool]
    token_usage: NotRequired[TokenUsage]


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
        own_hook = type(self).before_model is PreModelNodeMiddleware.before_model
        if stage == "model_call" and own_hook:
            drop_before_model(self)  # the node runs in wrap_model_call only

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
    def _answer(
        response: ModelCallResult[Any], command: Command[Any] | None
    ) -> ModelCallResult[Any]:
        if command is None:
            return response
        if isinstance(response, ExtendedModelResponse):  # the two updates, merged
            own = dict(command.update) if isinstance(command.update, dict) else {}
            return extended(response.model_response, {**own, **updates(response)})
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
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
    """`PreModelNodeMiddleware` whose state also holds the compaction record.

    Around every model call it also records the provider-reported usage
    (`token_usage`, read by the compaction node) and, when the provider refuses the
    request as over the model's window, retries once on the history compacted
    rule-based (in replace mode the state's history is then replaced by it); a
    second refusal raises `ContextWindowError`. List it after middleware that
    rewrites the request, so what it counts and compacts is what is sent.
    """

    state_schema = CompactionAgentState

    def __init__(
        self,
        node: Any,
        *,
        name: str = "compaction",
        stage: Stage = "before_model",
        window: Window | None = None,
    ) -> None:
        super().__init__(node, name=name, stage=stage)
        self._window = window or Window(None, resolve_counter(None))

    def _steps(self, request: ModelRequest[Any]) -> Any:
        def retried(retry: Retry) -> ModelRequest[Any]:
            state = with_messages(request.state, retry.messages)
            return request.override(messages=retry.messages, state=state)  # type: ignore[arg-type]

        history: list[BaseMessage] = list(request.messages)
        return retry_steps(request, history, self._window, request.model, request.state, retried)

    def _learned(
        self, request: ModelRequest[Any], answer: Any, retry: Retry | None
    ) -> ModelCallResult[Any]:
        """The answer with the usage it taught (and the compacted history) as an update."""
        update = updates(answer)
        response = answer.model_response if isinstance(answer, ExtendedModelResponse) else answer
        result = response.result if isinstance(response, ModelResponse) else [response]
        sent = [*request.messages] if retry is None else retry.messages
        head = [request.system_message] if request.system_message is not None else []
        reply = next((m for m in reversed(result) if isinstance(m, AIMessage)), None)
        usage = self._window.usage([*head, *sent], reply, request.model, tools=request.tools)
        if usage is not None:
            update[USAGE_KEY] = usage
        history = list(request.state.get("messages", []))
        if retry is not None and [m.id for m in request.messages] == [m.id for m in history]:
            update["messages"] = history_rewrite(retry, result)
        return extended(response, update) if update else answer

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """Call the model (on the node's view in view mode); retry once on an overflow."""

        def guarded(prepared: ModelRequest[Any]) -> Any:
            answer, retry = drive(self._steps(prepared), handler)
            return self._learned(prepared, answer, retry)

        return super().wrap_model_call(request, guarded)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async twin of `wrap_model_call`."""

        async def aguarded(prepared: ModelRequest[Any]) -> Any:
            answer, retry = await adrive(self._steps(prepared), handler)
            return self._learned(prepared, answer, retry)

        return await super().awrap_model_call(request, aguarded)


def updates(answer: Any) -> dict[str, Any]:
    """The state update an `ExtendedModelResponse` carries (a copy), else `{}`."""
    command = answer.command if isinstance(answer, ExtendedModelResponse) else None
    update = command.update if command is not None else None
    return dict(update) if isinstance(update, dict) else {}


def extended(response: Any, update: dict[str, Any]) -> ExtendedModelResponse[Any]:
    """A model response with one state update."""
    return ExtendedModelResponse(model_response=response, command=Command(update=update))


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
            `model`, `keep`, `token_counter`, ...). `context_window` (else the
            agent model's profile) also sets the target of the overflow retry.

    Returns:
        The middleware.

    Raises:
        ValueError: If an option is invalid (raised by `create_compaction_node`).
    """
    node = create_compaction_node(max_tokens=max_tokens, **options)
    stage: Stage = "model_call" if options.get("mode") == "view" else "before_model"
    counter = resolve_counter(options.get("token_counter"))
    window = Window(options.get("context_window"), counter)
    return CompactionMiddleware(node, name=name, stage=stage, window=window)
