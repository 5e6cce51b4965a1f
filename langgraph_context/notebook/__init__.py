"""The notebook: persistent notes over files or a LangGraph store, and their tools."""

from langgraph_context.notebook.base import (
    BaseNotebookStore,
    Note,
    NotebookError,
    NotebookStore,
    NoteScorer,
    NoteType,
    UnreadableNote,
    UnreadableNoteWarning,
    new_note_id,
    utc_now,
    validate_note_id,
)
from langgraph_context.notebook.files import (
    FileNotebookStore,
)
from langgraph_context.notebook.format import (
    parse_note,
    render_note,
)
from langgraph_context.notebook.langgraph_store import (
    LangGraphNotebookStore,
    resolve_notebook_namespace,
)
from langgraph_context.notebook.packets import (
    notebook_packets,
)
from langgraph_context.notebook.search import (
    bm25_scores,
)
from langgraph_context.notebook.sync import (
    create_load_notes_node,
    create_save_notes_node,
    load_store_notes,
)
from langgraph_context.notebook.tool import (
    NotebookAction,
    NotebookTool,
    create_notebook_tools,
)

__all__ = [
    "BaseNotebookStore",
    "FileNotebookStore",
    "LangGraphNotebookStore",
    "Note",
    "NoteScorer",
    "NoteType",
    "NotebookAction",
    "NotebookError",
    "NotebookStore",
    "NotebookTool",
    "UnreadableNote",
    "UnreadableNoteWarning",
    "bm25_scores",
    "create_load_notes_node",
    "create_notebook_tools",
    "create_save_notes_node",
    "load_store_notes",
    "new_note_id",
    "notebook_packets",
    "parse_note",
    "render_note",
    "resolve_notebook_namespace",
    "utc_now",
    "validate_note_id",
]
