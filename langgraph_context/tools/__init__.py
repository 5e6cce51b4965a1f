"""Tool factories: plan and note tools over graph state, persistent notes, a sandboxed terminal."""

from langgraph_context.tools._common import DEFAULT_MESSAGE_KEY
from langgraph_context.tools.note_packets import (
    NOTE_PACKET_TYPE,
    NOTE_TYPE_PRIORITY,
    NOTE_TYPE_WEIGHTS,
    notes_to_packets,
)
from langgraph_context.tools.note_store import (
    DEFAULT_NOTE_NAMESPACE,
    NOTE_TYPES,
    BaseNoteStore,
    FileNoteStore,
    LangGraphNoteStore,
    Note,
    NoteError,
    NoteScorer,
    NoteStore,
    NoteType,
    bm25_scores,
    resolve_note_namespace,
)
from langgraph_context.tools.note_tool import (
    NOTE_ACTIONS,
    NoteAction,
    NoteTool,
    create_note_tools,
)
from langgraph_context.tools.notes import (
    create_ls_tool,
    create_query_note_tool,
    create_update_note_tool,
    create_write_note_tool,
    fresh_note_name,
)
from langgraph_context.tools.plan import (
    PlanUpdate,
    apply_plan_updates,
    create_update_plan_tool,
    create_write_plan_tool,
    render_plan,
)
from langgraph_context.tools.terminal import (
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_TIMEOUT,
    SUPPORTED_COMMANDS,
    Terminal,
    TerminalResult,
    create_terminal_tool,
)

__all__ = [
    "DEFAULT_MAX_OUTPUT_CHARS",
    "DEFAULT_MESSAGE_KEY",
    "DEFAULT_NOTE_NAMESPACE",
    "DEFAULT_TIMEOUT",
    "NOTE_ACTIONS",
    "NOTE_PACKET_TYPE",
    "NOTE_TYPES",
    "NOTE_TYPE_PRIORITY",
    "NOTE_TYPE_WEIGHTS",
    "SUPPORTED_COMMANDS",
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
    "PlanUpdate",
    "Terminal",
    "TerminalResult",
    "apply_plan_updates",
    "bm25_scores",
    "create_ls_tool",
    "create_note_tools",
    "create_query_note_tool",
    "create_terminal_tool",
    "create_update_note_tool",
    "create_update_plan_tool",
    "create_write_note_tool",
    "create_write_plan_tool",
    "fresh_note_name",
    "notes_to_packets",
    "render_plan",
    "resolve_note_namespace",
]
