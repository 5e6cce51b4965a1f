"""Progress of one benchmark, for the runner's bars (`python -m benchmarks`).

A benchmark wraps its long loops in `track(items, "label")`. Run by the runner, each
step appends one JSON line `{"label", "done", "total"}` to the file named by
`LGC_BENCH_PROGRESS`, from which the runner draws a bar with an ETA; run alone in a
terminal, `track` shows rich's own bar on stderr.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator, Sized
from typing import TypeVar

ENV = "LGC_BENCH_PROGRESS"
_T = TypeVar("_T")
_MIN_INTERVAL = 0.2  # seconds between two writes of the same loop (the last one always goes)


def _write(path: str, label: str, done: int, total: int | None) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"label": label, "done": done, "total": total}) + "\n")


class Steps:
    """Progress counted by hand, for work that is not one loop: `advance()` after each step.

    Reports to the runner like `track`; run alone, it reports nothing.
    """

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done = label, total, 0
        self.path = os.environ.get(ENV)
        self.last = time.monotonic()
        if self.path:
            _write(self.path, label, 0, total)

    def advance(self, steps: int = 1) -> None:
        """Count `steps` more done; write them out at most every 0.2 s, and at the end."""
        self.done += steps
        now = time.monotonic()
        if self.path and (now - self.last >= _MIN_INTERVAL or self.done >= self.total):
            _write(self.path, self.label, self.done, self.total)
            self.last = now


def track(items: Iterable[_T], label: str, *, total: int | None = None) -> Iterator[_T]:
    """Yield `items`, reporting how many are done out of `total` (default `len(items)`)."""
    if total is None and isinstance(items, Sized):
        total = len(items)
    path = os.environ.get(ENV)
    if not path:
        from rich.console import Console
        from rich.progress import track as rich_track

        yield from rich_track(
            items, description=label, total=total, console=Console(stderr=True), transient=True
        )
        return
    _write(path, label, 0, total)
    last = time.monotonic()
    done = 0
    for item in items:
        yield item
        done += 1
        now = time.monotonic()
        if now - last >= _MIN_INTERVAL or done == total:
            _write(path, label, done, total)
            last = now
    if done != total:
        _write(path, label, done, done)
