"""The maintainer's briefing: the workspace facts and notes each request starts from.

By mode the briefing lists the Python files (`explore`, `auto`), greps TODO/FIXME
markers (`analyze`) or lists task-state notes and the latest notes (`plan`), and always
adds the open blockers and the notes most relevant to the request. It is capped in
tokens and starts with a header marking it as data, not instructions.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseLanguageModel

from langgraph_context.agents._maintainer_prompts import (
    BRIEFING_HEADER,
    MaintainerMode,
    check_mode,
)
from langgraph_context.agents.subagent import TRUNCATION_MARKER
from langgraph_context.notebook.model import Note, NotebookStore
from langgraph_context.packet import ContextPacket
from langgraph_context.state import get_state_value
from langgraph_context.tokens import TokenCounter, resolve_counter, truncate_text
from langgraph_context.tools import Terminal

__all__ = [
    "briefing_packets",
    "build_briefing",
]

DEFAULT_MAX_BRIEFING_TOKENS = 1000
BRIEFING_PACKET_TYPE = "workspace"
_BLOCKERS = 3
_RELEVANT = 3
_TASKS = 5
_SNIPPET = 200
_MODE_COMMANDS: dict[str, tuple[str, ...]] = {
    "explore": ("find . -type f -name '*.py' | sort | head -n 60",),
    "auto": ("find . -type f -name '*.py' | sort | head -n 60",),
    "analyze": (
        "grep -rn -E 'TODO|FIXME|XXX|HACK' --include=*.py . | head -n 30",
        "find . -type f -name 'test_*.py' | sort | head -n 30",
    ),
    "plan": (),
}


def _note_line(note: Note) -> str:
    text = " ".join(note.content.split())
    snippet = text if len(text) <= _SNIPPET else text[: _SNIPPET - 3] + "..."
    return f"- [{note.type}] {note.title} (id {note.id}): {snippet}"


def build_briefing(
    mode: MaintainerMode,
    request: str,
    *,
    terminal: Terminal | None = None,
    notes: NotebookStore | None = None,
    max_briefing_tokens: int = DEFAULT_MAX_BRIEFING_TOKENS,
    token_counter: TokenCounter | BaseLanguageModel | None = None,
) -> str:
    """Gather the workspace facts and notes one request starts from.

    Args:
        mode: `explore`, `analyze`, `plan` or `auto`.
        request: The user's request (used to find relevant notes).
        terminal: The sandboxed terminal to run the mode's commands in.
        notes: The note store to read blockers and relevant notes from.
        max_briefing_tokens: Cap on the briefing.
        token_counter: Counter for the cap (`None` = offline tiktoken).

    Returns:
        The briefing text: a header marking it as data, then the facts cut to fit
        (empty when there is nothing to report or not even the header fits).

    Raises:
        ValueError: If `mode` is not a maintainer mode.
    """
    check_mode(mode, "mode")
    sections: list[str] = []
    if terminal is not None:
        for command in _MODE_COMMANDS[mode]:
            result = terminal.run(command)
            if result.output.strip():
                sections.append(f"$ {command}\n{result.render().rstrip()}")
    if notes is not None:
        chosen: dict[str, Note] = {}
        for note in notes.list(note_type="blocker", limit=_BLOCKERS):
            chosen.setdefault(note.id, note)
        if mode == "plan":
            for note in notes.list(note_type="task_state", limit=_TASKS):
                chosen.setdefault(note.id, note)
            for note in notes.list(limit=_TASKS):  # the latest work, whatever its type
                chosen.setdefault(note.id, note)
        if request.strip():
            for note, _score in notes.search(request, limit=_RELEVANT):
                chosen.setdefault(note.id, note)
        if chosen:
            lines = [_note_line(n) for n in chosen.values()]
            sections.append("Notes to keep in mind:\n" + "\n".join(lines))
    if not sections:
        return ""
    count = resolve_counter(token_counter)
    head = f"{BRIEFING_HEADER}\n\n"
    room = max_briefing_tokens - count(head)
    if room < 1:
        return ""  # the data marking must never be cut off, so nothing fits
    body = truncate_text("\n\n".join(sections), room, token_counter=count, marker=TRUNCATION_MARKER)
    while body and count(head + body) > max_briefing_tokens:
        room -= 1
        body = truncate_text(body, max(room, 0), token_counter=count, marker=TRUNCATION_MARKER)
    return head + body if body else ""


def briefing_packets(state: Any) -> list[ContextPacket]:
    """Context-builder state source: the turn's briefing as one pinned, untrusted packet.

    Args:
        state: Graph state with an optional `briefing`.

    Returns:
        Zero or one packet of type `workspace` (rendered in [Evidence]).
    """
    briefing = get_state_value(state, "briefing", "")
    if not briefing:
        return []
    return [
        ContextPacket(
            briefing, type=BRIEFING_PACKET_TYPE, source="briefing", pinned=True, relevance=1.0
        )
    ]
