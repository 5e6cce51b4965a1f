"""The context node's `layout="focus"` runnable (private to `context`).

Every call rebuilds one system message around the current query (task, pinned state,
the most relevant older turns) and passes the last `keep_last` messages verbatim.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda

from langgraph_context.compaction.provenance import is_untrusted_compaction
from langgraph_context.context._history import node_history, pinned_lost, warn_if_short
from langgraph_context.context._recent import fit_recent, model_view, request_only
from langgraph_context.context._view import StateView
from langgraph_context.context._window import carries_untrusted
from langgraph_context.context.builder import ContextBuilder
from langgraph_context.context.result import ContextResult
from langgraph_context.context.stamp import without_stamps
from langgraph_context.messages import content_text, provider_ready_history
from langgraph_context.pinned.packets import pinned_packets
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION, fenced_block
from langgraph_context.state import get_state_value, require_state_keys
from langgraph_context.tokens import truncate_text

__all__ = ["focus_node"]

_Stamps = list[BaseMessage]


def _query(messages: Sequence[BaseMessage], state: Any, query_key: str | None) -> str:
    if query_key is not None:
        return str(get_state_value(state, query_key, ""))
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and not is_untrusted_compaction(message):
            return content_text(message.content)
    return ""


def _pinned_cost(builder: ContextBuilder, state: Any) -> int:
    """Tokens the pinned memory takes rendered (fenced when untrusted), generously."""
    if pinned_packets not in builder.state_sources:
        return 0
    packets = pinned_packets(state)
    if not packets:
        return 0
    counter = builder.token_counter
    plain = [p for p in packets if p.is_trusted]
    fenced = fenced_block([p for p in packets if not p.is_trusted])
    text = "\n".join([f"[{p.type}] {p.content}" for p in plain] + [fenced])
    # Each entry's label and the [State] header are written by the builder: room for them.
    return int(counter(text)) + 4 * len(packets) + 8


def _instructions(
    system: Sequence[SystemMessage], system_instructions: str | None, hardening: str
) -> str | None:
    """The role text: leading system messages, the instructions, the hardening line.

    The line is due when recent tool results or compaction messages are passed on as
    they are (the builder adds it itself when it fences a packet, once); it is not
    repeated when an outer middleware already put it there.
    """
    parts = [content_text(m.content) for m in system]
    parts.append(system_instructions or "")
    if hardening and not any(hardening in p for p in parts):
        parts.append(hardening)
    return "\n\n".join(p for p in parts if p) or None


def _context_room(builder: ContextBuilder, state: Any, query: str, instructions: str | None) -> int:
    """Tokens kept for the context message; the recent messages get the rest.

    At least a third of the window (pinned plan, constraints, briefings live there)
    and always its fixed sections, but not more than half: with instructions that
    large, the recent turns still get a fair share. Pinned memory (constraints, hot
    issues) outranks the recent tool text: its room comes first, up to what the
    request itself needs.
    """
    counter = builder.token_counter
    limit = builder.config.max_tokens
    base = builder.fixed_tokens(query, instructions)
    room = min(max(base, limit // 3), limit // 2)
    pinned = _pinned_cost(builder, state)
    if not pinned:
        return room
    request = counter([HumanMessage(query)]) if query else 0
    spare = limit - max(0, counter([SystemMessage("")])) - request
    return max(room, min(base + pinned, spare))


def _without_round(
    builder: ContextBuilder,
    query: str,
    view: StateView,
    recent: list[BaseMessage],
    result: ContextResult,
) -> tuple[list[BaseMessage], int] | None:
    """The recent messages and room for a rebuild, when pinned memory was left out.

    Only the request stays recent; a tool round that cannot shrink further joins the
    older turns in `view` (the context pool): constraints outrank it.
    """
    if not query or len(recent) < 2 or not pinned_lost(result):
        return None
    view.messages, lead = request_only(list(view.messages), recent, query)
    counter = builder.token_counter
    room = max(1, builder.config.max_tokens - counter([SystemMessage("")]) - counter(lead))
    return lead, room


def focus_node(
    builder: ContextBuilder,
    system_instructions: str | None,
    messages_key: str,
    query_key: str | None,
    keep_last: int,
    output_key: str,
    *,
    name: str,
    stamp_times: bool,
) -> RunnableLambda[Any, dict[str, Any]]:
    """The `layout="focus"` node: context around the query, the last messages verbatim."""
    counter = builder.token_counter
    limit = builder.config.max_tokens
    protect = builder.protect_untrusted and builder.wrap_untrusted is None
    hardening = builder.hardening if builder.hardening is not None else HARDENING_INSTRUCTION

    def plan(state: Any) -> tuple[str, str | None, StateView, list[BaseMessage], int, _Stamps]:
        require_state_keys({output_key: "ContextStateMixin"}, node=name)
        messages, stamped = node_history(state, messages_key, stamp_times=stamp_times)
        defuse = builder.detector if builder.sanitize else False
        system, older, recent = model_view(messages, keep_last, defuse=defuse)
        line = hardening if protect and any(map(carries_untrusted, recent)) else ""
        instructions = _instructions(system, system_instructions, line)
        # The query is rendered in [Task] and also stays in the recent turns: a huge
        # pasted message is cut in [Task] to a quarter of the window.
        query = truncate_text(_query(messages, state, query_key), limit // 4, token_counter=counter)
        overhead = max(0, counter([SystemMessage("")]))
        allowed = max(0, limit - overhead - _context_room(builder, state, query, instructions))
        older, recent = fit_recent(older, recent, query, allowed, counter)
        room = max(1, limit - overhead - (counter(recent) if recent else 0))
        view = StateView(state, older, messages_key)
        return query, instructions, view, recent, room, stamped

    def output(
        result: ContextResult, recent: list[BaseMessage], stamped: _Stamps
    ) -> dict[str, Any]:
        sent = [SystemMessage(result.text), *provider_ready_history(without_stamps(recent))]
        warn_if_short(result, sent, counter, limit, node=name)
        update: dict[str, Any] = {output_key: sent}
        return {**update, messages_key: stamped} if stamped else update

    def run(state: Any) -> dict[str, Any]:
        query, instructions, view, recent, room, stamped = plan(state)
        result = builder.build_result(
            query, system_instructions=instructions, state=view, max_tokens=room
        )
        if again := _without_round(builder, query, view, recent, result):
            recent, room = again
            result = builder.build_result(
                query, system_instructions=instructions, state=view, max_tokens=room
            )
        return output(result, recent, stamped)

    async def arun(state: Any) -> dict[str, Any]:
        query, instructions, view, recent, room, stamped = plan(state)
        result = await builder.abuild_result(
            query, system_instructions=instructions, state=view, max_tokens=room
        )
        if again := _without_round(builder, query, view, recent, result):
            recent, room = again
            result = await builder.abuild_result(
                query, system_instructions=instructions, state=view, max_tokens=room
            )
        return output(result, recent, stamped)

    return RunnableLambda(run, afunc=arun, name=name)
