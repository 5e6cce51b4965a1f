"""History invariants: the tool-call pairing rules chat providers enforce.

A history is valid when every tool result directly follows (within one block of tool
results) the AI message that made its call, every call gets exactly one result before
the next non-tool message, and the conversation does not open with a tool result.
Ids are paired per block, so the same id may appear again later in a history.

`validate_history` reports violations; `repair_history` fixes them without losing any
user or assistant text; `group_tool_rounds` gives the atomic units that trimming and
compaction may cut between.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    SystemMessage,
    ToolMessage,
)

from langgraph_context._messages import as_messages, message_blocks, tool_result_ids

__all__ = [
    "CANCELLED_TOOL_RESULT",
    "HistoryRepair",
    "HistoryViolation",
    "ViolationKind",
    "group_tool_rounds",
    "repair_history",
    "safe_cut_points",
    "validate_history",
]

ViolationKind = Literal[
    "leading_tool_result",
    "orphan_tool_result",
    "duplicate_tool_result",
    "missing_tool_result",
]

CANCELLED_TOOL_RESULT = (
    "Tool call cancelled: no result was recorded for this call. Call the tool again if "
    "its result is still needed."
)


@dataclass(frozen=True)
class HistoryViolation:
    """One broken pairing rule in a history.

    Attributes:
        kind: Which rule is broken.
        index: Position of the offending message (the AI message for a missing result).
        tool_call_id: The tool call id involved.
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
        changes: The violations found in the input, each of which was fixed.
    """

    messages: list[BaseMessage]
    changes: tuple[HistoryViolation, ...] = field(default_factory=tuple)

    @property
    def changed(self) -> bool:
        """Whether anything had to be repaired."""
        return bool(self.changes)


def _calls(message: BaseMessage) -> list[tuple[str, str]]:
    """The `(id, name)` of each call an AI message makes.

    `tool_calls` first; an AI message built from provider-native Anthropic dicts has
    `tool_use` content blocks and empty `tool_calls`, and those blocks are its calls.
    """
    if not isinstance(message, AIMessage):
        return []
    if message.tool_calls:
        return [
            (str(tc["id"]), tc["name"]) for tc in message.tool_calls if tc.get("id") is not None
        ]
    return [
        (str(block["id"]), str(block.get("name", "")))
        for block in message_blocks(message)
        if block.get("type") == "tool_use" and block.get("id") is not None
    ]


def _scan(
    items: list[BaseMessage], *, allow_pending: bool
) -> tuple[list[HistoryViolation], list[tuple[int, list[tuple[str, str]]]]]:
    """Walk the history once; return violations and, per position, calls left unanswered.

    The second element lists `(insert_before_index, [(id, name), ...])` for every block
    whose calls did not all get a result, so a repair can add them in place.
    """
    violations: list[HistoryViolation] = []
    gaps: list[tuple[int, list[tuple[str, str]]]] = []
    # call id -> names of its calls still unanswered (one entry per call: some servers
    # repeat an id within one message, and each such call accepts one result)
    pending: dict[str, list[str]] = {}
    answered: set[str] = set()
    block_ai: int | None = None
    seen_conversation = False

    def close_block(at: int) -> None:
        if pending and block_ai is not None:
            missing = [(tid, name) for tid, names in pending.items() for name in names]
            for tid, _ in missing:
                violations.append(
                    HistoryViolation(
                        "missing_tool_result",
                        block_ai,
                        tid,
                        f"tool call {tid!r} has no result before message {at}",
                    )
                )
            gaps.append((at, missing))

    for i, message in enumerate(items):
        results = tool_result_ids(message)
        for tid in results:
            if tid in pending:
                pending[tid].pop(0)
                if not pending[tid]:
                    del pending[tid]
                answered.add(tid)
            elif block_ai is not None and tid in answered:
                violations.append(
                    HistoryViolation(
                        "duplicate_tool_result", i, tid, f"second result for tool call {tid!r}"
                    )
                )
            elif not seen_conversation:
                violations.append(
                    HistoryViolation(
                        "leading_tool_result", i, tid, "history starts with a tool result"
                    )
                )
            else:
                violations.append(
                    HistoryViolation(
                        "orphan_tool_result",
                        i,
                        tid,
                        f"no preceding AI message in this block calls {tid!r}",
                    )
                )
        if results:
            continue
        close_block(i)
        pending, answered, block_ai = {}, set(), None
        if not isinstance(message, SystemMessage):
            seen_conversation = True
        calls = _calls(message)
        if calls:
            block_ai = i
            for tid, name in calls:
                pending.setdefault(tid, []).append(name)
    if not allow_pending:
        close_block(len(items))
    return violations, gaps


def validate_history(
    messages: Sequence[Any], *, allow_pending_tool_calls: bool = False
) -> list[HistoryViolation]:
    """Report every tool-pairing violation a chat provider would reject.

    Args:
        messages: LangChain messages or OpenAI-style dicts.
        allow_pending_tool_calls: Accept unanswered calls in the final AI message (the
            state between a model node and its tool node).

    Returns:
        The violations in order; an empty list means the history is valid.

    Example:
        >>> from langchain_core.messages import HumanMessage, ToolMessage
        >>> [v.kind for v in validate_history([ToolMessage("x", tool_call_id="1")])]
        ['leading_tool_result']
        >>> validate_history([HumanMessage("hi")])
        []
    """
    violations, _ = _scan(as_messages(messages), allow_pending=allow_pending_tool_calls)
    return violations


def repair_history(
    messages: Sequence[Any], *, allow_pending_tool_calls: bool = False
) -> HistoryRepair:
    """Make a history valid without losing user or assistant text.

    Tool results that pair with no call (orphans, duplicates, a leading result) are
    dropped; every call left without a result gets a synthetic error result saying it
    was cancelled, placed right after its block. Nothing else changes.

    Args:
        messages: LangChain messages or OpenAI-style dicts.
        allow_pending_tool_calls: Leave unanswered calls in the final AI message alone.

    Returns:
        A `HistoryRepair` with the new messages and the violations it fixed.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> call = AIMessage("", tool_calls=[{"name": "ls", "args": {}, "id": "c1"}])
        >>> fixed = repair_history([HumanMessage("hi"), call, HumanMessage("go on")])
        >>> [m.type for m in fixed.messages]
        ['human', 'ai', 'tool', 'human']
    """
    items = as_messages(messages)
    violations, gaps = _scan(items, allow_pending=allow_pending_tool_calls)
    if not violations:
        return HistoryRepair(list(items))
    unpaired: dict[int, set[str | None]] = {}
    for v in violations:
        if v.kind in ("orphan_tool_result", "duplicate_tool_result", "leading_tool_result"):
            unpaired.setdefault(v.index, set()).add(v.tool_call_id)
    inserts = dict(gaps)
    out: list[BaseMessage] = []
    for i, message in enumerate(items):
        for tid, name in inserts.get(i, []):
            out.append(_cancelled(tid, name))
        if i not in unpaired:
            out.append(message)
        elif not isinstance(message, ToolMessage):
            # A user message with native tool_result blocks: drop only the unpaired
            # blocks, keep the user's own text.
            kept = _without_results(message, unpaired[i])
            if kept is not None:
                out.append(kept)
    for tid, name in inserts.get(len(items), []):
        out.append(_cancelled(tid, name))
    return HistoryRepair(out, tuple(violations))


def _without_results(message: BaseMessage, ids: set[str | None]) -> BaseMessage | None:
    content = message.content
    if isinstance(content, str):  # pragma: no cover - results live in list content
        return message
    kept = [
        block
        for block in content
        if not (
            isinstance(block, dict)
            and block.get("type") == "tool_result"
            and str(block.get("tool_use_id")) in ids
        )
    ]
    return message.model_copy(update={"content": kept}) if kept else None


def _cancelled(tool_call_id: str, name: str) -> ToolMessage:
    return ToolMessage(CANCELLED_TOOL_RESULT, tool_call_id=tool_call_id, name=name, status="error")


def group_tool_rounds(messages: Sequence[Any]) -> list[tuple[int, int]]:
    """Split a history into atomic units that may be kept or dropped whole.

    A unit is an AI message with tool calls together with the tool results that follow
    it, or any other single message. Cutting only between units never separates a call
    from its results.

    Args:
        messages: LangChain messages or OpenAI-style dicts.

    Returns:
        `(start, end)` index pairs (end exclusive), covering the history in order.

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
            while end < len(items) and tool_result_ids(items[end]):
                end += 1
        units.append((i, end))
        i = end
    return units


def safe_cut_points(messages: Sequence[Any]) -> list[int]:
    """Return the indices where a history can be cut without orphaning a tool result.

    Index `i` means `messages[:i]` and `messages[i:]` keep every call with its results.
    `0` and `len(messages)` are always included.
    """
    units = group_tool_rounds(messages)
    return [start for start, _ in units] + [units[-1][1] if units else 0]
