"""`read_tool_output` and `search_history`: the model reads back what was cut or evicted.

Both look a handle up in the thread's own index (`recall` state), so a handle of
another thread or user is unknown here, and fetch its text from the entry (state)
or from the run's store namespace (`recall_namespace`). A wrong handle, range or
pattern comes back as an error `ToolMessage` naming what is valid; the state is
never changed. What they return is tool output: fenced as untrusted data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore

from langgraph_context.packet import ContextPacket
from langgraph_context.recall.archive import (
    DEFAULT_RECALL_NAMESPACE,
    RECALL_KEY,
    TEXTS_KEY,
    RecallEntry,
    entry_text,
    found_texts,
    held_texts,
    recall_namespace,
)
from langgraph_context.recall.read import PageError, read_page, search_passages
from langgraph_context.safety import fenced_block
from langgraph_context.tokens import TokenCounter, resolve_counter
from langgraph_context.toolkit import ToolSpec, error_result

__all__ = [
    "create_read_tool_output_tool",
    "create_search_history_tool",
]

DEFAULT_PAGE_TOKENS = 800
_SHOWN_HANDLES = 10

# Sent with every call (issue 33: the bill must not rise with recall on), so one short
# sentence each; how to page (offset or pattern) is in the cut notice that names a handle.
READ_TOOL_OUTPUT = ToolSpec("read_tool_output", "Read kept text by handle.")
SEARCH_HISTORY = ToolSpec("search_history", "Search earlier messages and outputs.")


class _Unknown(PageError):
    """A handle this thread does not hold."""


def _index(runtime: ToolRuntime, key: str = RECALL_KEY) -> Mapping[str, Any]:
    state = runtime.state
    index = state.get(key) if isinstance(state, Mapping) else None
    return index if isinstance(index, Mapping) else {}


def _entry(runtime: ToolRuntime, handle: Any) -> RecallEntry:
    index: Mapping[str, RecallEntry] = _index(runtime)
    entry = index.get(handle) if isinstance(handle, str) else None
    if entry is None:
        known = list(index)[-_SHOWN_HANDLES:]
        listed = ", ".join(known) if known else "none yet"
        msg = f"no kept text {handle!r} in this conversation; handles here: {listed}"
        raise _Unknown(msg)
    return entry


def _where(runtime: ToolRuntime, namespace: tuple[str, ...]) -> tuple[BaseStore, tuple[str, ...]]:
    where = recall_namespace(runtime.config, runtime.context, namespace=namespace)
    if runtime.store is None or where is None:
        msg = "this text is kept in the store under the run's user; this run names no user"
        raise PageError(msg)
    return runtime.store, where


def _stored(value: Any, handle: str) -> str:
    text = value.get("text") if isinstance(value, Mapping) else None
    if not isinstance(text, str):
        msg = f"the text of {handle!r} is no longer kept (dropped or expired)"
        raise PageError(msg)
    return text


def _page_args(offset: Any, lines: Any, pattern: Any) -> dict[str, Any]:
    """`read_page` arguments: `lines=0` is as many as fit, `pattern=""` is none."""
    return {
        "offset": offset,
        "lines": None if lines == 0 and not isinstance(lines, bool) else lines,
        "pattern": None if pattern == "" else pattern,
    }


def _page(
    handle: str, entry: RecallEntry, text: str, args: dict[str, Any], spec: tuple[int, TokenCounter]
) -> str:
    max_result_tokens, counter = spec
    where, page = read_page(
        text, **args, max_result_tokens=max_result_tokens, token_counter=counter
    )
    head = f"{handle} ({entry.get('kind', 'output')} of {entry.get('source', '?')}): {where}"
    if not page:
        return head
    return "\n".join([head, fenced_block([ContextPacket(page, type="kept", source=handle)])])


def _hits(query: str, texts: list[tuple[str, str]], spec: tuple[int, TokenCounter]) -> str:
    max_result_tokens, counter = spec
    if not isinstance(query, str) or not query.strip():
        msg = "query must be non-empty text"
        raise PageError(msg)
    hits = search_passages(query, texts, max_result_tokens=max_result_tokens, token_counter=counter)
    if not hits:
        return f"nothing kept in this conversation matches {query!r}"
    packets = [
        ContextPacket(body, type="kept", source=f"{handle} lines {first}-{last}")
        for handle, first, last, body in hits
    ]
    head = f"{len(hits)} passages for {query!r}, best first (read more with read_tool_output):"
    return "\n".join([head, fenced_block(packets)])


def _answer(runtime: ToolRuntime, work: Any) -> ToolMessage:
    call_id = runtime.tool_call_id or ""
    try:
        return ToolMessage(work(), tool_call_id=call_id)
    except PageError as error:
        return error_result(f"Error: {error}", call_id)


async def _aanswer(runtime: ToolRuntime, work: Any) -> ToolMessage:
    call_id = runtime.tool_call_id or ""
    try:
        return ToolMessage(await work(), tool_call_id=call_id)
    except PageError as error:
        return error_result(f"Error: {error}", call_id)


def create_read_tool_output_tool(
    *,
    max_result_tokens: int = DEFAULT_PAGE_TOKENS,
    namespace: tuple[str, ...] = DEFAULT_RECALL_NAMESPACE,
    token_counter: TokenCounter | None = None,
    name: str | None = None,
    description: str | None = None,
) -> BaseTool:
    """Create the tool that reads one page of a kept text by its handle.

    Args:
        max_result_tokens: Most tokens of the page's lines.
        namespace: The store prefix the texts are kept under (`RecallMiddleware`'s).
        token_counter: Counter for the cap (default: offline tiktoken).
        name: Tool name (default `read_tool_output`).
        description: Tool description.

    Returns:
        The tool (it reads the `recall` state key and the graph's store).

    Example:
        >>> create_read_tool_output_tool().name
        'read_tool_output'
    """
    spec = READ_TOOL_OUTPUT.customize(name=name, description=description)
    cap = (max_result_tokens, resolve_counter(token_counter))

    def read_tool_output(
        handle: str,
        runtime: ToolRuntime,
        offset: int = 1,
        pattern: str = "",
    ) -> ToolMessage:
        """Read a kept text."""

        def work() -> str:
            entry = _entry(runtime, handle)
            text = entry_text(handle, entry, _index(runtime, TEXTS_KEY))
            if text is None:
                store, where = _where(runtime, namespace)
                item = store.get(where, handle)
                text = _stored(item.value if item else None, handle)
            return _page(handle, entry, text, _page_args(offset, 0, pattern), cap)

        return _answer(runtime, work)

    async def aread_tool_output(
        handle: str,
        runtime: ToolRuntime,
        offset: int = 1,
        pattern: str = "",
    ) -> ToolMessage:
        """Read a kept text."""

        async def work() -> str:
            entry = _entry(runtime, handle)
            text = entry_text(handle, entry, _index(runtime, TEXTS_KEY))
            if text is None:
                store, where = _where(runtime, namespace)
                item = await store.aget(where, handle)
                text = _stored(item.value if item else None, handle)
            return _page(handle, entry, text, _page_args(offset, 0, pattern), cap)

        return await _aanswer(runtime, work)

    return spec.build(read_tool_output, coroutine=aread_tool_output)


def create_search_history_tool(
    *,
    max_result_tokens: int = DEFAULT_PAGE_TOKENS,
    namespace: tuple[str, ...] = DEFAULT_RECALL_NAMESPACE,
    token_counter: TokenCounter | None = None,
    name: str | None = None,
    description: str | None = None,
) -> BaseTool:
    """Create the tool that ranks the thread's kept texts against a query.

    Args:
        max_result_tokens: Most tokens of the passages returned.
        namespace: The store prefix the texts are kept under (`RecallMiddleware`'s).
        token_counter: Counter for the cap (default: offline tiktoken).
        name: Tool name (default `search_history`).
        description: Tool description.

    Returns:
        The tool (it reads the `recall` state key and the graph's store).

    Example:
        >>> create_search_history_tool().name
        'search_history'
    """
    spec = SEARCH_HISTORY.customize(name=name, description=description)
    cap = (max_result_tokens, resolve_counter(token_counter))

    def search_history(query: str, runtime: ToolRuntime) -> ToolMessage:
        """Search kept texts."""

        def work() -> str:
            kept = held_texts(runtime.state)
            stored: dict[str, Any] = {}
            if any(text is None for _, text in kept):
                store, where = _where(runtime, namespace)
                items = store.search(where, limit=len(kept) + _SHOWN_HANDLES)
                stored = {item.key: item.value for item in items}
            return _hits(query, found_texts(kept, stored), cap)

        return _answer(runtime, work)

    async def asearch_history(query: str, runtime: ToolRuntime) -> ToolMessage:
        """Search kept texts."""

        async def work() -> str:
            kept = held_texts(runtime.state)
            stored: dict[str, Any] = {}
            if any(text is None for _, text in kept):
                store, where = _where(runtime, namespace)
                items = await store.asearch(where, limit=len(kept) + _SHOWN_HANDLES)
                stored = {item.key: item.value for item in items}
            return _hits(query, found_texts(kept, stored), cap)

        return await _aanswer(runtime, work)

    return spec.build(search_history, coroutine=asearch_history)
