"""Tool results cut once as they arrive (`create_tool_output_limit_node`), in a real graph."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langgraph_context.agents import ToolOutputLimitMiddleware, create_context_agent
from langgraph_context.compaction import create_tool_output_limit_node
from langgraph_context.compaction.entry import CUT_MARKER
from langgraph_context.errors import InvalidArgumentError
from langgraph_context.state import NoteStateMixin
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call
from langgraph_context.tokens import count_tokens

LIMIT = 120


@tool
def read_log(name: str) -> str:
    """Read a log file."""
    if name == "short":
        return "ok: 3 passed"
    lines = [f"step {i}: copied shard {i * 7} of the archive" for i in range(300)]
    return "\n".join(["BEGIN run 4417", *lines, "FAILED: shard 2093 checksum mismatch"])


def _run(note_key: str | None = None) -> tuple[ScriptedChatModel, dict]:
    model = ScriptedChatModel(
        responses=[
            ai_calls(tool_call("read_log", {"name": "long"}, "c1")),
            ai_calls(tool_call("read_log", {"name": "short"}, "c2")),
            AIMessage("done"),
        ]
    )
    graph = _loop(model, create_tool_output_limit_node(LIMIT, note_key=note_key))
    return model, graph.invoke({"messages": [HumanMessage("Check the copy job.")]})


class _State(MessagesState, NoteStateMixin):
    """Messages and notes."""


def _loop(model: ScriptedChatModel, limit: Any) -> Any:
    """A hand-built tool loop: model -> tools -> the limit node -> model."""

    def call_model(state: _State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(_State)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode([read_log]))
    graph.add_node("limit", limit)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition, ["tools", END])
    graph.add_edge("tools", "limit")
    graph.add_edge("limit", "model")
    return graph.compile()


def test_a_long_result_is_cut_to_its_ends_before_the_model_reads_it() -> None:
    """The model only ever sees the cut text; the start and the verdict at the end stay."""
    model, state = _run()
    long, short = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert count_tokens(long.content) <= LIMIT
    assert long.content.startswith("BEGIN run 4417")
    assert long.content.endswith("FAILED: shard 2093 checksum mismatch")
    assert "were cut as it arrived" in long.content
    assert long.additional_kwargs[CUT_MARKER] > LIMIT
    assert short.content == "ok: 3 passed"
    assert CUT_MARKER not in short.additional_kwargs
    seen = [m.content for m in model.seen[1] if isinstance(m, ToolMessage)]
    assert seen == [long.content]
    # The next call repeats it unchanged: cutting it never rewrites what was sent.
    assert next(m.content for m in model.seen[2] if isinstance(m, ToolMessage)) == long.content


def test_the_full_text_is_kept_as_a_note_when_asked() -> None:
    """With note_key the full result is a note the notice names, readable with query_note."""
    _, state = _run(note_key="note")
    full = read_log.invoke({"name": "long"})
    assert state["note"]["tool-output/c1"] == full
    assert "tool-output/c1" in state["messages"][2].content
    assert "tool-output/c2" not in state["note"]


def test_a_stricter_limit_outside_the_agents_own_cut_still_holds() -> None:
    """With the default cut on, a caller's stricter limit cuts again, saving no note."""
    model = ScriptedChatModel(
        responses=[ai_calls(tool_call("read_log", {"name": "long"}, "c1")), AIMessage("done")]
    )
    graph = create_context_agent(
        model,
        [read_log],
        plan_tools=False,
        constraint_tools=False,
        middleware=[ToolOutputLimitMiddleware(LIMIT, name="strict_limit")],
    )
    state = graph.invoke({"messages": [HumanMessage("Check the copy job.")]})
    [long] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert count_tokens(long.content) <= LIMIT
    assert long.additional_kwargs[CUT_MARKER] > 3_000  # the original size
    assert "FAILED: shard 2093" in long.content
    assert "tool-output/c1" not in state.get("note", {})
    assert "tool-output/c1" not in long.content


def test_a_result_already_cut_is_left_alone() -> None:
    """Each result is cut at most once (the marker), even when the node runs again."""
    node = create_tool_output_limit_node(LIMIT)
    call = AIMessage("", tool_calls=[tool_call("read_log", {"name": "long"}, "c1")])
    result = ToolMessage(read_log.invoke({"name": "long"}), tool_call_id="c1", id="t1")
    [cut] = node.invoke({"messages": [call, result]})["messages"]
    assert cut.id == "t1"
    assert node.invoke({"messages": [call, cut]}) == {}


@pytest.mark.parametrize("bad", [0, -5, 1.5, "100"])
def test_a_bad_limit_is_refused(bad: object) -> None:
    """The limit must be a positive int: a clear typed error at construction."""
    with pytest.raises(InvalidArgumentError, match="max_result_tokens"):
        create_tool_output_limit_node(bad)  # type: ignore[arg-type]


def test_a_blank_key_is_refused() -> None:
    """An empty note or messages key is a programmer's mistake, named in the error."""
    with pytest.raises(InvalidArgumentError, match="note_key"):
        create_tool_output_limit_node(LIMIT, note_key="")
