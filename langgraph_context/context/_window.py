"""The cache-stable layout of the context node (private to `context`).

Providers bill input that repeats the previous request's prefix at about a tenth of
the price. So the model input is laid out as a stable prefix plus an append-only
tail:

1. one system message: the instructions and the slowly changing pinned state
   (constraints, hot issues, note names) and a selection of the turns before the
   window, rendered deterministically;
2. the window: the history verbatim from a *sticky* cut point to the end. The cut
   moves forward only in steps of half the window's room, so between two moves every
   call's input starts with the previous call's input;
3. a closing user-side message with what changes every call (the plan, fenced:
   the model wrote it), kept last so it never breaks the prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_context.compaction.provenance import is_trusted_system, is_untrusted_compaction
from langgraph_context.messages import (
    content_text,
    last_provider_compaction,
    safe_cut_points,
    tool_result_ids,
)
from langgraph_context.packet import ContextPacket
from langgraph_context.safety.boundary import keyed_boundary, wrap_untrusted
from langgraph_context.state import get_state_value, render_plan
from langgraph_context.tokens import TokenCounter

__all__ = [
    "CONTINUE_NOTICE",
    "STATE_NOTICE",
    "boundary_floor",
    "carries_untrusted",
    "is_state_tail",
    "lead_turn",
    "split_pinned",
    "state_tail",
    "sticky_cut",
]

STATE_NOTICE = "[Your plan, kept by your tools; not a new request]"
CONTINUE_NOTICE = "[The conversation so far is summarized in the system message.]"


def split_pinned(
    messages: Sequence[BaseMessage],
) -> tuple[list[SystemMessage], list[BaseMessage], list[BaseMessage]]:
    """Leading system messages, later system messages, and the rest in order.

    Providers such as Anthropic take system text only at the very start: a system
    message further down (a summary another node inserted), or one marked untrusted
    (`compaction.mark_later_system`), joins the context instead, as data.
    """
    lead = 0
    while lead < len(messages) and is_trusted_system(messages[lead]):
        lead += 1
    system = [m for m in messages[:lead] if isinstance(m, SystemMessage)]
    rest = list(messages[lead:])
    if not any(issubclass(kind, SystemMessage) for kind in set(map(type, rest))):
        return system, [], rest  # the usual: no system message further down (a C loop)
    later: list[BaseMessage] = [m for m in rest if isinstance(m, SystemMessage)]
    body = [m for m in rest if not isinstance(m, SystemMessage)]
    return system, later, body


def sticky_cut(body: Sequence[BaseMessage], room: int, token_counter: TokenCounter) -> int:
    """Where the verbatim window starts: a safe cut that moves in steps of `room // 2`.

    The candidates are the first safe cut past each multiple of half the room
    (counted from the start of `body`); the window starts at the first candidate
    whose remainder fits `room`. As the history grows the answer stays the same
    until the remainder outgrows the room, then jumps by about half of it, so the
    window is append-only between jumps. Returns the last safe cut when no candidate
    fits (one round bigger than the room), and 0 when everything fits.

    Args:
        body: The history without leading system messages.
        room: Tokens the window may take.
        token_counter: The token counter.

    Returns:
        The index the window starts at.
    """
    if not body or int(token_counter(list(body))) <= room:
        return 0
    # Per-message counts overstate a list's count a little (priming tokens), so a
    # window judged to fit here fits for real.
    prefix = [0]
    for message in body:
        prefix.append(prefix[-1] + int(token_counter([message])))
    cuts = [c for c in safe_cut_points(body) if 0 < c < len(body)]
    step, total = max(1, room // 2), prefix[-1]
    i, k = 0, 1
    while i < len(cuts):
        while i < len(cuts) and prefix[cuts[i]] < k * step:
            i += 1
        if i == len(cuts):
            break
        if total - prefix[cuts[i]] <= room:
            return cuts[i]
        k = prefix[cuts[i]] // step + 1
    return cuts[-1] if cuts else 0


def boundary_floor(messages: Sequence[BaseMessage]) -> int | None:
    """Where verbatim messages must start at the latest: before a provider compaction.

    The provider reads nothing before its compaction block and needs the block back
    as it sent it, so messages passed on verbatim after it start at it or earlier (a
    safe cut): rendered into the context it would be lost.

    Returns:
        The last safe cut at or before the last provider compaction message, or
        `None` without one.
    """
    found = last_provider_compaction(messages)
    if found < 0:
        return None
    return max(c for c in safe_cut_points(messages) if c <= found)


def lead_turn(older: Sequence[BaseMessage], window: list[BaseMessage]) -> list[BaseMessage]:
    """A user turn to open the window with, when it does not start with one.

    Providers want the conversation to open with the user: the last request before
    the cut (the one the window's work answers), else a fixed notice. Both stay the
    same until the cut moves, so the prefix does too.
    """
    if window and _is_user_turn(window[0]):
        return []
    for message in reversed(older):
        if _is_user_turn(message):
            return [message]
    return [HumanMessage(CONTINUE_NOTICE)]


def state_tail(state: Any) -> list[BaseMessage]:
    """The closing message with the plan, fenced as data (empty when there is none).

    The model writes the plan, so its items are untrusted: they sit inside a fence
    keyed by their text (the same plan renders to the same bytes).

    Args:
        state: Graph state with an optional `plan`.

    Returns:
        `[HumanMessage(...)]` or `[]`.
    """
    plan = get_state_value(state, "plan", [])
    if not plan:
        return []
    text = render_plan(list(plan))
    packet = ContextPacket(text, type="plan", source="plan")
    fenced = wrap_untrusted(packet, boundary=keyed_boundary("plan", text))
    return [HumanMessage(f"{STATE_NOTICE}\n{fenced}")]


def is_state_tail(message: BaseMessage) -> bool:
    """Whether `message` is the closing plan message `state_tail` makes."""
    return (
        isinstance(message, HumanMessage)
        and isinstance(message.content, str)
        and message.content.startswith(STATE_NOTICE)
    )


def _is_user_turn(message: BaseMessage) -> bool:
    return (
        isinstance(message, HumanMessage)
        and not tool_result_ids(message)
        and bool(content_text(message.content).strip())
    )


def carries_untrusted(message: BaseMessage) -> bool:
    """Whether `message` is passed on with text that is neither the user's nor the developer's.

    Tool results and compaction messages (their fenced part) are: with one in the
    model input, the hardening line is due.
    """
    return (
        isinstance(message, ToolMessage)
        or bool(tool_result_ids(message))
        or is_untrusted_compaction(message)
    )
