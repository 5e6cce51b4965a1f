"""Load exported agent transcripts into LangChain messages.

Three formats are read:

* OpenAI chat format (a JSON list of `{"role": ..., "content": ...}` dicts with
  `tool_calls` / `tool_call_id`), also wrapped as in tau-bench trajectories
  (`{"traj": [...]}`);
* Claude Code session logs (JSONL, one event per line): `user` and `assistant`
  events carry Anthropic-format messages; an assistant turn streamed over several
  lines (same `message.id`) becomes one `AIMessage`, each `tool_result` block becomes
  a `ToolMessage`, and bookkeeping events are skipped;
* OpenHands trajectories (a JSON list of events, or an object holding one under
  `history`, `trajectory` or `events`): each action the agent took through a tool
  becomes a tool call (actions of one model response share one `AIMessage`), each
  observation answering it a `ToolMessage`, and state-change events are skipped.

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
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)

from langgraph_context.errors import InvalidArgumentError

__all__ = [
    "is_openhands_events",
    "load_claude_code_session",
    "load_openai_transcript",
    "load_openhands_trajectory",
]

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


_OPENHANDS_KEYS = ("history", "trajectory", "events")
# OpenHands events that carry no conversation: agent state, memory recall, condensation
_OPENHANDS_SKIP = {"change_agent_state", "agent_state_changed", "null", "recall", "condensation"}


def is_openhands_events(data: Any) -> bool:
    """Whether `data` is an OpenHands event list (dicts with an `action` or `observation`).

    Example:
        >>> is_openhands_events([{"source": "user", "action": "message", "args": {}}])
        True
        >>> is_openhands_events([{"role": "user", "content": "hi"}])
        False
    """
    if not isinstance(data, list) or not data or not all(isinstance(e, Mapping) for e in data):
        return False
    return any("action" in e or "observation" in e for e in data)


def _openhands_events(source: Any) -> list[Mapping[str, Any]]:
    data: Any = source
    if isinstance(source, (str, Path)):
        data = json.loads(Path(source).read_text(encoding="utf-8"))
    if isinstance(data, Mapping):
        data = next((data[k] for k in _OPENHANDS_KEYS if is_openhands_events(data.get(k))), None)
    if not is_openhands_events(data):
        msg = (
            "source must be a list of OpenHands events (dicts with 'action' or "
            "'observation'), or a mapping holding one under 'history', 'trajectory' or 'events'"
        )
        raise InvalidArgumentError(msg)
    return list(data)


def _openhands_args(event: Mapping[str, Any]) -> Mapping[str, Any]:
    args = event.get("args")
    return args if isinstance(args, Mapping) else {}


def _openhands_call(event: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The tool call an action stands for, and the id of the model response that made it."""
    args = _openhands_args(event)
    meta = event.get("tool_call_metadata")
    if isinstance(meta, Mapping) and meta.get("tool_call_id"):
        name = str(meta.get("function_name") or event["action"])
        response = meta.get("model_response")
        response_id = response.get("id") if isinstance(response, Mapping) else None
        call_id = str(meta["tool_call_id"])
    else:  # an older export without function-calling metadata: one call per action
        name, response_id, call_id = str(event["action"]), None, f"openhands-{event.get('id')}"
    call_args = {k: v for k, v in args.items() if k != "thought"}
    return {"name": name, "args": call_args, "id": call_id, "type": "tool_call"}, response_id


def _openhands_text(event: Mapping[str, Any]) -> str:
    args = _openhands_args(event)
    for key in ("content", "final_thought", "thought"):
        if isinstance(args.get(key), str) and args[key]:
            return str(args[key])
    return str(event.get("message") or "")


def load_openhands_trajectory(
    source: str | Path | Sequence[Any] | Mapping[str, Any],
) -> list[BaseMessage]:
    """Load an OpenHands trajectory (its event history) into LangChain messages.

    Args:
        source: A path to a JSON file, a list of events, or a mapping holding one
            under `history`, `trajectory` or `events`.

    Returns:
        The messages: user and agent `message` actions as human and AI messages, the
        `system` action as the system message, every other agent action as a tool call
        (with its `thought` as the AI message's text) and each observation that
        answers one as a `ToolMessage`; `finish` is the closing AI message.

    Raises:
        ValueError: If `source` holds no OpenHands event list.

    Example:
        >>> events = [
        ...     {"id": 1, "source": "user", "action": "message", "args": {"content": "ls"}},
        ...     {"id": 2, "source": "agent", "action": "run", "args": {"command": "ls"}},
        ...     {"id": 3, "source": "agent", "observation": "run", "cause": 2, "content": "a.py"},
        ... ]
        >>> [(m.type, m.content) for m in load_openhands_trajectory(events)]
        [('human', 'ls'), ('ai', ''), ('tool', 'a.py')]
    """
    messages: list[BaseMessage] = []
    calls: dict[str, tuple[str, str]] = {}  # action event id -> (call id, tool name)
    last_response: str | None = None
    for event in _openhands_events(source):
        kind = event.get("action") or event.get("observation")
        if kind in _OPENHANDS_SKIP or kind is None:
            continue
        if "observation" in event:
            meta = event.get("tool_call_metadata")
            if isinstance(meta, Mapping) and meta.get("tool_call_id"):
                call_id, name = str(meta["tool_call_id"]), str(meta.get("function_name") or kind)
            elif str(event.get("cause")) in calls:
                call_id, name = calls[str(event.get("cause"))]
            else:
                continue  # an observation that answers no tool call (e.g. a user message)
            content = str(event.get("content") or event.get("message") or "")
            messages.append(ToolMessage(content, tool_call_id=call_id, name=name))
            last_response = None
            continue
        text = _openhands_text(event)
        if kind == "system":
            messages.append(SystemMessage(text))
        elif kind == "message" and event.get("source") == "user":
            messages.append(HumanMessage(text))
        elif kind in ("message", "finish"):
            messages.append(AIMessage(text))
        else:
            call, response = _openhands_call(event)
            calls[str(event.get("id"))] = (call["id"], call["name"])
            previous = messages[-1] if messages else None
            if response and response == last_response and isinstance(previous, AIMessage):
                messages[-1] = previous.model_copy(
                    update={"tool_calls": [*previous.tool_calls, call]}
                )
            else:
                thought = _openhands_args(event).get("thought") or ""
                messages.append(AIMessage(str(thought), tool_calls=[call]))
            last_response = response
            continue
        last_response = None
    return messages
