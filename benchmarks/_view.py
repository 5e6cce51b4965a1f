"""How the runner shows progress: rich bars in a terminal, plain lines with an ETA elsewhere."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

DEFAULT_SECONDS = 30.0  # a stage never run before is expected to take this long
PLAIN_EVERY = 10.0  # seconds between two plain progress lines of one stage


def clock(seconds: float) -> str:
    """`1m05s` / `42s`."""
    seconds = max(0, round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class View(Protocol):
    """What the runner tells its display."""

    def running(self, names: list[str], expected: dict[str, float]) -> Any: ...
    def start(self, name: str) -> None: ...
    def update(self, name: str, event: dict[str, Any] | None) -> None: ...
    def output(self, text: str) -> None: ...
    def finish(self, name: str, code: int, seconds: float, log: Path) -> None: ...


class _Plan:
    """The run's stages, their expected seconds and the overall ETA."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.expected: dict[str, float] = {}
        self.done: list[str] = []
        self.began = time.monotonic()
        self.stage_began = self.began

    def set(self, names: list[str], expected: dict[str, float]) -> None:
        self.names, self.done = names, []
        self.expected = {n: expected.get(n, DEFAULT_SECONDS) for n in names}
        self.began = time.monotonic()

    def index(self, name: str) -> str:
        return f"[{self.names.index(name) + 1}/{len(self.names)}]"

    def remaining(self, current: str | None, current_left: float | None = None) -> float:
        """Seconds left: the stages not started, plus what remains of the current one.

        `current_left` is the current stage's own estimate (from its loop's counts); without
        it, what the last run took minus the time spent so far.
        """
        rest = sum(self.expected[n] for n in self.names if n not in self.done and n != current)
        if current is not None:
            elapsed = time.monotonic() - self.stage_began
            own = self.expected[current] - elapsed if current_left is None else current_left
            rest += max(own, 0.0)
        return rest


class PlainView:
    """Lines for logs and CI: one at each start and end, one every 10 s with the ETA."""

    def __init__(self) -> None:
        self.plan = _Plan()
        self.last_line = 0.0
        self.first: dict[str, tuple[float, int]] = {}
        self.event: dict[str, Any] | None = None  # the stage's newest count

    @contextmanager
    def running(self, names: list[str], expected: dict[str, float]) -> Iterator[None]:
        self.plan.set(names, expected)
        yield
        print(f"all done in {clock(time.monotonic() - self.plan.began)}", flush=True)

    def start(self, name: str) -> None:
        self.plan.stage_began = self.last_line = time.monotonic()
        self.first, self.event = {}, None
        eta = clock(self.plan.remaining(name))
        print(f"{self.plan.index(name)} {name}: started (run eta {eta})", flush=True)

    def update(self, name: str, event: dict[str, Any] | None) -> None:
        now = time.monotonic()
        if event is not None:
            self.first.setdefault(event["label"], (now, int(event["done"])))
            self.event = event
        if now - self.last_line < PLAIN_EVERY:
            return
        self.last_line = now
        stage, left = f"{clock(now - self.plan.stage_began)} elapsed", None
        event = self.event
        if event is not None and event.get("total"):
            began, done0 = self.first[event["label"]]
            done, total = int(event["done"]), int(event["total"])
            rate = (done - done0) / max(now - began, 1e-9)
            left = (total - done) / rate if rate > 0 else None
            eta = "?" if left is None else clock(left)
            stage = f"{event['label']} {done}/{total} ({done / total:.0%}), eta {eta}"
        run = clock(self.plan.remaining(name, left))
        print(f"  {name}: {stage}; run eta {run}", flush=True)

    def output(self, text: str) -> None:
        print(text.rstrip(), flush=True)

    def finish(self, name: str, code: int, seconds: float, log: Path) -> None:
        self.plan.done.append(name)
        state = "ok" if code == 0 else f"FAILED (exit {code}, log {log})"
        print(f"{self.plan.index(name)} {name}: {state} in {clock(seconds)}", flush=True)


class LiveView:
    """Rich bars in a terminal: the whole run, and the current stage's loop, each with ETA."""

    def __init__(self) -> None:
        self.plan = _Plan()
        self.console = Console()
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(bar_width=30),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.run_task: TaskID | None = None
        self.stage_task: TaskID | None = None
        self.counted = False  # whether the current stage has reported counts

    @contextmanager
    def running(self, names: list[str], expected: dict[str, float]) -> Iterator[None]:
        self.plan.set(names, expected)
        with self.progress:
            total = sum(self.plan.expected.values())
            self.run_task = self.progress.add_task("all benchmarks", total=total)
            yield

    def _advance_run(self, name: str) -> None:
        assert self.run_task is not None
        total = sum(self.plan.expected.values())
        self.progress.update(self.run_task, completed=total - self.plan.remaining(name))

    def start(self, name: str) -> None:
        self.plan.stage_began = time.monotonic()
        expected = self.plan.expected[name]
        description = f"{self.plan.index(name)} {name}"
        self.stage_task = self.progress.add_task(description, total=expected)
        self.counted = False

    def update(self, name: str, event: dict[str, Any] | None) -> None:
        assert self.stage_task is not None
        self._advance_run(name)
        if event is not None and event.get("total"):
            self.counted = True
            self.progress.update(
                self.stage_task,
                description=f"{self.plan.index(name)} {name}: {event['label']}",
                total=int(event["total"]),
                completed=int(event["done"]),
            )
        elif not self.counted:  # no counts yet: the last run's duration is the yardstick
            elapsed = time.monotonic() - self.plan.stage_began
            expected = self.plan.expected[name]
            self.progress.update(self.stage_task, completed=min(elapsed, 0.99 * expected))

    def output(self, text: str) -> None:
        self.progress.console.print(text.rstrip(), markup=False, highlight=False)

    def finish(self, name: str, code: int, seconds: float, log: Path) -> None:
        assert self.stage_task is not None
        self.plan.done.append(name)
        self.progress.remove_task(self.stage_task)
        self._advance_run(name)
        state = "[green]ok[/green]" if code == 0 else f"[red]FAILED (exit {code})[/red], log {log}"
        self.progress.console.print(f"{self.plan.index(name)} {name}: {state} in {clock(seconds)}")
