"""History invariants: validate, repair, rounds and safe cuts (private to `messages`)."""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeGuard

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langgraph_context.errors import InvalidTypeError
from langgraph_context.messages._coerce import (
    CLEAN_HISTORIES,
    _message_arg,
    _short,
    as_messages,
    checked_messages,
)
from langgraph_context.messages._roles import screen

ViolationKind = Literal[
    "leading_tool_result",
    "orphan_tool_result",
    "duplicate_tool_result",
    "missing_tool_result",
    "missing_tool_call_id",
    "remove_message",
    "unknown_role",
]

CANCELLED_TOOL_RESULT = (
    "Tool call cancelled: no result was recorded for this call. Call the tool again if "
    "its result is still needed."
)
_ARGS_SHOWN = 500


@dataclass(frozen=True)
class HistoryViolation:
    """One broken pairing rule in a history.

    Attributes:
        kind: Which rule is broken.
        index: Position of the offending message (the AI message for a missing result
            or a call without an id).
        tool_call_id: The tool call id involved (None for a call or block without one).
        detail: A readable explanation.
    """

    kind: ViolationKind
    index: int
    tool_call_id: str | None
    detail: str

    def __str__(self) -> str:
        return f"{self.kind} at message {self.index}: {self.detail}"


@dataclass(frozen=True)
class HistoryRepair:
    """The result of `repair_history`.

    Attributes:
        messages: The repaired history (a new list; input messages are reused, not mutated).
        changes: The violations fixed, in the order met.
    """

    messages: list[BaseMessage]
    changes: tuple[HistoryViolation, ...] = field(default_factory=tuple)

    @property
    def changed(self) -> bool:
        """Whether anything had to be repaired."""
        return bool(self.changes)


class _Call(NamedTuple):
    id: str | None
    name: str
    error: str | None  # why the arguments did not parse (None for a valid call)
    args: str  # the raw arguments, shown back to the model for an invalid call


def _calls(message: BaseMessage) -> list[_Call]:
    """The calls an AI message makes, by the module's rule (see the module docstring)."""
    if not isinstance(message, AIMessage):
        return []
    calls = [_Call(tc.get("id"), tc["name"], None, "") for tc in message.tool_calls]
    for tc in message.invalid_tool_calls:
        error = str(tc.get("error") or "the arguments are not valid JSON")
        calls.append(_Call(tc.get("id"), str(tc.get("name") or ""), error, str(tc.get("args"))))
    if not calls:
        raw = message.additional_kwargs.get("tool_calls")
        for tc in raw if isinstance(raw, list) else []:
            tid = tc.get("id") if isinstance(tc, dict) else None
            fn = tc.get("function") if isinstance(tc, dict) else None
            name = fn.get("name") if isinstance(fn, dict) else None
            calls.append(_Call(tid if isinstance(tid, str) else None, str(name or ""), None, ""))
    known = {c.id for c in calls if c.id is not None}
    for block in _blocks(message):
        if block.get("type") == "tool_use":
            tid = block.get("id")
            if not isinstance(tid, str):
                calls.append(_Call(None, str(block.get("name") or ""), None, ""))
            elif tid not in known:
                known.add(tid)
                calls.append(_Call(tid, str(block.get("name") or ""), None, ""))
    return calls


def _results(message: BaseMessage) -> list[str | None]:
    """The ids a result message answers (None for a native block without an id)."""
    if isinstance(message, ToolMessage):
        return [message.tool_call_id]
    if not isinstance(message, HumanMessage):
        return []
    return [_block_result_id(b) for b in _blocks(message) if b.get("type") == "tool_result"]


def _blocks(message: BaseMessage) -> list[dict[str, Any]]:
    content = message.content
    return [] if isinstance(content, str) else [b for b in content if isinstance(b, dict)]


def _block_result_id(block: dict[str, Any]) -> str | None:
    tid = block.get("tool_use_id")
    return tid if isinstance(tid, str) else None


class Walked(NamedTuple):
    """What a clean history's walk leaves for the next one over the same messages."""

    starts: list[int]  # where each block (a message that is not a result) starts
    first_turn: int  # the first message that is not a system message (else the length)
    size: int = 0  # how many messages the clean history has
    strict: bool = False  # clean without excusing a pending call (`allow_pending=False`)


class _Resume(NamedTuple):
    """Where a walk starts: `items[:at]` is a known clean prefix."""

    at: int = 0
    seen_conversation: bool = False
    starts: list[int] = []  # noqa: RUF012 - a NamedTuple default, never mutated


