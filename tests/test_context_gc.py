"""The cyclic collector is held off during a context build and restored after it."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from langgraph_context._gc import paused_gc
from langgraph_context.context import ContextBuilder, ContextConfig
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.packet import ContextPacket


@pytest.fixture
def eager_gc() -> Iterator[list[int]]:
    """Collect after every allocation and record the generation of each collection."""
    seen: list[int] = []

    def record(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    old = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    gc.callbacks.append(record)
    try:
        yield seen
    finally:
        gc.callbacks.remove(record)
        gc.set_threshold(*old)


def _packets(n: int) -> list[ContextPacket]:
    return [ContextPacket(f"deploy step {i} failed on staging", type="tool") for i in range(n)]


def test_build_runs_without_collections(eager_gc: list[int]) -> None:
    """No collection fires inside a build, however low the thresholds; it is back on after."""
    seen_inside: set[int] = set()

    def probe(state: object) -> list[ContextPacket]:  # runs first, in gather
        seen_inside.add(len(eager_gc))
        return []

    def counter(text: str) -> int:  # runs throughout, up to the last compress step
        seen_inside.add(len(eager_gc))
        return len(text.split())

    builder = ContextBuilder(config=ContextConfig(max_tokens=300), token_counter=counter)
    builder.state_sources = (*builder.state_sources, probe)
    result = builder.build_result("which deploy step failed", custom_packets=_packets(200))
    assert result.text
    assert len(seen_inside) == 1, sorted(seen_inside)
    assert gc.isenabled()


def test_collector_restored_when_a_build_raises() -> None:
    """A build that raises on bad input still turns the collector back on."""
    builder = ContextBuilder()
    with pytest.raises(InvalidArgumentError):
        builder.build_result("q", custom_packets=_packets(3), max_tokens=0)
    assert gc.isenabled()


async def test_async_build_restores_collector() -> None:
    """The async driver pauses its plain-code steps and restores the collector."""
    builder = ContextBuilder(config=ContextConfig(max_tokens=300))
    result = await builder.abuild_result("deploy", custom_packets=_packets(50))
    assert result.text
    assert gc.isenabled()


def test_caller_disabled_collector_stays_disabled() -> None:
    """A collector the caller turned off is not turned on by a build."""
    gc.disable()
    try:
        ContextBuilder().build_result("deploy", custom_packets=_packets(5))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_pauses_resume_once_the_last_ends() -> None:
    """Two threads' pauses overlap: the collector returns only after both exit."""
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        with paused_gc():
            entered.set()
            release.wait(5)

    worker = threading.Thread(target=hold)
    worker.start()
    entered.wait(5)
    with paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the worker's pause is still open
    release.set()
    worker.join(5)
    assert gc.isenabled()
