"""Low-level file access for `FileNotebookStore`: safe reads, atomic writes, temp files.

Every read goes through `read_regular`: no symlink is followed, no FIFO waited on, no
file bigger than the caller's cap read; refusals are `BadFile` errors whose message says
why. Nothing here deletes or rewrites a file except the store's own temp files.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from pathlib import Path

from langgraph_context.notebook.model import NotebookError, validate_note_id

__all__ = [
    "BadFile",
    "atomic_write",
    "file_kind",
    "fsync_dir",
    "open_lock_file",
    "printable",
    "read_regular",
    "remove_temp_files",
    "valid_stem",
]

_TEMP_MARK = ".tmp-"
# Exactly the names `atomic_write` gives its temp files: anything else is left alone.
_TEMP_NAME = re.compile(r"^\.[A-Za-z0-9][A-Za-z0-9_.-]*\.tmp-[0-9a-f]{8}$")
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK


def valid_stem(name: str) -> str | None:
    if not name.endswith(".md") or name.startswith("."):
        return None
    try:
        return validate_note_id(name[:-3])
    except NotebookError:
        return None


class BadFile(NotebookError):
    """A note file that cannot be used; `signature` identifies the version judged."""

    def __init__(self, reason: str, signature: tuple[int, int] | None = None) -> None:
        super().__init__(reason)
        self.signature = signature


def file_kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link (never followed)"
    if stat.S_ISDIR(mode):
        return "a directory, not a file"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe), not a file"
    return "not a regular file"


def printable(text: str) -> str:
    """Make text safe to print and to send to a model (file names may hold any bytes)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def read_regular(path: Path, limit: int) -> tuple[bytes, os.stat_result] | None:
    """Read a regular file of at most `limit` bytes without following links or blocking.

    Args:
        path: The file.
        limit: The most bytes accepted.

    Returns:
        The bytes and the file's stat, or None if there is no such file.

    Raises:
        NotebookError: If the path is a symlink, directory, FIFO or other non-regular file,
            is bigger than `limit`, or cannot be read; the message says which.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise BadFile(file_kind(stat.S_IFLNK)) from None
        raise BadFile(f"it cannot be opened ({error.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise BadFile(file_kind(info.st_mode))
    except BaseException:
        os.close(fd)
        raise
    signature = (info.st_mtime_ns, info.st_size)
    too_big = f"the file is over the {limit}-byte limit (raise max_note_bytes to read it)"
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > limit:
            raise BadFile(too_big, signature)
        try:
            raw = handle.read(limit + 1)
        except OSError as error:
            raise BadFile(f"it cannot be read ({error.strerror})", signature) from None
    if len(raw) > limit:
        raise BadFile(too_big, signature)
    return raw, info


def fsync_dir(path: Path) -> None:
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
        fsync_dir(path.parent)


def remove_temp_files(root: Path) -> None:
    """Delete temp files left in `root` by killed writers (call under the writer lock).

    Args:
        root: The notes directory.
    """
    with os.scandir(root) as entries:
        for entry in entries:
            # Under the lock no temp file belongs to a live writer; only regular files
            # named exactly like ours are removed.
            if _TEMP_NAME.match(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)


def open_lock_file(path: Path) -> int:
    """Open (creating it) the lock file at `path` and return its descriptor.

    Args:
        path: The lock file.

    Returns:
        An open descriptor of a regular file.

    Raises:
        NotebookError: If something other than a regular file is in its place.
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as error:
        kind = error.strerror if error.errno != errno.ELOOP else file_kind(stat.S_IFLNK)
        msg = f"cannot lock the notes folder: {path} is unusable ({kind}); remove it"
        raise NotebookError(printable(msg)) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        msg = f"cannot lock the notes folder: {path} is {file_kind(mode)}; remove it"
        raise NotebookError(printable(msg))
    return fd
