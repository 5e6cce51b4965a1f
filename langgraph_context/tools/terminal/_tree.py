"""The `tree` builtin: draw a directory inside the workspace without following symlinks."""

from __future__ import annotations

import os
from pathlib import Path

from langgraph_context.tools.terminal._policies import CommandRefused
from langgraph_context.tools.terminal._sandbox import confine

__all__ = ["render_tree"]


def render_tree(args: tuple[str, ...], cwd: Path, root: Path) -> str:
    """Render `tree [-L DEPTH] [-a] [-d] [DIR...]`; symlinks are shown, never entered.

    Raises:
        CommandRefused: On unsupported options or a path outside the workspace.
    """
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
    lines: list[str] = []
    counts = [0, 0]

    def walk(directory: Path, prefix: str, level: int) -> None:
        if depth is not None and level > depth:
            return
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as error:
            lines.append(f"{prefix}[error opening dir: {error.strerror}]")
            return
        entries = [e for e in entries if show_all or not e.name.startswith(".")]
        if dirs_only:
            entries = [e for e in entries if e.is_dir(follow_symlinks=False)]
        for index, entry in enumerate(entries):
            last = index == len(entries) - 1
            is_link = entry.is_symlink()
            is_dir = entry.is_dir(follow_symlinks=False)
            suffix = " -> [symlink]" if is_link else ""
            lines.append(f"{prefix}{'└── ' if last else '├── '}{entry.name}{suffix}")
            counts[0 if is_dir else 1] += 1
            if is_dir and not is_link:
                walk(Path(entry.path), prefix + ("    " if last else "│   "), level + 1)

    for path in paths or ["."]:
        target = confine(path, cwd, root)
        if not target.is_dir():
            raise CommandRefused(f"tree: {path!r} is not a directory in the workspace")
        lines.append(path)
        walk(target, "", 1)
    lines.append(f"\n{counts[0]} directories" + ("" if dirs_only else f", {counts[1]} files"))
    return "\n".join(lines) + "\n"
