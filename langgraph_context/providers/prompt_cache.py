"""The provider's prompt cache, measured per call: what was read, written, and why it missed.

Providers report on every answer how much of the input came from their prompt cache
(LangChain normalises it as `usage_metadata["input_token_details"]`: `cache_read`,
`cache_creation`). `PromptCacheMiddleware` records those figures per call in a
bounded record in state (`cache_usage`), from which `cache_hit_rate` and
`cache_cost` (at a `Prices` table) are read, and the session report shows both.

When a call reads less from the cache than the previous call's input (what a prefix
cache holds for it when the call starts with all of it), the middleware says which
part changed first (the tools, the system message, or a message of the history, by
index) in a log line and in the call's record. To tell, it keeps a fingerprint of
the previous request per thread in memory (one hash and one size per part; strings
hash once, as Python caches a string's hash), never in state.

For OpenAI models it also sets `prompt_cache_key` to the thread's id, so the requests
of one thread are routed to the same cache (`prompt_cache_key=False` to opt out).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
)
from langchain.agents.middleware.types import ExtendedModelResponse, ModelCallResult, OmitFromInput
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.config import get_config
from langgraph.types import Command
from typing_extensions import TypedDict

from langgraph_context._steps import signed
from langgraph_context.context.breakpoints import uses_prompt_cache_key
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.providers.models import resolved_model

__all__ = [
    "CacheCall",
    "CacheUsage",
    "Prices",
    "PromptCacheMiddleware",
    "cache_cost",
    "cache_hit_rate",
    "merge_cache_usage",
    "reported_cache_call",
    "thread_id",
]

logger = logging.getLogger(__name__)

CACHE_USAGE_KEY = "cache_usage"
MAX_RECENT_CALLS = 32
"""Calls kept in `CacheUsage.recent` (the totals cover every call)."""
MIN_CACHED_PREFIX = 1024
"""Below this many tokens neither OpenAI nor Anthropic caches a prefix: no miss is judged."""
_SLACK = 128  # OpenAI caches in 128-token steps; Anthropic's last mark sits before the tail
_MAX_THREADS = 1024  # request fingerprints kept in memory, least recently used out first
_MAX_KEPT_REQUESTS = 64  # last requests kept for a summarizer's prefix, by thread
_MARK_KEYS = frozenset({"cache_control", "cachePoint"})  # cache marks move; they are not content
_TOTALS = ("calls", "input", "cache_read", "cache_write", "output", "misses")


class CacheCall(TypedDict, total=False):
    """One model call's cache figures, as its provider reported them.

    Attributes:
        input: Input tokens in all (cached ones included).
        cache_read: Input tokens read from the cache.
        cache_write: Input tokens written to the cache (Anthropic reports them).
        output: Output tokens.
        changed: Set when the call read less than the previous call's input:
            `"tools"`, `"system"`, `"message <i>"` (the first part that changed),
            or `"nothing"` (the prefix was the same; the provider evicted it,
            routed the call elsewhere, or its entry expired).
    """

    input: int
    cache_read: int
    cache_write: int
    output: int
    changed: str


class CacheUsage(TypedDict, total=False):
    """A thread's cache record (summed by `merge_cache_usage`).

    Attributes:
        calls: Model calls whose answer reported cache figures.
        input: Input tokens over those calls.
        cache_read: Of them, read from the cache.
        cache_write: Of them, written to the cache.
        output: Output tokens over those calls.
        misses: Calls that read less than the previous call's input (`CacheCall.changed`).
        recent: The last `MAX_RECENT_CALLS` calls, oldest first.
    """

    calls: int
    input: int
    cache_read: int
    cache_write: int
    output: int
    misses: int
    recent: list[CacheCall]


class Prices(TypedDict):
    """A price table in USD per million tokens.

    Attributes:
        input: An input token not read from the cache nor written to it.
        cached_input: An input token read from the cache.
        cache_write: An input token written to the cache (the input price where
            writing is free, as on OpenAI).
        output: An output token.
    """

    input: float
    cached_input: float
    cache_write: float
    output: float


def merge_cache_usage(left: CacheUsage | None, right: CacheUsage | None) -> CacheUsage:
    """Sum the totals and keep the last `MAX_RECENT_CALLS` calls; `None` is empty.

    Example:
        >>> both = merge_cache_usage({"calls": 1, "input": 10}, {"calls": 1, "input": 5})
        >>> both["calls"], both["input"], both["recent"]
        (2, 15, [])
    """
    a: Mapping[str, Any] = left or {}
    b: Mapping[str, Any] = right or {}
    merged: dict[str, Any] = {k: int(a.get(k, 0)) + int(b.get(k, 0)) for k in _TOTALS}
    merged["recent"] = [*a.get("recent", []), *b.get("recent", [])][-MAX_RECENT_CALLS:]
    return cast("CacheUsage", merged)


def cache_hit_rate(usage: Mapping[str, Any] | None) -> float | None:
    """Return the share of input tokens read from the cache, or `None` without input.

    Example:
        >>> cache_hit_rate({"input": 4000, "cache_read": 3000})
        0.75
    """
    total = int((usage or {}).get("input", 0))
    return int((usage or {}).get("cache_read", 0)) / total if total > 0 else None


def cache_cost(usage: Mapping[str, Any] | None, prices: Prices) -> float:
    """Return what the recorded tokens cost in USD at `prices`.

    Args:
        usage: A `CacheUsage` (or one `CacheCall`).
        prices: USD per million tokens.

    Returns:
        The cost: uncached input, cache reads, cache writes and output at their prices.

    Raises:
        ValueError: If a price is missing or negative.

    Example:
        >>> prices = {"input": 2.0, "cached_input": 0.5, "cache_write": 2.0, "output": 8.0}
        >>> round(cache_cost({"input": 1_000_000, "cache_read": 800_000}, prices), 2)
        0.8
    """
    for key in ("input", "cached_input", "cache_write", "output"):
        price = prices.get(key) if isinstance(prices, Mapping) else None
        if isinstance(price, bool) or not isinstance(price, int | float) or price < 0:
            msg = f"prices[{key!r}] must be a non-negative number (USD per 1M), got {price!r}"
            raise InvalidArgumentError(msg)
    u: Mapping[str, Any] = usage or {}
    read, write = int(u.get("cache_read", 0)), int(u.get("cache_write", 0))
    plain = max(0, int(u.get("input", 0)) - read - write)
    total = (
        plain * prices["input"]
        + read * prices["cached_input"]
        + write * prices["cache_write"]
        + int(u.get("output", 0)) * prices["output"]
    )
    return total / 1_000_000


def reported_cache_call(message: Any) -> CacheCall | None:
    """The cache figures of an answer's `usage_metadata`, or `None` without them.

    Service-tier variants (`priority_cache_read`, ...) count with the plain keys.
    """
    usage = getattr(message, "usage_metadata", None) if isinstance(message, AIMessage) else None
    if not usage:
        return None
    details = usage.get("input_token_details") or {}
    if not any(k.endswith(("cache_read", "cache_creation")) for k in details):
        return None  # the provider reported no cache figures: nothing to record or judge
    read = write = 0
    for key, value in details.items():
        if isinstance(value, int) and key.endswith("cache_read"):
            read += value
        elif isinstance(value, int) and key.endswith("cache_creation"):
            write += value
    return CacheCall(
        input=int(usage.get("input_tokens") or 0),
        cache_read=read,
        cache_write=write,
        output=int(usage.get("output_tokens") or 0),
    )


@dataclass(frozen=True)
class _Shape:
    """A request's fingerprint: `(hash, chars)` of the tools, the system and each message."""

    tools: tuple[int, int]
    system: tuple[int, int]
    messages: tuple[tuple[int, int], ...]

    @property
    def chars(self) -> int:
        return self.tools[1] + self.system[1] + sum(size for _, size in self.messages)