_START = _Resume()


def _walk(
    items: list[BaseMessage], *, allow_pending: bool, repair: bool, resume: _Resume = _START
) -> tuple[list[HistoryViolation], list[BaseMessage], list[int]]:
    """Walk the history once: its violations, a valid copy (`repair`), its block starts.

    In repair mode unpaired results are dropped (only the unpaired blocks of a human
    message), calls without an id get one, and every call still unanswered when its
    block closes gets an error result there. A human message left without any result
    block then counts as an ordinary message, so the walk judges what it emits.

    With `resume`, `items` are what follows a clean prefix of `resume.at` messages that
    ends before a block start (so no call of the prefix is open): positions in the
    violations, the texts and the ids given to calls are those in the whole history.
    """
    base = resume.at
    violations: list[HistoryViolation] = []
    out: list[BaseMessage] = []
    starts: list[int] = []
    # call id -> its calls still unanswered (some servers repeat an id within one
    # message, and each such call accepts one result)
    pending: dict[str, list[_Call]] = {}
    answered: set[str] = set()
    block_ai: int | None = None
    seen_conversation = resume.seen_conversation
    end = base + len(items)

    def report(kind: ViolationKind, index: int, tid: str | None, detail: str) -> None:
        violations.append(HistoryViolation(kind, index, tid, detail))

    def close_block(at: int, *, final: bool) -> None:
        for tid, calls in pending.items():
            for call in calls:
                if final and allow_pending and call.error is None:
                    continue
                where = "by the end" if at == end else f"before message {at}"
                detail = f"tool call {tid!r} has no result {where}"
                report("missing_tool_result", at if block_ai is None else block_ai, tid, detail)
                out.append(_answer(tid, call))

    for i, original in enumerate(items, start=base):
        message = original
        results = _results(original)
        unpaired: list[str | None] = []
        for tid in results:
            if tid is not None and tid in pending:
                # An invalid call first: a tool node may still answer a valid one.
                calls = pending[tid]
                calls.pop(next((k for k, c in enumerate(calls) if c.error), 0))
                if not pending[tid]:
                    del pending[tid]
                answered.add(tid)
                continue
            unpaired.append(tid)
            if tid is None:
                report("orphan_tool_result", i, None, "a tool_result block without tool_use_id")
            elif block_ai is not None and tid in answered:
                report("duplicate_tool_result", i, tid, f"second result for tool call {tid!r}")
            elif not seen_conversation:
                report("leading_tool_result", i, tid, "history starts with a tool result")
            else:
                detail = f"no preceding AI message in this block calls {tid!r}"
                report("orphan_tool_result", i, tid, detail)
        if results and repair and unpaired:
            trimmed = _without_results(original, unpaired)
            if trimmed is None:
                continue
            message = trimmed
        if results and (not repair or _results(message)):
            out.append(message)
            continue
        close_block(i, final=False)
        pending, answered, block_ai = {}, set(), None
        starts.append(i)
        if not isinstance(message, SystemMessage):
            seen_conversation = True
        calls = _calls(message)
        if any(c.id is None for c in calls):
            report("missing_tool_call_id", i, None, "a tool call without an id cannot be answered")
            if repair:
                message = _with_ids(message, i)
                calls = _calls(message)
        out.append(message)
        for call in calls:
            if call.id is not None:
                block_ai = i
                pending.setdefault(call.id, []).append(call)
    close_block(end, final=True)
    return violations, out, starts


