"""Budgets and priorities: the latest request keeps its room; note lists in time order."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langgraph_context.context import ContextBuilder, ContextConfig, create_context_node
from langgraph_context.notebook.files import FileNotebookStore
from langgraph_context.notebook.format import render_note
from langgraph_context.tokens import count_tokens
from tests.conftest import call


def test_note_list_sorts_times_as_instants_not_strings(tmp_path: Path) -> None:
    """`12:00+05:00` (07:00 UTC) is older than `08:00Z`, though it sorts later as text."""
    store = FileNotebookStore(tmp_path / "notes")
    early = store.create("east", "written at noon in UTC+5")
    late = store.create("west", "written at 08:00 UTC")
    for note, stamp in (
        (early, "2025-01-19T12:00:00.000000+05:00"),
        (late, "2025-01-19T08:00:00.000000+00:00"),
    ):
        moved = dataclasses.replace(note, updated_at=stamp)
        (store.root / f"{note.id}.md").write_text(render_note(moved), encoding="utf-8")
    assert [n.title for n in store.list()] == ["west", "east"]


REQUEST = "Please " + " ".join(f"check item{i}" for i in range(60))


@pytest.mark.parametrize("budget", [500, 600, 700])
def test_the_latest_request_is_not_shortened_for_older_tool_text(budget: int) -> None:
    """Focus layout: a request that fits is sent whole; the tool output pays, within budget."""
    node = create_context_node(
        ContextBuilder(config=ContextConfig(max_tokens=budget)),
        layout="focus",
        stamp_times=False,
        keep_last=10,
    )
    history = [
        HumanMessage(REQUEST),
        AIMessage("", tool_calls=[call("cat", {}, "c1")]),
        ToolMessage("data " * 2000, tool_call_id="c1"),
    ]
    sent = node.invoke({"messages": history})["llm_input_messages"]
    assert [m.content for m in sent if m.type == "human"] == [REQUEST]
    assert count_tokens(sent) <= budget
    assert "shortened by langgraph-context" in str(sent[-1].content)


RULE = {"id": "c-1", "text": "Never touch the migrations folder", "status": "active"}


def test_a_constraint_left_out_by_a_small_budget_is_a_warning() -> None:
    """Focus layout: a model-recorded constraint that does not fit is never dropped silently."""
    node = create_context_node(
        ContextBuilder(config=ContextConfig(max_tokens=300)), layout="focus", stamp_times=False
    )
    history = [
        HumanMessage("Refactor the models module and report"),
        AIMessage("", tool_calls=[call("cat", {"path": "m.py"}, "c1")]),
        ToolMessage("class Model: pass\n" * 80, tool_call_id="c1"),
    ]
    state = {"messages": history, "constraints": [{**RULE, "source": "model"}]}
    with pytest.warns(UserWarning, match=r"pinned items \['c-1'\] was left out"):
        sent = node.invoke(state)["llm_input_messages"]
    assert "migrations" not in str(sent[0].content)
    assert count_tokens(sent) <= 300


def test_a_constraint_that_fits_is_kept_without_a_warning() -> None:
    """With room for it, the constraint is in the system message and nothing is warned."""
    node = create_context_node(
        ContextBuilder(config=ContextConfig(max_tokens=500)), layout="focus", stamp_times=False
    )
    state = {"messages": [HumanMessage("Refactor")], "constraints": [{**RULE, "source": "model"}]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sent = node.invoke(state)["llm_input_messages"]
    assert "migrations" in str(sent[0].content)
