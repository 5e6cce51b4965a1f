"""`RecallMiddleware`: cut tool results are offloaded, evicted history archived, both read back.

For `create_agent` (and `create_context_agent`, which adds it by default):

* `wrap_tool_call`: a tool result over `max_result_tokens` keeps its two ends and a
  notice naming its handle and `read_tool_output` (`compaction.arrived_tool_result`);
  its full text is kept (`recall.archive`). The notice is written once, as the
  result arrives, so the bytes the model has seen never change.
* `archive_sink`: given to `CompactionMiddleware(archive=Archive(sink=...))`, it keeps
  each message a compaction evicts under its own handle.
* The thread's caps are checked as each tool call returns (its state holds the
  index, with what compactions archived since): the oldest entries past them are
  dropped by the same update that adds the new one. A model call is not wrapped.
* `wrap_model_call` (only with `max_recall_tokens`): ranks the archive against the
  latest user message and adds the best passages, fenced, to the system message
  (inside the call's budget, which the context middleware inside it assembles).
* `tools`: `read_tool_output` and `search_history`, always bound, so the tool list
  never changes between calls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from time import time
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import (
    ModelCallResult,
    OmitFromInput,
    ToolCallRequest,
)
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.config import get_config, get_store
from langgraph.runtime import get_runtime
from langgraph.store.base import BaseStore, PutOp
from langgraph.types import Command

from langgraph_context._steps import signed
from langgraph_context.compaction.entry import CUT_MARKER, arrived_tool_result
from langgraph_context.compaction.options import check_positive
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.messages import content_text
from langgraph_context.packet import ContextPacket
from langgraph_context.recall.archive import (
    DEFAULT_RECALL_NAMESPACE,
    RECALL_KEY,
    TEXTS_KEY,
    EntryKind,
    RecallEntry,
    RecallLimits,
    count_dropped,
    dropped,
    found_texts,
    held_texts,
    kept_entries,
    merge_recall,
    merge_texts,
    message_handle,
    moved,
    output_handle,
    recall_namespace,
)
from langgraph_context.recall.read import search_passages
from langgraph_context.recall.tools import (
    create_read_tool_output_tool,
    create_search_history_tool,
)
from langgraph_context.safety import fenced_block
from langgraph_context.tokens import TokenCounter, resolve_counter

__all__ = ["RecallAgentState", "RecallMiddleware"]

_Result = ToolMessage | Command[Any]
_PAGE_ROOM = 120  # tokens a page's header and fence take beyond its lines
_KEEP_SHARE = 2  # a cut result keeps this fraction of the limit by default
_ESTIMATE_SLACK = 1.12  # a far-over cut estimates the total (seen within 9%): check near it
_RECALL_HEAD = "[Recalled] Passages kept from earlier in this conversation (read more by handle):"


class RecallAgentState(AgentState[Any]):
    """Agent state plus the thread's archive index, its moved texts and its dropped count."""

    recall: NotRequired[Annotated[dict[str, RecallEntry], OmitFromInput, merge_recall]]
    recall_texts: NotRequired[Annotated[dict[str, str], OmitFromInput, merge_texts]]
    recall_dropped: NotRequired[Annotated[int, OmitFromInput, count_dropped]]


def _run_namespace(prefix: tuple[str, ...]) -> tuple[BaseStore | None, tuple[str, ...] | None]:
    """The run's store and archive namespace (`None`: keep texts in state)."""
    try:
        store = get_store()
        context = get_runtime().context
    except (RuntimeError, KeyError):  # outside a graph run (KeyError: a plain runnable's)
        return None, None
    if store is None:
        return None, None
    namespace = recall_namespace(get_config(), context, namespace=prefix)
    return (store, namespace) if namespace is not None else (None, None)


def _render(message: BaseMessage) -> str:
    text = content_text(message.content)
    calls = "".join(
        f"\n[calls {c['name']}] {c['args']}" for c in getattr(message, "tool_calls", [])
    )
    return f"{text}{calls}".strip()


