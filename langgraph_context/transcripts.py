"""Load exported agent transcripts into LangChain messages.

Two formats are read:

* OpenAI chat format (a JSON list of `{"role": ..., "content": ...}` dicts with
  `tool_calls` / `tool_call_id`), also wrapped as in tau-bench trajectories
  (`{"traj": [...]}`);
* Claude Code session logs (JSONL, one event per line): `user` and `assistant`
  events carry Anthropic-format messages; an assistant turn streamed over several
  lines (same `message.id`) becomes one `AIMessage`, each `tool_result` block becomes
  a `ToolMessage`, and bookkeeping events are skipped.

Tool results are paired with the call that precedes them, never through a global id
map (ids can repeat). The loaders do not repair anything; run `validate_history` or
`repair_history` on the result if the export may be truncated.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    convert_to_messages,
)

from langgraph_context.errors import InvalidArgumentError

__all__ = ["load_claude_code_session", "load_openai_transcript"]

_REGROUP_WINDOW = 64


def load_openai_transcript(
    source: str | Path | Sequence[Any] | Mapping[str, Any],
) -> list[BaseMessage]:
    """Load an OpenAI-format conversation into LangChain messages.

    Args:
        source: A path to a JSON file, or already-parsed data: a list of message
            dicts, or a mapping holding one under `traj` or `messages`.

    Returns:
        The messages, in order.

    Raises:
        ValueError: If no list of messages is found in `source`, or a message is
            malformed (LangChain's conversion error is chained).

    Example:
        >>> msgs = load_openai_transcript([{"role": "user", "content": "hi"}])
        >>> [m.type for m in msgs]
        ['human']
    """
    data: Any = source
    if isinstance(source, (str, Path)):
        data = json.loads(Path(source).read_text(encoding="utf-8"))
    if isinstance(data, Mapping):
        data = data.get("traj", data.get("messages"))
    if not isinstance(data, Sequence) or isinstance(data, (str, bytes)):
        msg = (
            "source must be a list of OpenAI-style message dicts or a mapping with "
            f"'traj' or 'messages', got {type(data).__name__}"
        )
        raise InvalidArgumentError(msg)
    cleaned = []
    for item in data:
        if isinstance(item, Mapping) and item.get("role") == "assistant":
            cleaned.append({**item, "content": item.get("content") or ""})
        else:
            cleaned.append(item)
    try:
        return list(convert_to_messages(cleaned))
    except (ValueError, TypeError, KeyError) as exc:
        msg = f"could not convert a message of the transcript: {exc}"
        raise InvalidArgumentError(msg) from exc


def load_claude_code_session(
    source: str | Path | Iterable[str | Mapping[str, Any]],
    *,
    include_thinking: bool = False,
    include_sidechains: bool = False,
) -> list[BaseMessage]:
    """Load a Claude Code session log (JSONL) into LangChain messages.

    Args:
        source: A path to a `.jsonl` file, or an iterable of its lines (strings or
            parsed dicts).
        include_thinking: Keep `thinking` blocks as text of the AI message (prefixed
            `[thinking]`); by default they are dropped, as providers do not replay them.
        include_sidechains: Keep events flagged `isSidechain` (sub-agent traffic).

    Returns:
        The messages, in log order: `HumanMessage` for user text, `AIMessage` (with
        `tool_calls`) per assistant turn, `ToolMessage` per tool result (status
        `error` when the result was flagged as an error).

    Raises:
        ValueError: If a line is not valid JSON (the line number is given).

    Example:
        >>> lines = [
        ...     '{"type": "user", "message": {"role": "user", "content": "hi"}}',
        ...     '{"type": "assistant", "message": {"id": "m1", "role": "assistant",'
        ...     ' "content": [{"type": "text", "text": "hello"}]}}',
        ... ]
        >>> [(m.type, m.content) for m in load_claude_code_session(lines)]
        [('human', 'hi'), ('ai', 'hello')]
    """
    if isinstance(source, (str, Path)):
        with Path(source).open(encoding="utf-8") as handle:
            raw: list[str | Mapping[str, Any]] = list(handle)
    else:
        raw = list(source)
    out: list[BaseMessage] = []
    current_id: str | None = None
    # One API reply can be logged in several pieces separated by tool results; each
    # piece becomes its own AIMessage, and message ids must stay unique in LangGraph
    # state (add_messages merges equal ids), so repeats get a `#<n>` suffix.
    used: dict[str, int] = {}
    for number, line in enumerate(raw, start=1):
        event = _parse(line, number)
        if event is None or event.get("type") not in ("user", "assistant"):
            continue
        if event.get("isSidechain") and not include_sidechains:
            continue
        message = event.get("message")
        if not isinstance(message, Mapping):
            continue
        if event["type"] == "assistant":
            text, calls = _assistant_parts(message.get("content"), include_thinking)
            mid = message.get("id")
            last = out[-1] if out else None
            if mid is not None and mid == current_id and isinstance(last, AIMessage):
                out[-1] = _extend_ai(last, text, calls)
            elif text or calls:
                out.append(AIMessage(text, tool_calls=calls, id=_unique_id(mid, used)))
            current_id = mid
            continue
        current_id = None
        names = _call_names(out)
        out.extend(_user_messages(message.get("content"), names))
    return _regroup_results(out)


def _regroup_results(messages: list[BaseMessage]) -> list[BaseMessage]:
    """Move each tool result right after the block of the AI message that called it.

    Claude Code logs parallel calls as they stream, so a result can be written after
    the next assistant turn has started. The first later result with a matching id
    belongs to the call; results that match no earlier call stay where they are.
    """
    out: list[BaseMessage] = []
    claimed: set[int] = set()
    for i, message in enumerate(messages):
        if i in claimed:
            continue
        out.append(message)
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue
        wanted = {str(tc["id"]) for tc in message.tool_calls}
        for j in range(i + 1, min(len(messages), i + 1 + _REGROUP_WINDOW)):
            if not wanted:
                break
            later = messages[j]
            if j not in claimed and isinstance(later, ToolMessage):
                if later.tool_call_id in wanted:
                    wanted.discard(later.tool_call_id)
                    claimed.add(j)
                    out.append(later)
            elif isinstance(later, AIMessage) and wanted & {
                str(tc["id"]) for tc in later.tool_calls
            }:
                break
    return out


def _unique_id(mid: Any, used: dict[str, int]) -> str | None:
    if not mid:
        return None
    key = str(mid)
    seen = used.get(key, 0)
    used[key] = seen + 1
    return key if seen == 0 else f"{key}#{seen}"


def _parse(line: str | Mapping[str, Any], number: int) -> Mapping[str, Any] | None:
    if isinstance(line, Mapping):
        return line
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        msg = f"line {number} of the session is not valid JSON: {exc.msg}"
        raise InvalidArgumentError(msg) from exc
    return value if isinstance(value, Mapping) else None


def _extend_ai(message: AIMessage, text: str, calls: list[dict[str, Any]]) -> AIMessage:
    joined = "\n".join(part for part in (str(message.content), text) if part)
    return AIMessage(joined, tool_calls=[*message.tool_calls, *calls], id=message.id)


def _assistant_parts(content: Any, include_thinking: bool) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content or []:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            texts.append(str(block["text"]))
        elif kind == "thinking" and include_thinking and block.get("thinking"):
            texts.append(f"[thinking] {block['thinking']}")
        elif kind == "tool_use":
            args = block.get("input")
            calls.append(
                {
                    "name": str(block.get("name", "")),
                    "args": dict(args) if isinstance(args, Mapping) else {"input": args},
                    "id": str(block.get("id", "")),
                    "type": "tool_call",
                }
            )
    return "\n".join(texts), calls


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if isinstance(block, Mapping):
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(f"[{block.get('type', 'block')}]")
        else:
            parts.append(str(block))
    return "\n".join(parts)


def _call_names(messages: list[BaseMessage]) -> dict[str, str]:
    """Map recent call ids to tool names, the latest call winning for a repeated id."""
    names: dict[str, str] = {}
    for message in reversed(messages[-_REGROUP_WINDOW:]):
        if isinstance(message, AIMessage):
            for tc in message.tool_calls:
                names.setdefault(str(tc["id"]), tc["name"])
    return names


def _user_messages(content: Any, names: Mapping[str, str]) -> list[BaseMessage]:
    if isinstance(content, str):
        return [HumanMessage(content)] if content else []
    out: list[BaseMessage] = []
    texts: list[str] = []
    for block in content or []:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "tool_result":
            out.append(
                ToolMessage(
                    _block_text(block.get("content")),
                    tool_call_id=str(block.get("tool_use_id", "")),
                    name=names.get(str(block.get("tool_use_id", ""))),
                    status="error" if block.get("is_error") else "success",
                )
            )
        elif block.get("type") == "text" and block.get("text"):
            texts.append(str(block["text"]))
    if texts:
        out.append(HumanMessage("\n".join(texts)))
    return out
