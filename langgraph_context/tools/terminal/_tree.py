"""The `tree` builtin: draw a directory inside the workspace without following symlinks."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from langgraph_context.tools.terminal._names import escape_name
from langgraph_context.tools.terminal._policies import CommandRefused
from langgraph_context.tools.terminal._sandbox import confine

__all__ = ["render_tree"]


def render_tree(
    args: tuple[str, ...], cwd: Path, root: Path, max_chars: int, deadline: float
) -> str:
    """Render `tree [-L DEPTH] [-a] [-d] [DIR...]`; symlinks are shown, never entered.

    The walk is iterative (any depth), stops at `max_chars` of output or the deadline,
    and lists each directory through a descriptor checked to be the very directory
    its parent's listing showed, so a directory swapped for a symlink meanwhile is
    never entered.

    Raises:
        CommandRefused: On unsupported options or a path outside the workspace.
    """
    depth, show_all, dirs_only, paths = _parse(args)
    lines: list[str] = []
    counts = [0, 0]
    size = 0
    for path in paths or ["."]:
        target = confine(path, cwd, root)
        if not target.is_dir():
            raise CommandRefused(f"tree: {path!r} is not a directory in the workspace")
        lines.append(escape_name(path))
        info = target.stat()
        first = _list(str(target), (info.st_dev, info.st_ino), show_all, dirs_only)
        stack: list[_Frame] = [_Frame(str(target), first, "", 1)]
        while stack:
            frame = stack[-1]
            if frame.pos >= len(frame.entries):
                stack.pop()
                continue
            if size > max_chars or time.monotonic() > deadline:
                lines.append("[tree stopped: output or time limit reached; use -L DEPTH]")
                break
            entry = frame.entries[frame.pos]
            frame.pos += 1
            last = frame.pos == len(frame.entries)
            if isinstance(entry, str):  # an error listing the directory
                lines.append(f"{frame.prefix}{entry}")
                continue
            name, is_dir, is_link, identity = entry
            line = f"{frame.prefix}{'└── ' if last else '├── '}{escape_name(name)}"
            lines.append(line + (" -> [symlink]" if is_link else ""))
            size += len(line) + 1
            counts[0 if is_dir else 1] += 1
            if is_dir and (depth is None or frame.level < depth):
                child = os.path.join(frame.path, name)
                entries = _list(child, identity, show_all, dirs_only)
                prefix = frame.prefix + ("    " if last else "│   ")
                stack.append(_Frame(child, entries, prefix, frame.level + 1))
    lines.append(f"\n{counts[0]} directories" + ("" if dirs_only else f", {counts[1]} files"))
    return "\n".join(lines) + "\n"


# name, is a directory (not a symlink), is a symlink, (st_dev, st_ino)
_Entry = tuple[str, bool, bool, tuple[int, int]]


@dataclass
class _Frame:
    path: str
    entries: list[_Entry | str]
    prefix: str
    level: int
    pos: int = 0


def _list(
    path: str, identity: tuple[int, int], show_all: bool, dirs_only: bool
) -> list[_Entry | str]:
    """List `path` if it is still the directory `identity` names; else one error line."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        return [f"[error opening dir: {error.strerror}]"]
    try:
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != identity:
            return ["[error opening dir: it changed while listing]"]
        entries: list[_Entry | str] = []
        with os.scandir(fd) as listing:
            for e in sorted(listing, key=lambda e: e.name):
                if not show_all and e.name.startswith("."):
                    continue
                is_dir = e.is_dir(follow_symlinks=False)
                if dirs_only and not is_dir:
                    continue
                st = e.stat(follow_symlinks=False)
                entries.append((e.name, is_dir, e.is_symlink(), (st.st_dev, st.st_ino)))
    except OSError as error:
        return [f"[error opening dir: {error.strerror}]"]
    finally:
        os.close(fd)
    return entries


def _parse(args: tuple[str, ...]) -> tuple[int | None, bool, bool, list[str]]:
    depth: int | None = None
    show_all = dirs_only = False
    paths: list[str] = []
    items = list(args)
    while items:
        arg = items.pop(0)
        if arg == "-L":
            if not items or not items[0].isdigit() or int(items[0]) < 1:
                raise CommandRefused("tree -L needs a positive depth")
            depth = int(items.pop(0))
        elif arg in {"-a", "-d", "-ad", "-da"}:
            show_all = show_all or "a" in arg
            dirs_only = dirs_only or "d" in arg
        elif arg.startswith("-"):
            raise CommandRefused("tree supports -L DEPTH, -a and -d")
        else:
            paths.append(arg)
    return depth, show_all, dirs_only, paths
