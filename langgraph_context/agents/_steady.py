"""The last model call of each thread, extended by a steady call (private to `agents`).

Inside a user turn most model calls are the last call of the same thread plus
appended messages: the state holds the very message objects the last call saw (the
stamped copies `ContextMiddleware` wrote back by id are the ones it holds now), then
the model's reply with its tool calls and their results. When the last call sent the
whole history, that call's request plus the new messages (made ready: without
stamps) is the request the full path would make, so the repair, the context node
and their walks over the history are skipped (`SteadyCalls.extended`).

The full path stays the reference; a call is steady only when all of these hold
(anything else takes the full path, which records the call again):

- the context node reported the last call steady (`context.node.reporting_context_node`:
  whole history sent, hardened already, no later system message, no plan message, no
  sanitizing, no pinned item left out, a system head that is a function of the
  pinned state values, an additive `TiktokenCounter` count), and the repair changed
  nothing in it;
- the history starts with the last call's history, the very objects, each with the
  very content object it had (content replaced in place is an edit: the full path,
  whose `without_stamps` copies such a message again);
- what follows is one closed tool round: an `AIMessage` (plain text content, tool
  calls that all have string ids, no invalid calls), then `ToolMessage`s with text
  content that answer exactly those calls; the last message sent is not an AI
  message (which the reply would be merged into);
- the agent's system prompt has the same text, the model is the same object, and
  the state values the assembly reads besides messages (`plan`, `note`,
  `constraints`, `hot_issues`) are the same objects, the plan still empty;
- the count of the last request plus the new messages is within the budget.

A state value edited in place (rather than replaced, as reducers do) is not seen
here, nor is a message field other than its content edited in place.

Records are keyed by the first message object, held weakly: a record goes when its
thread's first message is freed (a finished run frees its messages), so nothing is
kept after a thread ends. At most `STEADY_THREADS` records per middleware (least
recently stored out first), each holding the copies sent for one history and the
content objects of that history.
"""

from __future__ import annotations

import functools
import operator
import threading
import weakref
from collections import OrderedDict
from itertools import repeat
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

from langgraph_context.context.stamp import MESSAGE_TIME_KEY, stamped_arrivals, without_stamp
from langgraph_context.messages import content_text
from langgraph_context.state import get_state_value

__all__ = ["STEADY_THREADS", "SteadyCalls"]

STEADY_THREADS = 32
"""Threads whose last call one middleware keeps (each: one history's sent copies)."""

_KEYS = ("plan", "note", "constraints", "hot_issues")
"""The state values the assembly reads besides the messages: the plan (its closing
message) and what `context._reuse.HeadBuilds` keys the system head by."""
_content = operator.attrgetter("content")
_deref = weakref.ref.__call__


class _Last:
    """One thread's last call: what it saw (weakly), read and sent."""

    __slots__ = (
        "contents",
        "first_at",
        "messages",
        "model",
        "prompt",
        "refs",
        "state",
        "system",
        "total",
    )

    def __init__(self, **fields: Any) -> None:
        for name, value in fields.items():
            setattr(self, name, value)

    refs: list[weakref.ref[BaseMessage]]
    contents: list[Any]
    prompt: str
    model: Any
    state: tuple[Any, ...]
    system: SystemMessage | None
    messages: list[BaseMessage | None]  # `None` where the history's first message went
    first_at: tuple[int, ...]  # where those are
    total: int


