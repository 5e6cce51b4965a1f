"""`CompactionMiddleware`: compaction of the history, and the model's window at call time.

Both modes run inside the model call (`wrap_model_call`), so compaction adds no graph
step. In `replace` mode (the default) the history in state is rewritten when a trigger
fires (the core of `compaction.create_compaction_node`): the call is sent the compacted
history, and the rewrite (`RemoveMessage(REMOVE_ALL)`, the compacted history) goes ahead
of the reply in the call's own `messages` update, so the updates of middleware inside
this one (the context's stamps, by id) land on the compacted history. In `view` mode
the history stays and each model call is sent the compacted messages through
`request.override(messages=...)`, never stored (only the record with the running
summary is).

When the provider refuses a request as over the model's window, it retries once on
the messages compacted rule-based (the state's history is replaced by them when they
were the whole history); a second refusal raises `ContextWindowError`. The reported
usage the triggers read (`token_usage`) is recorded by `ContextMiddleware`, which
builds the request as sent: list it after this middleware.

With a summarizer `model` and `prefix_cache` (a `PromptCacheMiddleware` listed
innermost; `create_context_agent` links its own), the summarizer is sent the agent's
last request as sent, then the thread's messages since, with the same tools bound and
the instruction as the last user message: the provider's prompt cache serves that
prefix. A summarizer answer calling a tool is no summary (compaction falls back to
the rules).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import (
    ExtendedModelResponse,
    ModelCallResult,
    OmitFromInput,
)
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import Runnable
from langgraph.graph.message import add_messages
from langgraph.types import Command

from langgraph_context._steps import Failed, adrive, drive, signed
from langgraph_context.agents._hooks import arun_inner, run_inner
from langgraph_context.agents._overflow import (
    Retry,
    Window,
    history_rewrite,
    overflowed,
    with_messages,
)
from langgraph_context.compaction import CompactionRecord, create_compaction_node
from langgraph_context.compaction.options import (
    SUMMARY_REQUEST_KEY,
    Archive,
    CompactionMode,
    Keep,
    SummaryOptions,
    Trigger,
)
from langgraph_context.compaction.provenance import COMPACTION_MARKER, is_untrusted_compaction
from langgraph_context.compaction.strategies import DEFAULT_KEEP_TOOL_ROUNDS, Strategy
from langgraph_context.context.stamp import without_stamps
from langgraph_context.providers.models import resolved_model
from langgraph_context.providers.prompt_cache import PromptCacheMiddleware, thread_id
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION
from langgraph_context.state import get_state_value
from langgraph_context.tokens import TokenCounter, TokenUsage, resolve_counter

__all__ = ["CompactionAgentState", "CompactionMiddleware"]

_ADDITIONAL_KWARGS = operator.attrgetter("additional_kwargs")
_HAS_MARKER = operator.methodcaller("__contains__", COMPACTION_MARKER)

_Step = tuple[str, Any]
"""`("compaction", state)` for the view-mode node, `("model", request)` for the model."""


def _out(out: Any) -> dict[str, Any]:
    """The compaction function's update (raising what it raised)."""
    if isinstance(out, Failed):
        raise out.error
    return dict(out) if isinstance(out, Mapping) else {}


def _hardened(request: ModelRequest[Any]) -> ModelRequest[Any]:
    """The request, its system prompt hardened once fenced compaction text is in it.

    A summary or snapshot is untrusted text, and SECURITY.md wants the hardening line
    present whenever untrusted text is. Block content keeps its blocks (cache marks).
    """
    # Only a message with the marker can be compaction's: most requests have none,
    # and looking for the key is one C-level pass (the exact check is Python per message).
    kwargs = map(_ADDITIONAL_KWARGS, request.messages)
    if not any(map(_HAS_MARKER, kwargs)) or not any(map(is_untrusted_compaction, request.messages)):
        return request
    system = request.system_message
    content: Any = system.content if system is not None else ""
    if HARDENING_INSTRUCTION in str(content):
        return request
    if isinstance(content, list):
        content = [*content, {"type": "text", "text": HARDENING_INSTRUCTION}]
    else:
        content = f"{content}\n\n{HARDENING_INSTRUCTION}" if content else HARDENING_INSTRUCTION
    return request.override(system_message=SystemMessage(content))


