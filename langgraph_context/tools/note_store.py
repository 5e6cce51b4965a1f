"""Persistent structured notes: one interface (`NoteStore`), two backends.

* `FileNoteStore`: one Markdown file per note (YAML front matter + body) plus
  `notes_index.json` in a workspace directory; atomic writes, a cross-process `fcntl`
  lock, an index rebuilt from the files when missing, stale or corrupt.
* `LangGraphNoteStore`: the same notes as items of a LangGraph `BaseStore` (in-memory,
  SQLite, PostgreSQL) under a namespace resolved per run from the config.

Both derive from `BaseNoteStore`, which owns validation, filters, ranking and
summaries. Search ranking goes through one seam, a `NoteScorer`
`(query, texts) -> scores` (0 = no match); the default is `bm25_scores` (BM25+).
"""

from langgraph_context.tools._note_base import (
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
    validate_note_id,
)
from langgraph_context.tools._note_files import INDEX_FILE_NAME, LOCK_FILE_NAME, FileNoteStore
from langgraph_context.tools._note_format import parse_note, render_note
from langgraph_context.tools._note_langgraph import (
    DEFAULT_NOTE_NAMESPACE,
    LangGraphNoteStore,
    resolve_note_namespace,
)
from langgraph_context.tools._note_search import bm25_scores, tokenize

__all__ = [
    "DEFAULT_LIST_LIMIT",
    "DEFAULT_NOTE_NAMESPACE",
    "DEFAULT_NOTE_TYPE",
    "DEFAULT_SEARCH_LIMIT",
    "INDEX_FILE_NAME",
    "LOCK_FILE_NAME",
    "MAX_NOTE_ID_CHARS",
    "NOTE_TYPES",
    "BaseNoteStore",
    "FileNoteStore",
    "LangGraphNoteStore",
    "Note",
    "NoteError",
    "NoteScorer",
    "NoteStore",
    "NoteType",
    "bm25_scores",
    "new_note_id",
    "parse_note",
    "render_note",
    "resolve_note_namespace",
    "tokenize",
    "validate_note_id",
]
