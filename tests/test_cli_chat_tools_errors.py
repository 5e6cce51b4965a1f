"""`langgraph-context chat` shows each tool call and result, and survives a failed model call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult

from langgraph_context.cli import main
from langgraph_context.cli.models import register_model_factory
from tests.conftest import ScriptedChatModel, ai_calls, call, feed_input

pytestmark = pytest.mark.usefixtures("no_model_env")


class _FlakyModel(ScriptedChatModel):
    """Fails its first call like an unreachable provider, then replays its script."""

    failures: int = 1

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("Connection refused\nmore detail")
        return super()._generate(messages, *args, **kwargs)


def test_chat_shows_each_tool_call_and_its_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A turn that writes a plan prints the call and the tool's result before the answer."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(call("write_plan", {"plan": ["read", "fix"]}, "p1")),
            ai_calls(call("query_note", {"file_name": "missing"}, "q1")),
            AIMessage("Plan written."),
        ]
    )
    register_model_factory("scripted-tools", lambda config: model)
    feed_input(monkeypatch, ["make a plan", "/exit"])
    assert main(["chat", "--model-factory", "scripted-tools", "--db", str(tmp_path / "c.db")]) == 0
    out = capsys.readouterr().out
    assert "  -> write_plan(plan=['read', 'fix'])" in out
    assert "  <- write_plan [ok]: " in out
    assert "  <- query_note [error]: " in out
    assert out.index("-> write_plan") < out.index("assistant> Plan written.")


def test_chat_survives_a_failed_model_call_and_answers_the_next_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model error is one printed line; the session goes on and the next turn is answered."""
    model = _FlakyModel(responses=[AIMessage("Back again.")])
    register_model_factory("scripted-flaky", lambda config: model)
    feed_input(monkeypatch, ["hello", "hello again", "/exit"])
    code = main(["chat", "--model-factory", "scripted-flaky", "--db", str(tmp_path / "c.db")])
    out = capsys.readouterr().out
    assert code == 0
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert errors == [
        "error: the model at the OpenAI API failed (ConnectionError): Connection refused"
    ]
    assert "the session goes on" in out
    assert "assistant> Back again." in out
    assert "session: 1 model calls" in out
