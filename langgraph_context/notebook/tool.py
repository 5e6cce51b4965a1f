"""Persistent notes for agents: the book-style `NotebookTool` facade and LangChain tools.

`NotebookTool(workspace=...).run({"action": ..., ...})` answers like the book: `create`
returns the new id, `read` a `{"metadata", "content"}` dict, `search` and `list` lists
of dicts, `summary` a dict, `update` and `delete` a message; refusals raise
`NotebookError` (a `ValueError`).

`create_notebook_tools(...)` returns one tool per operation (`notebook_create`,
`notebook_read`, `notebook_update`, `notebook_delete`, `notebook_search`,
`notebook_list`, `notebook_summary` by default), so each has a small exact schema.
Mistakes come back as `ToolMessage(status="error")` and change nothing. The notes live
in a directory, in a given `NotebookStore`, in a given LangGraph `BaseStore`, or (the
default) in the store the graph was compiled with, under a namespace filled per run
from `config["configurable"]`.
"""

from __future__ import annotations

import json
import os
import string
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt import ToolRuntime
from langgraph.store.base import BaseStore

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.notebook.files import FileNotebookStore
from langgraph_context.notebook.langgraph_store import (
    NOTEBOOK_NAMESPACE,
    LangGraphNotebookStore,
    resolve_notebook_namespace,
)
from langgraph_context.notebook.model import (
    DEFAULT_LIST_LIMIT,
    DEFAULT_NOTE_TYPE,
    DEFAULT_SEARCH_LIMIT,
    NOTE_TYPES,
    Note,
    NotebookError,
    NotebookStore,
    NoteScorer,
)
from langgraph_context.toolkit import ToolSpec, check_workspace, error_result

__all__ = [
    "NotebookAction",
    "NotebookTool",
    "create_notebook_tools",
]

NotebookAction = Literal["create", "read", "update", "delete", "search", "list", "summary"]
NOTEBOOK_ACTIONS: tuple[str, ...] = get_args(NotebookAction)
DEFAULT_NOTEBOOK_TOOL_PREFIX = "notebook"
_SNIPPET_CHARS = 240

NotebookSource = NotebookStore | BaseStore | str | os.PathLike[str] | None


def _store_from(source: Any, *, scorer: NoteScorer | None) -> NotebookStore | None:
    """Return a fixed `NotebookStore` for `source`, or None for "the graph's store"."""
    if source is None or isinstance(source, BaseStore):
        return None
    if isinstance(source, str | os.PathLike):
        check_workspace(source, "notes")
        return FileNotebookStore(Path(source), scorer=scorer)
    if isinstance(source, NotebookStore):
        return source
    msg = (
        "notes must be a directory path, a NotebookStore, a langgraph BaseStore or None, "
        f"got {type(source).__name__}"
    )
    raise InvalidTypeError(msg)


