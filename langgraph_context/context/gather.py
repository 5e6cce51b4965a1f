"""Gather: turn graph state, history, instructions and external sources into packets.

Two kinds of source feed a build:

* **state sources**, `(state) -> Iterable[ContextPacket]`, read graph state. The
  defaults (`DEFAULT_STATE_SOURCES`) read `messages`, `plan` and `note`; add your own
  (memory, files, anything in state) by passing a longer sequence.
* **query sources** are searched with the user's query: a LangChain `BaseRetriever`, a
  LangGraph `BaseStore` (searched under a namespace prefix), or a callable
  `(query) -> Iterable[ContextPacket | Document | str]`.

A source that raises is logged and skipped: one broken retriever never fails a build.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.retrievers import BaseRetriever
from langgraph.store.base import BaseStore, Item

from langgraph_context.compaction.provenance import (
    compaction_kind,
    fenced_compaction_message,
    is_trusted_system,
    is_untrusted_compaction,
    mark_later_system,
    split_fenced,
)
from langgraph_context.errors import InvalidTypeError
from langgraph_context.messages import as_messages, content_text
from langgraph_context.packet import ContextPacket
from langgraph_context.pinned.packets import pinned_packets
from langgraph_context.state import get_state_value, render_plan

__all__ = [
    "GatherResult",
    "QuerySource",
    "SourceFailure",
    "StateSource",
    "StoreSource",
    "agather_packets",
    "gather_packets",
    "message_packets",
    "message_time",
    "messages_to_packets",
    "note_packets",
    "plan_packets",
]

logger = logging.getLogger(__name__)

DEFAULT_STORE_LIMIT = 10

StateSource = Callable[[Any], Iterable[ContextPacket]]

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


@dataclass(frozen=True)
class StoreSource:
    """Search a LangGraph `BaseStore` under `namespace` with the user's query.

    Attributes:
        store: The store.
        namespace: Namespace prefix to search (`()` searches everything).
        limit: Maximum items returned.
    """

    store: BaseStore
    namespace: tuple[str, ...] = ()
    limit: int = DEFAULT_STORE_LIMIT


QuerySource = BaseRetriever | BaseStore | StoreSource | Callable[[str], Any]
"""Anything searched with the query: a retriever, a store, or `(query) -> items`."""


@dataclass(frozen=True)
class SourceFailure:
    """A source that raised during gathering (it was skipped).

    Attributes:
        source: A readable name of the source.
        error: The exception's text.
    """

    source: str
    error: str


@dataclass(frozen=True)
class GatherResult:
    """What gathering produced.

    Attributes:
        packets: Every candidate packet, in gather order.
        failures: Sources that raised and were skipped.
    """

    packets: tuple[ContextPacket, ...]
    failures: tuple[SourceFailure, ...] = field(default_factory=tuple)


_TIME_KEYS = ("timestamp", "created_at", "created")


def message_time(message: BaseMessage) -> float | None:
    """When a message entered the thread, in POSIX seconds, if it says so.

    Read from `additional_kwargs["timestamp"]` (what a caller or node stamps), then the
    provider's `response_metadata` (`timestamp`, `created_at`, `created`): an ISO 8601
    string or a number of seconds (milliseconds above 1e12). Naive ISO times are UTC.

    Args:
        message: A LangChain message.

    Returns:
        The time, or `None` when the message carries none.

    Example:
        >>> message_time(HumanMessage("hi", additional_kwargs={"timestamp": "2023-05-08T13:56:00"}))
        1683554160.0
    """
    for holder in (message.additional_kwargs, message.response_metadata):
        for key in _TIME_KEYS if holder and isinstance(holder, dict) else ():
            value = holder.get(key)
            stamp = None if value is None else _seconds(value)
            if stamp is not None:
                return stamp
    return None


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) / 1000 if value > 1e12 else float(value)
    if isinstance(value, str) and value:
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
    return None


def _message_packet(message: BaseMessage, position: int) -> ContextPacket:
    role = _ROLES.get(message.type, message.type)
    text = content_text(message.content)
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = ", ".join(f"{tc['name']}({tc['args']})" for tc in message.tool_calls)
        text = f"{text}\n[calls {calls}]" if text else f"[calls {calls}]"
    speaker = message.name or role
    if is_trusted_system(message):
        packet_type, trusted = "system", True
    elif isinstance(message, SystemMessage):
        # Not the developer's leading instructions: another node's text, read as data.
        packet_type, trusted = "message", False
    elif message.type == "tool":
        packet_type, trusted = "tool", False
    else:
        # Only the user's turns are trusted: the model's may repeat injected tool output.
        packet_type, trusted = "message", isinstance(message, HumanMessage)
    return ContextPacket(
        text if packet_type == "system" else f"{speaker}: {text}",
        type=packet_type,
        source=message.id or f"message-{position}",
        timestamp=message_time(message),
        trusted=trusted,
        metadata={"role": role, "speaker": speaker, "position": position, "thread": "messages"},
    )


def _compaction_packets(message: BaseMessage, position: int) -> list[ContextPacket]:
    """A compaction message by provenance, not role: only its unfenced part is trusted.

    That part is compaction's own header and the user's quoted requests; the fenced
    text (tool-derived lines, a model's summary) becomes untrusted packets, fenced
    again by the builder. A message stored without a fence is untrusted whole.
    """
    fenced = fenced_compaction_message(message)
    outside, bodies = split_fenced(content_text(fenced.content))
    if fenced is not message:  # stored unfenced by an older version: all of it is data
        outside, bodies = "", [content_text(message.content)]
    kind = compaction_kind(message) or "compaction"
    source = message.id or f"message-{position}"
    meta = {"role": "user", "speaker": "user", "position": position, "thread": "messages"}
    packets: list[ContextPacket] = []
    if outside:
        trusted = ContextPacket(
            f"user: {outside}", type="message", source=source, trusted=True, metadata=meta
        )
        packets.append(trusted)
    packets.extend(
        ContextPacket(body, type=kind, source=f"{source}#{i}", trusted=False, metadata=meta)
        for i, body in enumerate(bodies)
    )
    return packets


def messages_to_packets(messages: Sequence[Any]) -> list[ContextPacket]:
    """Convert a history (LangChain messages or OpenAI-style dicts) into packets.

    Leading system messages (and ones marked trusted, `trusted_system_message`) become
    `system` packets; a system message further down is untrusted data, a `message`
    packet like the rest (`compaction.mark_later_system`). Tool results become `tool`
    packets (untrusted), everything else `message` packets whose content is
    `"<speaker>: <text>"`, where the speaker is the message's `name` or its role; only
    the user's turns are trusted (the model's may repeat injected tool output). A
    message compaction wrote is judged by its marker, not its role: its fenced text
    becomes untrusted `snapshot` or `summary` packets, only the rest (the user's
    quoted requests) a trusted one.

    Args:
        messages: The history, oldest first.

    Returns:
        One packet per message, in order, with `position` and `speaker` metadata.

    Example:
        >>> [p.content for p in messages_to_packets([{"role": "user", "content": "hi"}])]
        ['user: hi']
    """
    packets: list[ContextPacket] = []
    for i, message in enumerate(mark_later_system(as_messages(messages))):
        if is_untrusted_compaction(message):
            packets.extend(_compaction_packets(message, i))
        else:
            packets.append(_message_packet(message, i))
    return packets


def message_packets(state: Any) -> list[ContextPacket]:
    """State source: the `messages` of `state` as packets (see `messages_to_packets`).

    Args:
        state: Graph state (dict or object).

    Returns:
        The packets, oldest first.
    """
    return messages_to_packets(get_state_value(state, "messages", []))


def plan_packets(state: Any) -> list[ContextPacket]:
    """State source: the `plan` of `state` as one pinned, untrusted packet (empty: none).

    The model writes the plan (and may repeat injected tool output in it), so it is
    fenced as data, like a model-recorded constraint.

    Args:
        state: Graph state (dict or object).

    Returns:
        Zero or one `plan` packet.
    """
    plan = get_state_value(state, "plan", [])
    if not plan:
        return []
    return [
        ContextPacket(
            "Plan:\n" + render_plan(list(plan)),
            type="plan",
            source="plan",
            pinned=True,
            trusted=False,
        )
    ]


def note_packets(state: Any) -> list[ContextPacket]:
    """State source: each entry of the `note` mapping of `state` as a `note` packet.

    Args:
        state: Graph state (dict or object).

    Returns:
        One packet per note, sorted by name, sourced `note:<name>`.
    """
    notes: Mapping[str, str] = get_state_value(state, "note", {})
    return [
        ContextPacket(f"Note {name}:\n{text}", type="note", source=f"note:{name}")
        for name, text in sorted(notes.items())
    ]


DEFAULT_STATE_SOURCES: tuple[StateSource, ...] = (
    message_packets,
    plan_packets,
    note_packets,
    pinned_packets,
)
"""Messages, plan, notes, and pinned items (active constraints and hot issues)."""


def _as_packet(item: Any, origin: str) -> ContextPacket:
    if isinstance(item, ContextPacket):
        return item
    if isinstance(item, Document):
        metadata = dict(item.metadata)
        source = item.id or metadata.get("source") or metadata.get("id")
        return ContextPacket(
            item.page_content,
            type="retrieved",
            source=str(source) if source is not None else origin,
            metadata=metadata,
        )
    if isinstance(item, Item):
        value = item.value
        text = value.get("content") or value.get("text") if isinstance(value, dict) else None
        return ContextPacket(
            str(text) if text is not None else str(value),
            type="memory",
            source="/".join((*item.namespace, item.key)),
            metadata={"namespace": item.namespace, "key": item.key},
        )
    if isinstance(item, str):
        return ContextPacket(item, type="retrieved", source=origin)
    msg = f"source {origin} returned {type(item).__name__}; expected ContextPacket, Document or str"
    raise InvalidTypeError(msg)


def _source_name(source: Any) -> str:
    if isinstance(source, StoreSource):
        return f"store{source.namespace!r}"
    return getattr(source, "__name__", None) or type(source).__name__


def _query_sync(source: Any, query: str) -> Iterable[Any]:
    if isinstance(source, BaseRetriever):
        return source.invoke(query)
    if isinstance(source, StoreSource):
        return source.store.search(source.namespace, query=query, limit=source.limit)
    if isinstance(source, BaseStore):
        return source.search((), query=query, limit=DEFAULT_STORE_LIMIT)
    return source(query)  # type: ignore[no-any-return]


def _refuse_awaitable(result: Any, name: str) -> None:
    """Raise for an async source in a sync build: a programmer's mistake, not a failure.

    Raises:
        InvalidTypeError: Naming the source and the async twin to call.
    """
    if inspect.isawaitable(result):
        _close(result)
        msg = (
            f"sources: {name} is async and cannot run in a sync build; call the async "
            "twin (abuild, abuild_result, agather_packets) or pass a sync source"
        )
        raise InvalidTypeError(msg)


def _close(awaitable: Awaitable[Any]) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()


async def _query_async(source: Any, query: str) -> Iterable[Any]:
    if isinstance(source, BaseRetriever):
        return await source.ainvoke(query)
    if isinstance(source, StoreSource):
        return await source.store.asearch(source.namespace, query=query, limit=source.limit)
    if isinstance(source, BaseStore):
        return await source.asearch((), query=query, limit=DEFAULT_STORE_LIMIT)
    result = source(query)
    if inspect.isawaitable(result):
        result = await result
    return result  # type: ignore[no-any-return]


def _base_packets(
    state: Any,
    conversation_history: Sequence[Any] | None,
    system_instructions: str | None,
    custom_packets: Iterable[ContextPacket] | None,
    state_sources: Sequence[StateSource],
    failures: list[SourceFailure],
) -> list[ContextPacket]:
    packets: list[ContextPacket] = []
    if system_instructions:
        packets.append(
            ContextPacket(system_instructions, type="system", source="system", pinned=True)
        )
    if state is not None:
        for source in state_sources:
            try:
                # Materialized first: a source that fails part-way contributes nothing.
                packets.extend(list(source(state)))
            except Exception as exc:
                _record(failures, _source_name(source), exc)
    if conversation_history:
        packets.extend(messages_to_packets(conversation_history))
    packets.extend(custom_packets or ())
    return packets


def _record(failures: list[SourceFailure], name: str, exc: BaseException) -> None:
    logger.warning("context source %s failed and was skipped: %r", name, exc)
    failures.append(SourceFailure(name, repr(exc)))


def gather_packets(
    query: str,
    *,
    state: Any = None,
    conversation_history: Sequence[Any] | None = None,
    system_instructions: str | None = None,
    custom_packets: Iterable[ContextPacket] | None = None,
    sources: Sequence[QuerySource] = (),
    state_sources: Sequence[StateSource] = DEFAULT_STATE_SOURCES,
) -> GatherResult:
    """Collect candidate packets from every input and source.

    Order: system instructions, state sources (in order), the conversation history,
    custom packets, then each query source's results.

    Args:
        query: The user's query, passed to query sources.
        state: Graph state read by `state_sources` (skipped when `None`).
        conversation_history: Messages or OpenAI-style dicts.
        system_instructions: Becomes a pinned `system` packet.
        custom_packets: Added as they are.
        sources: Query sources: `BaseRetriever`, `BaseStore`, `StoreSource`, or a
            callable `(query) -> Iterable[ContextPacket | Document | str]`.
        state_sources: Callables `(state) -> Iterable[ContextPacket]`.

    Returns:
        The packets and the sources that failed (logged and skipped).

    Example:
        >>> result = gather_packets("q", custom_packets=[ContextPacket("fact")])
        >>> [p.content for p in result.packets]
        ['fact']
    """
    failures: list[SourceFailure] = []
    packets = _base_packets(
        state, conversation_history, system_instructions, custom_packets, state_sources, failures
    )
    for source in sources:
        name = _source_name(source)
        try:
            found = _query_sync(source, query)
        except Exception as exc:
            _record(failures, name, exc)
            continue
        _refuse_awaitable(found, name)  # outside the try: it must not be skipped
        try:
            packets.extend([_as_packet(item, name) for item in found])
        except Exception as exc:
            _record(failures, name, exc)
    return GatherResult(tuple(packets), tuple(failures))


async def agather_packets(
    query: str,
    *,
    state: Any = None,
    conversation_history: Sequence[Any] | None = None,
    system_instructions: str | None = None,
    custom_packets: Iterable[ContextPacket] | None = None,
    sources: Sequence[QuerySource] = (),
    state_sources: Sequence[StateSource] = DEFAULT_STATE_SOURCES,
) -> GatherResult:
    """Async twin of `gather_packets`: query sources are awaited (`ainvoke`, `asearch`).

    Args:
        query: The user's query, passed to query sources.
        state: Graph state read by `state_sources` (skipped when `None`).
        conversation_history: Messages or OpenAI-style dicts.
        system_instructions: Becomes a pinned `system` packet.
        custom_packets: Added as they are.
        sources: Query sources; callables may be sync or async.
        state_sources: Callables `(state) -> Iterable[ContextPacket]`.

    Returns:
        The packets and the sources that failed (logged and skipped).
    """
    failures: list[SourceFailure] = []
    packets = _base_packets(
        state, conversation_history, system_instructions, custom_packets, state_sources, failures
    )
    for source in sources:
        name = _source_name(source)
        try:
            found = [_as_packet(item, name) for item in await _query_async(source, query)]
            packets.extend(found)
        except Exception as exc:
            _record(failures, name, exc)
    return GatherResult(tuple(packets), tuple(failures))
