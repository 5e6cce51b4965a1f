"""Note tools over `NoteStateMixin.note`: `write_note`, `ls`, `query_note`, `update_note`.

Rules the model can rely on:

* `write_note` always creates. If the name is taken, the note is saved as `name_1`,
  `name_2`, ... (the first free one) and the result says which name was used; a write
  never overwrites another note, even when several writes run in one AI turn.
* `update_note` replaces an exact snippet: once by default (the snippet must then be
  unique in the note), or everywhere with `replace_all`. A missing note, an empty or
  missing snippet, or an ambiguous one is refused and nothing changes.
* Two `update_note` calls on the same note in one AI turn would both start from the
  same text, so only the first applies; the later ones are refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId
from langgraph.prebuilt import InjectedState
from langgraph.types import Command

from langgraph_context.state import get_state_value
from langgraph_context.toolkit import ToolSpec, earlier_sibling_calls, error_result

__all__ = [
    "create_ls_tool",
    "create_query_note_tool",
    "create_update_note_tool",
    "create_write_note_tool",
    "fresh_note_name",
]

MAX_NOTE_NAME_CHARS = 200

DEFAULT_WRITE_NOTE_DESCRIPTION = (
    "Save facts or results as a new note. A taken name gets a fresh one (name_1, ...)."
)
DEFAULT_LS_DESCRIPTION = "List notes and sizes."
DEFAULT_QUERY_NOTE_DESCRIPTION = "Read a note."
DEFAULT_UPDATE_NOTE_DESCRIPTION = (
    "Replace origin_content, an exact snippet of the note, with new_content; it must be "
    "unique unless replace_all."
)

_WRITE_NOTE = ToolSpec("write_note", DEFAULT_WRITE_NOTE_DESCRIPTION)
_LS = ToolSpec("ls", DEFAULT_LS_DESCRIPTION)
_QUERY_NOTE = ToolSpec("query_note", DEFAULT_QUERY_NOTE_DESCRIPTION)
_UPDATE_NOTE = ToolSpec("update_note", DEFAULT_UPDATE_NOTE_DESCRIPTION)


def _notes(state: Any) -> Mapping[str, str]:
    notes = get_state_value(state, "note", {})
    return notes if isinstance(notes, Mapping) else {}


def _clean_name(file_name: Any) -> str | None:
    if not isinstance(file_name, str):
        return None
    name = file_name.strip()
    if not name or len(name) > MAX_NOTE_NAME_CHARS:
        return None
    return name


def fresh_note_name(name: str, taken: set[str] | Mapping[str, Any]) -> str:
    """Return `name`, or `name_1`, `name_2`, ... whichever is the first not in `taken`.

    Example:
        >>> fresh_note_name("todo", {"todo", "todo_1"})
        'todo_2'
    """
    if name not in taken:
        return name
    k = 1
    while f"{name}_{k}" in taken:
        k += 1
    return f"{name}_{k}"


def _name_error(tool_call_id: str) -> ToolMessage:
    return error_result(
        f"Error: file_name must be non-empty text of at most {MAX_NOTE_NAME_CHARS} characters.",
        tool_call_id,
    )


def _note_list(notes: Mapping[str, str]) -> str:
    return ", ".join(sorted(notes)) if notes else "(none)"


def create_write_note_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    messages_key: str | None = None,
    message_key: str | None = None,
    prefix: str | None = None,
) -> BaseTool:
    """Create the `write_note(file_name, content)` tool.

    Args:
        name: Tool name (default `write_note`).
        prefix: Instead of `name`: name the tool `<prefix>_write_note` (e.g. `notes_write_note`), so
            it cannot collide with another toolset's `write_note`.
        description: Tool description shown to the model.
        messages_key: State key of the messages list (default `messages`).
        message_key: Alias of `messages_key` (the spec's spelling); not both.

    Returns:
        A tool returning a `Command` that adds the note and its `ToolMessage`.

    Raises:
        ValueError: If `name`, `prefix`, `description` or `messages_key` is invalid, or
            both `name` and `prefix` are given.
    """
    spec = _WRITE_NOTE.customize(
        name=name,
        description=description,
        messages_key=messages_key,
        prefix=prefix,
        message_key=message_key,
    )

    def write_note(
        file_name: str,
        content: str,
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[Any, InjectedState],
    ) -> Command[Any] | ToolMessage:
        clean = _clean_name(file_name)
        if clean is None:
            return _name_error(tool_call_id)
        taken = set(_notes(state))
        # Replay the earlier writes of this same AI turn so parallel calls agree on names.
        for call in earlier_sibling_calls(state, tool_call_id, spec.messages_key):
            sibling = _clean_name(call["args"].get("file_name"))
            if call["name"] == spec.name and sibling is not None:
                taken.add(fresh_note_name(sibling, taken))
        used = fresh_note_name(clean, taken)
        renamed = f" ({clean!r} was taken)" if used != clean else ""
        return spec.command(
            {"note": {used: content}},
            f"Note {used!r} written{renamed}, {len(content)} characters.",
            tool_call_id,
        )

    return spec.build(write_note)


def create_ls_tool(
    *, name: str | None = None, description: str | None = None, prefix: str | None = None
) -> BaseTool:
    """Create the `ls()` tool listing note names and sizes.

    Args:
        name: Tool name (default `ls`).
        prefix: Instead of `name`: name the tool `<prefix>_ls` (e.g. `notes_ls`), so
            it cannot collide with another toolset's `ls`.
        description: Tool description shown to the model.

    Returns:
        A tool whose result lists every note as `name (N chars)`.

    Raises:
        ValueError: If `name`, `prefix` or `description` is invalid, or both `name`
            and `prefix` are given.
    """
    spec = _LS.customize(name=name, description=description, prefix=prefix)

    def ls(state: Annotated[Any, InjectedState]) -> str:
        notes = _notes(state)
        if not notes:
            return "No notes yet."
        lines = [f"- {n} ({len(notes[n])} chars)" for n in sorted(notes)]
        return f"{len(notes)} note(s):\n" + "\n".join(lines)

    return spec.build(ls)


def create_query_note_tool(
    *, name: str | None = None, description: str | None = None, prefix: str | None = None
) -> BaseTool:
    """Create the `query_note(file_name)` tool returning one note's content.

    Args:
        name: Tool name (default `query_note`).
        prefix: Instead of `name`: name the tool `<prefix>_query_note` (e.g. `notes_query_note`), so
            it cannot collide with another toolset's `query_note`.
        description: Tool description shown to the model.

    Returns:
        A tool returning the note text, or an error listing the existing notes.

    Raises:
        ValueError: If `name`, `prefix` or `description` is invalid, or both `name`
            and `prefix` are given.
    """
    spec = _QUERY_NOTE.customize(name=name, description=description, prefix=prefix)

    def query_note(
        file_name: str,
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[Any, InjectedState],
    ) -> ToolMessage:
        notes = _notes(state)
        clean = _clean_name(file_name)
        if clean is None:
            return _name_error(tool_call_id)
        if clean not in notes:
            return error_result(
                f"Error: no note named {clean!r}. Existing notes: {_note_list(notes)}.",
                tool_call_id,
            )
        return ToolMessage(notes[clean], tool_call_id=tool_call_id)

    return spec.build(query_note)


def create_update_note_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    messages_key: str | None = None,
    message_key: str | None = None,
    prefix: str | None = None,
) -> BaseTool:
    """Create the `update_note(file_name, origin_content, new_content, replace_all)` tool.

    Args:
        name: Tool name (default `update_note`).
        prefix: Instead of `name`: name the tool `<prefix>_update_note`, so
            it cannot collide with another toolset's `update_note`.
        description: Tool description shown to the model.
        messages_key: State key of the messages list (default `messages`).
        message_key: Alias of `messages_key` (the spec's spelling); not both.

    Returns:
        A tool returning a `Command` with the edited note, or an error `ToolMessage`
        leaving every note unchanged.

    Raises:
        ValueError: If `name`, `prefix`, `description` or `messages_key` is invalid, or
            both `name` and `prefix` are given.
    """
    spec = _UPDATE_NOTE.customize(
        name=name,
        description=description,
        messages_key=messages_key,
        prefix=prefix,
        message_key=message_key,
    )
    # The tool that reads a note, named like this one (a prefix names both alike).
    read_tool = f"{prefix}_{_QUERY_NOTE.name}" if prefix else _QUERY_NOTE.name

    def update_note(
        file_name: str,
        origin_content: str,
        new_content: str,
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[Any, InjectedState],
        replace_all: bool = False,
    ) -> Command[Any] | ToolMessage:
        notes = _notes(state)
        clean = _clean_name(file_name)
        if clean is None:
            return _name_error(tool_call_id)
        if clean not in notes:
            return error_result(
                f"Error: no note named {clean!r}; nothing changed. "
                f"Existing notes: {_note_list(notes)}.",
                tool_call_id,
            )
        for call in earlier_sibling_calls(state, tool_call_id, spec.messages_key):
            if call["name"] == spec.name and _clean_name(call["args"].get("file_name")) == clean:
                return error_result(
                    f"Refused: an earlier {spec.name} call in this turn edits {clean!r}. "
                    "Read its result, then send this edit again.",
                    tool_call_id,
                )
        if not origin_content:
            return error_result(
                "Error: origin_content is empty; pass the exact text to replace.", tool_call_id
            )
        text = notes[clean]
        occurrences = text.count(origin_content)
        if occurrences == 0:
            return error_result(
                f"Error: origin_content was not found in note {clean!r}; nothing changed. "
                f"Read the note with {read_tool} and copy the snippet exactly.",
                tool_call_id,
            )
        if occurrences > 1 and not replace_all:
            return error_result(
                f"Error: origin_content occurs {occurrences} times in note {clean!r}; nothing "
                "changed. Include more surrounding text to make it unique, or set "
                "replace_all=true.",
                tool_call_id,
            )
        count = occurrences if replace_all else 1
        updated = text.replace(origin_content, new_content, count)
        return spec.command(
            {"note": {clean: updated}},
            f"Note {clean!r} updated ({count} replacement(s)).",
            tool_call_id,
        )

    return spec.build(update_note)