def _print(value: Any) -> tuple[int, int]:
    """`(hash, chars)` of a JSON-like value; `cache_control` marks are not content."""
    if isinstance(value, str):
        return hash(value), len(value)
    if isinstance(value, Mapping):
        parts = [(k, _print(v)) for k, v in value.items() if k not in _MARK_KEYS]
        return hash(tuple(parts)), sum(size for _, (_, size) in parts)
    if isinstance(value, list | tuple):
        items = [_print(v) for v in value]
        return hash(tuple(items)), sum(size for _, size in items)
    return hash(repr(value)), 1


def _message_print(message: BaseMessage) -> tuple[int, int]:
    calls = [
        (c.get("id"), c["name"], _print(c.get("args"))) for c in getattr(message, "tool_calls", [])
    ]
    h, size = _print(message.content)
    extra = (message.type, getattr(message, "tool_call_id", None), tuple(calls))
    return hash((h, extra)), size + sum(s for _, _, (_, s) in calls)


class _ToolPrints:
    """Tool fingerprints memoized by object (a tool's schema is built once per tool)."""

    def __init__(self) -> None:
        self._memo: OrderedDict[int, tuple[Any, tuple[int, int]]] = OrderedDict()

    def __call__(self, tools: Sequence[Any]) -> tuple[int, int]:
        prints = [self._one(t) for t in tools]
        return hash(tuple(prints)), sum(size for _, size in prints)

    def _one(self, tool: Any) -> tuple[int, int]:
        if isinstance(tool, Mapping):
            return _print(tool)
        held = self._memo.get(id(tool))
        if held is not None and held[0] is tool:
            return held[1]
        described = {
            "name": str(getattr(tool, "name", "")),
            "description": str(getattr(tool, "description", "")),
            "args": repr(getattr(tool, "args", None)),
        }
        found = _print(described)
        self._memo[id(tool)] = (tool, found)
        if len(self._memo) > 256:
            self._memo.popitem(last=False)
        return found