class SteadyCalls:
    """One middleware's last call per thread, and the steady requests that extend them.

    Args:
        token_counter: The context builder's token counter (a `TiktokenCounter` when the
            node reports a call steady: its `count_each` is read).
        limit: The context builder's `max_tokens`.
    """

    def __init__(self, token_counter: Any, limit: int) -> None:
        self._counter = token_counter
        self._limit = limit
        self._data: OrderedDict[int, _Last] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def request(
        self, request: Any, stamp_times: bool, now: float
    ) -> tuple[Any, list[BaseMessage]] | None:
        """`(request extended, messages stamped for state)` for a steady call, else `None`.

        Args:
            request: The model request as `ContextMiddleware` receives it.
            stamp_times: Whether the middleware stamps arrivals (their copies go to state).
            now: The time to stamp them with.
        """
        found = self._steady(request, stamp_times, now)
        if found is None:
            self.misses += 1
            return None
        self.hits += 1
        return found

    def _steady(
        self, request: Any, stamp_times: bool, now: float
    ) -> tuple[Any, list[BaseMessage]] | None:
        history = request.messages
        last = self._data.get(id(history[0])) if history else None
        if last is None or request.model is not last.model:
            return None
        n = len(last.refs)
        added = history[n:]
        if len(added) < 2 or isinstance(last.messages[-1], (AIMessage, type(None))):
            return None
        # In C: the very objects, each with the very content object it had.
        if not all(map(operator.is_, map(_deref, last.refs), history)):
            return None
        if not all(map(operator.is_, map(_content, history), last.contents)):
            return None
        if not _closed_round(added) or _prompt(request.system_message) != last.prompt:
            return None
        state = request.state
        values = tuple(get_state_value(state, key, None) for key in _KEYS)
        if values[0] or not all(map(operator.is_, values, last.state)):
            return None
        sent = list(map(without_stamp, added))  # what the model is sent of each
        stamped: list[BaseMessage] = []
        if stamp_times:
            # The state's own messages (one set of copies serves both), and the reply
            # dated: only the results after it can be arrivals (`stamped_arrivals`).
            raw = get_state_value(state, "messages", [])
            own = len(raw) == len(history) and all(map(operator.is_, raw, history))
            if not own or MESSAGE_TIME_KEY not in added[0].additional_kwargs:
                return None
            found = stamped_arrivals(added, 1, now=now)
            if found is None:
                return None
            added, stamped = found
        total = last.total + sum(self._counter.count_each(added))
        if total > self._limit:
            return None
        last.refs = [*last.refs, *map(weakref.ref, added)]
        last.contents = [*last.contents, *map(_content, added)]
        last.messages, last.total = [*last.messages, *sent], total
        messages: list[Any] = [*last.messages]
        for at in last.first_at:
            messages[at] = history[0]
        return request.override(system_message=last.system, messages=messages), stamped

    def remember(
        self,
        request: Any,
        prompt: str,
        history: list[BaseMessage],
        repaired: list[BaseMessage],
        view: Any,
        report: tuple[list[BaseMessage], int] | None,
        sent: Any,
    ) -> None:
        """Record a full-path call the node reported steady (`view`: the node's output).

        Args:
            request: The request as the middleware received it.
            prompt: Its system prompt's text.
            history: The stamped history (what the next call's state holds).
            repaired: `history` repaired (the node's input).
            view: The node's output list.
            report: The node's report in the same output (`(view, its token count)`
                for an output the next call may extend), or `None`.
            sent: The assembled request (before prompt-cache marks).
        """
        if report is None or report[0] is not view or not history:
            return
        same = len(repaired) == len(history) and all(map(operator.is_, repaired, history))
        messages = list(sent.messages)
        first = history[0]
        if not same or len(view) != len(messages) + 1 or not messages:
            return
        # The first message is not held (it would keep its own record alive).
        first_at = tuple(
            i for i, same in enumerate(map(operator.is_, messages, repeat(first))) if same
        )
        kept: list[BaseMessage | None] = [*messages]
        for at in first_at:
            kept[at] = None
        key = id(first)
        try:
            refs = [weakref.ref(first, functools.partial(self._forget, key))]
            refs += map(weakref.ref, history[1:])
        except TypeError:
            return
        last = _Last(
            refs=refs,
            contents=list(map(_content, history)),
            prompt=prompt,
            model=request.model,
            state=tuple(get_state_value(request.state, k, None) for k in _KEYS),
            system=sent.system_message,
            messages=kept,
            first_at=first_at,
            total=report[1],
        )
        with self._lock:
            self._data.pop(key, None)
            self._data[key] = last
            while len(self._data) > STEADY_THREADS:
                self._data.popitem(last=False)

    def _forget(self, key: int, ref: weakref.ref[Any]) -> None:
        """Drop the record whose first message `ref` was freed (unless since replaced)."""
        last = self._data.get(key)
        if last is not None and last.refs[0] is ref:
            self._data.pop(key, None)

    def __len__(self) -> int:
        """The number of threads recorded."""
        return len(self._data)


def _prompt(message: SystemMessage | None) -> str:
    """The agent's system prompt as `ContextMiddleware` reads it."""
    return content_text(message.content) if message is not None else ""


def _closed_round(added: list[BaseMessage]) -> bool:
    """Whether `added` is one AI message's tool calls, each answered once, in plain text."""
    ai = added[0]
    if type(ai) is not AIMessage or type(ai.content) is not str or ai.invalid_tool_calls:
        return False
    ids: list[Any] = [call.get("id") for call in ai.tool_calls]
    if not ids or not all(type(i) is str for i in ids):
        return False
    results = added[1:]
    if not all(type(m) is ToolMessage and type(m.content) is str for m in results):
        return False
    return sorted(ids) == sorted(m.tool_call_id for m in results)  # type: ignore[attr-defined]
