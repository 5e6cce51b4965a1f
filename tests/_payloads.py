"""Provider request checks: build the real request payload (no network) and hold it to the
rules the providers' APIs enforce that their client libraries do not check."""

from __future__ import annotations

from typing import Any

from langchain_anthropic import ChatAnthropic
from langchain_core.messages import BaseMessage
from langchain_openai import ChatOpenAI

from langgraph_context.messages import validate_history

ANTHROPIC = ChatAnthropic(model="claude-sonnet-4-5", api_key="test-key")  # type: ignore[arg-type]
OPENAI = ChatOpenAI(model="gpt-4o", api_key="test-key")  # type: ignore[arg-type]
MAX_ANTHROPIC_MARKS = 4


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _marks(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(_marks(v) for v in value.values())
    if isinstance(value, list):
        return sum(_marks(v) for v in value)
    return 0


def anthropic_problems(
    messages: list[BaseMessage], *, alternating: bool = False, marks: bool = True
) -> list[str]:
    """What Anthropic's API would refuse in the payload langchain-anthropic builds."""
    payload = ANTHROPIC._get_request_payload(messages)
    problems: list[str] = []
    if marks and _marks(payload) > MAX_ANTHROPIC_MARKS:
        problems.append(f"{_marks(payload)} cache marks")
    pending: set[str] = set()
    previous = None
    for i, message in enumerate(payload["messages"]):
        role, blocks = message["role"], _blocks(message["content"])
        if role not in ("user", "assistant"):
            problems.append(f"[{i}] role {role!r}")
        results = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
        if pending and (role != "user" or sorted(results) != sorted(pending)):
            problems.append(f"[{i}] calls {sorted(pending)} answered by {results}")
        elif results and not pending:
            problems.append(f"[{i}] results {results} without calls")
        kinds = [b.get("type") for b in blocks]
        if results and kinds[: len(results)] != ["tool_result"] * len(results):
            problems.append(f"[{i}] tool_result blocks must come first")
        if alternating and role == previous:
            problems.append(f"[{i}] two {role} messages in a row")
        previous = role
        calls = {b["id"] for b in blocks if b.get("type") == "tool_use"}
        pending = calls if role == "assistant" else set()
    if pending:
        problems.append(f"calls {sorted(pending)} never answered")
    return problems


def openai_problems(messages: list[BaseMessage], *, alternating: bool = False) -> list[str]:
    """What OpenAI's API would refuse in the payload langchain-openai builds."""
    payload = OPENAI._get_request_payload(messages)
    problems: list[str] = []
    pending: set[str] = set()
    previous = None
    for i, message in enumerate(payload["messages"]):
        role = message["role"]
        if role not in ("system", "developer", "user", "assistant", "tool"):
            problems.append(f"[{i}] role {role!r}")
        if role == "tool":
            if message.get("tool_call_id") not in pending:
                problems.append(f"[{i}] result {message.get('tool_call_id')!r} pairs no call")
            pending.discard(message.get("tool_call_id"))
        else:
            if pending:
                problems.append(f"[{i}] calls {sorted(pending)} never answered")
            pending = {c["id"] for c in message.get("tool_calls") or []}
        if alternating and role == previous == "user":
            problems.append(f"[{i}] two user messages in a row")
        previous = role
    if pending:
        problems.append(f"calls {sorted(pending)} never answered")
    return problems


def provider_problems(
    messages: list[BaseMessage], *, alternating: bool = False, marks: bool = True
) -> list[str]:
    """Everything either provider or `validate_history` would refuse in `messages`.

    `alternating`: also two user (or two assistant) messages in a row, which chat
    templates refuse; `marks`: also more cache marks than Anthropic takes (a history
    that is not yet a request may hold them, as the client sent them).
    """
    found = anthropic_problems(messages, alternating=alternating, marks=marks)
    return [
        *(str(v) for v in validate_history(messages)),
        *(f"anthropic: {p}" for p in found),
        *(f"openai: {p}" for p in openai_problems(messages, alternating=alternating)),
    ]
