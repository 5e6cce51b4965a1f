"""Drive a pipeline written once as a generator of requests, from sync or async code.

A pipeline yields each request it needs answered (a model call, a retry) and receives
the answer, or `Failed(error)` when answering raised: the pipeline decides what a
failure means. `drive` answers with a sync callable, `adrive` awaits an async one, and
everything between two requests is plain code both share.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["Failed", "Steps", "adrive", "drive"]

T = TypeVar("T")
R = TypeVar("R")
Steps = Generator[R, Any, T]
"""A pipeline: yields requests of type R, receives their answers, returns a T."""


@dataclass(frozen=True)
class Failed:
    """A request whose answer raised (sent into the steps instead of an answer)."""

    error: Exception


def drive(steps: Steps[R, T], call: Callable[[R], Any]) -> T:
    """Run `steps`, answering each request with `call` (a raised error is sent back in)."""
    answer: Any = None
    while True:
        try:
            request = steps.send(answer)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        try:
            answer = call(request)
        except Exception as exc:  # the steps decide what a failure means
            answer = Failed(exc)


async def adrive(steps: Steps[R, T], call: Callable[[R], Awaitable[Any]]) -> T:
    """Async `drive`: each request is answered by awaiting `call`."""
    answer: Any = None
    while True:
        try:
            request = steps.send(answer)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        try:
            answer = await call(request)
        except Exception as exc:  # the steps decide what a failure means
            answer = Failed(exc)
