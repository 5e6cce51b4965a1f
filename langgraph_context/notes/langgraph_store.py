"""`LangGraphNoteStore`: the same notes as items of a LangGraph `BaseStore`.

Each note is one item: key = note id, value = the note's fields, in one namespace.
Namespaces are usually derived per run from `config["configurable"]` with
`resolve_note_namespace`, e.g. `("notes", "{user_id}", "{project}")`, so a graph served
with a PostgreSQL or SQLite store keeps each user's notes across machines.

The store API has no put-if-absent or cross-process lock: ids carry 48 random bits, so
two writers never pick the same id, and concurrent updates of one note are
last-writer-wins across processes. Within one process they are serialized: every
`LangGraphNoteStore` on the same store object and namespace shares one lock, so
parallel tool calls (each building its own instance) never lose an update.
"""

from __future__ import annotations

import string
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import BaseStore

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.notes.base import (
    DEFAULT_NOTE_TYPE,
    NOTE_TYPES,
    BaseNoteStore,
    Note,
)

__all__ = ["DEFAULT_NOTE_NAMESPACE", "LangGraphNoteStore", "resolve_note_namespace"]

DEFAULT_NOTE_NAMESPACE: tuple[str, ...] = ("notes",)
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


def _escape(value: str) -> str:
    # Store namespace labels may not contain '.'; keep the mapping one-to-one.
    return value.replace("%", "%25").replace(".", "%2E")


def resolve_note_namespace(
    template: Sequence[str], config: Mapping[str, Any] | None = None
) -> tuple[str, ...]:
    """Fill `{placeholders}` in a namespace template from `config["configurable"]`.

    Args:
        template: Namespace parts, e.g. `("notes", "{user_id}")`.
        config: The run's config (`RunnableConfig`).

    Returns:
        The namespace, with `.` and `%` in filled values percent-escaped (store labels
        may not contain dots).

    Raises:
        ValueError: If a placeholder has no value in the config, or the template is bad.

    Example:
        >>> resolve_note_namespace(("notes", "{user_id}"), {"configurable": {"user_id": "a.b"}})
        ('notes', 'a%2Eb')
    """
    configurable = dict((config or {}).get("configurable") or {})
    parts: list[str] = []
    for part in template:
        if not isinstance(part, str):
            msg = f"namespace template parts must be strings, got {part!r}"
            raise InvalidArgumentError(msg)
        names = [name for _, name, _, _ in string.Formatter().parse(part) if name is not None]
        missing = [name for name in names if configurable.get(name) in (None, "")]
        if missing:
            msg = (
                f"note namespace {tuple(template)!r} needs config['configurable'][{missing[0]!r}]"
                " for this run; pass it in the config of invoke/stream."
            )
            raise InvalidArgumentError(msg)
        parts.append(part.format(**{n: _escape(str(configurable[n])) for n in names}))
    return check_namespace(tuple(parts))


def _note_from_value(note_id: str, value: Mapping[str, Any]) -> Note:
    tags = value.get("tags") or []
    note_type = value.get("type")
    return Note(
        id=note_id,
        title=str(value.get("title") or note_id),
        content=str(value.get("content") or ""),
        type=note_type if note_type in NOTE_TYPES else DEFAULT_NOTE_TYPE,
        tags=tuple(str(t) for t in tags) if isinstance(tags, list | tuple) else (),
        created_at=str(value.get("created_at") or ""),
        updated_at=str(value.get("updated_at") or value.get("created_at") or ""),
    )


@dataclass
class LangGraphNoteStore(BaseNoteStore):
    """Notes kept in a LangGraph `BaseStore` under one namespace.

    Args:
        store: Any `BaseStore` (`InMemoryStore`, `SqliteStore`, `PostgresStore`, ...).
        namespace: The namespace holding this notebook's items.
        scorer: Search ranking function (default BM25+).

    Raises:
        TypeError: If `store` is not a `BaseStore`.
        ValueError: If `namespace` is not a non-empty tuple of dot-free strings.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> notes = LangGraphNoteStore(InMemoryStore(), namespace=("notes", "alice"))
        >>> note = notes.create("Blocked on CI", "Runner is offline", note_type="blocker")
        >>> [n.title for n in notes.list(note_type="blocker")]
        ['Blocked on CI']
    """

    store: BaseStore
    namespace: tuple[str, ...] = DEFAULT_NOTE_NAMESPACE
    _notes: dict[str, tuple[Any, Note]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.store, BaseStore):
            msg = f"store must be a langgraph BaseStore, got {type(self.store).__name__}"
            raise InvalidTypeError(msg)
        self.namespace = check_namespace(self.namespace)
        self._mutex = _shared_lock(self.store, self.namespace)

    def _load(self, note_id: str) -> Note | None:
        item = self.store.get(self.namespace, note_id)
        return None if item is None else _note_from_value(note_id, item.value)

    def _load_all(self) -> list[Note]:
        notes: list[Note] = []
        offset = 0
        while True:
            page = self.store.search(self.namespace, limit=_PAGE, offset=offset)
            for item in page:
                if tuple(item.namespace) != self.namespace:
                    continue
                # Reuse the parsed note while the item is unchanged (keeps ranking caches warm).
                hit = self._notes.get(item.key)
                if hit is None or hit[0] != item.updated_at:
                    hit = (item.updated_at, _note_from_value(item.key, item.value))
                    self._notes[item.key] = hit
                notes.append(hit[1])
            if len(page) < _PAGE:
                if len(self._notes) > 2 * len(notes):
                    live = {n.id for n in notes}
                    self._notes = {k: v for k, v in self._notes.items() if k in live}
                return notes
            offset += _PAGE

    def _save(self, note: Note) -> None:
        self.store.put(self.namespace, note.id, note.to_dict(), index=False)

    def _remove(self, note_id: str) -> None:
        self.store.delete(self.namespace, note_id)
