"""`create_offload_node`: the middleware's offload for your own `StateGraph`.

Run it right after your `ToolNode` (whose tools include `read_tool_output` and
`search_history`); the state needs `MessagesState` and `RecallStateMixin`.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langgraph.store.base import BaseStore, PutOp
from langgraph.types import Command

from langgraph_context.compaction.entry import trailing_results
from langgraph_context.messages import as_messages
from langgraph_context.recall.archive import (
    DEFAULT_RECALL_NAMESPACE,
    RECALL_KEY,
    TEXTS_KEY,
    RecallLimits,
    merge_recall,
)
from langgraph_context.recall.middleware import RecallMiddleware
from langgraph_context.state import get_state_value
from langgraph_context.tokens import TokenCounter

__all__ = ["create_offload_node"]

_Step = tuple[dict[str, Any], list[PutOp], BaseStore | None]


def _step(keeper: RecallMiddleware, state: Any, messages_key: str) -> _Step:
    """The state update, the store writes and the store of one run of the node."""
    messages = as_messages(get_state_value(state, messages_key, []))
    cut: list[BaseMessage] = []
    index: dict[str, Any] = {}
    ops: list[PutOp] = []
    store = None
    for result in trailing_results(messages):
        if result.id is None:
            continue
        out, more, where = keeper.offload(result)
        if isinstance(out, Command) and isinstance(out.update, dict):
            cut.extend(out.update["messages"])
            index = merge_recall(index, out.update[RECALL_KEY])
            ops.extend(more)
            store = where or store
        elif out is not result and isinstance(out, ToolMessage):
            cut.append(out)  # minified JSON
    if not cut:
        return {}, [], None
    update: dict[str, Any] = {messages_key: cut}
    if index:
        update[RECALL_KEY] = index
        caps, deletes, _ = keeper.capped_update(
            get_state_value(state, RECALL_KEY, None),
            index,
            get_state_value(state, TEXTS_KEY, None),
        )
        update.update(caps)
        ops.extend(deletes)
    return update, ops, store


def create_offload_node(
    max_result_tokens: int = 1_000,
    *,
    limits: RecallLimits | None = None,
    namespace: tuple[str, ...] = DEFAULT_RECALL_NAMESPACE,
    minify_json: bool = True,
    messages_key: str = "messages",
    token_counter: TokenCounter | BaseLanguageModel | None = None,
    name: str = "offload_tool_output",
) -> RunnableLambda[Any, dict[str, Any]]:
    r"""Create a node that offloads each new tool result over `max_result_tokens`.

    The round that just ran (the tool results at the end of the history) is cut as
    `RecallMiddleware` cuts it, under the same message ids, and each cut result's full
    text is kept under the handle its notice names (the graph's store per user and
    thread when the run names its user, else the `recall` state key).

    Args:
        max_result_tokens: Most tokens one tool result keeps (notice included).
        limits: The thread's caps, checked as each round is offloaded (oldest dropped first).
        namespace: Store prefix.
        minify_json: Minify JSON results before measuring them.
        messages_key: State key of the conversation.
        token_counter: Counter (default: offline tiktoken).
        name: The runnable's name.

    Returns:
        A runnable node returning the cut results and the index entries, or `{}`.

    Raises:
        ValueError: If `max_result_tokens` is not a positive int.

    Example:
        >>> from langchain_core.messages import AIMessage, ToolMessage
        >>> node = create_offload_node(200)
        >>> call = {"name": "cat", "args": {}, "id": "c1"}
        >>> state = {"messages": [AIMessage("", tool_calls=[call]),
        ...     ToolMessage("line\n" * 500, tool_call_id="c1", id="t1")]}
        >>> out = node.invoke(state)
        >>> [handle] = out["recall"]
        >>> handle in out["messages"][0].content
        True
    """
    keeper = RecallMiddleware(
        max_result_tokens,
        limits=limits,
        namespace=namespace,
        minify_json=minify_json,
        token_counter=token_counter,
    )

    def offload(state: Any) -> dict[str, Any]:
        update, ops, store = _step(keeper, state, messages_key)
        if ops and store is not None:
            store.batch(ops)
        return update

    async def aoffload(state: Any) -> dict[str, Any]:
        update, ops, store = _step(keeper, state, messages_key)
        if ops and store is not None:
            await store.abatch(ops)
        return update

    return RunnableLambda(offload, afunc=aoffload, name=name)
