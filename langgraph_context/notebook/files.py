"""`FileNotebookStore`: notes as Markdown files in a workspace directory.

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
* Note files are opened with `O_NOFOLLOW | O_NONBLOCK` and must be regular files no
  bigger than the size cap: a symlink, directory or FIFO is never followed, read or
  waited on, so nothing outside the workspace is ever read or written.
* A file that cannot be read safely (hostile front matter, too big, not a regular file,
  a name that is not an id) is skipped, cached as bad until it changes, reported by
  `unreadable()` and an `UnreadableNoteWarning`, and never rewritten or deleted. The
  index and lock are the store's own files: if something else occupies their place,
  the store keeps working (index in memory, writes refused with a clear error).
* Temp files of killed writers are removed when a store opens (under the lock, so no
  live writer owns one).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.notebook._fileio import (
    BadFile,
    atomic_write,
    file_kind,
    fsync_dir,
    open_lock_file,
    printable,
    read_regular,
    remove_temp_files,
    valid_stem,
)
from langgraph_context.notebook.base import BaseNotebookStore, Note, NotebookError
from langgraph_context.notebook.format import MAX_FRONT_MATTER_BYTES, parse_note, render_note
from langgraph_context.toolkit import check_workspace

__all__ = [
    "FileNotebookStore",
]

INDEX_FILE_NAME = "notes_index.json"
LOCK_FILE_NAME = ".notes.lock"
_INDEX_VERSION = 1
# The index holds metadata only; a bigger one is treated as corrupt and rebuilt.
_MAX_INDEX_BYTES = 64 * 1024 * 1024
_Signature = tuple[int, int]  # (mtime_ns, size)
_FileId = tuple[int, int, int]  # (inode, mtime_ns, size)
# How long a directory listing may be trusted while neither the index file nor the
# directory changed. Writers through this class always replace the index (a new
# inode), so their changes show at once; in-place hand edits show within this delay.
RESCAN_SECONDS = 1.0


@dataclass
class FileNotebookStore(BaseNotebookStore):
    """Notes as Markdown + YAML front matter files in `workspace`, safe across processes.

    Args:
        workspace: The notes directory (created if missing).
        durable: fsync every write (turn off only for throwaway stores and benchmarks).
        scorer: Search ranking function (default `bm25_scores`, the package's BM25).
        max_note_bytes: Largest note content accepted, in UTF-8 bytes; bigger note files
            (beyond this plus the front-matter cap) are skipped and reported.

    Raises:
        ValueError: If `workspace` exists and is not a directory, or `max_note_bytes`
            is not a positive integer.

    Example:
        >>> import tempfile
        >>> store = FileNotebookStore(tempfile.mkdtemp())
        >>> note = store.create("DB pool", "Raise the pool size", note_type="action")
        >>> store.read(note.id).title
        'DB pool'
    """

    workspace: str | os.PathLike[str]
    durable: bool = field(default=True, kw_only=True)
    root: Path = field(init=False)
    _cache: dict[str, tuple[_Signature, Note | str]] = field(default_factory=dict, init=False)
    _known_scan: dict[str, _Signature] | None = field(default=None, init=False)
    _full_scan: dict[str, _Signature] | None = field(default=None, init=False)
    _known_index: _FileId | None = field(default=None, init=False)
    _known_dir: _FileId | None = field(default=None, init=False)
    _scanned_at: float = field(default=0.0, init=False)
    _index_entries: dict[str, dict[str, Any]] | None = field(default=None, init=False)
    _lock_depth: int = field(default=0, init=False)
    _odd_files: dict[str, str] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_workspace(self.workspace)
        path = Path(self.workspace).expanduser()
        if path.exists() and not path.is_dir():
            msg = f"workspace must be a directory, got the file {str(path)!r}"
            raise InvalidArgumentError(msg)
        path.mkdir(parents=True, exist_ok=True)
        self.root = path.resolve()
        # An unusable lock file is reported by reads and refused by writes.
        with contextlib.suppress(NotebookError), self._write_lock():
            remove_temp_files(self.root)

    @property
    def _file_limit(self) -> int:
        """The largest note file read: the content cap plus the front matter and slack."""
        return self.max_note_bytes + MAX_FRONT_MATTER_BYTES + 1024

    def _location(self, name: str) -> str:
        return printable(str(self.root / name))

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
            fd = self._open_lock()
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

    def _open_lock(self) -> int:
        fd = open_lock_file(self.root / LOCK_FILE_NAME)
        self._problems.pop(self._location(LOCK_FILE_NAME), None)
        return fd

    # -- reading files --------------------------------------------------------------------
    def _scan(self) -> dict[str, _Signature]:
        found: dict[str, _Signature] = {}
        odd: dict[str, str] = {}
        with os.scandir(self.root) as entries:
            for entry in entries:
                if not entry.name.endswith(".md") or entry.name.startswith("."):
                    continue
                stem = valid_stem(entry.name)
                try:
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:  # deleted by another process meanwhile
                    continue
                if stem is None:
                    odd[entry.name] = "the name is not a note id (letters, digits, '_', '-')"
                elif not stat.S_ISREG(info.st_mode):
                    odd[entry.name] = file_kind(info.st_mode)
                else:
                    found[stem] = (info.st_mtime_ns, info.st_size)
        self._odd_files = odd
        for name, reason in odd.items():
            self._report(self._location(name), reason, reason)
        return found

    def _read_file(self, note_id: str) -> tuple[_Signature, Note] | None:
        """Read and parse a note file; raise `BadFile` if it cannot be used safely."""
        loaded = read_regular(self.note_path(note_id), self._file_limit)
        if loaded is None:
            return None
        raw, info = loaded
        signature = (info.st_mtime_ns, info.st_size)
        if b"\x00" in raw:
            raise BadFile("it holds NUL bytes: a binary file, not a Markdown note", signature)
        text = raw.decode("utf-8", errors="replace")
        try:
            note = parse_note(text, note_id=note_id, modified=info.st_mtime)
        except NotebookError as error:
            raise BadFile(str(error), signature) from None
        return signature, note

    def _cached(self, note_id: str, signature: _Signature) -> Note | None:
        hit = self._cache.get(note_id)
        if hit is not None and hit[0] == signature:
            if isinstance(hit[1], str):  # known bad: not parsed again until it changes
                raise BadFile(hit[1], signature)
            return hit[1]
        return self._reload(note_id)

    def _reload(self, note_id: str) -> Note | None:
        """Read the note's file and refresh (or drop) its cache entry."""
        try:
            loaded = self._read_file(note_id)
        except BadFile as bad:
            if bad.signature is not None:
                self._cache[note_id] = (bad.signature, str(bad))
            raise
        if loaded is None:
            self._cache.pop(note_id, None)
            return None
        self._cache[note_id] = loaded
        return loaded[1]

    def _load(self, note_id: str) -> Note | None:
        with self._mutex:
            try:
                return self._reload(note_id)
            except NotebookError as error:
                msg = (
                    f"The note file {note_id}.md cannot be read: {error}. It was left "
                    "untouched; ask the user to fix or remove it."
                )
                raise NotebookError(printable(msg)) from None

    def _load_for_rewrite(self, note_id: str) -> Note | None:
        # Reads replace undecodable bytes for display; writing that text back (or
        # deleting on the strength of it) would lose the original bytes.
        with self._mutex:
            note = self._load(note_id)
            if note is None:
                return None
            loaded = read_regular(self.note_path(note_id), self._file_limit)
            if loaded is None:
                return None
            try:
                loaded[0].decode("utf-8")
            except UnicodeDecodeError:
                msg = (
                    f"The note file {note_id}.md is not valid UTF-8; fix or re-save it as "
                    "UTF-8 before changing or deleting this note (it was left untouched)."
                )
                raise NotebookError(msg) from None
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
            and self._full_scan is not None
            and directory == self._known_dir
            and self._index_signature() == self._known_index
        ):
            return self._full_scan
        scan = self._full_scan = self._scan()
        self._known_dir, self._scanned_at = directory, now
        return scan

    def _load_all(self) -> list[Note]:
        with self._mutex:
            scan = self._current_scan()
            notes: list[Note] = []
            seen = {self._location(name) for name in self._odd_files}
            seen |= {self._location(INDEX_FILE_NAME), self._location(LOCK_FILE_NAME)}
            for note_id, signature in sorted(scan.items()):
                try:
                    note = self._cached(note_id, signature)
                except NotebookError as error:  # skipped and reported, never fatal to others
                    location = self._location(f"{note_id}.md")
                    self._report(location, signature, str(error))
                    seen.add(location)
                    continue
                if note is not None:
                    notes.append(note)
            for stale in set(self._cache) - set(scan):
                del self._cache[stale]
            for gone in set(self._problems) - seen:
                del self._problems[gone]
            try:
                self._check_index(self._readable(scan))
            except NotebookError as error:  # the lock file is unusable: serve without an index
                self._report(self._location(LOCK_FILE_NAME), None, str(error))
            return notes

    # -- the index ----------------------------------------------------------------------
    def _readable(self, scan: dict[str, _Signature]) -> dict[str, _Signature]:
        """The scan without files known to be unreadable (the index leaves them out)."""
        bad = {i for i, (sig, value) in self._cache.items() if isinstance(value, str)}
        return {i: s for i, s in scan.items() if i not in bad or self._cache[i][0] != s}

    def _index_signature(self) -> _FileId | None:
        try:
            info = os.stat(self.index_path, follow_symlinks=False)
        except FileNotFoundError:
            return None
        return (info.st_ino, info.st_mtime_ns, info.st_size)

    def read_index(self) -> dict[str, dict[str, Any]] | None:
        """Return the index entries, or None if the index is missing or corrupt."""
        try:
            loaded = read_regular(self.index_path, _MAX_INDEX_BYTES)
            if loaded is None:
                return None
            data = json.loads(loaded[0].decode("utf-8"))
        except (OSError, ValueError, RecursionError):  # NotebookError is a ValueError
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
            scan = self._readable(self._scan())
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
            remove_temp_files(self.root)
            scan = self._scan()
            entries: dict[str, dict[str, Any]] = {}
            for note_id, signature in sorted(scan.items()):
                try:
                    note = self._cached(note_id, signature)
                except NotebookError:  # unreadable: reported by _load_all, left out here
                    continue
                hit = self._cache.get(note_id)
                if note is not None and hit is not None:
                    entries[note_id] = self._entry(note, hit[0])
            self._write_index(entries)
            self._known_scan = {i: scan[i] for i in entries}
            return len(entries)

    def _write_index(self, entries: dict[str, dict[str, Any]]) -> None:
        # One line per note: readable and diff-friendly, and fast (json's C encoder only
        # runs without `indent`).
        lines = ",\n".join(
            f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
            for k, v in sorted(entries.items())
        )
        text = f'{{"version": {_INDEX_VERSION}, "notes": {{\n{lines}\n}}}}\n'
        try:
            mode = os.lstat(self.index_path).st_mode
        except FileNotFoundError:
            mode = stat.S_IFREG
        if stat.S_ISREG(mode):
            try:
                atomic_write(self.index_path, text, durable=self.durable)
                self._problems.pop(self._location(INDEX_FILE_NAME), None)
            except OSError as error:
                self._index_trouble(f"it cannot be written ({error.strerror})")
        else:  # not ours to replace: keep the index in memory and say so
            self._index_trouble(file_kind(mode))
        self._known_index = self._index_signature()
        self._index_entries = entries

    def _index_trouble(self, reason: str) -> None:
        location = self._location(INDEX_FILE_NAME)
        self._report(location, reason, f"{reason}; the index is kept in memory only")

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
                fsync_dir(self.root)
            self._update_index(note_id, None)
            self._known_scan = None
