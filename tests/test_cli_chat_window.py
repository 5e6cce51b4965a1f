"""`chat --window` sizes what the model is sent, and the bar shows that input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from langgraph_context.cli import main
from langgraph_context.cli.chat import context_budget
from langgraph_context.cli.models import register_model_factory
from langgraph_context.testing import ScriptedChatModel
from langgraph_context.tokens import count_tokens
from tests.conftest import feed_input

LINE = "please remember this detail about the system " * 40
pytestmark = pytest.mark.usefixtures("no_model_env")


def _chat(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, window: int, turns: int
) -> ScriptedChatModel:
    model = ScriptedChatModel(responses=[AIMessage("ok " + "answer words " * 150)])
    register_model_factory("window-test", lambda config: model)
    feed_input(monkeypatch, [f"message {i}: {LINE}" for i in range(turns)])
    db = tmp_path / "chat.sqlite"
    args = ["chat", "--model-factory", "window-test", "--db", str(db), "--window", str(window)]
    assert main(args) == 0
    return model


def _bars(out: str) -> list[int]:
    return [int(m.group(1).replace(",", "")) for m in re.finditer(r"([\d,]+)/[\d,]+ tokens", out)]


def test_a_large_window_lets_the_model_see_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window reaches the context node: with 64k the model sees the whole talk."""
    model = _chat(monkeypatch, tmp_path, 64_000, 12)
    last = "\n".join(str(m.content) for m in model.seen[-1])
    assert "message 0:" in last
    assert count_tokens(model.seen[-1]) > 3_000  # above the builder's default budget


def test_a_small_window_caps_every_model_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every call fits the window, with room for the reply."""
    model = _chat(monkeypatch, tmp_path, 2_000, 6)
    assert all(count_tokens(seen) <= 2_000 for seen in model.seen)


def test_the_bar_counts_what_the_model_was_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The usage bar after each turn shows the tokens of that turn's model input."""
    model = _chat(monkeypatch, tmp_path, 16_000, 8)
    bars = _bars(capsys.readouterr().out)
    assert bars == [count_tokens(seen) for seen in model.seen]


def test_context_budget_leaves_room_for_the_reply() -> None:
    """The context budget is below the window and grows with it."""
    assert 0 < context_budget(1_000) < 1_000
    assert context_budget(16_000) < context_budget(64_000) < 64_000
