"""`create_context_node`: assemble the context before each model call, inside a graph.

The node reads the conversation and any other state, keeps the most recent messages
verbatim, turns everything older plus plan, notes and sources into one budgeted system
message, and writes `[SystemMessage(context), *recent]` to `llm_input_messages`. It
never removes or rewrites a message, so history is not destroyed; the model just sees
less of it. The only change it writes back is metadata: messages that arrived without
a time are stamped with it (`context.stamp`), so later calls can date them.

Use it as `pre_model_hook` of `langgraph.prebuilt.create_react_agent` (which reads
`llm_input_messages`), or as a plain node in your own `StateGraph` whose model node
calls the model on `state["llm_input_messages"]`.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import AnyMessage
from langchain_core.runnables import RunnableLambda
from typing_extensions import TypedDict

from langgraph_context.context._cache_node import cache_node
from langgraph_context.context._focus_node import focus_node
from langgraph_context.context.builder import ContextBuilder
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError

__all__ = [
    "ContextStateMixin",
    "Layout",
    "create_context_node",
]

DEFAULT_KEEP_LAST = 6
Layout = Literal["cache", "focus"]
LAYOUTS: tuple[Layout, ...] = ("cache", "focus")
DEFAULT_OUTPUT_KEY = "llm_input_messages"
DEFAULT_NODE_NAME = "assemble_context"


class ContextStateMixin(TypedDict, total=False):
    """Adds `llm_input_messages`, the messages the next model call should see."""

    llm_input_messages: list[AnyMessage]


def create_context_node(
    builder: ContextBuilder | None = None,
    *,
    system_instructions: str | None = None,
    messages_key: str = "messages",
    query_key: str | None = None,
    keep_last: int = DEFAULT_KEEP_LAST,
    layout: Layout = "cache",
    output_key: str = DEFAULT_OUTPUT_KEY,
    name: str = DEFAULT_NODE_NAME,
    stamp_times: bool = True,
    harden_from_start: bool = False,
) -> RunnableLambda[Any, dict[str, Any]]:
    """Create a node that writes the assembled context for the next model call.

    Two layouts. `"cache"` (default) is built for providers' prompt caches: one
    system message with the instructions, the pinned state and a selection of older
    turns; then the history verbatim from a sticky cut point (it moves forward in
    steps of half the room, so each call's input starts with the previous call's);
    then the plan in a closing message (joined to the last user turn as a block of
    its own when the history ends with one, so roles alternate). `"focus"` rebuilds
    the context for every call around the current query: one system message with
    task, state and the most relevant older turns, then the last `keep_last` messages.

    Either way the messages after the system message are what a provider accepts
    (`messages.provider_ready_history`): unanswered calls are answered "cancelled",
    orphan results and `RemoveMessage`s are not sent, user turns alternate. A
    constraint or hot issue the budget leaves out, or an input over it, is a
    `UserWarning`.

    The whole model input (context system message plus the recent messages) fits the
    builder's `config.max_tokens`. The context always keeps room for its role, task
    and output sections (`ContextBuilder.fixed_tokens`) and at least a third of the
    window for pinned state and older turns (at most half in all); the recent messages
    get the rest. When they are over it, older rounds move into the
    context pool (never splitting a tool call from its results), then the longest
    texts are shortened with a notice, tool results first. Only the model's view is
    shortened: `messages` in state stay whole.

    The output is always one system message first, then at least one other message:
    later system messages in the history (e.g. a summary another node inserted) join
    the context, and with nothing recent the last user turn is passed on. Recent tool
    results are passed on unchanged; with `ContextBuilder(sanitize=True)` they are
    rewritten in-band too (plain and text-block content).

    Args:
        builder: The `ContextBuilder` (default: `ContextBuilder()`).
        system_instructions: Role text; leading system messages in the history are
            added to it.
        messages_key: State key of the conversation.
        query_key: State key holding the query; default: the last human message.
        keep_last: With `layout="focus"`, how many recent messages are passed on
            verbatim (moved to a tool round boundary).
        layout: `"cache"` (a stable prefix and an append-only tail) or `"focus"`.
        output_key: State key written (`llm_input_messages` for `pre_model_hook`).
        name: The runnable's name.
        stamp_times: Stamp messages that arrived without a time with the time the
            node first saw them (`additional_kwargs["timestamp"]`, metadata never
            sent to the model) and return those copies under `messages_key`, for the
            `add_messages` reducer to replace by id. Turn off for a messages key
            without that reducer.
        harden_from_start: Cache layout: the hardening line is in the system message
            from the first call (for a model with tools, so the first tool output
            does not rewrite the cached prefix); otherwise it joins once the history
            holds tool output.

    Returns:
        A runnable with sync and async paths, usable as a node or `pre_model_hook`.

    Raises:
        InvalidArgumentError: If `keep_last` is negative, `layout` is unknown or a key
            or the name is empty (a `ValueError`).
        InvalidTypeError: If an option has the wrong type, such as `keep_last="6"`
            (a `TypeError`).

    Example:
        >>> node = create_context_node(keep_last=1)
        >>> out = node.invoke({"messages": [{"role": "user", "content": "hi"}]})
        >>> [m.type for m in out["llm_input_messages"]]
        ['system', 'human']
    """
    return _context_node(
        builder,
        system_instructions=system_instructions,
        messages_key=messages_key,
        query_key=query_key,
        keep_last=keep_last,
        layout=layout,
        output_key=output_key,
        name=name,
        stamp_times=stamp_times,
        harden_from_start=harden_from_start,
        report_key=None,
    )


def reporting_context_node(
    builder: ContextBuilder | None,
    *,
    layout: Layout,
    keep_last: int,
    output_key: str,
    harden_from_start: bool,
    report_key: str,
) -> RunnableLambda[Any, dict[str, Any]]:
    """`create_context_node` without stamps whose cache layout reports its steady outputs.

    For `ContextMiddleware`: the node (and the checks, with their errors) of
    `create_context_node(builder, layout=..., keep_last=..., output_key=...,
    stamp_times=False, harden_from_start=...)`, where, in the cache layout, an output
    the next call may extend by appending messages carries `(sent, total)` under
    `report_key` beside `output_key` (the conditions are `_cache_node.cache_node`'s),
    so the report travels with the output it is about.
    """
    return _context_node(
        builder,
        system_instructions=None,
        messages_key="messages",
        query_key=None,
        keep_last=keep_last,
        layout=layout,
        output_key=output_key,
        name=DEFAULT_NODE_NAME,
        stamp_times=False,
        harden_from_start=harden_from_start,
        report_key=report_key,
    )


def _context_node(
    builder: ContextBuilder | None,
    *,
    system_instructions: str | None,
    messages_key: str,
    query_key: str | None,
    keep_last: int,
    layout: Layout,
    output_key: str,
    name: str,
    stamp_times: bool,
    harden_from_start: bool,
    report_key: str | None,
) -> RunnableLambda[Any, dict[str, Any]]:
    """Check the options (`create_context_node`'s errors), then build the layout's node."""
    _check_options(
        builder,
        keep_last=keep_last,
        layout=layout,
        keys={"messages_key": messages_key, "output_key": output_key, "name": name},
        flags={"stamp_times": stamp_times, "harden_from_start": harden_from_start},
        texts={"system_instructions": system_instructions, "query_key": query_key},
    )
    context_builder = builder or ContextBuilder()
    if layout == "cache":
        return cache_node(
            context_builder,
            system_instructions,
            messages_key,
            output_key,
            name=name,
            stamp_times=stamp_times,
            harden_from_start=harden_from_start,
            report_key=report_key,
        )
    return focus_node(
        context_builder,
        system_instructions,
        messages_key,
        query_key,
        keep_last,
        output_key,
        name=name,
        stamp_times=stamp_times,
    )


def _check_options(
    builder: Any,
    *,
    keep_last: Any,
    layout: Any,
    keys: dict[str, Any],
    flags: dict[str, Any],
    texts: dict[str, Any],
) -> None:
    """Raise a package error naming the first option of the wrong type or value."""
    if builder is not None and not isinstance(builder, ContextBuilder):
        msg = f"builder must be a ContextBuilder or None, got {type(builder).__name__}"
        raise InvalidTypeError(msg)
    if not isinstance(keep_last, int) or isinstance(keep_last, bool):
        msg = f"keep_last must be an int, got {keep_last!r}"
        raise InvalidTypeError(msg)
    if keep_last < 0:
        msg = f"keep_last must be >= 0, got {keep_last}"
        raise InvalidArgumentError(msg)
    if layout not in LAYOUTS:
        msg = f"layout must be one of {list(LAYOUTS)}, got {layout!r}"
        raise InvalidArgumentError(msg)
    for key_name, key in keys.items():
        if not isinstance(key, str) or not key:
            msg = f"{key_name} must be a non-empty string, got {key!r}"
            raise InvalidArgumentError(msg)
    for flag_name, flag in flags.items():
        if not isinstance(flag, bool):
            msg = f"{flag_name} must be a bool, got {flag!r}"
            raise InvalidTypeError(msg)
    for text_name, text in texts.items():
        if text is not None and not isinstance(text, str):
            msg = f"{text_name} must be a string or None, got {type(text).__name__}"
            raise InvalidTypeError(msg)
