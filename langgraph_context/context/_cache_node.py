"""The context node's `layout="cache"` runnable (private to `context`).

See `_window` for the layout: a stable system message, the history verbatim from a
sticky cut, the plan in a closing message.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda

from langgraph_context._memo import RecentMemo
from langgraph_context.compaction.provenance import fenced_compaction_message
from langgraph_context.context._calls import Call, Steps, adrive, drive
from langgraph_context.context._defuse import defused
from langgraph_context.context._history import node_history, pinned_lost, warn_if_short
from langgraph_context.context._reuse import HeadBuilds
from langgraph_context.context._shorten import shorten_messages
from langgraph_context.context._view import StateView
from langgraph_context.context._window import (
    boundary_floor,
    carries_untrusted,
    lead_turn,
    split_pinned,
    state_tail,
    sticky_cut,
)
from langgraph_context.context.builder import ContextBuilder
from langgraph_context.context.result import ContextResult
from langgraph_context.context.stamp import without_stamps
from langgraph_context.messages import content_text, provider_ready_history
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION
from langgraph_context.state import require_state_keys
from langgraph_context.tokens import TiktokenCounter, TokenCounter

__all__ = ["cache_node"]

_Stamps = list[BaseMessage]
Report = tuple[list[BaseMessage], int]
"""`(sent, total)` under the node's `report_key`: an output the next call may extend.

