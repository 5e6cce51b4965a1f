"""Persistent notes: the NoteStore protocol, file and LangGraph-store backends, the NoteTool."""

from langgraph_context.notes.base import (
    DEFAULT_LIST_LIMIT,
    DEFAULT_NOTE_TYPE,
    DEFAULT_SEARCH_LIMIT,
    MAX_NOTE_ID_CHARS,
    NOTE_TYPES,
    BaseNoteStore,
    Note,
    NoteError,
    NoteScorer,
    NoteStore,
    NoteType,
    new_note_id,
    utc_now,
    validate_note_id,
)
from langgraph_context.notes.files import (
    INDEX_FILE_NAME,
    LOCK_FILE_NAME,
    FileNoteStore,
)
from langgraph_context.notes.format import (
    parse_note,
    render_note,
)
from langgraph_context.notes.langgraph_store import (
    DEFAULT_NOTE_NAMESPACE,
    LangGraphNoteStore,
    resolve_note_namespace,
)
from langgraph_context.notes.packets import (
    DEFAULT_PINNED_NOTE_TYPES,
    DEFAULT_SCORE_SHARE,
    NOTE_PACKET_TYPE,
    NOTE_TYPE_PRIORITY,
    NOTE_TYPE_WEIGHTS,
    notes_to_packets,
)
from langgraph_context.notes.search import (
    bm25_scores,
)
from langgraph_context.notes.sync import (
    DEFAULT_NOTES_NAMESPACE,
    DEFAULT_USER_KEY,
    create_load_notes_node,
    create_save_notes_node,
    load_store_notes,
)
from langgraph_context.notes.tool import (
    DEFAULT_NOTE_TOOL_PREFIX,
    NOTE_ACTIONS,
    NoteAction,
    NoteTool,
    create_note_tools,
)

__all__ = [
    "DEFAULT_LIST_LIMIT",
    "DEFAULT_NOTES_NAMESPACE",
    "DEFAULT_NOTE_NAMESPACE",
    "DEFAULT_NOTE_TOOL_PREFIX",
    "DEFAULT_NOTE_TYPE",
    "DEFAULT_PINNED_NOTE_TYPES",
    "DEFAULT_SCORE_SHARE",
    "DEFAULT_SEARCH_LIMIT",
    "DEFAULT_USER_KEY",
    "INDEX_FILE_NAME",
    "LOCK_FILE_NAME",
    "MAX_NOTE_ID_CHARS",
    "NOTE_ACTIONS",
    "NOTE_PACKET_TYPE",
    "NOTE_TYPES",
    "NOTE_TYPE_PRIORITY",
    "NOTE_TYPE_WEIGHTS",
    "BaseNoteStore",
    "FileNoteStore",
    "LangGraphNoteStore",
    "Note",
    "NoteAction",
    "NoteError",
    "NoteScorer",
    "NoteStore",
    "NoteTool",
    "NoteType",
    "bm25_scores",
    "create_load_notes_node",
    "create_note_tools",
    "create_save_notes_node",
    "load_store_notes",
    "new_note_id",
    "notes_to_packets",
    "parse_note",
    "render_note",
    "resolve_note_namespace",
    "utc_now",
    "validate_note_id",
]
