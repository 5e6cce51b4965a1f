"""The first hour: the demo picks relevant files and cleans up after itself, the snapshot
lists real identifiers and touched files, the top level shows only its names, and the
spec's `message_key=` spelling works on the plan and note tools."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

import langgraph_context
from langgraph_context.cli.demo import QUESTION, _relevant_files
from langgraph_context.cli.demo_script import run_maintainer_demo
from langgraph_context.compaction.snapshot import extract_snapshot
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.tools.plan import create_update_plan_tool, create_write_plan_tool
from langgraph_context.tools.state_notes import create_update_note_tool, create_write_note_tool
from tests.conftest import call

FACTORIES = [
    create_write_plan_tool,
    create_update_plan_tool,
    create_write_note_tool,
    create_update_note_tool,
]


def test_demo_candidates_are_ranked_by_relevance_not_the_alphabet(tmp_path: Path) -> None:
    """Where token counting lives is a candidate even when 40 other files sort before it."""
    for i in range(60):
        (tmp_path / f"a_bench_{i:02d}.py").write_text(f"print({i})\n")
    package = tmp_path / "zz_pkg" / "tokens"
    package.mkdir(parents=True)
    (package / "counter.py").write_text('"""Token counting: count the tokens of messages."""\n')
    picked = [p.relative_to(tmp_path).as_posix() for p in _relevant_files(tmp_path, QUESTION)]
    assert len(picked) == 40
    assert picked[0] == "zz_pkg/tokens/counter.py"


def test_run_maintainer_demo_leaves_no_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without `state_dir`, the demo's checkpoint and notes are removed when it ends."""
    temp_root = tmp_path / "tmp"
    temp_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp_root))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("# TODO: handle errors\nprint('hi')\n")
    demo = run_maintainer_demo(workspace, echo=lambda line: None)
    assert demo.messages > 0
    assert [p.name for p in temp_root.iterdir() if p.name.startswith("lgc-")] == []


def test_snapshot_identifiers_leave_out_durations_encodings_and_format_specs() -> None:
    """`utf-8, 1m05s, 42s, 02d, done0, 1e-9` are not identifiers; ticket ids and codes are."""
    text = (
        "Ran in 1m05s (42s in tests), read as utf-8 with format 02d, done0, tol 1e-9. "
        "Fix JIRA-1234, ruff E501 and commit a1b2c3d."
    )
    snap = extract_snapshot([HumanMessage(text), AIMessage(text)])
    assert not {"utf-8", "1m05s", "42s", "02d", "done0", "1e-9"} & set(snap.identifiers)
    assert {"JIRA-1234", "E501", "a1b2c3d"} <= set(snap.identifiers)


def test_files_touched_are_the_tools_not_paths_inside_file_contents() -> None:
    """A path printed inside a file's contents is kept, last, as seen in output, not touched."""
    history = [
        HumanMessage("Read the config."),
        AIMessage("", tool_calls=[call("read_file", {"path": "conf/app.toml"}, "c1")]),
        ToolMessage("include = 'vendor/other/lib.py'", tool_call_id="c1", name="read_file"),
    ]
    files = extract_snapshot(history).files
    assert any(f.startswith("conf/app.toml") for f in files)
    assert files[-1] == "vendor/other/lib.py (in output)"
    assert files[0].startswith("conf/app.toml")


def test_the_top_level_lists_only_its_public_names() -> None:
    """`dir(langgraph_context)` shows no helpers the module imported for itself."""
    shown = set(dir(langgraph_context))
    assert not {"Any", "importlib", "renamed_attribute", "TYPE_CHECKING"} & shown
    assert set(langgraph_context.__all__) <= shown


@pytest.mark.parametrize("factory", FACTORIES)
def test_message_key_and_messages_key_together_are_refused(factory: Any) -> None:
    """Both spellings at once is a package error naming both."""
    with pytest.raises(InvalidArgumentError, match="pass messages_key or its alias message_key"):
        factory(messages_key="a", message_key="b")


@pytest.mark.parametrize(
    ("factory", "args"),
    [
        (create_write_plan_tool, {"plan": ["a"]}),
        (create_write_note_tool, {"file_name": "a", "content": "x"}),
    ],
)
def test_message_key_routes_the_tool_message(factory: Any, args: dict[str, Any]) -> None:
    """A tool built with `message_key="chat"` writes its result under `chat`."""
    tool = factory(message_key="chat")
    state = {"chat": [AIMessage("", tool_calls=[call(tool.name, args, "c1")])]}
    command = tool.func(**args, tool_call_id="c1", state=state)
    assert [m.type for m in command.update["chat"]] == ["tool"]
    assert "messages" not in command.update
