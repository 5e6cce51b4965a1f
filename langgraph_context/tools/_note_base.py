"""The note model, the `NoteStore` interface and `BaseNoteStore`, shared by backends.

`BaseNoteStore` owns validation, filters, ranking and summaries; a backend only says
how a note is loaded, saved and removed, and how writers are serialized.
"""

from __future__ import annotations

import builtins
import re
import secrets
import threading
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from langgraph_context.tools._note_search import bm25_scores

__all__ = [
    "DEFAULT_LIST_LIMIT",
    "DEFAULT_NOTE_TYPE",
    "DEFAULT_SEARCH_LIMIT",
    "MAX_NOTE_ID_CHARS",
    "NOTE_TYPES",
    "BaseNoteStore",
    "Note",
    "NoteError",
    "NoteScorer",
    "NoteStore",
    "NoteType",
    "new_note_id",
    "utc_now",
    "validate_note_id",
]

NoteType = Literal["task_state", "conclusion", "blocker", "action", "reference", "general"]
NOTE_TYPES: tuple[str, ...] = get_args(NoteType)
DEFAULT_NOTE_TYPE: NoteType = "general"
DEFAULT_SEARCH_LIMIT = 10
DEFAULT_LIST_LIMIT = 20
MAX_NOTE_ID_CHARS = 128
_RECENT_IN_SUMMARY = 5

NoteScorer = Callable[[str, Sequence[str]], Sequence[float]]
"""Score candidate texts against a query: one non-negative float per text, 0 = no match."""

# Letters, digits, `_` and `-` only: no dots, slashes or other path syntax, so an id can
# never name anything but a file directly inside the workspace.
_NOTE_ID = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9_-]{{0,{MAX_NOTE_ID_CHARS - 1}}}$")


class NoteError(ValueError):
    """A request the note store refuses (unknown note, bad id, bad field).

    The message is written for the model: it says what was wrong and what to do.
    """


@dataclass(frozen=True)
class Note:
    """One structured note.

    Attributes:
        id: Unique id (letters, digits, `_`, `-`), also the file stem on disk.
        title: One-line title.
        content: Markdown body.
        type: One of `NOTE_TYPES`.
        tags: Tags, in the order given, without duplicates.
        created_at: ISO-8601 UTC creation time.
        updated_at: ISO-8601 UTC time of the last change.
    """

    id: str
    title: str
    content: str
    type: str = DEFAULT_NOTE_TYPE
    tags: tuple[str, ...] = ()
    created_at: str = ""
    updated_at: str = ""

    def metadata(self) -> dict[str, Any]:
        """Return the front-matter fields (everything but the content) as a dict."""
        return {
            "id": self.id,
            "title": self.title,
            "type": self.type,
            "tags": list(self.tags),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }

    def to_dict(self) -> dict[str, Any]:
        """Return all fields, content included, as a JSON-ready dict."""
        return {**self.metadata(), "content": self.content}

    def search_text(self) -> str:
        """Return the text search ranks: title (weighted twice), tags, then content."""
        return "\n".join([self.title, self.title, " ".join(self.tags), self.content])


@runtime_checkable
class NoteStore(Protocol):
    """What every note backend offers (the book's seven operations)."""

    def create(
        self,
        title: str,
        content: str,
        *,
        note_type: str = DEFAULT_NOTE_TYPE,
        tags: Sequence[str] | None = None,
    ) -> Note:
        """Create a note with a fresh unique id and return it."""
        ...

    def read(self, note_id: str) -> Note:
        """Return the note `note_id`."""
        ...

    def update(
        self,
        note_id: str,
        *,
        title: str | None = None,
        content: str | None = None,
        note_type: str | None = None,
        tags: Sequence[str] | None = None,
    ) -> Note:
        """Change the given fields of a note and return the new version."""
        ...

    def delete(self, note_id: str) -> Note:
        """Remove a note and return what it was."""
        ...

    def list(
        self,
        *,
        note_type: str | None = None,
        tags: Sequence[str] | None = None,
        limit: int | None = DEFAULT_LIST_LIMIT,
    ) -> builtins.list[Note]:
        """Return notes, most recently updated first."""
        ...

    def search(
        self,
        query: str,
        *,
        note_type: str | None = None,
        tags: Sequence[str] | None = None,
        limit: int | None = DEFAULT_SEARCH_LIMIT,
    ) -> builtins.list[tuple[Note, float]]:
        """Return `(note, score)` pairs, most relevant first."""
        ...

    def summary(self) -> dict[str, Any]:
        """Return counts by type and tag and the most recent notes."""
        ...


