"""Run a pipeline written once, as a generator of calls, from sync or async code.

A pipeline that needs I/O (gather sources, embed, ask a summarizer) yields a `Call`
naming the sync function and its async twin; the driver runs one of them and sends
the result back. Everything between two calls is plain code, shared by both drivers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from langgraph_context._gc import paused_gc

__all__ = ["Call", "Steps", "adrive", "drive"]

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One I/O step a pipeline needs.

    Attributes:
        func: The sync function.
        afunc: Its async twin, called with the same arguments.
        args: Positional arguments.
        kwargs: Keyword arguments.
    """

    func: Callable[..., Any]
    afunc: Callable[..., Awaitable[Any]]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


Steps = Generator[Call, Any, T]
"""A pipeline: yields the calls it needs, receives their results, returns its value."""


def _advance(steps: Steps[T], result: Any) -> tuple[Call | None, T]:
    """Send `result` in: the next call, or `None` and the pipeline's return value.

    The plain code between two calls runs with the cyclic collector paused (see
    `paused_gc`); the calls themselves (sources, embeddings, a summarizer model) do not,
    so a slow network call never holds the collector off for the whole process.
    """
    try:
        with paused_gc():
            return steps.send(result), cast(T, None)
    except StopIteration as done:
        value: T = done.value
        return None, value


def drive(steps: Steps[T]) -> T:
    """Run `steps`, making each call with the sync function.

    Args:
        steps: The pipeline.

    Returns:
        The pipeline's return value.
    """
    call, value = _advance(steps, None)
    while call is not None:
        call, value = _advance(steps, call.func(*call.args, **call.kwargs))
    return value


async def adrive(steps: Steps[T]) -> T:
    """Run `steps`, awaiting each call's async function.

    Args:
        steps: The pipeline.

    Returns:
        The pipeline's return value.
    """
    call, value = _advance(steps, None)
    while call is not None:
        call, value = _advance(steps, await call.afunc(*call.args, **call.kwargs))
    return value