def _screened_walk(
    messages: Sequence[Any], *, allow_pending: bool, repair: bool
) -> tuple[list[HistoryViolation], list[BaseMessage]]:
    """`_walk` over the messages a provider can take at all; the rest are violations.

    Indices in the violations are positions in `items`; the screened-out messages
    are reported first. A history that needed nothing is remembered
    (`CLEAN_HISTORIES`): the next walk over it plus appended messages starts at the
    last block of the part it shares (the same message objects), whose walk state
    is empty there, so the result is the one a walk from the start gives. The very
    history remembered (not a prefix, which may end in an unanswered call) is clean
    as it is, unless its walk excused a pending call and this one does not.
    """
    items, shared, walked = checked_messages(messages)
    found_walk = walked  # what the memo answered (`walked` is replaced below)
    exact = isinstance(walked, Walked) and shared == len(items) == walked.size
    if exact and (walked.strict or allow_pending):  # the very history a walk found clean
        return [], items
    resume = _resume(shared, walked)
    kept: list[BaseMessage] = []
    where: list[int] = []
    found: list[HistoryViolation] = []
    for i, message in enumerate(items[resume.at :], start=resume.at):
        usable, kind, detail = screen(message)
        if kind is not None:
            found.append(HistoryViolation(kind, i, None, detail))
        if usable is not None:
            kept.append(usable)
            where.append(i)
    violations, out, starts = _walk(kept, allow_pending=allow_pending, repair=repair, resume=resume)
    where.append(len(items))
    found += [dataclasses.replace(v, index=where[v.index - resume.at]) for v in violations]
    tail = items[resume.at :]
    # A history remembered whole already (walked again in the same call) is not stored again.
    clean = not found and len(out) == len(tail) and all(map(operator.is_, out, tail))
    if clean and shared < len(items):
        turns = (k for k, m in enumerate(items) if not isinstance(m, SystemMessage))
        first_turn = next(turns, len(items))
        walked = Walked([*resume.starts, *starts], first_turn, len(items), not allow_pending)
        CLEAN_HISTORIES.remember(items, walked, known=(shared, found_walk))
    return found, [*items[: resume.at], *out]


def _resume(shared: int, walked: Any) -> _Resume:
    """Where a walk may start: the last block start of its known clean prefix.

    `shared` leading messages are those of the clean history remembered with `walked`.
    """
    if not isinstance(walked, Walked):
        return _Resume()
    # A block starting at `shared` or later may differ (a result joining an open block).
    k = bisect.bisect_left(walked.starts, shared) - 1
    if k < 0:
        return _Resume()
    at = walked.starts[k]
    return _Resume(at, walked.first_turn < at, walked.starts[:k])


def validate_history(
    messages: Sequence[Any], *, allow_pending_tool_calls: bool = False
) -> list[HistoryViolation]:
    """Report every tool-pairing violation a chat provider would reject.

    Args:
        messages: LangChain messages or OpenAI-style dicts.
        allow_pending_tool_calls: Accept unanswered valid calls in the final AI
            message (the state between a model node and its tool node). Invalid calls
            are never excused: no tool node will answer them.

    Returns:
        The violations in order; an empty list means the history is valid.

    Raises:
        InvalidTypeError: If `messages` or one of its items has the wrong type.
        InvalidArgumentError: If an item is malformed (named by position).

    Example:
        >>> from langchain_core.messages import HumanMessage, ToolMessage
        >>> [v.kind for v in validate_history([ToolMessage("x", tool_call_id="1")])]
        ['leading_tool_result']
        >>> validate_history([HumanMessage("hi")])
        []
    """
    _check_flag("allow_pending_tool_calls", allow_pending_tool_calls)
    violations, _ = _screened_walk(messages, allow_pending=allow_pending_tool_calls, repair=False)
    return violations


def repair_history(
    messages: Sequence[Any], *, allow_pending_tool_calls: bool = False
) -> HistoryRepair:
    """Make a history valid without losing user or assistant text.

    Tool results that pair with no call (orphans, duplicates, a leading result) are
    dropped, and so are messages no provider takes (a `RemoveMessage`, a
    `ChatMessage` with role `tool` or an unknown role; one with a known role becomes
    its class); a call without an id gets one; every call left without a result gets a
    synthetic error result right after its block: "cancelled" for a valid call, and
    for an invalid call (arguments that did not parse) the parse error and the bad
    arguments, so the model can call again correctly. Nothing else changes.

    Args:
        messages: LangChain messages or OpenAI-style dicts.
        allow_pending_tool_calls: Leave unanswered valid calls in the final AI message
            alone (invalid ones are still answered).

    Returns:
        A `HistoryRepair` with the new messages and the violations it fixed.

    Raises:
        InvalidTypeError: If `messages` or one of its items has the wrong type.
        InvalidArgumentError: If an item is malformed (named by position).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> call = AIMessage("", tool_calls=[{"name": "ls", "args": {}, "id": "c1"}])
        >>> fixed = repair_history([HumanMessage("hi"), call, HumanMessage("go on")])
        >>> [m.type for m in fixed.messages]
        ['human', 'ai', 'tool', 'human']
    """
    _check_flag("allow_pending_tool_calls", allow_pending_tool_calls)
    violations, out = _screened_walk(messages, allow_pending=allow_pending_tool_calls, repair=True)
    return HistoryRepair(out, tuple(violations))