def validate_note_id(note_id: Any) -> str:
    """Return `note_id` if it is a safe id, else raise.

    Args:
        note_id: The id to check.

    Returns:
        The id unchanged.

    Raises:
        NoteError: If it is not 1-128 letters, digits, `_` or `-` starting with a letter
            or digit (so `../x`, `a/b`, `x.md` and empty ids are all refused).

    Example:
        >>> validate_note_id("note_20250119_153000_0a1b2c3d4e5f")
        'note_20250119_153000_0a1b2c3d4e5f'
    """
    if not isinstance(note_id, str) or not _NOTE_ID.match(note_id):
        msg = (
            f"Invalid note id {note_id!r}: ids are 1-{MAX_NOTE_ID_CHARS} letters, digits, "
            "'_' or '-' (as returned by create, list or search)."
        )
        raise NoteError(msg)
    return note_id


def new_note_id(now: datetime | None = None) -> str:
    """Return a fresh id: `note_<UTC date>_<UTC time>_<12 random hex digits>`.

    The 48 random bits make ids unique across processes and machines without
    coordination; backends additionally check for an existing note before saving.

    Args:
        now: The time to stamp (default: now, UTC).

    Returns:
        The new id.

    Example:
        >>> new_note_id(datetime(2025, 1, 19, 15, 30, tzinfo=UTC))[:21]
        'note_20250119_153000_'
    """
    moment = now or datetime.now(UTC)
    return f"note_{moment:%Y%m%d_%H%M%S}_{secrets.token_hex(6)}"