class CompactionAgentState(AgentState[Any]):
    """Agent state plus the compaction record, the request flag and the usage record."""

    compaction: NotRequired[Annotated[CompactionRecord, OmitFromInput]]
    compaction_requested: NotRequired[Annotated[bool, OmitFromInput]]
    token_usage: NotRequired[Annotated[TokenUsage, OmitFromInput]]


class CompactionMiddleware(AgentMiddleware[CompactionAgentState, Any]):
    """Compact the history of a `create_agent` agent; retry once over the window.

    Args:
        trigger_tokens: The history's high mark: a history over it is compacted.
        target_tokens: The low mark a compaction aims for (default: half of
            `trigger_tokens`).
        mode: `replace` (rewrite the history in state) or `view` (send each call the
            compacted messages; the history in state stays whole).
        trigger: Further triggers, as `create_compaction_node`'s.
        context_window: The model's window (else the model's profile): for
            `fraction` triggers and the target of the overflow retry.
        keep: Recent part kept verbatim, as `create_compaction_node`'s.
        model: Summarizer model; `None` for rule-based compaction only.
        summary_options: How the summarizer is asked and called.
        strategy: Rule-based strategy.
        keep_tool_rounds: Latest tool rounds whose outputs are never cleared.
        token_counter: Counter (default: offline tiktoken).
        archive: Replace mode: where evicted messages are archived.
        prefix_cache: With `model`: the agent's `PromptCacheMiddleware`, whose last
            request per thread is the summarizer's prefix (`None`: the summarizer is
            sent a transcript of its own).
        name: Middleware name, unique per agent.

    Raises:
        ValueError: If an option is invalid (as `create_compaction_node`).

    Example:
        >>> CompactionMiddleware(4_000, mode="view").name
        'compaction'
    """

    state_schema = CompactionAgentState

    def __init__(
        self,
        trigger_tokens: int,
        *,
        target_tokens: int | None = None,
        mode: CompactionMode = "replace",
        trigger: Trigger | Sequence[Trigger] | None = None,
        context_window: int | None = None,
        keep: Keep | None = None,
        model: Runnable[Any, Any] | BaseLanguageModel | None = None,
        summary_options: SummaryOptions | None = None,
        strategy: Strategy = "auto",
        keep_tool_rounds: int = DEFAULT_KEEP_TOOL_ROUNDS,
        token_counter: TokenCounter | BaseLanguageModel | None = None,
        archive: Archive | None = None,
        prefix_cache: PromptCacheMiddleware | None = None,
        name: str = "compaction",
    ) -> None:
        super().__init__()
        self.summarizes = model is not None
        self._prefix_cache: PromptCacheMiddleware | None = None
        self.prefix_cache = prefix_cache
        self._node = create_compaction_node(
            trigger_tokens=trigger_tokens,
            target_tokens=target_tokens,
            mode=mode,
            trigger=trigger,
            context_window=context_window,
            keep=keep,
            model=model,
            summary_options=summary_options,
            strategy=strategy,
            keep_tool_rounds=keep_tool_rounds,
            token_counter=token_counter,
            archive=archive,
            name=name,
        )
        self._window = Window(context_window, resolve_counter(token_counter))
        self._name = name
        self.tools = []

    @property
    def name(self) -> str:
        """The middleware's name in the agent graph."""
        return self._name

    @property
    def prefix_cache(self) -> PromptCacheMiddleware | None:
        """The `PromptCacheMiddleware` whose last request the summarizer extends."""
        return self._prefix_cache

    @prefix_cache.setter
    def prefix_cache(self, source: PromptCacheMiddleware | None) -> None:
        self._prefix_cache = source
        if source is not None and self.summarizes:
            source.keep_requests = True

    @property
    def mode(self) -> CompactionMode:
        """`replace` or `view`."""
        return self._node.mode

    def _with_prefix(self, state: Any) -> Any:
        """`state` with the agent's last request and the messages since, for the summarizer."""
        if not self.summarizes or self.prefix_cache is None:
            return state
        last = self.prefix_cache.last_request(thread_id())
        if last is None:
            return state
        sent = {m.id for m in last.messages if m.id}
        history = list(state.get("messages", []))
        after = max((i for i, m in enumerate(history) if m.id in sent), default=len(history) - 1)
        head = [last.system_message] if last.system_message is not None else []
        messages = [*head, *last.messages, *without_stamps(history[after + 1 :])]
        return {**state, SUMMARY_REQUEST_KEY: (messages, list(last.tools))}

    def _steps(self, request: ModelRequest[Any]) -> Generator[_Step, Any, ModelCallResult[Any]]:
        """Compact (or view), call, retry once on an overflow (sync and async)."""
        learned: dict[str, Any] = {}
        rewrite: list[BaseMessage] = []
        if self._node.mode == "view":
            seen = {**request.state, "messages": list(request.messages)}
            out = yield ("compaction", self._with_prefix(seen))
            learned = _out(out)
            view = learned.pop(self._node.output_key, None)
            learned.pop("messages", None)
            if view:
                request = request.override(messages=list(view))
        else:
            # The check reads the history in state, as a step before the model would;
            # a quiet one (most calls) needs no config of its own (no model is called).
            if not self._node.quiet(request.state):
                learned = _out((yield ("compaction", self._with_prefix(request.state))))
            rewrite = list(learned.pop("messages", None) or [])
            if rewrite:
                stored: list[Any] = list(get_state_value(request.state, "messages", []))
                # What state holds once the call's update is applied (LangGraph's reducer).
                history: list[Any] = list(add_messages(stored, list(rewrite)))  # type: ignore[arg-type]
                request = request.override(
                    messages=history, state=with_messages(request.state, history)
                )
        original = request
        answer = yield ("model", _hardened(request))
        retry = None
        if overflowed(answer):
            chat = resolved_model(request.model)
            retry = self._window.shrink(list(request.messages), chat, request.state)
            request = request.override(messages=retry.messages)  # type: ignore[arg-type]
            answer = retry.check((yield ("model", _hardened(request))))
        return self._learned(original, answer, (retry, learned, rewrite))

    def _learned(
        self,
        original: ModelRequest[Any],
        answer: Any,
        extra: tuple[Retry | None, dict[str, Any], list[BaseMessage]],
    ) -> ModelCallResult[Any]:
        """The answer with what it taught (the record, the compacted history) as an update.

        The rewrite of the history leads the reply in the call's own `messages` update,
        which LangGraph applies before any middleware's command: the stamps the context
        middleware writes by id then land on the compacted history, not under it.
        """
        retry, update, rewrite = extra
        response = answer.model_response if isinstance(answer, ExtendedModelResponse) else answer
        if not isinstance(response, ModelResponse):
            response = ModelResponse(result=[response])
        result = response.result
        history: list[BaseMessage] = list(original.state.get("messages", []))
        if retry is not None and [m.id for m in original.messages] == [m.id for m in history]:
            update["messages"] = history_rewrite(retry, result)
        if rewrite:
            response = dataclasses.replace(response, result=[*rewrite, *result])
        if not update:
            return response if rewrite else answer
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

    @signed
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """Call the model (on the compacted view in view mode); retry once on an overflow."""

        def call(step: _Step) -> Any:
            kind, value = step
            if kind == "compaction":
                return run_inner(self._node, value)
            return handler(value)

        return drive(self._steps(request), call)

    @signed
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async twin of `wrap_model_call`."""

        async def acall(step: _Step) -> Any:
            kind, value = step
            if kind == "compaction":
                return await arun_inner(self._node, value)
            return await handler(value)

        return await adrive(self._steps(request), acall)
