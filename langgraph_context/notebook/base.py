"""`BaseNotebookStore`: validation, filters, ranking and summaries shared by every backend.

A backend only says how a note is loaded, saved and removed, and how writers are
serialized. The model types live in `_note_model`.
"""

from __future__ import annotations

import builtins
import functools
import heapq
import threading
import unicodedata
import warnings
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.notebook.model import (
    DEFAULT_LIST_LIMIT,
    DEFAULT_MAX_NOTE_BYTES,
    DEFAULT_NOTE_TYPE,
    DEFAULT_SEARCH_LIMIT,
    NOTE_TYPES,
    Note,
    NotebookError,
    NotebookStore,
    NoteScorer,
    NoteType,
    UnreadableNote,
    new_note_id,
    utc_now,
    validate_note_id,
)

# Constants of a private module, importable from here (not in `__all__`).
from langgraph_context.notebook.model import (
    MAX_NOTE_ID_CHARS as MAX_NOTE_ID_CHARS,  # noqa: PLC0414 (re-export)
)
from langgraph_context.notebook.search import bm25_scores

__all__ = [
    "BaseNotebookStore",
    "Note",
    "NoteScorer",
    "NoteType",
    "NotebookError",
    "NotebookStore",
    "UnreadableNote",
    "UnreadableNoteWarning",
    "new_note_id",
    "utc_now",
    "validate_note_id",
]

_RECENT_IN_SUMMARY = 5
# Title and tags live in the front matter, which readers cap at 64 KiB; YAML escaping
# can make a character 4 times longer, so 8 KiB of title and tags always fits.
_MAX_HEADER_BYTES = 8 * 1024


class UnreadableNoteWarning(UserWarning):
    """A stored note was skipped because it could not be read (see `unreadable()`)."""


def _check_utf8(value: str, name: str) -> str:
    """Refuse text a note cannot hold: an unpaired surrogate (e.g. a cut emoji) or a NUL.

    A NUL is valid UTF-8, but a note file holding one reads as binary (and a Postgres
    store refuses it in JSON), so it is refused as it is written, not lost on reading.
    """
    if "\x00" in value:
        msg = f"{name} contains a NUL character (\\x00), which a text note cannot hold; remove it"
        raise NotebookError(msg)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        bad = value[error.start : error.end]
        msg = (
            f"{name} contains {bad!r}, half of a character pair (e.g. a cut-off emoji) that "
            "cannot be saved; remove it or send the whole character"
        )
        raise NotebookError(msg) from None
    return value


def _check_title(title: Any) -> str:
    if not isinstance(title, str) or not title.strip():
        msg = f"title must be a non-empty string, got {title!r}"
        raise NotebookError(msg)
    return _check_utf8(title.strip(), "title")


def _check_content(content: Any) -> str:
    if not isinstance(content, str):
        msg = f"content must be a string, got {type(content).__name__}"
        raise NotebookError(msg)
    return _check_utf8(content, "content")


def _check_type(note_type: Any) -> str:
    if note_type not in NOTE_TYPES:
        msg = f"note_type must be one of {', '.join(NOTE_TYPES)}; got {note_type!r}"
        raise NotebookError(msg)
    return str(note_type)


def _check_tags(tags: Any) -> tuple[str, ...]:
    if tags is None:
        return ()
    if isinstance(tags, str) or not isinstance(tags, Iterable):
        msg = f"tags must be a list of strings, got {tags!r}"
        raise NotebookError(msg)
    clean: builtins.list[str] = []
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip():
            msg = f"each tag must be a non-empty string, got {tag!r}"
            raise NotebookError(msg)
        _check_utf8(tag, "tag")
        # One spelling per tag: "café" typed as one or two code points is the same tag.
        same = unicodedata.normalize("NFC", tag.strip())
        if same not in clean:
            clean.append(same)
    return tuple(clean)


def _check_limit(limit: Any) -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        msg = f"limit must be a positive integer, got {limit!r}"
        raise NotebookError(msg)
    return limit


_EARLIEST = datetime.min.replace(tzinfo=UTC)


@functools.lru_cache(maxsize=4096)
def _instant(stamp: str) -> datetime:
    """The moment an ISO-8601 time names: `12:00+05:00` is before `08:00Z` of that day.

    Compared as strings, times with different offsets sort wrongly. A time without
    an offset is UTC (as notes are written); one that does not parse sorts first.
    """
    try:
        moment = datetime.fromisoformat(stamp.strip())
    except (ValueError, AttributeError):
        return _EARLIEST
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _recency_key(note: Note) -> tuple[datetime, str]:
    return (_instant(note.updated_at), note.id)


def _rank_key(pair: tuple[Note, float]) -> tuple[float, datetime, str]:
    return (pair[1], _instant(pair[0].updated_at), pair[0].id)


