"""`create_context_node`: assemble the context before each model call, inside a graph.

The node reads the conversation and any other state, keeps the most recent messages
verbatim, turns everything older plus plan, notes and sources into one budgeted system
message, and writes `[SystemMessage(context), *recent]` to `llm_input_messages`. It
never touches `messages`, so history is not destroyed; the model just sees less of it.

Use it as `pre_model_hook` of `langgraph.prebuilt.create_react_agent` (which reads
`llm_input_messages`), or as a plain node in your own `StateGraph` whose model node
calls the model on `state["llm_input_messages"]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableLambda
from typing_extensions import TypedDict

from langgraph_context._messages import as_messages, content_text
from langgraph_context._state import get_state_value
from langgraph_context.context.builder import ContextBuilder, ContextResult
from langgraph_context.history import safe_cut_points
from langgraph_context.safety.sanitize import sanitize_untrusted

__all__ = [
    "DEFAULT_KEEP_LAST",
    "DEFAULT_NODE_NAME",
    "DEFAULT_OUTPUT_KEY",
    "ContextStateMixin",
    "create_context_node",
]

DEFAULT_KEEP_LAST = 6
DEFAULT_OUTPUT_KEY = "llm_input_messages"
DEFAULT_NODE_NAME = "assemble_context"


class ContextStateMixin(TypedDict, total=False):
    """Adds `llm_input_messages`, the messages the next model call should see."""

    llm_input_messages: list[AnyMessage]


class _StateView:
    """Graph state as the builder's state sources see it: `messages` = older history."""

    def __init__(self, state: Any, older: list[BaseMessage]) -> None:
        self._state = state
        self.messages = older

    def __getattr__(self, name: str) -> Any:
        return get_state_value(self._state, name)


def _split_history(
    messages: list[BaseMessage], keep_last: int
) -> tuple[list[SystemMessage], list[BaseMessage], list[BaseMessage]]:
    head = 0
    while head < len(messages) and isinstance(messages[head], SystemMessage):
        head += 1
    system = [m for m in messages[:head] if isinstance(m, SystemMessage)]
    body = messages[head:]
    if keep_last == 0 or not body:
        return system, body, []
    want = max(0, len(body) - keep_last)
    # First cut at or after `want` that keeps every tool call with its results.
    cut = next((c for c in safe_cut_points(body) if c >= want), len(body))
    if cut == len(body):
        cut = max(c for c in safe_cut_points(body) if c < len(body))
    return system, body[:cut], body[cut:]


def _query(messages: Sequence[BaseMessage], state: Any, query_key: str | None) -> str:
    if query_key is not None:
        return str(get_state_value(state, query_key, ""))
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return content_text(message.content)
    return ""


def create_context_node(
    builder: ContextBuilder | None = None,
    *,
    system_instructions: str | None = None,
    messages_key: str = "messages",
    query_key: str | None = None,
    keep_last: int = DEFAULT_KEEP_LAST,
    output_key: str = DEFAULT_OUTPUT_KEY,
    name: str = DEFAULT_NODE_NAME,
) -> RunnableLambda[Any, dict[str, Any]]:
    """Create a node that writes the assembled context for the next model call.

    The whole model input (context system message plus the recent messages) fits the
    builder's `config.max_tokens`: the recent messages are counted first and the
    context gets the rest. If the recent messages alone are over budget, older ones
    are moved into the context pool, never splitting a tool call from its results.

    Args:
        builder: The `ContextBuilder` (default: `ContextBuilder()`).
        system_instructions: Role text; leading system messages in the history are
            added to it.
        messages_key: State key of the conversation.
        query_key: State key holding the query; default: the last human message.
        keep_last: How many recent messages are passed on verbatim (moved to a tool
            round boundary).
        output_key: State key written (`llm_input_messages` for `pre_model_hook`).
        name: The runnable's name.

    Returns:
        A runnable with sync and async paths, usable as a node or `pre_model_hook`.

    Raises:
        ValueError: If `keep_last` is negative or a key is empty.

    Example:
        >>> node = create_context_node(keep_last=1)
        >>> out = node.invoke({"messages": [{"role": "user", "content": "hi"}]})
        >>> [m.type for m in out["llm_input_messages"]]
        ['system', 'human']
    """
    if keep_last < 0:
        msg = f"keep_last must be >= 0, got {keep_last}"
        raise ValueError(msg)
    for key_name, key in (("messages_key", messages_key), ("output_key", output_key)):
        if not isinstance(key, str) or not key:
            msg = f"{key_name} must be a non-empty string, got {key!r}"
            raise ValueError(msg)
    context_builder = builder or ContextBuilder()
    counter = context_builder.counter
    limit = context_builder.config.max_tokens

    def plan(state: Any) -> tuple[str, str | None, _StateView, list[BaseMessage], int]:
        messages = as_messages(get_state_value(state, messages_key, []))
        system, older, recent = _split_history(messages, keep_last)
        if context_builder.protect_untrusted and context_builder.wrap_untrusted is None:
            recent = [_defused(m) for m in recent]
        while recent and counter(recent) >= limit:
            cuts = [c for c in safe_cut_points(recent) if 0 < c < len(recent)]
            if not cuts:
                break
            older, recent = older + recent[: cuts[0]], recent[cuts[0] :]
        parts = [content_text(m.content) for m in system]
        if system_instructions:
            parts.append(system_instructions)
        instructions = "\n\n".join(p for p in parts if p)
        room = max(1, limit - (counter(recent) if recent else 0))
        query = _query(messages, state, query_key)
        return query, instructions or None, _StateView(state, older), recent, room

    def output(result: ContextResult, recent: list[BaseMessage]) -> dict[str, Any]:
        return {output_key: [SystemMessage(result.text), *recent]}

    def run(state: Any) -> dict[str, Any]:
        query, instructions, view, recent, room = plan(state)
        result = context_builder.build_result(
            query, system_instructions=instructions, state=view, max_tokens=room
        )
        return output(result, recent)

    async def arun(state: Any) -> dict[str, Any]:
        query, instructions, view, recent, room = plan(state)
        result = await context_builder.abuild_result(
            query, system_instructions=instructions, state=view, max_tokens=room
        )
        return output(result, recent)

    return RunnableLambda(run, afunc=arun, name=name)


def _defused(message: BaseMessage) -> BaseMessage:
    """A recent tool result, sanitized (role markers, override phrases, forged tags).

    Tool results kept verbatim for the model are untrusted too; they keep their place
    and id (the state is not touched), only injected instructions are defused.
    """
    if not isinstance(message, ToolMessage) or not isinstance(message.content, str):
        return message
    clean = sanitize_untrusted(message.content)
    return message if clean == message.content else message.model_copy(update={"content": clean})