Written beside the output `sent` (the very list) when the whole history was sent (no
cut) and counted `total` (additive: a `TiktokenCounter`'s per-message counts),
hardened already, with no later system message, no plan message, no sanitizing
rewrite, no pinned item left out, and a system head that is a function of the state
values `HeadBuilds` keys it by (`agents/_steady` extends it by appending messages)."""


def _verbatim(
    builder: ContextBuilder, older: list[BaseMessage], window: list[BaseMessage]
) -> list[BaseMessage]:
    """The window as sent: opened by a user turn, compaction messages fenced."""
    window = [*lead_turn(older, window), *window]
    if builder.sanitize:  # `defused` fences compaction messages too
        return [defused(m, builder.detector) for m in window]
    # Compaction writes user messages only (`compaction_kind`): the rest pass as they are.
    kinds = list(map(type, window))
    if any(k is not HumanMessage and issubclass(k, HumanMessage) for k in set(kinds)):
        return [fenced_compaction_message(m) if isinstance(m, HumanMessage) else m for m in window]
    # The user messages found by C-level scans of the types (a few in a long window).
    at = -1
    while (at := _index(kinds, HumanMessage, at + 1)) >= 0:
        window[at] = fenced_compaction_message(window[at])
    return window


def _index(items: list[Any], value: Any, start: int) -> int:
    """`items.index(value, start)`, or -1."""
    try:
        return items.index(value, start)
    except ValueError:
        return -1


def _instructions(
    system: list[SystemMessage], system_instructions: str | None, hardening: str
) -> str | None:
    """The system message's role text: leading system messages, instructions, hardening."""
    parts = [content_text(m.content) for m in system if m.content]
    parts.append(system_instructions or "")
    if hardening and any(hardening in p for p in parts):
        hardening = ""  # an outer middleware (compaction) already hardened the prompt
    return "\n\n".join(p for p in [*parts, hardening] if p) or None


def _head(builder: ContextBuilder, instructions: str | None) -> int:
    """The system message's share of the window: its fixed sections, a quarter to a half."""
    limit = builder.config.max_tokens
    return min(max(builder.fixed_tokens("", instructions), limit // 4), limit // 2)


def _counted(
    counter: TokenCounter, heads: RecentMemo[int], system: str, items: list[BaseMessage]
) -> int:
    """`counter([SystemMessage(system), *items])`, reading back the counts of last calls.

    A `TiktokenCounter` counts a list as its priming plus each message's count: the
    system message's count with the priming is kept in `heads`, and `items` are
    counted by the counter's running counts (`TiktokenCounter.running_counts`), which
    the compaction's no-op check shares and which count a message edited in place
    again. Any other counter counts the whole list.
    """
    if type(counter) is not TiktokenCounter or not items:
        return int(counter([SystemMessage(system), *items]))
    head = heads.get(system)  # the system message's count with the priming
    if head is None:
        head = int(counter([SystemMessage(system)]))
        heads.put(system, head)
    return head + counter.running_counts(items).total()


def _sent(
    systems: RecentMemo[SystemMessage], system: str, rest: list[BaseMessage]
) -> list[BaseMessage]:
    """The model input: the system message, then `rest` provider-ready, without stamps.

    The plan joins the last user turn when it follows one (roles alternate). `rest`
    is made provider-ready before its stamps go (equal messages either way): it holds
    the repaired history's own objects, whose walks are remembered. The system message
    of the same text is the last call's (`systems`): nothing changes a sent message.
    """
    head = systems.get(system)
    if head is None:
        head = SystemMessage(system)
        systems.put(system, head)
    return [head, *without_stamps(provider_ready_history(rest))]


def _built(
    memo: HeadBuilds, builder: ContextBuilder, view: StateView, instructions: str | None, head: int
) -> Steps[ContextResult]:
    """The system head over `view`; over no messages, read back while its state is the same."""
    # The state the default sources read past the view (messages and plan are not these).
    key = None if view.messages else memo.key(builder, view._state, instructions, head)
    known = memo.get(key, builder)
    if known is not None:
        return known
    kwargs = {"system_instructions": instructions, "state": view, "max_tokens": head}
    made: ContextResult = yield Call(builder.build_result, builder.abuild_result, ("",), kwargs)
    memo.keep(key, made)
    return made


def _update(update: dict[str, Any], messages_key: str, stamped: _Stamps) -> dict[str, Any]:
    """The node's update, plus the newly stamped messages (replaced by id in state)."""
    return {**update, messages_key: stamped} if stamped else update


def _head_builder(builder: ContextBuilder) -> tuple[ContextBuilder, bool, str]:
    """`(builder of the system head, whether untrusted text is protected, hardening line)`."""
    # The system message renders no task and no output section (they would change
    # with every request); its share of the window is fixed, so its selection only
    # changes when the turns before the window or the pinned state do.
    head_builder = copy.copy(builder)
    head_builder.config = dataclasses.replace(builder.config, output_instructions="")
    protect = builder.protect_untrusted and builder.wrap_untrusted is None
    # The hardening text is due from the first call when the model has tools (its
    # arrival would rewrite the prefix), else once untrusted text is in the input.
    hardening = builder.hardening if builder.hardening is not None else HARDENING_INSTRUCTION
    head_builder.hardening = "" if protect else head_builder.hardening
    return head_builder, protect, hardening


def cache_node(
    builder: ContextBuilder,
    system_instructions: str | None,
    messages_key: str,
    output_key: str,
    *,
    name: str,
    stamp_times: bool,
    harden_from_start: bool = False,
    report_key: str | None = None,
) -> RunnableLambda[Any, dict[str, Any]]:
    """The `layout="cache"` node: stable system message, sticky window, plan last.

    With `harden_from_start` the hardening line is there from the first call; with
    `report_key` a steady output carries its `Report` under that key.
    """
    counter, limit = builder.token_counter, builder.config.max_tokens
    head_builder, protect, hardening = _head_builder(builder)
    if builder.sanitize or type(counter) is not TiktokenCounter:
        report_key = None  # a rewrite per message, or counts that may not add up
    heads = RecentMemo[int](2)  # `_counted`
    heads_built = HeadBuilds()  # the system head over no messages, read back (`_reuse`)
    systems = RecentMemo[SystemMessage](1)  # the latest system message sent (`_sent`)

    def steps(state: Any) -> Steps[dict[str, Any]]:
        require_state_keys({output_key: "ContextStateMixin"}, node=name)
        messages, stamped = node_history(state, messages_key, stamp_times=stamp_times)
        system, later, body = split_pinned(messages)
        tail = state_tail(state)
        # Tool output, a compaction message, a later system message, the fenced plan:
        due = bool(harden_from_start or later or tail) or any(map(carries_untrusted, body))

        line = hardening if protect else ""
        instructions = _instructions(system, system_instructions, line if due else "")
        head = _head(builder, instructions)

        def build(older: list[BaseMessage]) -> Steps[ContextResult]:
            view = StateView(state, [*older, *later], messages_key, frozenset({"plan"}))
            return _built(heads_built, head_builder, view, instructions, head)

        def done(result: ContextResult, rest: _Stamps, total: int | None) -> dict[str, Any]:
            sent = _sent(systems, result.text, rest)
            # `fits`: this system message and `rest` were counted within the limit; the
            # stamps removed are not counted, merging and dropping only take tokens
            # away, so unless the last repair added results, the count would repeat.
            fits = total is not None and len(sent) <= len(rest) + 1
            warn_if_short(result, sent, counter, limit, node=name, fits=fits)
            update: dict[str, Any] = {output_key: sent}
            if report_key is not None and total is not None and fits and due and not later:
                steady = bool(body) and not tail and not pinned_lost(result)
                if steady and heads_built.key(head_builder, state, instructions, head):
                    update[report_key] = (sent, total)
            return _update(update, messages_key, stamped)

        # While the whole history fits beside the system message as it is, it is sent
        # whole: the share set aside for turns before the window waits until there are
        # some, so nothing moves before the budget is really reached.
        whole = yield from build([])
        if line and not due and any(not p.is_trusted for p in whole.selected):
            # Pinned state is fenced (notes, recorded rules, hot issues): harden too.
            instructions = _instructions(system, system_instructions, line)
            head = _head(builder, instructions)
            whole = yield from build([])
        window = _verbatim(builder, [], body)
        total = _counted(counter, heads, whole.text, [*window, *tail])
        if total <= limit:
            return done(whole, [*window, *tail], total)
        overhead = max(0, counter([SystemMessage("")]))
        room = max(0, limit - overhead - head - (counter(tail) if tail else 0))
        cut = sticky_cut(body, room, counter)
        floor = boundary_floor(body)  # a provider compaction block stays whole in the window
        cut = cut if floor is None else min(cut, floor)
        window = _verbatim(builder, body[:cut], body[cut:])
        if window and counter(window) > room:
            window = shorten_messages(window, room, counter)
        result = (yield from build(body[:cut])) if cut else whole
        return done(result, [*window, *tail], None)

    def run(state: Any) -> dict[str, Any]:
        return drive(steps(state))

    async def arun(state: Any) -> dict[str, Any]:
        return await adrive(steps(state))

    return RunnableLambda(run, afunc=arun, name=name)
