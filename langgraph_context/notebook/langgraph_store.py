"""`LangGraphNotebookStore`: the same notes as items of a LangGraph `BaseStore`.

Each note is one item: key = note id, value = the note's fields, in one namespace.
Namespaces are usually derived per run from `config["configurable"]` with
`resolve_notebook_namespace`, e.g. `("notes", "{user_id}", "{project}")`, so a graph served
with a PostgreSQL or SQLite store keeps each user's notes across machines.

The store API has no put-if-absent or cross-process lock: ids carry 48 random bits, so
two writers never pick the same id, and concurrent updates of one note are
last-writer-wins across processes. Within one process they are serialized: every
`LangGraphNotebookStore` on the same store object and namespace shares one lock, so
parallel tool calls (each building its own instance) never lose an update.

Item values are checked like note files: a value that is not a mapping, a field of the
wrong type, an unparseable date, an unpaired surrogate, content over `max_note_bytes`
or a key that is not a note id makes that one item unreadable. `list`, `search` and
`summary` skip it (reported by `unreadable()` and an `UnreadableNoteWarning`); `read`,
`update` and `delete` refuse it with a message saying why; it is never rewritten.
"""

from __future__ import annotations

import string
import threading
import unicodedata
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.notebook.base import (
    BaseNotebookStore,
    Note,
    NotebookError,
    validate_note_id,
)
from langgraph_context.notebook.model import DEFAULT_NOTE_TYPE, NOTE_TYPES, checked_text

__all__ = [
    "LangGraphNotebookStore",
    "escape_label",
    "resolve_notebook_namespace",
]

NOTEBOOK_NAMESPACE: tuple[str, ...] = ("notes", "{user_id}")
"""Per user: a run that names no `user_id` is refused, never sent to a shared notebook."""
SHARED_NOTEBOOK_NAMESPACE: tuple[str, ...] = ("notes", "shared")
"""The opt-in for one notebook every user of the graph reads and writes."""
_PAGE = 5_000

# One writer lock per (store object, namespace), shared by every instance in the process.
# Keyed by id(store) (stores need not be hashable); the entry goes when the store does.
_LOCKS: dict[int, weakref.WeakValueDictionary[tuple[str, ...], threading.RLock]] = {}
_LOCKS_GUARD = threading.Lock()


def _shared_lock(store: BaseStore, namespace: tuple[str, ...]) -> threading.RLock:
    with _LOCKS_GUARD:
        locks = _LOCKS.get(id(store))
        if locks is None:
            locks = _LOCKS[id(store)] = weakref.WeakValueDictionary()
            weakref.finalize(store, _LOCKS.pop, id(store), None)
        lock = locks.get(namespace)
        if lock is None:
            lock = locks[namespace] = threading.RLock()
        return lock


def check_namespace(namespace: Any) -> tuple[str, ...]:
    if (
        not isinstance(namespace, tuple)
        or not namespace
        or not all(isinstance(p, str) and p and "." not in p for p in namespace)
    ):
        msg = (
            "namespace must be a non-empty tuple of non-empty strings without '.', "
            f"got {namespace!r}"
        )
        raise InvalidArgumentError(msg)
    return namespace


def escape_label(value: str) -> str:
    """Return `value` as a store namespace label: `%` and `.` percent-escaped, one-to-one.

    Example:
        >>> escape_label("a.b"), escape_label("a_b")
        ('a%2Eb', 'a_b')
    """
    return value.replace("%", "%25").replace(".", "%2E")


def resolve_notebook_namespace(
    template: Sequence[str], config: Mapping[str, Any] | None = None, *, context: Any = None
) -> tuple[str, ...]:
    """Fill `{placeholders}` in a namespace template from `config["configurable"]`.

    A placeholder missing from `configurable` is read from `context` (the run's
    runtime context: a mapping key or an attribute). There is no default value: a
    missing one is an error, so notes never fall back to a namespace others share.

    Args:
        template: Namespace parts, e.g. `("notes", "{user_id}")`.
        config: The run's config (`RunnableConfig`).
        context: The run's runtime context (`Runtime.context`), if any.

    Returns:
        The namespace, with `.` and `%` in filled values percent-escaped (store labels
        may not contain dots).

    Raises:
        ValueError: If a placeholder has no value in the config, or the template is bad.

    Example:
        >>> resolve_notebook_namespace(("notes", "{user_id}"), {"configurable": {"user_id": "a.b"}})
        ('notes', 'a%2Eb')
    """
    configurable = dict((config or {}).get("configurable") or {})
    values = {k: v for k, v in configurable.items() if v not in (None, "")}
    parts: list[str] = []
    for part in template:
        if not isinstance(part, str):
            msg = f"namespace template parts must be strings, got {part!r}"
            raise InvalidArgumentError(msg)
        names = [name for _, name, _, _ in string.Formatter().parse(part) if name is not None]
        for name in names:
            if name not in values and _context_value(context, name) not in (None, ""):
                values[name] = _context_value(context, name)
        missing = [name for name in names if name not in values]
        if missing:
            msg = (
                f"note namespace {tuple(template)!r} needs config['configurable'][{missing[0]!r}]"
                f" (or {missing[0]!r} in the run context) for this run; pass it in the config"
                " of invoke/stream. Notes are never put in a namespace shared by default."
            )
            raise InvalidArgumentError(msg)
        parts.append(part.format(**{n: escape_label(str(values[n])) for n in names}))
    return check_namespace(tuple(parts))


