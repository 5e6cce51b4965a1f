"""Which messages the focus layout passes verbatim, and fitting them (private to `context`).

The history splits into leading system messages, older turns (they go to the
context pool) and the recent ones, sent as they are; when the recent ones are over
their room, whole tool rounds move to the older turns, then long texts are shortened.
"""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from langgraph_context.compaction.provenance import fenced_compaction_message, is_trusted_system
from langgraph_context.context._defuse import defused
from langgraph_context.context._shorten import shorten_messages
from langgraph_context.context._window import boundary_floor
from langgraph_context.messages import safe_cut_points, tool_result_ids
from langgraph_context.safety.detector import Detector
from langgraph_context.tokens import TokenCounter

__all__ = ["fit_recent", "model_view", "request_only"]


def _split_history(
    messages: list[BaseMessage], keep_last: int
) -> tuple[list[SystemMessage], list[BaseMessage], list[BaseMessage]]:
    head = 0
    while head < len(messages) and is_trusted_system(messages[head]):
        head += 1
    system = [m for m in messages[:head] if isinstance(m, SystemMessage)]
    body = messages[head:]
    if not body:
        return system, body, []
    cut = len(body)
    if keep_last:
        want = max(0, len(body) - keep_last)
        # First cut at or after `want` that keeps every tool call with its results.
        cut = next((c for c in safe_cut_points(body) if c >= want), len(body))
        if cut == len(body):
            cut = max(c for c in safe_cut_points(body) if c < len(body))
    floor = boundary_floor(body)  # a provider compaction block is passed on whole
    cut = cut if floor is None else min(cut, floor)
    return system, body[:cut], body[cut:]


def model_view(
    messages: list[BaseMessage], keep_last: int, *, defuse: Detector | bool | None
) -> tuple[list[SystemMessage], list[BaseMessage], list[BaseMessage]]:
    """Split the history into leading system messages, older turns and recent ones.

    Providers such as Anthropic take system text only at the very start: a later
    system message (a summary another node inserted) joins the older turns, and so
    the context. With nothing recent, the last user turn is passed on; unless `defuse`
    is `False`, recent tool results are sanitized (with it, when it is a `Detector`).
    """
    system, older, recent = _split_history(messages, keep_last)
    older = older + [m for m in recent if isinstance(m, SystemMessage)]
    recent = [m for m in recent if not isinstance(m, SystemMessage)]
    if not recent:
        recent, older = _last_human_turn(older)
    recent = [fenced_compaction_message(m) for m in recent]
    if defuse is not False:
        chosen = defuse if isinstance(defuse, Detector) else None
        recent = [defused(m, chosen) for m in recent]
    return system, older, recent


def fit_recent(
    older: list[BaseMessage],
    recent: list[BaseMessage],
    query: str,
    allowed: int,
    token_counter: TokenCounter,
) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """Fit the recent messages into `allowed` tokens, with a user turn among them.

    Whole tool rounds move to the older turns first, then the largest texts (stale
    tool output first) are shortened. When the user turn had to move with a round,
    it leads the recent messages again, whole when it fits beside the rest shortened
    to the least (older tool text never takes its room), else as the query cut to size.
    """
    counter = token_counter
    request = next((m for m in reversed(recent) if _is_request(m)), None)
    if request is not None and counter([request]) <= allowed:
        query_turn: BaseMessage = request
    else:
        query_turn = HumanMessage(query)
    while recent and counter(recent) > allowed:
        floor = boundary_floor(recent)
        cuts = [
            c
            for c in safe_cut_points(recent)
            if 0 < c < len(recent) and (floor is None or c <= floor)
        ]
        if not cuts:
            break
        older, recent = older + recent[: cuts[0]], recent[cuts[0] :]
    if recent and counter(recent) > allowed:
        recent = shorten_messages(recent, allowed, counter)
    if query and not any(_is_request(m) for m in recent):
        # Providers want a user turn (Anthropic: first): when the recent messages
        # hold none (a long tool loop, a system-only history, a query from
        # `query_key`), the task goes first as one.
        rest = recent
        # The request whole first; the query cut to size if the rest cannot fit beside it.
        for turn in [query_turn] if query_turn is not request else [request, HumanMessage(query)]:
            recent = [turn, *rest]
            if rest and counter(recent) > allowed:
                added = counter(recent) - counter(rest)
                recent = [turn, *shorten_messages(rest, max(0, allowed - added), counter)]
            if counter(recent) <= allowed:
                break
    return older, recent


def request_only(
    older: list[BaseMessage], recent: list[BaseMessage], query: str
) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """Only the user's request stays recent; the rest (a tool round) joins the older turns.

    For a budget too small for the shortest tool round beside pinned memory: the round
    competes in the context pool instead, the request still leads the messages. A
    provider compaction block and what follows it stay (the provider needs the block).
    """
    floor = boundary_floor(recent)
    if floor is not None:  # a provider compaction block stays, with what follows it
        return older + recent[:floor], recent[floor:]
    request = next((m for m in reversed(recent) if _is_request(m)), None)
    lead = request if request is not None else HumanMessage(query)
    return older + [m for m in recent if m is not request], [lead]


def _is_request(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and not tool_result_ids(message)


def _last_human_turn(older: list[BaseMessage]) -> tuple[list[BaseMessage], list[BaseMessage]]:
    """With nothing recent, still pass the last user turn: a request needs one.

    A user message that only carries tool results (Anthropic's native format) is not a
    turn of its own: moved alone it would be a result without its call.
    """
    for i in range(len(older) - 1, -1, -1):
        if isinstance(older[i], HumanMessage) and not tool_result_ids(older[i]):
            return [older[i]], older[:i] + older[i + 1 :]
    return [], older