def first_change(previous: _Shape, current: _Shape) -> tuple[str | None, int]:
    """The first part of `previous` that `current` does not repeat, and the chars before it.

    Parts are compared in the order providers cache them: tools, system, messages.
    """
    if previous.tools != current.tools:
        return "tools", 0
    if previous.system != current.system:
        return "system", previous.tools[1]
    same = previous.tools[1] + previous.system[1]
    for i, part in enumerate(previous.messages):
        if i >= len(current.messages) or current.messages[i] != part:
            return f"message {i}", same
        same += part[1]
    return None, same


class PromptCacheAgentState(AgentState[Any]):
    """Agent state plus `cache_usage`, the thread's cache record (not an input key)."""

    cache_usage: Annotated[CacheUsage, OmitFromInput, merge_cache_usage]


class PromptCacheMiddleware(AgentMiddleware[PromptCacheAgentState, Any]):
    """Measure the provider's prompt cache per call; route OpenAI calls by thread.

    Put it innermost (last in `middleware`) so it sees the request as sent;
    `create_context_agent` does. Its record is `cache_usage` in state.

    Args:
        prompt_cache_key: For OpenAI models, set `prompt_cache_key` to the thread's id
            (`True`), to `<this>:<thread id>` (a string: a prefix keeping apps apart),
            or not at all (`False`). A key the request already has is kept.

    Raises:
        TypeError: If `prompt_cache_key` is neither a bool nor a string.

    Example:
        >>> PromptCacheMiddleware().name
        'prompt_cache'
    """

    state_schema = PromptCacheAgentState

    def __init__(self, *, prompt_cache_key: bool | str = True) -> None:
        super().__init__()
        if not isinstance(prompt_cache_key, bool | str):
            msg = f"prompt_cache_key must be a bool or a string, got {prompt_cache_key!r}"
            raise InvalidTypeError(msg)
        self._key = prompt_cache_key
        self._tools = _ToolPrints()
        self._last: OrderedDict[str, tuple[_Shape, int]] = OrderedDict()
        self._requests: OrderedDict[str, ModelRequest[Any]] = OrderedDict()
        self.keep_requests = False
        self._lock = threading.Lock()
        self._model_keyed: tuple[Any, bool] | None = None  # the last model asked, its answer
        self.tools = []

    @property
    def name(self) -> str:
        """The middleware's name in the agent graph."""
        return "prompt_cache"

    def last_request(self, thread: str) -> ModelRequest[Any] | None:
        """The request last sent on `thread`, when `keep_requests` is on (else `None`).

        `CompactionMiddleware(prefix_cache=...)` sends its summarizer this request with
        the instruction appended, so the provider's cache serves it.
        """
        with self._lock:
            return self._requests.get(thread)

    def _prepared(self, request: ModelRequest[Any]) -> tuple[ModelRequest[Any], str]:
        thread = thread_id()
        settings = request.model_settings
        wanted = self._key is not False and thread and "prompt_cache_key" not in settings
        if wanted and self._keyed(resolved_model(request.model)):
            key = thread if self._key is True else f"{self._key}:{thread}"
            request = request.override(model_settings={**settings, "prompt_cache_key": key})
        if self.keep_requests:
            with self._lock:
                self._requests.pop(thread, None)
                self._requests[thread] = request
                if len(self._requests) > _MAX_KEPT_REQUESTS:
                    self._requests.popitem(last=False)
        return request, thread

    def _keyed(self, model: Any) -> bool:
        """`uses_prompt_cache_key(model)`, asked once per model (the agent's is fixed)."""
        known = self._model_keyed
        if known is None or known[0] is not model:
            known = self._model_keyed = (model, uses_prompt_cache_key(model))
        return known[1]

    def _shape(self, request: ModelRequest[Any]) -> _Shape:
        """The request's fingerprint: made only when the reply reports cache figures."""
        system = request.system_message
        return _Shape(
            tools=self._tools(request.tools),
            system=_message_print(system) if system is not None else (0, 0),
            messages=tuple(_message_print(m) for m in request.messages),
        )

    def _recorded(
        self, answer: ModelCallResult[Any], thread: str, sent: ModelRequest[Any]
    ) -> ModelCallResult[Any]:
        response = answer.model_response if isinstance(answer, ExtendedModelResponse) else answer
        result: list[BaseMessage] = (
            response.result if isinstance(response, ModelResponse) else [response]
        )
        reply = next((m for m in reversed(result) if isinstance(m, AIMessage)), None)
        call = reported_cache_call(reply)
        if call is None:
            return answer
        shape = self._shape(sent)
        with self._lock:
            previous = self._last.pop(thread, None)
            self._last[thread] = (shape, call["input"])
            if len(self._last) > _MAX_THREADS:
                self._last.popitem(last=False)
        if previous is not None:
            _judge(call, previous, shape, thread)
        record = CacheUsage(
            calls=1,
            input=call["input"],
            cache_read=call["cache_read"],
            cache_write=call["cache_write"],
            output=call["output"],
            misses=1 if "changed" in call else 0,
            recent=[call],
        )
        # Innermost, the handler answers a plain `ModelResponse` (or an `AIMessage`).
        plain = response if isinstance(response, ModelResponse) else ModelResponse(result=result)
        command: Command[Any] = Command(update={CACHE_USAGE_KEY: record})
        return ExtendedModelResponse(model_response=plain, command=command)

    @signed
    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        """Set the thread's cache key, call the model, record what the cache served."""
        request, thread = self._prepared(request)
        return self._recorded(handler(request), thread, request)

    @signed
    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        """Async twin of `wrap_model_call`."""
        request, thread = self._prepared(request)
        return self._recorded(await handler(request), thread, request)


def _judge(call: CacheCall, previous: tuple[_Shape, int], shape: _Shape, thread: str) -> None:
    """Mark `call` (and log it) when it read less than the previous request's input.

    A prefix cache serves a call what the previous request sent when the call starts
    with all of it; reading less means a part of that prefix changed (the first one is
    named), or the provider no longer held it.
    """
    before, before_input = previous
    if before_input < MIN_CACHED_PREFIX:
        return
    if call["cache_read"] + _SLACK >= before_input - before_input // 10:
        return
    changed, _ = first_change(before, shape)
    call["changed"] = changed or "nothing"
    cause = f"{changed} changed" if changed else "the prefix was the same (evicted or expired)"
    logger.warning(
        "prompt cache: thread %s read %d of the %d input tokens of its previous call; %s",
        thread,
        call["cache_read"],
        before_input,
        cause,
    )


def thread_id() -> str:
    """The running thread's id (`""` outside a run or without a checkpointer)."""
    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:
        return ""
    return str(configurable.get("thread_id") or "")
