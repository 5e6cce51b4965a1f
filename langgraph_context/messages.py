"""Messages: coercion from message-like input, and the tool-call pairing rules.

Every public function that takes a history accepts LangChain messages or OpenAI-style
dicts; `as_messages` is the one place that converts, so the rest of the package works
on `BaseMessage`.

A history is valid when every tool result directly follows (within one block of tool
results) the AI message that made its call, every call gets exactly one result before
the next non-tool message, and the conversation does not open with a tool result.
Ids are paired per block, so the same id may appear again later in a history.
`validate_history` reports violations; `repair_history` fixes them without losing any
user or assistant text; `group_tool_rounds` gives the atomic units that trimming and
compaction may cut between.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError

__all__ = [
    "CANCELLED_TOOL_RESULT",
    "HistoryRepair",
    "HistoryViolation",
    "MessageLike",
    "ViolationKind",
    "as_messages",
    "content_text",
    "group_tool_rounds",
    "is_tool_result",
    "message_blocks",
    "repair_history",
    "safe_cut_points",
    "text_of",
    "tool_call_ids",
    "tool_result_ids",
    "truncate_messages",
    "validate_history",
]

MessageLike = BaseMessage | dict[str, Any]


def as_messages(messages: Iterable[Any]) -> list[BaseMessage]:
    """Return `messages` as a new list of `BaseMessage`, converting dicts and tuples.

    Message objects are passed through as the same objects (never copied or mutated).

    Raises:
        TypeError: If `messages` is a string or a single message instead of a sequence.
        ValueError: If an element cannot be converted (LangChain's own message).
    """
    if isinstance(messages, (str, bytes, BaseMessage, dict)):
        msg = (
            "messages must be a sequence of messages or OpenAI-style dicts, "
            f"got a single {type(messages).__name__}"
        )
        raise InvalidTypeError(msg)
    items = list(messages)
    if all(isinstance(m, BaseMessage) for m in items):
        return items
    return list(convert_to_messages(items))


def tool_call_ids(message: BaseMessage) -> list[str]:
    """Return the ids of the tool calls an AI message makes (empty for other messages)."""
    if not isinstance(message, AIMessage):
        return []
    return [str(tc.get("id")) for tc in message.tool_calls if tc.get("id") is not None]


def is_tool_result(message: BaseMessage) -> bool:
    """Return whether `message` is the result of a tool call."""
    return isinstance(message, ToolMessage)


def text_of(message: BaseMessage) -> str:
    """Return the plain text of a message's content (text blocks joined by newlines)."""
    return content_text(message.content)


def content_text(content: str | Sequence[Any]) -> str:
    """Return the text parts of a message content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


def message_blocks(message: BaseMessage) -> list[dict[str, Any]]:
    """The dict content blocks of a message (empty for plain-text content)."""
    content = message.content
    if isinstance(content, str):
        return []
    return [block for block in content if isinstance(block, dict)]


def tool_result_ids(message: BaseMessage) -> list[str]:
    """The call ids a message answers.

    A `ToolMessage`, or a user message holding provider-native `tool_result` blocks
    (Anthropic's format).
    """
    if isinstance(message, ToolMessage):
        return [message.tool_call_id]
    if not isinstance(message, HumanMessage):
        return []
    return [
        str(block["tool_use_id"])
        for block in message_blocks(message)
        if block.get("type") == "tool_result" and block.get("tool_use_id") is not None
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


def truncate_messages(
    messages: Sequence[Any],
    *,
    keep: int = 10,
    preserve_system: bool = True,
) -> list[BaseMessage]:
    """Keep the last `keep` messages without ever splitting a tool call from its results.

    The cut is moved forward to the next tool-round boundary, so the result can hold
    fewer than `keep` recent messages; if that would keep nothing at all, the cut moves
    back to the start of the last round instead (more than `keep`, never an orphan).
    The input is not modified.

    Args:
        messages: LangChain messages or OpenAI-style dicts.
        keep: How many recent messages to keep (leading system messages not counted).
        preserve_system: Keep the leading system message(s).

    Returns:
        A new list of messages.

    Raises:
        ValueError: If `keep` is negative.

    Example:
        >>> from langchain_core.messages import HumanMessage, SystemMessage
        >>> history = [SystemMessage("rules")] + [HumanMessage(str(i)) for i in range(5)]
        >>> [m.content for m in truncate_messages(history, keep=2)]
        ['rules', '3', '4']
    """
    if keep < 0:
        msg = f"keep must be >= 0, got {keep}"
        raise InvalidArgumentError(msg)
    items = as_messages(messages)
    head_len = 0
    while head_len < len(items) and isinstance(items[head_len], SystemMessage):
        head_len += 1
    head = items[:head_len] if preserve_system else []
    body = items[head_len:]
    if keep == 0 or not body:
        return list(head)
    rounds = group_tool_rounds(body)
    cut = len(body) - keep
    starts = [start for start, _ in rounds if start >= cut]
    start = starts[0] if starts else len(body)
    if start >= len(body):
        start = rounds[-1][0]
    return [*head, *body[start:]]
