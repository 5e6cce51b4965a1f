"""`langgraph-context xray`: transcript loading, the report, and every error path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from langgraph_context.cli import main
from langgraph_context.cli._errors import CLIError
from langgraph_context.cli.xray import run_xray, xray_summary

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude_code_session.jsonl"
OPENAI = FIXTURES / "openai_trajectory.json"


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    assert main(["xray", *argv, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def _error(capsys: pytest.CaptureFixture[str], argv: list[str], code: int = 1) -> str:
    assert main(["xray", *argv]) == code
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("error: ")
    return lines[0]


def _write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_claude_session_tables_show_roles_tools_context_and_compaction(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The rich report of a Claude Code session names roles, tools, validity and both budgets."""
    assert main(["xray", str(CLAUDE), "--budget", "60"]) == 0
    out = capsys.readouterr().out
    for expected in (
        "Claude Code session",
        "Tokens by role",
        "Tokens by tool",
        "Read",
        "Bash",
        "Validity: OK",
        "ContextBuilder at 60 tokens",
        "Context by section",
        "Compaction",
        "/60 tokens",
        "the text was cut",
    ):
        assert expected in out, expected


def test_claude_session_json_summary_counts_tools_and_compacts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The JSON summary pairs calls with results per tool and reports the compaction."""
    data = _json(capsys, [str(CLAUDE), "--budget", "60"])
    assert data["format"] == "claude"
    assert data["tools"]["Read"]["calls"] == 2
    assert data["tools"]["Read"]["results"] == 2
    assert data["valid"] is True
    assert sum(r["messages"] for r in data["roles"].values()) == data["messages"]
    comp = data["compaction"]
    assert comp["tokens_before"] == data["tokens"]
    assert comp["target_tokens"] == 60
    assert comp["strategy"] != "none"
    assert data["context"]["max_tokens"] == 60
    assert data["context"]["tokens"] <= 60
    assert data["context"]["query"]  # defaults to the last user message


def test_openai_trajectory_uses_the_query_and_fits_without_compaction(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A tau-bench trajectory object loads; a large budget means compaction does nothing."""
    data = _json(capsys, [str(OPENAI), "--query", "reservation QX81ZB", "--budget", "100000"])
    assert data["format"] == "openai"
    assert data["roles"]["system"]["messages"] == 1
    assert data["tools"]["get_reservation_details"]["calls"] == 1
    assert data["context"]["query"] == "reservation QX81ZB"
    assert data["compaction"]["strategy"] == "none"
    assert data["compaction"]["within_budget"] is True


def test_markup_in_the_transcript_is_printed_verbatim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Square brackets in a query or tool name are shown as text, not parsed as rich markup."""
    messages = [
        {"role": "user", "content": "why [/bold] here?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "[red]x", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "content": "done", "tool_call_id": "c1", "name": "[red]x"},
    ]
    path = _write(tmp_path, "m[1].json", messages)
    assert main(["xray", str(path)]) == 0
    out = capsys.readouterr().out
    assert "why [/bold] here?" in out
    assert "[red]x" in out
    assert "m[1].json" in out


def test_trajectory_list_takes_the_indexed_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A list of trajectories picks the first by default and another with --index."""
    trajs = [
        {"traj": [{"role": "user", "content": "first"}]},
        {"traj": [{"role": "user", "content": "second"}, {"role": "assistant", "content": "ok"}]},
    ]
    path = _write(tmp_path, "trajs.json", trajs)
    assert _json(capsys, [str(path)])["context"]["query"] == "first"
    second = _json(capsys, [str(path), "--index", "1"])
    assert second["messages"] == 2
    assert second["context"]["query"] == "second"
    assert main(["xray", str(path), "--index", "1"]) == 0
    assert "trajectory 1 of 2" in capsys.readouterr().out


def test_plain_message_list_with_a_broken_pair_reports_violations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bare message list loads; an orphan tool result shows up as a violation."""
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "tool", "content": "orphan", "tool_call_id": "c9", "name": "lookup"},
    ]
    path = _write(tmp_path, "msgs.json", messages)
    data = _json(capsys, [str(path)])
    assert data["valid"] is False
    assert data["violations"][0].startswith("orphan_tool_result at message 1")
    assert data["tools"]["lookup"]["results"] == 1
    assert main(["xray", str(path)]) == 0
    assert "violation" in capsys.readouterr().out


def test_auto_format_reads_jsonl_content_without_the_extension(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Claude session saved as .txt is detected by its content (one JSON per line)."""
    path = _write(tmp_path, "session.txt", CLAUDE.read_text(encoding="utf-8"))
    assert _json(capsys, [str(path)])["format"] == "claude"