class NotebookTool:
    """The book's note tool: `run({"action": ..., ...})` over a `NotebookStore`.

    Args:
        workspace: Directory of a `FileNotebookStore` (used when `store` is not given).
        store: Any `NotebookStore` (e.g. a `LangGraphNotebookStore`).
        scorer: Search ranking function for a workspace store.

    Raises:
        ValueError: If neither or both of `workspace` and `store` are given.

    Example:
        >>> import tempfile
        >>> notes = NotebookTool(workspace=tempfile.mkdtemp())
        >>> note_id = notes.run({"action": "create", "title": "Phase 1", "content": "done"})
        >>> notes.run({"action": "read", "note_id": note_id})["metadata"]["title"]
        'Phase 1'
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        *,
        store: NotebookStore | None = None,
        scorer: NoteScorer | None = None,
    ) -> None:
        if (workspace is None) == (store is None):
            msg = (
                "NotebookTool needs exactly one of workspace= (a directory) or store= "
                "(a NotebookStore)"
            )
            raise InvalidArgumentError(msg)
        check_workspace(workspace)
        self.store: NotebookStore = store or FileNotebookStore(Path(str(workspace)), scorer=scorer)

    def run(self, parameters: Mapping[str, Any]) -> Any:
        """Run one action.

        Args:
            parameters: `action` plus that action's fields: `title`, `content`,
                `note_type`, `tags`, `note_id`, `query`, `limit`.

        Returns:
            `create`: the id; `read`: `{"metadata", "content"}`; `update`/`delete`: a
            message; `search`: dicts with `note_id`, `title`, `type`, `tags`, `content`,
            `updated_at`, `score`; `list`: metadata dicts; `summary`: counts and recent
            notes.

        Raises:
            NotebookError: If the action is unknown or the store refuses the request.
        """
        action = parameters.get("action")
        store = self.store
        if action == "create":
            return store.create(
                parameters.get("title", ""),
                parameters.get("content", ""),
                note_type=parameters.get("note_type") or DEFAULT_NOTE_TYPE,
                tags=parameters.get("tags"),
            ).id
        if action == "read":
            note = store.read(parameters.get("note_id", ""))
            return {"metadata": note.metadata(), "content": note.content}
        if action == "update":
            note = store.update(
                parameters.get("note_id", ""),
                title=parameters.get("title"),
                content=parameters.get("content"),
                note_type=parameters.get("note_type"),
                tags=parameters.get("tags"),
            )
            return f"Note updated: {note.title}"
        if action == "delete":
            return f"Note deleted: {store.delete(parameters.get('note_id', '')).title}"
        if action == "search":
            hits = store.search(
                parameters.get("query", ""),
                note_type=parameters.get("note_type"),
                tags=parameters.get("tags"),
                limit=parameters.get("limit", DEFAULT_SEARCH_LIMIT),
            )
            return [{**_hit(note), "content": note.content, "score": score} for note, score in hits]
        if action == "list":
            notes = store.list(
                note_type=parameters.get("note_type"),
                tags=parameters.get("tags"),
                limit=parameters.get("limit", DEFAULT_LIST_LIMIT),
            )
            return [note.metadata() for note in notes]
        if action == "summary":
            return store.summary()
        msg = f"Unknown action {action!r}; use one of: {', '.join(NOTEBOOK_ACTIONS)}"
        raise NotebookError(msg)


def _hit(note: Note) -> dict[str, Any]:
    return {
        "note_id": note.id,
        "title": note.title,
        "type": note.type,
        "tags": list(note.tags),
        "updated_at": note.updated_at,
    }


def _header(note: Note) -> str:
    tags = ", ".join(note.tags) or "-"
    return f"[{note.id}] {note.title} (type: {note.type}; tags: {tags}; updated {note.updated_at})"


def _skipped(store: NotebookStore) -> str:
    """A line telling the model which stored notes were skipped as unreadable, if any."""
    report = getattr(store, "unreadable", None)
    items = report() if callable(report) else []
    if not items:
        return ""
    names = "; ".join(f"{loc.rsplit('/', 1)[-1]} ({reason})" for loc, reason in items[:3])
    more = f" and {len(items) - 3} more" if len(items) > 3 else ""
    return (
        f"\n[{len(items)} stored note(s) could not be read and were skipped: {names}{more}. "
        "They are left untouched; tell the user if they matter.]"
    )


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET_CHARS else flat[: _SNIPPET_CHARS - 3] + "..."


_DESCRIPTIONS: dict[str, str] = {
    "create": (
        "Save a persistent note (survives this conversation). note_type is one of "
        f"{', '.join(NOTE_TYPES)}: task_state for progress, conclusion for findings, "
        "blocker for problems, action for next steps. Returns the note id."
    ),
    "read": "Read one saved note in full by its note_id.",
    "update": (
        "Change a saved note: give note_id and any of title, content (replaces the whole "
        "body), note_type, tags (replace the old tags)."
    ),
    "delete": "Delete a saved note by its note_id.",
    "search": (
        "Search saved notes by relevance to a query; optionally filter by note_type and "
        "tags (a note matches if it has any of them). Returns ids, titles and snippets."
    ),
    "list": "List saved notes, most recently updated first; optional note_type/tags filters.",
    "summary": "Count saved notes by type and tag and show the most recent ones.",
}


def create_notebook_tools(
    notes: NotebookSource = None,
    *,
    namespace: Sequence[str] = NOTEBOOK_NAMESPACE,
    scorer: NoteScorer | None = None,
    prefix: str = DEFAULT_NOTEBOOK_TOOL_PREFIX,
    actions: Sequence[NotebookAction] = NOTEBOOK_ACTIONS,  # type: ignore[assignment]
) -> list[BaseTool]:
    """Create one LangChain tool per note action, all over the same notes.

    Args:
        notes: Where notes live: a directory path (`FileNotebookStore`), a `NotebookStore`, a
            LangGraph `BaseStore`, or None for the store the graph is compiled with.
        namespace: For store-backed notes, the namespace template; `{name}` parts are
            filled from `config["configurable"]` on each call, e.g.
            `("notes", "{user_id}", "{project}")`.
        scorer: Search ranking function (default `bm25_scores`, the package's BM25).
        prefix: Tool names are `<prefix>_<action>`.
        actions: Which actions to expose, in this order.

    Returns:
        The tools.

    Raises:
        TypeError: If `notes` is of an unsupported type.
        ValueError: If an action is unknown, `actions` is empty, the prefix makes an
            invalid tool name, or the namespace template is malformed.

    Example:
        >>> import tempfile
        >>> [t.name for t in create_notebook_tools(tempfile.mkdtemp(), actions=["create", "read"])]
        ['notebook_create', 'notebook_read']
    """
    fixed = _store_from(notes, scorer=scorer)
    chosen = list(actions)
    unknown = [a for a in chosen if a not in NOTEBOOK_ACTIONS]
    if unknown or not chosen:
        msg = f"actions must be a non-empty subset of {NOTEBOOK_ACTIONS}, got {actions!r}"
        raise InvalidArgumentError(msg)
    template = tuple(namespace)
    if not template or not all(isinstance(p, str) and p for p in template):
        msg = f"namespace must be a non-empty tuple of strings, got {namespace!r}"
        raise InvalidArgumentError(msg)
    _check_template(template)
    given_store = notes if isinstance(notes, BaseStore) else None

    def resolve(runtime: ToolRuntime) -> NotebookStore:
        if fixed is not None:
            return fixed
        store = given_store or runtime.store
        if store is None:
            # A NotebookError becomes an error ToolMessage: the tool call is answered and
            # the thread stays valid, instead of the run dying mid tool round.
            msg = (
                "No LangGraph store available: compile the graph with store=... or pass "
                "notes= to create_notebook_tools."
            )
            raise NotebookError(msg)
        return LangGraphNotebookStore(
            store,
            namespace=resolve_notebook_namespace(template, runtime.config, context=runtime.context),
            scorer=scorer,
        )

    builders: dict[str, Callable[..., Any]] = {
        "create": _create_fn,
        "read": _read_fn,
        "update": _update_fn,
        "delete": _delete_fn,
        "search": _search_fn,
        "list": _list_fn,
        "summary": _summary_fn,
    }
    tools: list[BaseTool] = []
    for action in chosen:
        default = ToolSpec(f"{DEFAULT_NOTEBOOK_TOOL_PREFIX}_{action}", _DESCRIPTIONS[action])
        spec = default.customize(name=f"{prefix}_{action}")
        tools.append(spec.build(builders[action](resolve)))
    return tools


def _check_template(template: tuple[str, ...]) -> None:
    """Fill every placeholder with a dummy value so literal parts are checked now."""
    try:
        names = {
            name
            for part in template
            for _, name, _, _ in string.Formatter().parse(part)
            if name is not None
        }
        resolve_notebook_namespace(template, {"configurable": dict.fromkeys(names, "x")})
    except (ValueError, KeyError, IndexError) as error:
        msg = f"namespace template {template!r} is malformed: {error}"
        raise InvalidArgumentError(msg) from None


Resolver = Callable[[ToolRuntime], NotebookStore]
NoteTypeArg = Literal["task_state", "conclusion", "blocker", "action", "reference", "general"]


def _guard(tool_call_id: str, work: Callable[[], str]) -> ToolMessage:
    try:
        return ToolMessage(work(), tool_call_id=tool_call_id)
    except NotebookError as error:
        return error_result(f"Error: {error}", tool_call_id)


def _create_fn(resolve: Resolver) -> Callable[..., ToolMessage]:
    def notebook_create(
        title: str,
        content: str,
        runtime: ToolRuntime,
        note_type: NoteTypeArg = "general",
        tags: list[str] | None = None,
    ) -> ToolMessage:
        """Create a note."""

        def work() -> str:
            note = resolve(runtime).create(title, content, note_type=note_type, tags=tags)
            return f"Created note {note.id}: {note.title}"

        return _guard(runtime.tool_call_id or "", work)

    return notebook_create


def _read_fn(resolve: Resolver) -> Callable[..., ToolMessage]:
    def notebook_read(
        note_id: str,
        runtime: ToolRuntime,
    ) -> ToolMessage:
        """Read a note."""

        def work() -> str:
            note = resolve(runtime).read(note_id)
            return f"{_header(note)}\n\n{note.content}"

        return _guard(runtime.tool_call_id or "", work)

    return notebook_read


def _update_fn(resolve: Resolver) -> Callable[..., ToolMessage]:
    def notebook_update(
        note_id: str,
        runtime: ToolRuntime,
        title: str | None = None,
        content: str | None = None,
        note_type: NoteTypeArg | None = None,
        tags: list[str] | None = None,
    ) -> ToolMessage:
        """Update a note."""

        def work() -> str:
            note = resolve(runtime).update(
                note_id, title=title, content=content, note_type=note_type, tags=tags
            )
            return f"Updated note {_header(note)}"

        return _guard(runtime.tool_call_id or "", work)

    return notebook_update


def _delete_fn(resolve: Resolver) -> Callable[..., ToolMessage]:
    def notebook_delete(
        note_id: str,
        runtime: ToolRuntime,
    ) -> ToolMessage:
        """Delete a note."""

        def work() -> str:
            note = resolve(runtime).delete(note_id)
            return f"Deleted note {note.id}: {note.title}"

        return _guard(runtime.tool_call_id or "", work)

    return notebook_delete


def _search_fn(resolve: Resolver) -> Callable[..., ToolMessage]:
    def notebook_search(
        query: str,
        runtime: ToolRuntime,
        note_type: NoteTypeArg | None = None,
        tags: list[str] | None = None,
        limit: int = 5,
    ) -> ToolMessage:
        """Search notes."""

        def work() -> str:
            store = resolve(runtime)
            hits = store.search(query, note_type=note_type, tags=tags, limit=limit)
            if not hits:
                return f"No note matches {query!r}.{_skipped(store)}"
            found = "\n".join(
                f"{i}. {_header(n)} score={s:.2f}\n   {_snippet(n.content)}"
                for i, (n, s) in enumerate(hits, start=1)
            )
            return found + _skipped(store)

        return _guard(runtime.tool_call_id or "", work)

    return notebook_search


def _list_fn(resolve: Resolver) -> Callable[..., ToolMessage]:
    def notebook_list(
        runtime: ToolRuntime,
        note_type: NoteTypeArg | None = None,
        tags: list[str] | None = None,
        limit: int = DEFAULT_LIST_LIMIT,
    ) -> ToolMessage:
        """List notes."""

        def work() -> str:
            store = resolve(runtime)
            notes = store.list(note_type=note_type, tags=tags, limit=limit)
            listed = "\n".join(_header(n) for n in notes) if notes else "No notes."
            return listed + _skipped(store)

        return _guard(runtime.tool_call_id or "", work)

    return notebook_list


def _summary_fn(resolve: Resolver) -> Callable[..., ToolMessage]:
    def notebook_summary(
        runtime: ToolRuntime,
    ) -> ToolMessage:
        """Summarize notes."""

        def work() -> str:
            return json.dumps(resolve(runtime).summary(), ensure_ascii=False, indent=1)

        return _guard(runtime.tool_call_id or "", work)

    return notebook_summary