def _context_value(context: Any, name: str) -> Any:
    if context is None:
        return None
    if isinstance(context, Mapping):
        return context.get(name)
    return getattr(context, name, None)


def _text(value: Any, name: str) -> str:
    """Return a text field ('' when absent); raise on another type or a lone surrogate."""
    return "" if value is None else checked_text(value, name)


def _time(value: Any, name: str) -> str:
    text = _text(value, name)
    if text:
        try:
            datetime.fromisoformat(text)
        except ValueError:
            msg = f"{name} {text[:40]!r} is not an ISO-8601 time"
            raise NotebookError(msg) from None
    return text


def _tags(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        msg = f"tags must be a list of text values, got a {type(value).__name__}"
        raise NotebookError(msg)
    tags = (unicodedata.normalize("NFC", _text(t, "each tag").strip()) for t in value)
    return tuple(dict.fromkeys(t for t in tags if t))


def _note_from_value(note_id: str, value: Any, *, max_bytes: int) -> Note:
    """Build a note from a store item, checking every field; raise NotebookError if unusable."""
    validate_note_id(note_id)
    if not isinstance(value, Mapping):
        msg = f"the item value is a {type(value).__name__}, not a mapping of note fields"
        raise NotebookError(msg)
    content = _text(value.get("content"), "content")
    if len(content) > max_bytes or len(content.encode("utf-8")) > max_bytes:
        msg = f"the content is over the {max_bytes}-byte limit (raise max_note_bytes to read it)"
        raise NotebookError(msg)
    note_type = value.get("type")
    if not isinstance(note_type, str) or note_type not in NOTE_TYPES:
        note_type = DEFAULT_NOTE_TYPE
    created = _time(value.get("created_at"), "created_at")
    return Note(
        id=note_id,
        title=_text(value.get("title"), "title") or note_id,
        content=content,
        type=note_type,
        tags=_tags(value.get("tags")),
        created_at=created,
        updated_at=_time(value.get("updated_at"), "updated_at") or created,
    )


@dataclass
class LangGraphNotebookStore(BaseNotebookStore):
    """Notes kept in a LangGraph `BaseStore` under one namespace.

    Args:
        store: Any `BaseStore` (`InMemoryStore`, `SqliteStore`, `PostgresStore`, ...).
        namespace: The namespace holding this notebook's items (default
            `SHARED_NOTEBOOK_NAMESPACE`: pass a per-user one when users must not share).
        scorer: Search ranking function (default `bm25_scores`, the package's BM25).

    Raises:
        TypeError: If `store` is not a `BaseStore`.
        ValueError: If `namespace` is not a non-empty tuple of dot-free strings.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> notes = LangGraphNotebookStore(InMemoryStore(), namespace=("notes", "alice"))
        >>> note = notes.create("Blocked on CI", "Runner is offline", note_type="blocker")
        >>> [n.title for n in notes.list(note_type="blocker")]
        ['Blocked on CI']
    """

    store: BaseStore
    namespace: tuple[str, ...] = SHARED_NOTEBOOK_NAMESPACE
    _notes: dict[str, tuple[Any, Note | str]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.store, BaseStore):
            msg = f"store must be a langgraph BaseStore, got {type(self.store).__name__}"
            raise InvalidTypeError(msg)
        self.namespace = check_namespace(self.namespace)
        self._mutex = _shared_lock(self.store, self.namespace)

    def _load(self, note_id: str) -> Note | None:
        item = self.store.get(self.namespace, note_id)
        if item is None:
            return None
        try:
            return _note_from_value(note_id, item.value, max_bytes=self.max_note_bytes)
        except NotebookError as error:
            msg = (
                f"The stored note {note_id} cannot be read: {error}. It was left untouched; "
                "ask the user to fix or remove it."
            )
            raise NotebookError(msg) from None

    def _item_note(self, key: str, version: Any, value: Any) -> Note | str:
        """The note of an item, or why it is unreadable; reused while the item is unchanged."""
        hit = self._notes.get(key)
        if hit is None or hit[0] != version:
            try:
                parsed: Note | str = _note_from_value(key, value, max_bytes=self.max_note_bytes)
            except NotebookError as error:
                parsed = str(error)
            hit = self._notes[key] = (version, parsed)
        return hit[1]

    def _load_all(self) -> list[Note]:
        notes: list[Note] = []
        seen: set[str] = set()
        offset = 0
        while True:
            page = self.store.search(self.namespace, limit=_PAGE, offset=offset)
            for item in page:
                if tuple(item.namespace) != self.namespace:
                    continue
                # Reuse the parsed note while the item is unchanged (keeps ranking caches warm).
                note = self._item_note(item.key, item.updated_at, item.value)
                if isinstance(note, str):  # skipped and reported, never fatal to others
                    where = "/".join((*self.namespace, item.key))
                    where = where.encode("utf-8", "backslashreplace").decode("utf-8")
                    self._report(where, item.updated_at, note)
                    seen.add(where)
                else:
                    notes.append(note)
            if len(page) < _PAGE:
                break
            offset += _PAGE
        with self._mutex:
            for gone in set(self._problems) - seen:
                del self._problems[gone]
        if len(self._notes) > 2 * (len(notes) + len(seen)):
            live = {n.id for n in notes} | {w.rsplit("/", 1)[-1] for w in seen}
            self._notes = {k: v for k, v in self._notes.items() if k in live}
        return notes

    def _save(self, note: Note) -> None:
        self.store.put(self.namespace, note.id, note.to_dict(), index=False)

    def _remove(self, note_id: str) -> None:
        self.store.delete(self.namespace, note_id)