def test_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A path that does not exist fails with one line."""
    assert "no such file" in _error(capsys, [str(tmp_path / "nope.json")])


def test_directory_is_not_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A directory fails with one line."""
    assert "not a file" in _error(capsys, [str(tmp_path)])


def test_undecodable_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file that is not UTF-8 fails with one line."""
    path = tmp_path / "bin.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert "cannot read" in _error(capsys, [str(path)])


def test_empty_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty file fails with one line."""
    assert "empty" in _error(capsys, [str(_write(tmp_path, "e.json", "  \n"))])


def test_invalid_json_names_the_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Broken JSON forced as openai names line and column."""
    path = _write(tmp_path, "bad.json", '{"traj": [')
    assert "invalid JSON at line 1" in _error(capsys, [str(path), "--format", "openai"])


def test_invalid_jsonl_line_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A broken line of a session names its number."""
    path = _write(tmp_path, "bad.jsonl", '{"type": "user"}\n{oops\n')
    assert "line 2 of the session is not valid JSON" in _error(capsys, [str(path)])


def test_pretty_json_forced_as_claude_fails(capsys: pytest.CaptureFixture[str]) -> None:
    """The wrong --format gives one line, not a traceback."""
    assert "not valid JSON" in _error(capsys, [str(OPENAI), "--format", "claude"])


def test_session_without_messages_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A JSONL of bookkeeping events only has nothing to x-ray."""
    path = _write(tmp_path, "s.jsonl", '{"type": "progress"}\n')
    assert "no user or assistant messages" in _error(capsys, [str(path)])


@pytest.mark.parametrize("data", [42, "text", [1, 2], []])
def test_json_that_is_not_a_transcript_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: Any
) -> None:
    """Valid JSON of the wrong shape fails with one line."""
    path = _write(tmp_path, "x.json", json.dumps(data))
    assert "not an OpenAI-format transcript" in _error(capsys, [str(path)])


def test_mapping_without_messages_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An object with neither 'traj' nor 'messages' fails with the loader's reason."""
    path = _write(tmp_path, "x.json", {"foo": 1})
    assert "source must be a list" in _error(capsys, [str(path)])


def test_empty_trajectory_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trajectory with no messages fails with one line."""
    path = _write(tmp_path, "x.json", {"traj": []})
    assert "holds no messages" in _error(capsys, [str(path)])


def test_malformed_message_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A message with an unknown role fails with the conversion reason."""
    path = _write(tmp_path, "x.json", [{"role": "wizard", "content": "hi"}])
    assert "could not convert" in _error(capsys, [str(path)])


def test_index_out_of_range_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--index past the list names the valid range."""
    path = _write(tmp_path, "t.json", [{"traj": [{"role": "user", "content": "a"}]}])
    assert "--index 3 is out of range (0..0)" in _error(capsys, [str(path), "--index", "3"])


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--budget", "0"], "--budget must be a positive"),
        (["--index", "-1"], "--index must be >= 0"),
    ],
)
def test_bad_numbers_fail(capsys: pytest.CaptureFixture[str], argv: list[str], match: str) -> None:
    """Out-of-range numbers fail with one line and exit 1."""
    assert match in _error(capsys, [str(CLAUDE), *argv])


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--budget", "lots"], "invalid int value"),
        (["--format", "yaml"], "invalid choice"),
        ([], "the following arguments are required"),
    ],
)
def test_bad_flags_are_usage_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], match: str
) -> None:
    """Unparseable flags are usage errors (exit 2), one line."""
    target = [str(CLAUDE)] if argv else []
    assert match in _error(capsys, [*target, *argv], code=2)


def test_run_xray_checks_its_arguments() -> None:
    """The functions behind the command reject bad values themselves."""
    with pytest.raises(CLIError, match="--format must be one of"):
        run_xray(CLAUDE, fmt="yaml")  # type: ignore[arg-type]
    with pytest.raises(CLIError, match="--budget must be a positive"):
        run_xray(CLAUDE, budget=-5)
    with pytest.raises(CLIError, match="--budget must be a positive"):
        xray_summary([HumanMessage("hi")], budget=0)


def test_installed_entry_point_runs_xray() -> None:
    """The installed `langgraph-context` script prints a JSON x-ray and exits 0."""
    script = Path(sys.executable).parent / "langgraph-context"
    if not script.exists():
        pytest.skip("entry point not installed in this environment")
    done = subprocess.run(
        [str(script), "xray", str(OPENAI), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tools"]["cancel_reservation"]["calls"] == 1


def test_python_m_reports_a_missing_file_in_one_line(tmp_path: Path) -> None:
    """`python -m langgraph_context xray` on a missing file: one line, exit 1."""
    done = subprocess.run(
        [sys.executable, "-m", "langgraph_context", "xray", str(tmp_path / "no.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"error: {tmp_path / 'no.json'}: no such file"]
