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
)
from langgraph_context.notebook.files import (
    FileNotebookStore,
)
from langgraph_context.notebook.langgraph_store import LangGraphNotebookStore
from langgraph_context.notebook.packets import (
    notebook_packets,
)
from langgraph_context.notebook.sync import create_load_notes_node, create_save_notes_node
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
    "create_load_notes_node",
    "create_notebook_tools",
    "create_save_notes_node",
    "notebook_packets",
]
