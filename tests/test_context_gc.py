"""The cyclic collector is held off during a context build and restored after it."""

from __future__ import annotations

import gc
import threading

import pytest

from langgraph_context._gc import paused_gc
from langgraph_context.context import ContextBuilder, ContextConfig
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.packet import ContextPacket


def _packets(n: int) -> list[ContextPacket]:
    return [ContextPacket(f"deploy step {i} failed on staging", type="tool") for i in range(n)]


def test_build_steps_run_with_the_collector_paused() -> None:
    """Counting and packing run with the collector off; a source call runs with it on."""
    in_source: list[bool] = []
    in_steps: list[bool] = []

    def source(state: object) -> list[ContextPacket]:  # a call: may do I/O
        in_source.append(gc.isenabled())
        return []

    def counter(text: str) -> int:  # runs from preparation to the last compress step
        in_steps.append(gc.isenabled())
        return len(text.split())

    builder = ContextBuilder(config=ContextConfig(max_tokens=300), token_counter=counter)
    builder.state_sources = (*builder.state_sources, source)
    result = builder.build_result(
        "which deploy step failed", custom_packets=_packets(200), state={}
    )
    assert result.text
    assert in_source == [True]
    assert len(in_steps) >= 200
    assert not any(in_steps)
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
