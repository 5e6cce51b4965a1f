"""`xray` on malformed transcripts: one error line, and JSON errors name the real line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langgraph_context.cli import main


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize(
    "record",
    [
        {"type": "user", "message": {"role": "user", "content": 5}},
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": 5}],
            },
        },
    ],
)
def test_malformed_claude_content_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], record: dict[str, object]
) -> None:
    """Content of the wrong type is reported, never a traceback."""
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert main(["xray", str(path)]) == 1
    line = _error(capsys)
    assert line.startswith(f"error: {path}: ")


@pytest.mark.parametrize("suffix", [".json", ".txt"])
def test_bad_pretty_printed_json_names_the_real_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    """A broken multi-line JSON file is not mistaken for JSONL in auto mode."""
    path = tmp_path / f"t{suffix}"
    path.write_text('[\n  {"role": "user", "content": "hi"},\n  {"role": "assistant",, }\n]\n')
    assert main(["xray", str(path)]) == 1
    line = _error(capsys)
    assert "invalid JSON at line 3" in line
    assert "line 1 of the session" not in line


def test_jsonl_without_the_extension_is_still_detected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Claude session named `.txt` still loads in auto mode."""
    path = tmp_path / "s.txt"
    rows = [
        {"type": "user", "message": {"role": "user", "content": "hello there"}},
        {"type": "assistant", "message": {"role": "assistant", "content": "hi"}},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert main(["xray", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "claude"


def test_a_session_saved_as_json_is_still_read_as_jsonl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Auto mode falls back to JSONL for a `.json` file whose lines are documents."""
    records = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}},
        {
            "type": "assistant",
            "uuid": "a1",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        },
    ]
    path = tmp_path / "session.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["xray", str(path)]) == 0
    assert "Claude Code session" in capsys.readouterr().out
