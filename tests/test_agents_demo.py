"""run_maintainer_demo: the scripted two-session maintainer run on a real folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from langgraph_context.cli.demo_script import run_maintainer_demo
from tests.test_agents_maintainer import make_codebase


def test_demo_runs_two_sessions_and_records_real_findings(tmp_path: Path) -> None:
    """The demo explores, analyzes, resumes in a new graph, and notes what it found."""
    workspace = make_codebase(tmp_path / "repo")
    lines: list[str] = []
    demo = run_maintainer_demo(workspace, state_dir=tmp_path / "state", echo=lines.append)
    assert demo.plan == [
        {"content": "map the layout", "status": "done"},
        {"content": "find TODO and FIXME comments", "status": "done"},
        {"content": "decide the next steps", "status": "in_progress"},
    ]
    assert demo.notes == [
        ("task_state", "Next steps"),
        ("action", "Open TODO/FIXME comments"),
        ("reference", "Layout"),
    ]
    assert "  <- terminal: ./app/views.py:5:    # TODO: escape the name" in demo.transcript
    assert any(line.startswith("== session 2: a new graph on") for line in lines)
    assert demo.messages == 19
    notes_dir = tmp_path / "state" / "notes"
    layout = next(p for p in notes_dir.glob("*.md") if "title: Layout\n" in p.read_text())
    assert "- app/: 3 Python file(s)" in layout.read_text()
    assert "- tests/: 1 Python file(s)" in layout.read_text()
    # The plan-mode briefing of session 2 listed the latest notes, which it read back.
    nxt = next(p for p in notes_dir.glob("*.md") if "title: Next steps\n" in p.read_text())
    assert "Notes on record: Open TODO/FIXME comments; Layout." in nxt.read_text()


def test_demo_rejects_a_missing_folder(tmp_path: Path) -> None:
    """A workspace that is not a directory is refused."""
    with pytest.raises(ValueError, match="workspace must be a directory"):
        run_maintainer_demo(tmp_path / "nope", echo=lambda line: None)
