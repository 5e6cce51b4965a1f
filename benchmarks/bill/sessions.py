"""Sessions to replay: recorded turns turned into a model script and tool outputs.

A session is normalized so every configuration can replay it through a real graph:

* user turns: consecutive human messages form one turn, sent together;
* the script: every assistant message in order, text only (thinking blocks dropped),
  with fresh unique tool-call ids (tau-bench reuses ids);
* tool outputs: the recorded result of each call, found by its new id (a call
  without a recorded result gets a fixed placeholder);
* each turn ends with an assistant message without tool calls (the graph stops
  there): an assistant text followed by another assistant message in the same turn
  is folded into the next one, and a turn that ends on tool results (the user
  interrupted) gets a short closing message.

Early facts are strings stated early and needed again later, checked in the model
input of one probe call (see `_with_facts`); pinned strings are the plan and
constraints a configuration with pinned state should keep showing the model
(generated threads only).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from benchmarks.compaction.facts import (
    FactIndex,
    claude_facts_per_message,
    message_text,
    tau_key_ids,
)
from langgraph_context.messages import content_text
from langgraph_context.transcripts import load_claude_code_session, load_openai_transcript

NO_OUTPUT = "(no output was recorded for this call)"
TURN_CLOSED = "(turn ended)"
CODING_PROMPT = (
    "You are a coding agent working in the user's repository. Use the tools to read, "
    "search, edit and run code; keep changes small and explain what you did."
)
_JSON_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array"}


@dataclass
class Session:
    """One replayable session."""

    name: str
    group: str
    window: int
    system_prompt: str
    turns: list[list[str]] = field(default_factory=list)
    script: list[AIMessage] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    tool_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    positions: list[int] = field(default_factory=list)
    probe: int = 0
    facts: list[str] = field(default_factory=list)
    pinned: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        """Model calls the script holds."""
        return len(self.script)

    def tool_schema(self, name: str) -> dict[str, Any]:
        """JSON schema of a recorded tool's arguments (types of the first values seen)."""
        props = {
            key: {"type": _JSON_TYPES.get(type(value), "object")}
            for key, value in self.tool_args.get(name, {}).items()
        }
        return {"type": "object", "properties": props}


def _text(message: BaseMessage) -> str:
    return content_text(message.content)


def build_session(
    name: str,
    group: str,
    messages: list[BaseMessage],
    *,
    window: int,
    system_prompt: str,
) -> Session:
    """Normalize recorded messages into a session (see the module docstring)."""
    session = Session(name, group, window, system_prompt)
    pending: list[str] = []  # text of an assistant message folded into the next one
    call_ids: dict[str, list[str]] = {}  # recorded id -> new ids, in call order
    open_turn = False
    n = 0
    for at, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, HumanMessage):
            if not open_turn and session.turns:
                session.turns[-1].append(_text(message))  # no answer yet: same turn
                continue
            if session.script and session.script[-1].tool_calls:
                session.script.append(AIMessage(TURN_CLOSED))
                session.positions.append(at)
            session.turns.append([_text(message)])
            open_turn = False
            continue
        if isinstance(message, ToolMessage):
            queue = call_ids.get(message.tool_call_id, [])
            if queue:
                session.outputs[queue.pop(0)] = _text(message)
            continue
        if not isinstance(message, AIMessage) or not session.turns:
            continue
        if session.script and not session.script[-1].tool_calls and open_turn:
            pending.append(session.script.pop().text)
            session.positions.pop()
        calls = []
        for call in message.tool_calls:
            n += 1
            new_id = f"call_{n}"
            call_ids.setdefault(call["id"] or new_id, []).append(new_id)
            calls.append({"name": call["name"], "args": call["args"], "id": new_id})
            seen = session.tool_args.setdefault(call["name"], {})
            for key, value in call["args"].items():
                seen.setdefault(key, value)
        text = "\n\n".join(p for p in [*pending, _text(message)] if p)
        pending = []
        session.script.append(AIMessage(text, tool_calls=calls))
        session.positions.append(at)
        open_turn = True
    if session.script and session.script[-1].tool_calls:
        session.script.append(AIMessage(TURN_CLOSED))
        session.positions.append(len(messages))
    if not open_turn and session.turns:
        session.turns.pop()  # a trailing user message that nobody answered
    for ai in session.script:
        for call in ai.tool_calls:
            session.outputs.setdefault(call["id"], NO_OUTPUT)
    return session


def _with_facts(
    session: Session, messages: list[BaseMessage], introduced: list[set[str]]
) -> Session:
    """Probe at two thirds of the script; early key facts as in the compaction benchmark.

    The probe is the model call at two thirds of the script; `t` is its position in the
    recorded messages. A fact counts when every mention of it before `t` lies in the
    first half of `messages[:t]` and it is mentioned again at or after `t`
    (`FactIndex.early_key_facts`): the model needs it and the recent history does not
    repeat it.
    """
    session.probe = 2 * len(session.script) // 3
    t = session.positions[session.probe] if session.script else 0
    index = FactIndex([message_text(m) for m in messages], introduced)
    session.facts = sorted(index.early_key_facts(t, later=True))
    return session


def load_claude(folder: Path, *, window: int, limit_messages: int | None = None) -> list[Session]:
    """The Claude Code main sessions, without Claude Code's own compaction summary event."""
    sessions = []
    for path in sorted(folder.glob("*.jsonl")):
        events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        events = [e for e in events if not e.get("isCompactSummary")]
        messages = load_claude_code_session(events)[:limit_messages]
        session = build_session(
            f"cc-{path.stem[:8]}",
            "claude-code",
            messages,
            window=window,
            system_prompt=CODING_PROMPT,
        )
        sessions.append(_with_facts(session, messages, claude_facts_per_message(messages)))
    return sessions


def load_tau(path: Path, *, window: int, count: int) -> list[Session]:
    """The `count` longest tau-bench airline trajectories (ties by file order)."""
    items = json.loads(path.read_text())
    order = sorted(range(len(items)), key=lambda i: (-len(items[i]["traj"]), i))[:count]
    sessions = []
    for i in sorted(order):
        messages = load_openai_transcript(items[i])
        system = next((_text(m) for m in messages if isinstance(m, SystemMessage)), "")
        session = build_session(f"tau-{i}", "tau", messages, window=window, system_prompt=system)
        ids = tau_key_ids(items[i])
        texts = [message_text(m) for m in messages]
        introduced: list[set[str]] = [set() for _ in messages]
        for fact in ids:
            first = next((k for k, t in enumerate(texts) if fact in t), None)
            if first is not None:
                introduced[first].add(fact)
        sessions.append(_with_facts(session, messages, introduced))
    return sessions