def _check_flag(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        msg = f"{name} must be a bool, got {_short(value)}"
        raise InvalidTypeError(msg)


def _without_results(message: BaseMessage, ids: list[str | None]) -> BaseMessage | None:
    """The message without the results answering `ids` (None when nothing is left)."""
    if isinstance(message, ToolMessage):
        return None
    content = message.content
    kept = [
        block
        for block in content
        if not (
            isinstance(block, dict)
            and block.get("type") == "tool_result"
            and _block_result_id(block) in ids
        )
    ]
    return message.model_copy(update={"content": kept}) if kept else None


def _with_ids(message: BaseMessage, index: int) -> BaseMessage:
    """A copy of an AI message whose calls without an id get a fresh one."""
    if not isinstance(message, AIMessage):
        return message
    fresh = (f"call_missing_id_{index}_{k}" for k in itertools.count())

    def needs_id(item: Any) -> TypeGuard[dict[str, Any]]:
        return isinstance(item, dict) and not isinstance(item.get("id"), str)

    def fill(calls: list[Any]) -> list[Any]:
        return [{**c, "id": next(fresh)} if needs_id(c) else c for c in calls]

    update: dict[str, Any] = {}
    if message.tool_calls or message.invalid_tool_calls:
        update["tool_calls"] = fill(message.tool_calls)
        update["invalid_tool_calls"] = fill(message.invalid_tool_calls)
    elif isinstance(message.additional_kwargs.get("tool_calls"), list):
        raw = [c if isinstance(c, dict) else {} for c in message.additional_kwargs["tool_calls"]]
        update["additional_kwargs"] = {**message.additional_kwargs, "tool_calls": fill(raw)}
    if isinstance(message.content, list):
        update["content"] = [
            {**b, "id": next(fresh)} if needs_id(b) and b.get("type") == "tool_use" else b
            for b in message.content
        ]
    return message.model_copy(update=update)


def _answer(tool_call_id: str, call: _Call) -> ToolMessage:
    """The synthetic error result for a call left unanswered."""
    if call.error is None:
        text = CANCELLED_TOOL_RESULT
    else:
        args = call.args if len(call.args) <= _ARGS_SHOWN else call.args[:_ARGS_SHOWN] + "..."
        text = (
            f"Error: invalid arguments for tool {call.name!r}, so it was not run: "
            f"{call.error}. The arguments were: {args}. Call the tool again with "
            "arguments that are a valid JSON object matching its schema."
        )
    return ToolMessage(text, tool_call_id=tool_call_id, name=call.name or None, status="error")


def group_tool_rounds(messages: Sequence[Any]) -> list[tuple[int, int]]:
    """Split a history into atomic units that may be kept or dropped whole.

    A unit is an AI message with calls (by the module's rule: invalid calls and native
    `tool_use` blocks included) together with the result messages that follow it, or
    any other single message. Cutting only between units never separates a call from
    its results.

    Args:
        messages: LangChain messages or OpenAI-style dicts.

    Returns:
        `(start, end)` index pairs (end exclusive), covering the history in order.

    Raises:
        InvalidTypeError: If `messages` or one of its items has the wrong type.
        InvalidArgumentError: If an item is malformed (named by position).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        >>> call = AIMessage("", tool_calls=[{"name": "ls", "args": {}, "id": "c1"}])
        >>> group_tool_rounds([HumanMessage("hi"), call, ToolMessage("a", tool_call_id="c1")])
        [(0, 1), (1, 3)]
    """
    items = as_messages(messages)
    units: list[tuple[int, int]] = []
    i = 0
    while i < len(items):
        end = i + 1
        if _calls(items[i]):
            while end < len(items) and _results(items[end]):
                end += 1
        units.append((i, end))
        i = end
    return units


def tool_call_ids(message: BaseMessage) -> list[str]:
    """Return the ids of the calls an AI message makes, by the module's rule.

    Invalid calls and native `tool_use` blocks included; calls without an id are left
    out. Empty for other messages.
    """
    return [c.id for c in _calls(_message_arg(message)) if c.id is not None]


def is_tool_result(message: BaseMessage) -> bool:
    """Return whether `message` is a result message (a tool message or native results)."""
    return bool(_results(_message_arg(message)))


def tool_result_ids(message: BaseMessage) -> list[str]:
    """The call ids a message answers, by the module's rule.

    A `ToolMessage`, or a human message holding native `tool_result` blocks
    (Anthropic's format); a block without a `tool_use_id` answers nothing.
    """
    return [tid for tid in _results(_message_arg(message)) if tid is not None]
