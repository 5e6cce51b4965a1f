"""`langgraph-context xray` on OpenHands trajectories, and printing the context and snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_context.cli import main
from langgraph_context.messages import validate_history
from langgraph_context.transcripts import load_openhands_trajectory


def _meta(call_id: str, function: str, response: str) -> dict[str, Any]:
    return {
        "function_name": function,
        "tool_call_id": call_id,
        "model_response": {"id": response},
        "total_calls_in_response": 2,
    }


def _events() -> list[dict[str, Any]]:
    """An OpenHands event history: two parallel tool calls, their observations, a finish."""
    run, read = (
        _meta("call_1", "execute_bash", "resp-1"),
        _meta("call_2", "str_replace_editor", "resp-1"),
    )
    return [
        {"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands."}},
        {"id": 1, "source": "user", "action": "message", "args": {"content": "Fix test_login"}},
        {"id": 2, "source": "environment", "observation": "agent_state_changed", "content": ""},
        {"id": 3, "source": "agent", "action": "run", "tool_call_metadata": run,
         "args": {"command": "pytest -q tests/test_login.py", "thought": "Run the test first."}},
        {"id": 4, "source": "agent", "action": "read", "tool_call_metadata": read,
         "args": {"path": "/workspace/app/login.py", "thought": ""}},
        {"id": 5, "source": "agent", "observation": "run", "cause": 3, "tool_call_metadata": run,
         "content": "FAILED tests/test_login.py::test_login - KeyError: 'token'\n" * 30},
        {"id": 6, "source": "agent", "observation": "read", "cause": 4, "tool_call_metadata": read,
         "content": "def login(user):\n    return user['token']\n" * 20},
        {"id": 7, "source": "agent", "action": "message", "args": {"content": "Key missing."}},
        {"id": 8, "source": "agent", "action": "finish", "args": {"final_thought": "Fixed."}},
    ]  # fmt: skip


def test_openhands_events_become_tool_calls_and_results() -> None:
    """Actions of one model response share one AI message; observations answer them by id."""
    messages = load_openhands_trajectory({"history": _events()})
    assert [m.type for m in messages] == ["system", "human", "ai", "tool", "tool", "ai", "ai"]
    calls = messages[2].tool_calls
    assert [(c["name"], c["id"]) for c in calls] == [
        ("execute_bash", "call_1"),
        ("str_replace_editor", "call_2"),
    ]
    assert calls[0]["args"] == {"command": "pytest -q tests/test_login.py"}
    assert messages[2].content == "Run the test first."
    assert [(m.tool_call_id, m.name) for m in messages[3:5]] == [
        ("call_1", "execute_bash"),
        ("call_2", "str_replace_editor"),
    ]
    assert validate_history(messages) == []


def test_xray_reads_an_openhands_trajectory_with_its_tool_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """xray counts the two tool calls and their results, and only one user turn."""
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps({"instance_id": "x", "history": _events()}), encoding="utf-8")
    assert main(["xray", str(path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["format"] == "openhands"
    assert summary["roles"]["user"]["messages"] == 1
    assert summary["roles"]["tool"]["messages"] == 2
    assert summary["tools"]["execute_bash"]["calls"] == 1
    assert summary["tools"]["execute_bash"]["results"] == 1
    assert summary["tools"]["str_replace_editor"]["results"] == 1
    assert summary["valid"] is True


def test_xray_refuses_an_openhands_chat_export_with_tool_calls_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `messages` list whose tool calls are text is refused with what to pass instead."""
    messages = [
        {"role": "system", "content": "You are OpenHands."},
        {"role": "user", "content": "Fix test_login"},
        {"role": "assistant", "content": "<function=execute_bash>\n<parameter=command>pytest"},
        {"role": "user", "content": "EXECUTION RESULT of [execute_bash]:\nFAILED"},
    ]
    path = tmp_path / "sft.json"
    path.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    assert main(["xray", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "tool calls and their output are written as text" in err[0]
    assert "--format openhands" in err[0]


def test_xray_prints_the_assembled_context_and_the_snapshot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--show-context --show-snapshot` prints the context the model would get and the snapshot."""
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(_events()), encoding="utf-8")
    assert main(["xray", str(path), "--budget", "300", "--show-context", "--show-snapshot"]) == 0
    out = capsys.readouterr().out
    assert "assembled context" in out
    assert "[Task]" in out
    assert "Fix test_login" in out
    assert "state snapshot" in out
    assert "test_login.py" in out.split("state snapshot", 1)[1]


def test_xray_json_carries_the_texts_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the flags the JSON has no text keys; with them it has both."""
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(_events()), encoding="utf-8")
    assert main(["xray", str(path), "--json"]) == 0
    assert "context_text" not in json.loads(capsys.readouterr().out)
    assert main(["xray", str(path), "--json", "--show-context", "--show-snapshot"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert "[Task]" in summary["context_text"]
    assert "snapshot_text" in summary
