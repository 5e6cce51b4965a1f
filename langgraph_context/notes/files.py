"""`FileNoteStore`: notes as Markdown files in a workspace directory.

Layout: `<workspace>/<id>.md` per note, `<workspace>/notes_index.json` (metadata of
every note plus the size and mtime of its file), `<workspace>/.notes.lock`.

* Every write (note file or index) goes to a temp file in the same directory, is
  flushed and fsynced, then renamed over the target: readers see the old or the new
  file, never half of one, even if the writer is killed.
* Writers hold an exclusive `fcntl.flock` on the lock file, so creates, updates and
  deletes from several processes serialize; the lock dies with its process.
* Readers compare a cheap directory scan (name, size, mtime of each `*.md`) with what
  they knew; changed files are re-parsed (hand edits are picked up) and an index that
  is missing, unreadable or out of step with the files is rebuilt from them.
* Note files are opened with `O_NOFOLLOW`; symlinked notes and names that are not
  valid ids are ignored, so nothing outside the workspace is ever read or written.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.notes.base import BaseNoteStore, Note, NoteError, validate_note_id
from langgraph_context.notes.format import parse_note, render_note
from langgraph_context.toolkit import check_workspace

__all__ = ["INDEX_FILE_NAME", "LOCK_FILE_NAME", "FileNoteStore"]

INDEX_FILE_NAME = "notes_index.json"
LOCK_FILE_NAME = ".notes.lock"
_INDEX_VERSION = 1
_TEMP_MARK = ".tmp-"
_Signature = tuple[int, int]  # (mtime_ns, size)
_FileId = tuple[int, int, int]  # (inode, mtime_ns, size)
# How long a directory listing may be trusted while neither the index file nor the
# directory changed. Writers through this class always replace the index (a new
# inode), so their changes show at once; in-place hand edits show within this delay.
RESCAN_SECONDS = 1.0


def _valid_stem(name: str) -> str | None:
    if not name.endswith(".md") or name.startswith("."):
        return None
    try:
        return validate_note_id(name[:-3])
    except NoteError:
        return None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, text: str, *, durable: bool = True) -> None:
    """Write `text` to `path` through a temp file and `os.replace`.

    Args:
        path: The target file (its directory must exist).
        text: The text, written as UTF-8.
        durable: fsync the file and its directory before returning.
    """
    temp = path.with_name(f".{path.name}{_TEMP_MARK}{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    if durable:
        _fsync_dir(path.parent)


@dataclass
class FileNoteStore(BaseNoteStore):
    """Notes as Markdown + YAML front matter files in `workspace`, safe across processes.

    Args:
        workspace: The notes directory (created if missing).
        durable: fsync every write (turn off only for throwaway stores and benchmarks).
        scorer: Search ranking function (default BM25+).

    Raises:
        ValueError: If `workspace` exists and is not a directory.

    Example:
        >>> import tempfile
        >>> store = FileNoteStore(tempfile.mkdtemp())
        >>> note = store.create("DB pool", "Raise the pool size", note_type="action")
        >>> store.read(note.id).title
        'DB pool'
    """

    workspace: str | os.PathLike[str]
    durable: bool = field(default=True, kw_only=True)
    root: Path = field(init=False)
    _cache: dict[str, tuple[_Signature, Note]] = field(default_factory=dict, init=False)
    _known_scan: dict[str, _Signature] | None = field(default=None, init=False)
    _known_index: _FileId | None = field(default=None, init=False)
    _known_dir: _FileId | None = field(default=None, init=False)
    _scanned_at: float = field(default=0.0, init=False)
    _index_entries: dict[str, dict[str, Any]] | None = field(default=None, init=False)
    _lock_depth: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        check_workspace(self.workspace)
        path = Path(self.workspace).expanduser()
        if path.exists() and not path.is_dir():
            msg = f"workspace must be a directory, got the file {str(path)!r}"
            raise InvalidArgumentError(msg)
        path.mkdir(parents=True, exist_ok=True)
        self.root = path.resolve()

    # -- paths and locking ------------------------------------------------------------
    @property
    def index_path(self) -> Path:
        """Where the index file lives."""
        return self.root / INDEX_FILE_NAME

    def note_path(self, note_id: str) -> Path:
        """Return the file of `note_id` (which must be a valid id)."""
        return self.root / f"{note_id}.md"

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        with self._mutex:
            if self._lock_depth:
                self._lock_depth += 1
                try:
                    yield
                finally:
                    self._lock_depth -= 1
                return
            fd = os.open(self.root / LOCK_FILE_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._lock_depth = 1
                try:
                    yield
                finally:
                    self._lock_depth = 0
                    fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    # -- reading files --------------------------------------------------------------------
    def _scan(self) -> dict[str, _Signature]:
        found: dict[str, _Signature] = {}
        with os.scandir(self.root) as entries:
            for entry in entries:
                stem = _valid_stem(entry.name)
                if stem is None or not entry.is_file(follow_symlinks=False):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:  # deleted by another process meanwhile
                    continue
                found[stem] = (info.st_mtime_ns, info.st_size)
        return found

    def _read_file(self, note_id: str) -> tuple[_Signature, Note] | None:
        try:
            fd = os.open(self.note_path(note_id), os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as error:
            if error.errno == errno.ELOOP:  # a symlink: never followed
                return None
            raise
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            raw = handle.read()
        text = raw.decode("utf-8", errors="replace")
        note = parse_note(text, note_id=note_id, modified=info.st_mtime)
        return (info.st_mtime_ns, info.st_size), note

    def _cached(self, note_id: str, signature: _Signature) -> Note | None:
        hit = self._cache.get(note_id)
        if hit is not None and hit[0] == signature:
            return hit[1]
        return self._reload(note_id)

    def _reload(self, note_id: str) -> Note | None:
        """Read the note's file and refresh (or drop) its cache entry."""
        loaded = self._read_file(note_id)
        if loaded is None:
            self._cache.pop(note_id, None)
            return None
        self._cache[note_id] = loaded
        return loaded[1]

    def _load(self, note_id: str) -> Note | None:
        with self._mutex:
            return self._reload(note_id)

    def _load_for_rewrite(self, note_id: str) -> Note | None:
        # Reads replace undecodable bytes for display; writing that text back (or
        # deleting on the strength of it) would lose the original bytes.
        with self._mutex:
            note = self._load(note_id)
            if note is None:
                return None
            try:
                fd = os.open(self.note_path(note_id), os.O_RDONLY | os.O_NOFOLLOW)
                with os.fdopen(fd, "rb") as handle:
                    handle.read().decode("utf-8")
            except FileNotFoundError:
                return None
            except UnicodeDecodeError:
                msg = (
                    f"The note file {note_id}.md is not valid UTF-8; fix or re-save it as "
                    "UTF-8 before changing or deleting this note (it was left untouched)."
                )
                raise NoteError(msg) from None
            return note

    def _dir_signature(self) -> _FileId:
        info = os.stat(self.root)
        return (info.st_ino, info.st_mtime_ns, info.st_size)

    def _current_scan(self) -> dict[str, _Signature]:
        """The directory listing, re-read only when something may have changed."""
        now = time.monotonic()
        directory = self._dir_signature()
        if (
            self._known_scan is not None
            and now - self._scanned_at < RESCAN_SECONDS
            and directory == self._known_dir
            and self._index_signature() == self._known_index
        ):
            return self._known_scan
        scan = self._scan()
        self._known_dir, self._scanned_at = directory, now
        return scan

    def _load_all(self) -> list[Note]:
        with self._mutex:
            scan = self._current_scan()
            notes = [n for i, s in sorted(scan.items()) if (n := self._cached(i, s)) is not None]
            for stale in set(self._cache) - set(scan):
                del self._cache[stale]
            self._check_index(scan)
            return notes

    # -- the index ----------------------------------------------------------------------
    def _index_signature(self) -> _FileId | None:
        try:
            info = os.stat(self.index_path, follow_symlinks=False)
        except FileNotFoundError:
            return None
        return (info.st_ino, info.st_mtime_ns, info.st_size)

    def read_index(self) -> dict[str, dict[str, Any]] | None:
        """Return the index entries, or None if the index is missing or corrupt."""
        try:
            fd = os.open(self.index_path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                data = json.loads(handle.read().decode("utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("version") != _INDEX_VERSION:
            return None
        notes = data.get("notes")
        if not isinstance(notes, dict) or not all(isinstance(v, dict) for v in notes.values()):
            return None
        return notes

    @staticmethod
    def _entry(note: Note, signature: _Signature) -> dict[str, Any]:
        return {
            **note.metadata(),
            "file": f"{note.id}.md",
            "mtime_ns": signature[0],
            "size": signature[1],
        }

    @staticmethod
    def _consistent(index: dict[str, dict[str, Any]], scan: dict[str, _Signature]) -> bool:
        if set(index) != set(scan):
            return False
        return all(
            (entry.get("mtime_ns"), entry.get("size")) == scan[note_id]
            for note_id, entry in index.items()
        )

    def _check_index(self, scan: dict[str, _Signature]) -> None:
        index_sig = self._index_signature()
        if scan == self._known_scan and index_sig is not None and index_sig == self._known_index:
            return
        index = self.read_index()
        if index is not None and self._consistent(index, scan):
            # Adopting the on-disk index: its entries replace ours (another writer's).
            self._known_scan, self._known_index = scan, index_sig
            self._index_entries = index
            return
        with self._write_lock():
            # A writer may have been between its note file and its index update: look
            # again under the lock before deciding the index is really stale.
            scan = self._scan()
            index = self.read_index()
            if index is not None and self._consistent(index, scan):
                self._known_scan, self._known_index = scan, self._index_signature()
                self._index_entries = index
                return
            self.rebuild_index()

    def rebuild_index(self) -> int:
        """Rewrite the index from the note files and drop leftover temp files.

        Returns:
            How many notes the index now lists.
        """
        with self._write_lock():
            for leftover in self.root.glob(f".*{_TEMP_MARK}*"):
                # Writers only leave temp files behind when killed: under the lock no
                # temp file belongs to a live writer.
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()
            scan = self._scan()
            entries: dict[str, dict[str, Any]] = {}
            for note_id, signature in sorted(scan.items()):
                hit = self._cache.get(note_id)
                loaded = hit if hit is not None and hit[0] == signature else None
                loaded = loaded or self._read_file(note_id)
                if loaded is not None:
                    self._cache[note_id] = loaded
                    entries[note_id] = self._entry(loaded[1], loaded[0])
            self._write_index(entries)
            self._known_scan = {i: (e["mtime_ns"], e["size"]) for i, e in entries.items()}
            return len(entries)

    def _write_index(self, entries: dict[str, dict[str, Any]]) -> None:
        # One line per note: readable and diff-friendly, and fast (json's C encoder only
        # runs without `indent`).
        lines = ",\n".join(
            f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
            for k, v in sorted(entries.items())
        )
        text = f'{{"version": {_INDEX_VERSION}, "notes": {{\n{lines}\n}}}}\n'
        atomic_write(self.index_path, text, durable=self.durable)
        self._known_index = self._index_signature()
        self._index_entries = entries

    def _update_index(self, note_id: str, note: Note | None) -> None:
        # Under the lock: if the index is still the one this instance wrote, reuse it.
        same = self._index_entries is not None and self._index_signature() == self._known_index
        index = self._index_entries if same else self.read_index()
        if index is None:
            self.rebuild_index()
            return
        if note is None:
            index.pop(note_id, None)
        else:
            loaded = self._read_file(note_id)
            if loaded is not None:
                self._cache[note_id] = loaded
                index[note_id] = self._entry(loaded[1], loaded[0])
        self._write_index(index)

    # -- writing --------------------------------------------------------------------------
    def _save(self, note: Note) -> None:
        with self._write_lock():
            atomic_write(self.note_path(note.id), render_note(note), durable=self.durable)
            self._update_index(note.id, note)
            self._known_scan = None  # others may have written since our last scan

    def _remove(self, note_id: str) -> None:
        with self._write_lock():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.note_path(note_id))
            self._cache.pop(note_id, None)
            if self.durable:
                _fsync_dir(self.root)
            self._update_index(note_id, None)
            self._known_scan = None
