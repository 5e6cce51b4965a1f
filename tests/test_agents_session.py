"""Maintainer session statistics: counted in state, reported by `session_report`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context.agents import (
    CompactionMiddleware,
    create_codebase_maintainer_graph,
    session_report,
    session_stats,
)
from langgraph_context.agents.session import merge_session_counts
from langgraph_context.notes import FileNoteStore
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call

RUNS: list[str] = []


@tool
def run_tests() -> str:
    """Run the test suite."""
    RUNS.append("run")
    return "FAILED tests/test_views.py::test_show\n1 failed" if len(RUNS) == 1 else "3 passed"


def _with_usage(message: AIMessage, tokens: int) -> AIMessage:
    message.usage_metadata = {
        "input_tokens": tokens,
        "output_tokens": 1,
        "total_tokens": tokens + 1,
    }
    return message


def test_maintainer_counts_a_session_and_reports_it(tmp_path: Path) -> None:
    """Commands, notes, issues found and resolved, tokens and compactions land in the report."""
    RUNS.clear()
    workspace = tmp_path / "repo"
    (workspace / "app").mkdir(parents=True)
    (workspace / "app" / "views.py").write_text("def show(user):\n    return user.name\n")
    notes = FileNoteStore(tmp_path / "notes")
    old = notes.create("Layout", "app/ holds the views")
    model = ScriptedChatModel(
        responses=[
            _with_usage(
                ai_calls(
                    tool_call("terminal", {"command": "cat app/views.py"}, "t1"),
                    tool_call("terminal", {"command": "ls app"}, "t2"),
                    tool_call("note_create", {"title": "Views", "content": "show()"}, "n1"),
                ),
                100,
            ),
            _with_usage(ai_calls(tool_call("run_tests", {}, "r1")), 200),
            _with_usage(
                ai_calls(
                    tool_call("note_update", {"note_id": old.id, "content": "app/views.py"}, "n2"),
                    tool_call("run_tests", {}, "r2"),
                ),
                300,
            ),
            _with_usage(AIMessage("Fixed: the tests pass."), 400),
        ]
    )
    graph = create_codebase_maintainer_graph(
        model,
        workspace=workspace,
        notes=notes,
        tools=[run_tests],
        compaction=CompactionMiddleware(trigger_tokens=100_000, trigger=("tool_rounds", 3)),
        checks="run_tests",
        checkpointer=InMemorySaver(),
    )
    state = graph.invoke(
        {"messages": [HumanMessage("Fix the view")]}, {"configurable": {"thread_id": "s"}}
    )
    assert session_stats(state) == {
        "model_calls": 4,
        "tokens_sent": 1000,
        "commands": 2,
        "notes_created": 1,
        "notes_updated": 1,
        "issues_found": 1,
        "issues_resolved": 1,
        "compactions": 1,
    }
    assert session_report(state) == (
        "session: 4 model calls, 1,000 input tokens sent, 1 compactions\n"
        "commands run: 2; notes created: 1, updated: 1\n"
        "hot issues found: 1, resolved: 1"
    )


def test_failed_commands_are_not_counted(tmp_path: Path) -> None:
    """A refused terminal command (an error result) is not a command run."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(tool_call("terminal", {"command": "rm -rf /"}, "t1")),
            AIMessage("I may not delete files."),
        ]
    )
    graph = create_codebase_maintainer_graph(
        model, workspace=tmp_path, notes=tmp_path / "notes", checkpointer=InMemorySaver()
    )
    state = graph.invoke(
        {"messages": [HumanMessage("clean up")]}, {"configurable": {"thread_id": "f"}}
    )
    assert session_stats(state)["commands"] == 0
    assert session_stats(state)["model_calls"] == 2


def test_merge_session_counts_sums_and_handles_none() -> None:
    """The reducer sums counters, unites issue ids and treats `None` as empty."""
    left: Any = {"commands": 1, "issues_seen": ["a"]}
    merged = merge_session_counts(
        left, {"commands": 2, "tokens_sent": 5, "issues_seen": ["a", "b"]}
    )
    assert (merged["commands"], merged["tokens_sent"], merged["issues_seen"]) == (3, 5, ["a", "b"])
    assert merge_session_counts(None, None)["commands"] == 0
    assert left == {"commands": 1, "issues_seen": ["a"]}