def _latest_request(messages: Sequence[BaseMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return content_text(message.content)
    return ""


class RecallMiddleware(AgentMiddleware[RecallAgentState, Any]):
    """Keep what the model saw restorable: offload cut tool output, archive evicted history.

    Args:
        max_result_tokens: Most tokens one tool result keeps whole; a longer one is
            cut to its two ends and its full text kept. `None`: no cut (evicted
            history is still archived). Also caps each page the tools return.
        keep_tokens: Most tokens a cut result keeps, notice included (default: half
            of `max_result_tokens`: its middle is restorable, so its ends can be small).
        limits: The thread's caps and TTL (default `RecallLimits()`).
        max_recall_tokens: Put up to this many tokens of the archive's passages most
            relevant to the latest user message into each model call (`None`: off).
        namespace: Store prefix; texts go under `(*namespace, user, thread)`.
        minify_json: Minify JSON results before measuring them.
        token_counter: Counter (default: offline tiktoken).
        name: Middleware name, unique per agent.

    Raises:
        ValueError: If a token count is not a positive int.

    Example:
        >>> sorted(t.name for t in RecallMiddleware().tools)
        ['read_tool_output', 'search_history']
    """

    state_schema = RecallAgentState

    def __init__(
        self,
        max_result_tokens: int | None = 1_000,
        *,
        keep_tokens: int | None = None,
        limits: RecallLimits | None = None,
        max_recall_tokens: int | None = None,
        namespace: tuple[str, ...] = DEFAULT_RECALL_NAMESPACE,
        minify_json: bool = True,
        token_counter: TokenCounter | BaseLanguageModel | None = None,
        name: str = "recall",
    ) -> None:
        super().__init__()
        if max_result_tokens is not None:
            check_positive("max_result_tokens", max_result_tokens)
        if max_recall_tokens is not None:
            check_positive("max_recall_tokens", max_recall_tokens)
        if keep_tokens is not None:
            check_positive("keep_tokens", keep_tokens)
        if limits is not None and not isinstance(limits, RecallLimits):
            msg = f"limits must be a RecallLimits, got {limits!r}"
            raise InvalidArgumentError(msg)
        self.max_result_tokens = max_result_tokens
        most = max_result_tokens or 1
        self.keep_tokens = min(
            most, max(1, most // _KEEP_SHARE) if keep_tokens is None else keep_tokens
        )
        self.limits = limits or RecallLimits()
        self.max_recall_tokens = max_recall_tokens
        self.namespace = namespace
        self.minify_json = minify_json
        self._counter = resolve_counter(token_counter)
        self._name = name
        page = max(50, (max_result_tokens or 1_000) - _PAGE_ROOM)
        self.tools = [
            create_read_tool_output_tool(
                max_result_tokens=page, namespace=namespace, token_counter=self._counter
            ),
            create_search_history_tool(
                max_result_tokens=page, namespace=namespace, token_counter=self._counter
            ),
        ]
        self._own = {t.name for t in self.tools}

    @property
    def name(self) -> str:
        """The middleware's name."""
        return self._name

    def archive_sink(self, evicted: Sequence[BaseMessage]) -> tuple[dict[str, Any], list[PutOp]]:
        """Keep each evicted message under its handle (for `Archive(sink=...)`)."""
        texts: list[tuple[str, EntryKind, str, str]] = []
        for message in evicted:
            text = _render(message)
            if text:
                source = getattr(message, "name", None) or message.type
                texts.append((message_handle(message, text), "message", str(source), text))
        if not texts:
            return {}, []
        store, namespace = _run_namespace(self.namespace)
        ttl = self.limits.ttl_seconds
        index, ops = kept_entries(texts, namespace, ttl_seconds=ttl, store=store)
        return {RECALL_KEY: index}, ops

    def offload(self, result: _Result) -> tuple[_Result, list[PutOp], BaseStore | None]:
        """Cut `result` if it is over the limit, keeping its full text under a handle.

        Args:
            result: What the tool returned.

        Returns:
            `(what enters the history, store writes, the run's store)`: a cut result
            becomes a `Command` adding the cut copy and the handle's index entry; the
            caller writes the store ops (sync or async).
        """
        if not isinstance(result, ToolMessage) or self.max_result_tokens is None:
            return result, [], None
        if result.name in self._own or not isinstance(result.content, str):
            return result, [], None  # a page is never offloaded again
        text = result.content
        handle = output_handle(result.tool_call_id, text)
        lines = text.count("\n") + 1
        call = f'read_tool_output(handle="{handle}", offset=<line> or pattern=<text>)'
        read_back = f"full text ({lines} lines) kept: {call}"
        short = self._arrived(result, self.keep_tokens, read_back)
        size = short.additional_kwargs.get(CUT_MARKER) if short is not None else None
        if isinstance(size, int) and size <= self.max_result_tokens * _ESTIMATE_SLACK:
            whole = self._arrived(result, self.max_result_tokens, read_back)
            if whole is None or CUT_MARKER not in whole.additional_kwargs:
                short = whole  # it fits whole (`size` may be an estimate: this cut counts)
        if short is None or CUT_MARKER not in short.additional_kwargs:
            return (result if short is None else short), [], None
        store, namespace = _run_namespace(self.namespace)
        source = result.name or "tool"
        ttl = self.limits.ttl_seconds
        index, ops = kept_entries(
            [(handle, "output", source, text)], namespace, ttl_seconds=ttl, store=store
        )
        return Command(update={"messages": [short], RECALL_KEY: index}), ops, store

    def _arrived(self, result: ToolMessage, limit: int, read_back: str) -> ToolMessage | None:
        return arrived_tool_result(
            result,
            limit,
            minify_json=self.minify_json,
            token_counter=self._counter,
            read_back=read_back,
        )

    def capped_update(
        self, kept: Any, added: dict[str, Any], texts: Any = None
    ) -> tuple[dict[str, Any], list[PutOp], BaseStore | None]:
        """The update keeping the thread's index within the caps once `added` joins `kept`.

        It also moves the index's texts to `recall_texts` once they pass
        `archive.HOT_CHARS` (so each checkpoint does not rewrite them all).

        Args:
            kept: The index in state (anything but a dict counts as empty).
            added: The entries this update adds.
            texts: `recall_texts` in state.

        Returns:
            `(update, store deletes, the run's store)`: the update's `recall` holds
            `added`, the drops and the moves; `({}, [], None)` when nothing changes.
        """
        base = kept if isinstance(kept, dict) else {}
        merged = {**base, **added} if added else base
        if not merged:
            return {}, [], None
        update: dict[str, Any] = {}
        deletes: list[PutOp] = []
        store = None
        if self.limits.over(merged, time()):
            store, namespace = _run_namespace(self.namespace)
            drops, deletes = dropped(merged, self.limits, namespace)
            update = {**drops, RECALL_KEY: {**added, **drops[RECALL_KEY]}}
            merged = {h: e for h, e in merged.items() if h not in drops[RECALL_KEY]}
        move = moved(merged, texts if isinstance(texts, dict) else None)
        if move:
            entries = {**added, **update.get(RECALL_KEY, {}), **move[RECALL_KEY]}
            update = {**update, **move, RECALL_KEY: entries}
        return update, deletes, store

    def _capped(
        self, request: ToolCallRequest, result: _Result
    ) -> tuple[_Result, list[PutOp], BaseStore | None]:
        """`result` plus the drops that keep the thread's index (and its new entry) capped.

        The first call of a tool round checks (the round's calls see the same state:
        one of them drops and counts); an update that is not a dict is left as it is
        (the next round checks). Also returns the store deletes and the store.
        """
        update = result.update if isinstance(result, Command) else {}
        if not isinstance(update, dict) or not _first_call(request):
            return result, [], None
        state = request.state if isinstance(request.state, dict) else {}
        added = update.get(RECALL_KEY)
        caps, deletes, store = self.capped_update(
            state.get(RECALL_KEY), added if isinstance(added, dict) else {}, state.get(TEXTS_KEY)
        )
        if not caps:
            return result, [], None
        if isinstance(result, Command):
            result = dataclasses.replace(result, update={**update, **caps})
        else:
            result = Command(update={"messages": [result], **caps})
        return result, deletes, store

    def _through(
        self, request: ToolCallRequest, result: _Result
    ) -> tuple[_Result, list[PutOp], BaseStore | None]:
        """What a tool call returns through this middleware, its store writes and store."""
        result, ops, store = self.offload(result)
        result, deletes, where = self._capped(request, result)
        return result, [*ops, *deletes], store or where

    @signed
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], _Result]
    ) -> _Result:
        """Run the tool; cut a long result and keep its full text; keep the index capped."""
        result, ops, store = self._through(request, handler(request))
        if ops and store is not None:
            store.batch(ops)
        return result

    @signed
    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[_Result]]
    ) -> _Result:
        """Async twin of `wrap_tool_call`."""
        result, ops, store = self._through(request, await handler(request))
        if ops and store is not None:
            await store.abatch(ops)
        return result

    def _recalled(self, request: ModelRequest[Any], stored: dict[str, Any]) -> ModelRequest[Any]:
        """The request with the archive's best passages for the latest request, fenced."""
        if self.max_recall_tokens is None:
            return request
        held = held_texts(request.state)
        query = _latest_request(request.messages) if held else ""
        if not query.strip():
            return request
        texts = found_texts(held, stored)
        hits = search_passages(
            query, texts, max_result_tokens=self.max_recall_tokens, token_counter=self._counter
        )
        if not hits:
            return request
        packets = [
            ContextPacket(b, type="kept", source=f"{h} lines {a}-{z}") for h, a, z, b in hits
        ]
        block = "\n".join([_RECALL_HEAD, fenced_block(packets)])
        system = request.system_message
        prompt = content_text(system.content) if system is not None else ""
        joined = f"{prompt}\n\n{block}" if prompt else block
        return request.override(system_message=SystemMessage(joined))

    def _stored(self, request: ModelRequest[Any]) -> BaseStore | None:
        """The run's store when the index keeps some texts there (to read them from)."""
        if all(text is not None for _, text in held_texts(request.state)):
            return None
        store, _ = _run_namespace(self.namespace)
        return store

    @signed
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """With `max_recall_tokens`, recall the archive's best passages into the call."""
        if self.max_recall_tokens is None:
            return handler(request)
        store, stored = self._stored(request), {}
        if store is not None:
            _, namespace = _run_namespace(self.namespace)
            found = store.search(namespace or (), limit=self.limits.max_items)
            stored = {item.key: item.value for item in found}
        return handler(self._recalled(request, stored))

    @signed
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async twin of `wrap_model_call`."""
        if self.max_recall_tokens is None:
            return await handler(request)
        store, stored = self._stored(request), {}
        if store is not None:
            _, namespace = _run_namespace(self.namespace)
            found = await store.asearch(namespace or (), limit=self.limits.max_items)
            stored = {item.key: item.value for item in found}
        return await handler(self._recalled(request, stored))


def _first_call(request: ToolCallRequest) -> bool:
    """Whether `request` runs the first tool call of the model message that asked for it."""
    messages = request.state.get("messages") if isinstance(request.state, dict) else None
    for message in reversed(messages or []):
        if isinstance(message, AIMessage):
            calls = message.tool_calls
            return not calls or calls[0].get("id") == request.tool_call.get("id")
    return True
