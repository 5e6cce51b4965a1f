"""Budgets and priorities: the latest request keeps its room; note lists in time order."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langgraph_context.context import ContextBuilder, ContextConfig, create_context_node
from langgraph_context.messages import validate_history
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


def _post_tool(lines: int, rounds: int) -> list[BaseMessage]:
    """A request, then `rounds` tool rounds of `lines` lines each: a post-tool call."""
    history: list[BaseMessage] = [HumanMessage("Refactor the models module and report")]
    for r in range(rounds):
        history += [
            AIMessage("", tool_calls=[call("cat", {"path": f"m{r}.py"}, f"c{r}")]),
            ToolMessage("class Model: pass\n" * lines, tool_call_id=f"c{r}"),
        ]
    return history


@settings(max_examples=40, deadline=None)
@given(
    budget=st.integers(min_value=200, max_value=500),
    lines=st.sampled_from([1, 10, 80, 2000]),
    rounds=st.integers(min_value=1, max_value=3),
)
def test_a_model_recorded_constraint_is_in_every_post_tool_call(
    budget: int, lines: int, rounds: int
) -> None:
    """Focus layout, budgets 200-500: the model's rule outranks the tool text, the input
    stays within the budget and nothing is warned (29 of 60 such calls lost it before)."""
    node = create_context_node(
        ContextBuilder(config=ContextConfig(max_tokens=budget)), layout="focus", stamp_times=False
    )
    state = {"messages": _post_tool(lines, rounds), "constraints": [{**RULE, "source": "model"}]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sent = node.invoke(state)["llm_input_messages"]
    assert "migrations" in str(sent[0].content)
    assert count_tokens(sent) <= budget
    assert sent[1].content == "Refactor the models module and report"
    assert validate_history(sent) == []


LONG_RULE = {**RULE, "text": "Never touch the migrations folder " * 8, "source": "model"}


@pytest.mark.parametrize("budget", [100, 150])
def test_a_constraint_the_budget_cannot_hold_is_a_warning(budget: int) -> None:
    """When prompt, request and rule together do not fit, the rule is left out loudly."""
    node = create_context_node(
        ContextBuilder(config=ContextConfig(max_tokens=budget)), layout="focus", stamp_times=False
    )
    state = {"messages": _post_tool(80, 1), "constraints": [LONG_RULE]}
    with pytest.warns(UserWarning, match=r"pinned items \['c-1'\] was left out"):
        sent = node.invoke(state)["llm_input_messages"]
    assert "migrations" not in str(sent[0].content)
    assert count_tokens(sent) <= budget


@pytest.mark.parametrize("layout", ["focus", "cache"])
def test_an_input_over_the_budget_is_a_warning(layout: str) -> None:
    """A budget below what role, task and one turn need even shortened: a UserWarning
    naming the size and the budget, not only a log line."""
    node = create_context_node(
        ContextBuilder(config=ContextConfig(max_tokens=40)),
        layout=layout,  # type: ignore[arg-type]
        stamp_times=False,
    )
    with pytest.warns(UserWarning, match=r"the model input takes \d+ tokens, over max_tokens=40"):
        sent = node.invoke({"messages": _post_tool(80, 1)})["llm_input_messages"]
    assert count_tokens(sent) > 40


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