def utc_now() -> str:
    """Return the current UTC time in ISO-8601 with microseconds."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _check_title(title: Any) -> str:
    if not isinstance(title, str) or not title.strip():
        msg = f"title must be a non-empty string, got {title!r}"
        raise NoteError(msg)
    return title.strip()


def _check_content(content: Any) -> str:
    if not isinstance(content, str):
        msg = f"content must be a string, got {type(content).__name__}"
        raise NoteError(msg)
    return content


def _check_type(note_type: Any) -> str:
    if note_type not in NOTE_TYPES:
        msg = f"note_type must be one of {', '.join(NOTE_TYPES)}; got {note_type!r}"
        raise NoteError(msg)
    return str(note_type)


def _check_tags(tags: Any) -> tuple[str, ...]:
    if tags is None:
        return ()
    if isinstance(tags, str) or not isinstance(tags, Iterable):
        msg = f"tags must be a list of strings, got {tags!r}"
        raise NoteError(msg)
    clean: builtins.list[str] = []
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip():
            msg = f"each tag must be a non-empty string, got {tag!r}"
            raise NoteError(msg)
        if tag.strip() not in clean:
            clean.append(tag.strip())
    return tuple(clean)


def _check_limit(limit: Any) -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        msg = f"limit must be a positive integer, got {limit!r}"
        raise NoteError(msg)
    return limit


def _recency_key(note: Note) -> tuple[str, str]:
    return (note.updated_at, note.id)


@dataclass
class BaseNoteStore(ABC):
    """Shared behaviour of every backend; subclasses implement storage primitives.

    Args:
        scorer: Search ranking function (default `bm25_scores`).
    """

    scorer: NoteScorer | None = field(default=None, kw_only=True)
    _mutex: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)

    # -- storage primitives -------------------------------------------------------
    @abstractmethod
    def _load(self, note_id: str) -> Note | None:
        """Return the stored note, or None."""

    @abstractmethod
    def _load_all(self) -> builtins.list[Note]:
        """Return every stored note."""

    @abstractmethod
    def _save(self, note: Note) -> None:
        """Store `note` (insert or replace), atomically."""

    @abstractmethod
    def _remove(self, note_id: str) -> None:
        """Remove the stored note."""

    def _write_lock(self) -> AbstractContextManager[None]:
        """Serialize writers; backends add cross-process locking."""
        return self._thread_lock()

    @contextmanager
    def _thread_lock(self) -> Iterator[None]:
        with self._mutex:
            yield

    # -- operations -----------------------------------------------------------------
    def create(
        self,
        title: str,
        content: str,
        *,
        note_type: str = DEFAULT_NOTE_TYPE,
        tags: Sequence[str] | None = None,
    ) -> Note:
        """Create a note with a fresh unique id.

        Args:
            title: One-line title.
            content: Markdown body.
            note_type: One of `NOTE_TYPES`.
            tags: Tags for filtering.

        Returns:
            The stored note.

        Raises:
            NoteError: If a field is invalid.
        """
        stamp = utc_now()
        note = Note(
            id="",
            title=_check_title(title),
            content=_check_content(content),
            type=_check_type(note_type),
            tags=_check_tags(tags),
            created_at=stamp,
            updated_at=stamp,
        )
        with self._write_lock():
            note_id = new_note_id()
            while self._load(note_id) is not None:  # pragma: no cover - 2**-48 odds
                note_id = new_note_id()
            note = replace(note, id=note_id)
            self._save(note)
        return note

    def read(self, note_id: str) -> Note:
        """Return a note.

        Args:
            note_id: The id.

        Returns:
            The note.

        Raises:
            NoteError: If the id is invalid or no such note exists.
        """
        note = self._load(validate_note_id(note_id))
        if note is None:
            raise self._missing(note_id)
        return note

    def update(
        self,
        note_id: str,
        *,
        title: str | None = None,
        content: str | None = None,
        note_type: str | None = None,
        tags: Sequence[str] | None = None,
    ) -> Note:
        """Change the given fields (None keeps a field) and bump `updated_at`.

        Args:
            note_id: The id.
            title: New title.
            content: New body (replaces the old one).
            note_type: New type.
            tags: New tags (replace the old ones; `[]` clears them).

        Returns:
            The new version.

        Raises:
            NoteError: If the note is missing, nothing is given or a field is invalid.
        """
        validate_note_id(note_id)
        if title is None and content is None and note_type is None and tags is None:
            msg = "Nothing to update: give at least one of title, content, note_type, tags."
            raise NoteError(msg)
        changes: dict[str, Any] = {}
        if title is not None:
            changes["title"] = _check_title(title)
        if content is not None:
            changes["content"] = _check_content(content)
        if note_type is not None:
            changes["type"] = _check_type(note_type)
        if tags is not None:
            changes["tags"] = _check_tags(tags)
        with self._write_lock():
            current = self._load(note_id)
            if current is None:
                raise self._missing(note_id)
            note = replace(current, **changes, updated_at=utc_now())
            self._save(note)
        return note

    def delete(self, note_id: str) -> Note:
        """Remove a note.

        Args:
            note_id: The id.

        Returns:
            The note as it was.

        Raises:
            NoteError: If the id is invalid or no such note exists.
        """
        validate_note_id(note_id)
        with self._write_lock():
            current = self._load(note_id)
            if current is None:
                raise self._missing(note_id)
            self._remove(note_id)
        return current

    def list(
        self,
        *,
        note_type: str | None = None,
        tags: Sequence[str] | None = None,
        limit: int | None = DEFAULT_LIST_LIMIT,
    ) -> builtins.list[Note]:
        """Return notes, most recently updated first.

        Args:
            note_type: Keep only this type.
            tags: Keep notes having at least one of these tags.
            limit: At most this many (None: all).

        Returns:
            The notes.

        Raises:
            NoteError: If a filter or the limit is invalid.
        """
        size = _check_limit(limit)
        notes = sorted(self._filtered(note_type, tags), key=_recency_key, reverse=True)
        return notes if size is None else notes[:size]

    def search(
        self,
        query: str,
        *,
        note_type: str | None = None,
        tags: Sequence[str] | None = None,
        limit: int | None = DEFAULT_SEARCH_LIMIT,
    ) -> builtins.list[tuple[Note, float]]:
        """Rank notes against `query` with the scorer; notes scoring 0 are left out.

        Ties are broken by recency. An empty query lists the filtered notes with score 0.

        Args:
            query: What to look for.
            note_type: Keep only this type.
            tags: Keep notes having at least one of these tags.
            limit: At most this many results (None: all).

        Returns:
            `(note, score)` pairs, best first.

        Raises:
            NoteError: If the query, a filter or the limit is invalid.
        """
        if not isinstance(query, str):
            msg = f"query must be a string, got {type(query).__name__}"
            raise NoteError(msg)
        size = _check_limit(limit)
        notes = self._filtered(note_type, tags)
        if not query.strip():
            ranked: builtins.list[tuple[Note, float]] = [
                (n, 0.0) for n in sorted(notes, key=_recency_key, reverse=True)
            ]
            return ranked if size is None else ranked[:size]
        scores = list((self.scorer or bm25_scores)(query, [n.search_text() for n in notes]))
        pairs = [(n, float(s)) for n, s in zip(notes, scores, strict=True) if s > 0]
        pairs.sort(key=lambda pair: (pair[1], *_recency_key(pair[0])), reverse=True)
        return pairs if size is None else pairs[:size]

    def summary(self) -> dict[str, Any]:
        """Return `total_notes`, `type_distribution`, `tag_counts` and `recent_notes`.

        Returns:
            The summary dict.
        """
        notes = self._load_all()
        types = Counter(n.type for n in notes)
        tags = Counter(t for n in notes for t in n.tags)
        recent = sorted(notes, key=_recency_key, reverse=True)[:_RECENT_IN_SUMMARY]
        return {
            "total_notes": len(notes),
            "type_distribution": {t: types[t] for t in NOTE_TYPES if types[t]},
            "tag_counts": dict(tags.most_common()),
            "recent_notes": [
                {"id": n.id, "title": n.title, "type": n.type, "updated_at": n.updated_at}
                for n in recent
            ],
        }

    # -- helpers ----------------------------------------------------------------------
    def _filtered(self, note_type: str | None, tags: Sequence[str] | None) -> builtins.list[Note]:
        wanted_type = None if note_type is None else _check_type(note_type)
        wanted_tags = set(_check_tags(tags))
        return [
            n
            for n in self._load_all()
            if (wanted_type is None or n.type == wanted_type)
            and (not wanted_tags or wanted_tags.intersection(n.tags))
        ]

    @staticmethod
    def _missing(note_id: str) -> NoteError:
        return NoteError(
            f"Note {note_id!r} does not exist. Use list or search to find existing note ids."
        )