@dataclass
class BaseNotebookStore(ABC):
    """Shared behaviour of every backend; subclasses implement storage primitives.

    Args:
        scorer: Search ranking function (default `bm25_scores`).
        max_note_bytes: Largest note content accepted (and read back), in UTF-8 bytes.

    Raises:
        ValueError: If `max_note_bytes` is not a positive integer.
    """

    scorer: NoteScorer | None = field(default=None, kw_only=True)
    max_note_bytes: int = field(default=DEFAULT_MAX_NOTE_BYTES, kw_only=True)
    _problems: dict[str, tuple[Any, str]] = field(default_factory=dict, init=False, repr=False)
    _mutex: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)

    def __post_init__(self) -> None:
        limit = self.max_note_bytes
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            msg = f"max_note_bytes must be a positive integer, got {limit!r}"
            raise InvalidArgumentError(msg)

    # -- the report of skipped notes ----------------------------------------------
    def unreadable(self) -> builtins.list[UnreadableNote]:
        """Return the stored notes the last read skipped, and why.

        `list`, `search` and `summary` skip a note that cannot be read safely (a broken
        or hostile file or item) instead of failing for every note; the skipped note is
        never rewritten or deleted. Each newly seen problem also emits an
        `UnreadableNoteWarning`.

        Returns:
            `(location, reason)` pairs, sorted by location.
        """
        with self._mutex:
            return [UnreadableNote(k, reason) for k, (_, reason) in sorted(self._problems.items())]

    def _report(self, location: str, version: Any, reason: str) -> None:
        """Record that `location` (in state `version`) was skipped; warn once per state."""
        if self._problems.get(location) == (version, reason):
            return
        self._problems[location] = (version, reason)
        warnings.warn(
            f"skipped unreadable note {location}: {reason}", UnreadableNoteWarning, stacklevel=4
        )

    def _check_size(self, note: Note) -> None:
        """Refuse a note too large to store (or to be read back by this store)."""
        if len(note.content) > self.max_note_bytes or (
            len(note.content.encode("utf-8")) > self.max_note_bytes
        ):
            size = len(note.content.encode("utf-8"))
            msg = (
                f"content is {size} bytes; notes are limited to {self.max_note_bytes} bytes. "
                "Split it into several smaller notes, or save a summary instead."
            )
            raise NotebookError(msg)
        header = len(note.title.encode("utf-8")) + sum(len(t.encode("utf-8")) for t in note.tags)
        if header > _MAX_HEADER_BYTES:
            msg = (
                f"title and tags together are {header} bytes; keep them under "
                f"{_MAX_HEADER_BYTES} bytes and put the details in the content."
            )
            raise NotebookError(msg)

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

    def _load_for_rewrite(self, note_id: str) -> Note | None:
        """Load a note about to be rewritten or removed; backends refuse lossy reads."""
        return self._load(note_id)

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
            NotebookError: If a field is invalid.
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
        self._check_size(note)
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
            NotebookError: If the id is invalid or no such note exists.
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
            NotebookError: If the note is missing, nothing is given or a field is invalid.
        """
        validate_note_id(note_id)
        if title is None and content is None and note_type is None and tags is None:
            msg = "Nothing to update: give at least one of title, content, note_type, tags."
            raise NotebookError(msg)
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
            current = self._load_for_rewrite(note_id)
            if current is None:
                raise self._missing(note_id)
            note = replace(current, **changes, updated_at=utc_now())
            self._check_size(note)
            self._save(note)
        return note

    def delete(self, note_id: str) -> Note:
        """Remove a note.

        Args:
            note_id: The id.

        Returns:
            The note as it was.

        Raises:
            NotebookError: If the id is invalid or no such note exists.
        """
        validate_note_id(note_id)
        with self._write_lock():
            current = self._load_for_rewrite(note_id)
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
            NotebookError: If a filter or the limit is invalid.
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
            NotebookError: If the query, a filter or the limit is invalid.
        """
        if not isinstance(query, str):
            msg = f"query must be a string, got {type(query).__name__}"
            raise NotebookError(msg)
        size = _check_limit(limit)
        notes = self._filtered(note_type, tags)
        if not query.strip():
            ranked: builtins.list[tuple[Note, float]] = [
                (n, 0.0) for n in sorted(notes, key=_recency_key, reverse=True)
            ]
            return ranked if size is None else ranked[:size]
        scores = (self.scorer or bm25_scores)(query, [n.search_text for n in notes])
        values = [float(v) for v in scores]
        if len(values) != len(notes):
            msg = f"scorer returned {len(values)} scores for {len(notes)} notes"
            raise InvalidArgumentError(msg)
        pairs = [(note, value) for note, value in zip(notes, values, strict=True) if value > 0]
        if size is None:
            return sorted(pairs, key=_rank_key, reverse=True)
        return heapq.nlargest(size, pairs, key=_rank_key)

    def summary(self) -> dict[str, Any]:
        """Return `total_notes`, `type_distribution`, `tag_counts` and `recent_notes`.

        Returns:
            The summary dict; `unreadable_notes` (location and reason of each skipped
            note) is added when the store skipped any.
        """
        notes = self._load_all()
        types = Counter(n.type for n in notes)
        tags = Counter(t for n in notes for t in n.tags)
        recent = sorted(notes, key=_recency_key, reverse=True)[:_RECENT_IN_SUMMARY]
        result: dict[str, Any] = {
            "total_notes": len(notes),
            "type_distribution": {t: types[t] for t in NOTE_TYPES if types[t]},
            "tag_counts": dict(tags.most_common()),
            "recent_notes": [
                {"id": n.id, "title": n.title, "type": n.type, "updated_at": n.updated_at}
                for n in recent
            ],
        }
        skipped = self.unreadable()
        if skipped:
            result["unreadable_notes"] = [s._asdict() for s in skipped]
        return result

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
    def _missing(note_id: str) -> NotebookError:
        return NotebookError(
            f"Note {note_id!r} does not exist. Use list or search to find existing note ids."
        )
