"""Key facts a handoff must keep, and how retention is measured.

Claude Code sessions (extraction independent of the library's snapshot rules):

* file paths: the `file_path` / `path` / `notebook_path` argument of every tool call;
* error lines: lines of tool results (except file reads, `Read`) that state an error,
  i.e. match `\berror\b|\\*\\* \\(|\bfailed\b|\bexception\b|traceback`
  (case-insensitive), plus the first line of a result flagged as an error. A line is
  normalized (whitespace collapsed, stripped), cut to its first 100 characters, and
  kept if at least 12 characters long.

A fact is *key* at a replay point `t` (the history `H = messages[:t]` before a model
call) when it is referred to again later: its string occurs in a message at or after
`t` (text, tool arguments or results). It is *early* when every occurrence of it in
`H` lies in the first half of `H` (by message index): the facts a handoff must carry
because the recent part of the history does not mention them.

tau-bench airline: the key facts are the string values of `info.task.actions`
arguments that look like identifiers (a letter and a digit, or `_` and a digit:
reservation ids, flight numbers, user and payment ids), needed by the task's actions
by construction; early as above. Dates and amounts are not counted.

Retention: a fact is retained when its string occurs in what the model would see (all
message text plus tool-call arguments as JSON, whitespace collapsed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

_PATH_KEYS = ("file_path", "path", "notebook_path")
_ERROR = re.compile(r"\berror\b|\*\* \(|\bfailed\b|\bexception\b|traceback", re.IGNORECASE)
_ID_LIKE = re.compile(r"^(?=.*\d)(?=.*[A-Za-z_])[\w-]{4,}$")
_FACT_CHARS = 100


def _norm(text: str) -> str:
    return " ".join(text.split())


def message_text(message: BaseMessage) -> str:
    """All the text of a message the model reads: content plus tool-call arguments."""
    content = message.content
    if isinstance(content, str):
        parts = [content]
    else:
        parts = [
            b.get("text", "") if isinstance(b, dict) else str(b) for b in content if b is not None
        ]
    if isinstance(message, AIMessage):
        parts.extend(json.dumps(tc["args"], ensure_ascii=False) for tc in message.tool_calls)
    return _norm("\n".join(str(p) for p in parts))


def view_text(messages: Iterable[BaseMessage]) -> str:
    """The normalized text of a whole view."""
    return "\n".join(message_text(m) for m in messages)


def claude_facts_per_message(messages: Sequence[BaseMessage]) -> list[set[str]]:
    """The Claude Code facts each message introduces (paths and error lines)."""
    out: list[set[str]] = []
    names: dict[str, str] = {}
    for message in messages:
        facts: set[str] = set()
        if isinstance(message, AIMessage):
            for tc in message.tool_calls:
                names[str(tc["id"])] = tc["name"]
                for key in _PATH_KEYS:
                    value = tc["args"].get(key)
                    if isinstance(value, str) and value.strip():
                        facts.add(_norm(value))
        if isinstance(message, ToolMessage):
            text = message.content if isinstance(message.content, str) else ""
            tool = message.name or names.get(message.tool_call_id, "")
            lines = [_norm(line)[:_FACT_CHARS] for line in text.splitlines() if line.strip()]
            if message.status == "error" and lines and len(lines[0]) >= 12:
                facts.add(lines[0])
            if tool != "Read":
                facts.update(line for line in lines if _ERROR.search(line) and len(line) >= 12)
        out.append(facts)
    return out


def tau_key_ids(item: dict[str, Any]) -> set[str]:
    """Identifier-like string values of the task's ground-truth actions."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if _ID_LIKE.match(value) and not re.match(r"^\d{4}-\d{2}-\d{2}", value):
                found.add(value)
        elif isinstance(value, dict):
            for child in value.values():
                walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)

    for action in item.get("info", {}).get("task", {}).get("actions", []):
        walk(action.get("kwargs", {}))
    return found


class FactIndex:
    """Where each fact of one session occurs, for fast per-point queries."""

    def __init__(self, texts: Sequence[str], introduced: Sequence[set[str]]) -> None:
        facts = {fact for group in introduced for fact in group}
        self.occurs: dict[str, list[int]] = {}
        for fact in facts:
            where = [i for i, text in enumerate(texts) if fact in text]
            if where:
                self.occurs[fact] = where

    def early_key_facts(self, t: int, *, later: bool = True) -> list[str]:
        """Facts seen in `messages[:t]` only in its first half (and again at/after `t`)."""
        half = t // 2
        out = []
        for fact, where in self.occurs.items():
            before = [i for i in where if i < t]
            if not before or before[-1] >= half:
                continue
            if later and where[-1] < t:
                continue
            out.append(fact)
        return out
