"""The note model: `Note`, note types, ids, `NotebookError` and the `NotebookStore` interface."""

from __future__ import annotations

import builtins
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, Literal, NamedTuple, Protocol, get_args, runtime_checkable

from langgraph_context.errors import LangGraphContextError

__all__ = [
    "Note",
    "NoteScorer",
    "NoteType",
    "NotebookError",
    "NotebookStore",
    "UnreadableNote",
    "checked_text",
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
DEFAULT_MAX_NOTE_BYTES = 1_000_000
"""Default cap on a note's content, in UTF-8 bytes (`max_note_bytes=` changes it)."""

NoteScorer = Callable[[str, Sequence[str]], Sequence[float]]
"""Score candidate texts against a query: one non-negative float per text, 0 = no match."""

# Letters, digits, `_` and `-` only: no dots, slashes or other path syntax, so an id can
# never name anything but a file directly inside the workspace.
_NOTE_ID = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9_-]{{0,{MAX_NOTE_ID_CHARS - 1}}}$")


class NotebookError(LangGraphContextError, ValueError):
    """A request the note store refuses (unknown note, bad id, bad field).

    The message is written for the model: it says what was wrong and what to do.
    """


class UnreadableNote(NamedTuple):
    """A stored note the store skipped because it could not be read safely.

    Attributes:
        location: The file path (file backend) or `namespace/key` (LangGraph store).
        reason: Why it was skipped, in words a person can act on.
    """

    location: str
    reason: str


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

    @cached_property
    def search_text(self) -> str:
        """The text search ranks: title (weighted twice), tags, then content."""
        return "\n".join([self.title, self.title, " ".join(self.tags), self.content])


@runtime_checkable
class NotebookStore(Protocol):
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
        NotebookError: If it is not 1-128 letters, digits, `_` or `-` starting with a letter
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
        raise NotebookError(msg)
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


def checked_text(value: Any, name: str) -> str:
    """Return `value` if it is text that can be saved as UTF-8, else raise `NotebookError`.

    Both backends read stored fields through this one check (a hand-edited file or a
    corrupt store item may hold any type, or a lone surrogate).

    Example:
        >>> checked_text("ok", "title")
        'ok'
    """
    if not isinstance(value, str):
        msg = f"{name} must be text, got a {type(value).__name__}"
        raise NotebookError(msg)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        msg = f"{name} contains an unpaired surrogate, which cannot be saved as UTF-8"
        raise NotebookError(msg) from None
    return value
