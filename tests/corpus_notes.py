"""Named hostile note files: each plants something bad in a notes folder.

Every entry is `(name, plant)`: `plant(root)` writes the hostile thing into the
workspace `root` and returns the path it planted (which the store must never change).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

BAD_ID = "note_20250101_000000_badbadbadbad"


def _alias_bomb() -> str:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 8):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "---\n" + "\n".join(lines) + "\ntitle: *h\n---\nbody"


def _note(text: str | bytes, name: str = f"{BAD_ID}.md") -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = root / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        return path

    return plant


def _fifo(name: str) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = root / name
        if path.exists():
            path.unlink()
        os.mkfifo(path)
        return path

    return plant


def _directory(name: str) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = root / name
        if path.exists():
            path.unlink()
        path.mkdir()
        (path / "inside.md").write_text("keep me")
        return path

    return plant


def _symlink(name: str, target: str) -> Callable[[Path], Path]:
    def plant(root: Path) -> Path:
        path = root / name
        if path.exists() or path.is_symlink():
            path.unlink()
        os.symlink(target, path)
        return path

    return plant


def _outside_symlink(root: Path) -> Path:
    secret = root.parent / "secret.md"
    secret.write_text("---\ntitle: secret\n---\nTOP SECRET")
    return _symlink(f"{BAD_ID}.md", str(secret))(root)


HUGE = 2_000_000  # over the default 1 MB cap

CORPUS: dict[str, Callable[[Path], Path]] = {
    "impossible date": _note("---\ntitle: x\ncreated_at: 2024-13-45\n---\nbody"),
    "impossible explicit timestamp": _note("---\nupdated_at: !!timestamp 2024-02-30\n---\nb"),
    "date not text": _note("---\ncreated_at: [2024, 1, 1]\n---\nbody"),
    "alias bomb": _note(_alias_bomb()),
    "plain anchor": _note("---\ntitle: &t hello\n---\nbody"),
    "merge key alias": _note("---\nbase: &b {title: x}\n<<: *b\n---\nbody"),
    "deep nesting": _note("---\ntitle: x\nt: " + "[" * 40 + "]" * 40 + "\n---\nbody"),
    "libyaml depth limit": _note("---\nt: " + "[" * 5000 + "]" * 5000 + "\n---\nb"),
    "too many values": _note("---\nt: [" + ", ".join(["1"] * 5000) + "]\n---\nb"),
    "huge front matter": _note("---\ntitle: " + "x" * 100_000 + "\n---\nbody"),
    "huge integer": _note("---\ntitle: " + "9" * 5000 + "\n---\nbody"),
    "python object tag": _note("---\ntitle: !!python/object/apply:os.system [ls]\n---\nb"),
    "binary title": _note("---\ntitle: !!binary aGVsbG8=\n---\nbody"),
    "mapping title": _note("---\ntitle: {a: 1}\n---\nbody"),
    "tags mapping": _note("---\ntags: {a: 1}\n---\nbody"),
    "tags nested": _note("---\ntags: [[a]]\n---\nbody"),
    "front matter list": _note("---\n- a\n- b\n---\nbody"),
    "invalid yaml": _note("---\ntitle: [unclosed\n---\nbody"),
    "missing closing ---": _note("---\ntitle: x\nbody without end"),
    "surrogate escape in title": _note('---\ntitle: "\\ud800"\n---\nbody'),
    "surrogate escape in tag": _note('---\ntags: ["\\udcff"]\n---\nbody'),
    "binary garbage": _note(bytes(range(256)) * 8),
    "nul bytes front matter": _note(b"---\ntitle: a\x00b\n---\nbody"),
    "over the size cap": _note("---\ntitle: big\n---\n" + "x" * HUGE),
    "directory at note": _directory(f"{BAD_ID}.md"),
    "fifo at note": _fifo(f"{BAD_ID}.md"),
    "symlink outside the folder": _outside_symlink,
    "symlink to /dev/zero": _symlink(f"{BAD_ID}.md", "/dev/zero"),
    "dangling symlink": _symlink(f"{BAD_ID}.md", "/nonexistent/x.md"),
    "symlink loop": _symlink(f"{BAD_ID}.md", f"{BAD_ID}.md"),
    "name not an id": _note("---\ntitle: x\n---\nb", name="bad name.md"),
    "surrogate in file name": _note("---\ntitle: x\n---\nb", name="bad\udcff.md"),
    "directory at index": _directory("notes_index.json"),
    "fifo at index": _fifo("notes_index.json"),
    "symlink at index": _symlink("notes_index.json", "/dev/zero"),
    "directory at lock": _directory(".notes.lock"),
    "fifo at lock": _fifo(".notes.lock"),
}
"""Hostile things the store must skip and report."""

LENIENT: dict[str, Callable[[Path], Path]] = {
    "non-utf8 bytes": _note(b"---\ntitle: Caf\xe9\n---\nPr\xe9f\xe9rer"),
    "byte-order mark": _note("\ufeff---\ntitle: with bom\n---\nbody"),
    "crlf line ends": _note("---\r\ntitle: crlf\r\ntags: [a]\r\n---\r\n\r\nbody\r\n"),
    "no front matter": _note("# Heading title\nplain markdown"),
    "empty file": _note(b""),
    "only dashes": _note("---\n---\n"),
    "duplicate keys": _note("---\ntitle: a\ntitle: b\n---\nbody"),
    "id in header differs": _note("---\nid: note_other\ntitle: x\n---\nbody"),
    "unknown type": _note("---\ntype: urgent\n---\nbody"),
    "date only": _note("---\ncreated_at: 2024-01-05\n---\nbody"),
    "numeric tags": _note("---\ntags: [1, 2.5, true]\n---\nbody"),
    "nfd tag": _note("---\ntags: [cafe\u0301]\n---\nbody"),
}
"""Odd but readable files: the store must serve them and list every good note."""
