"""Shared fixtures: scripted chat models that drive real graphs without a network."""

from __future__ import annotations

import builtins
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings

from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call

__all__ = ["ScriptedChatModel", "ai_calls", "call", "feed_input", "scripted"]

# CI runs the same generated examples every time (a red run is reproducible, never a
# coin toss); `HYPOTHESIS_PROFILE=fuzz` explores new ones locally.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("fuzz", max_examples=2_000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    """Build one tool call dict for a scripted AI message."""
    return tool_call(name, args, call_id)


@pytest.fixture
def scripted() -> type[ScriptedChatModel]:
    """The scripted model class (instantiate with `responses=[...]`)."""
    return ScriptedChatModel


MODEL_ENV = ("OPENAI_API_KEY", "LGC_API_KEY", "LGC_BASE_URL", "OPENAI_BASE_URL", "LGC_MODEL")


@pytest.fixture
def no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No model configured by the machine's environment (use via `usefixtures`)."""
    for name in MODEL_ENV:
        monkeypatch.delenv(name, raising=False)


def feed_input(monkeypatch: pytest.MonkeyPatch, lines: list[str]) -> None:
    """Answer `input()` with `lines`, then end of input (as a user typing, then Ctrl-D)."""
    it: Iterator[str] = iter(lines)

    def fake_input(prompt: str = "") -> str:
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr(builtins, "input", fake_input)


@pytest.fixture
def server() -> Iterator[Any]:
    """A running wire server (an OpenAI-compatible endpoint), shut down after the test."""
    from tests._wire_server import WireServer  # imported on use: only the wire tests need it

    with WireServer() as running:
        yield running
