"""Maintainer: notes need a store or a note source; terminal output fits max_tokens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langgraph_context.agents import MaintainerOptions, create_codebase_maintainer_graph
from langgraph_context.messages import validate_history
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call
from langgraph_context.tokens import count_tokens

CONFIG = {"configurable": {"thread_id": "t"}}


def _workspace(root: Path) -> Path:
    root.mkdir()
    for i in range(3):
        body = "\n".join(
            f"def func_{i}_{j}(a, b):\n    return a * b + {j}  # value {j}" for j in range(400)
        )
        (root / f"f{i}.py").write_text(body)
    return root


def _note_turn() -> ScriptedChatModel:
    return ScriptedChatModel(
        responses=[
            ai_calls(tool_call("notebook_create", {"title": "t", "content": "c"}, "n1")),
            AIMessage("ok"),
        ]
    )


def test_without_notes_or_store_a_turn_fails_before_the_model(tmp_path: Path) -> None:
    """notes=None and no store: a clear error up front, no unanswered tool call."""
    model = _note_turn()
    app = create_codebase_maintainer_graph(
        model, workspace=_workspace(tmp_path / "ws"), checkpointer=InMemorySaver()
    )
    with pytest.raises(ValueError, match="compiled without one: pass store="):
        app.invoke({"messages": [("user", "note something")]}, CONFIG)
    assert model.seen == []
    assert validate_history(app.get_state(CONFIG).values["messages"]) == []


def test_with_a_store_the_note_tools_work(tmp_path: Path) -> None:
    """notes=None with a store compiled in keeps notes there."""
    store = InMemoryStore()
    graph = create_codebase_maintainer_graph(
        _note_turn(), workspace=_workspace(tmp_path / "ws"), store=store
    )
    out = graph.invoke(
        {"messages": [("user", "note something")]}, {"configurable": {"user_id": "u"}}
    )
    (result,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert result.status != "error"
    assert "Created note" in str(result.content)


def test_terminal_output_is_clamped_to_the_context_budget(tmp_path: Path) -> None:
    """With the default 12,000-char output cap, a 4,000-token budget still holds."""
    reads = [
        ai_calls(tool_call("terminal", {"command": f"cat f{i}.py"}, f"c{i}")) for i in range(3)
    ]
    model = ScriptedChatModel(responses=[*reads, AIMessage("done")])
    graph = create_codebase_maintainer_graph(
        model, workspace=_workspace(tmp_path / "ws"), notes=tmp_path / "notes", max_tokens=4000
    )
    graph.invoke({"messages": [("user", "read every file")]})
    assert len(model.seen) == 4
    assert all(count_tokens(seen) <= 4000 for seen in model.seen)


@pytest.mark.parametrize("bad", ["4000", None, 0, True])
def test_bad_max_output_chars_is_a_clear_value_error(tmp_path: Path, bad: Any) -> None:
    """The clamp never hides the terminal's own check of max_output_chars."""
    with pytest.raises(ValueError, match="max_output_chars must be a positive integer"):
        create_codebase_maintainer_graph(
            ScriptedChatModel(responses=[]),
            workspace=tmp_path,
            notes=tmp_path / "n",
            options=MaintainerOptions(max_output_chars=bad),
        )
