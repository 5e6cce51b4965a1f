"""The context node's cache-stable layout: a stable prefix, an append-only window, plan last."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_context.context import (
    ContextBuilder,
    ContextConfig,
    ContextStateMixin,
    create_context_node,
)
from langgraph_context.context._window import STATE_NOTICE, sticky_cut
from langgraph_context.messages import validate_history
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION
from langgraph_context.state import NoteStateMixin, PlanStateMixin
from langgraph_context.tokens import count_tokens

BUDGET = 8_000


class State(MessagesState, PlanStateMixin, NoteStateMixin, ContextStateMixin):
    """Messages, plan, notes and the model's view."""


def _graph(seen: list[list[BaseMessage]], budget: int = BUDGET, *, harden: bool = False) -> Any:
    """START -> context -> model; the model records its input and answers with a tool call."""

    def model(state: State) -> dict[str, Any]:
        view = state["llm_input_messages"]
        seen.append(view)
        n = len(state["messages"])
        call = {"name": "read", "args": {"path": f"f{n}.py"}, "id": f"c{n}", "type": "tool_call"}
        return {"messages": [AIMessage("", tool_calls=[call])]}

    node = create_context_node(
        ContextBuilder(config=ContextConfig(max_tokens=budget)),
        system_instructions="You read code.",
        harden_from_start=harden,
    )
    graph = StateGraph(State)
    graph.add_node("context", node)
    graph.add_node("model", model)
    graph.add_edge(START, "context")
    graph.add_edge("context", "model")
    return graph.compile(checkpointer=InMemorySaver())


def _prefix_tokens(previous: list[BaseMessage], current: list[BaseMessage]) -> int:
    """Tokens of `current` whose messages repeat `previous` from the start (tail excluded)."""
    shared = 0
    for old, new in zip(previous, current, strict=False):
        if old.type != new.type or old.content != new.content:
            break
        if STATE_NOTICE in str(old.content):
            break
        shared += 1
    return count_tokens(current[:shared]) if shared else 0


def _run(turns: int, *, with_plan: bool) -> list[list[BaseMessage]]:
    seen: list[list[BaseMessage]] = []
    app = _graph(seen)
    config = {"configurable": {"thread_id": "t"}}
    first: dict[str, Any] = {"messages": [HumanMessage("Read the whole package and report.")]}
    if with_plan:
        first["plan"] = [{"content": "read", "status": "in_progress"}]
    app.invoke(first, config)
    for turn in range(turns):
        n = len(app.get_state(config).values["messages"])
        output = f"file {turn}\n" + "\n".join(f"line {i}: value = {i * turn}" for i in range(40))
        update: dict[str, Any] = {"messages": [ToolMessage(output, tool_call_id=f"c{n - 1}")]}
        if with_plan and turn % 10 == 9:
            update["plan"] = [{"content": f"read part {turn}", "status": "in_progress"}]
        app.invoke(update, config)
    return seen


def test_each_input_repeats_the_previous_input_as_its_prefix() -> None:
    """Over 60 tool rounds most input tokens repeat the previous call's prefix."""
    seen = _run(60, with_plan=True)
    sent = sum(count_tokens(view) for view in seen[1:])
    cached = sum(_prefix_tokens(a, b) for a, b in itertools.pairwise(seen))
    assert cached / sent >= 0.75
    breaks = sum(
        1 for a, b in itertools.pairwise(seen) if _prefix_tokens(a, b) < count_tokens(a) // 2
    )
    assert breaks <= 10  # the window's start moves rarely


def test_every_input_fits_is_valid_and_ends_with_the_plan() -> None:
    """Each model input is within budget, pairs every tool call, opens with a user turn."""
    seen = _run(40, with_plan=True)
    for view in seen:
        assert count_tokens(view) <= BUDGET
        assert view[0].type == "system"
        assert view[1].type == "human"
        assert validate_history(view[1:-1]) == []
        assert STATE_NOTICE in str(view[-1].content)
        assert "1. [" in str(view[-1].content)
    assert "read part 39" in seen[-1][-1].content


def test_no_plan_no_closing_message_and_turns_before_the_window_reach_the_system() -> None:
    """Without a plan nothing is appended; turns cut from the window are selected into context."""
    seen = _run(40, with_plan=False)
    assert all(STATE_NOTICE not in str(m.content) for view in seen for m in view)
    last = seen[-1]
    assert last[-1].type == "tool"
    assert "[Context]" in last[0].content  # older rounds, selected under the budget


def _history(sizes: list[int]) -> list[BaseMessage]:
    messages: list[BaseMessage] = [HumanMessage("start")]
    for i, size in enumerate(sizes):
        call = {"name": "t", "args": {}, "id": f"c{i}", "type": "tool_call"}
        messages += [
            AIMessage("", tool_calls=[call]),
            ToolMessage("x " * size, tool_call_id=f"c{i}"),
        ]
    return messages


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=60), st.integers(200, 3000))
def test_sticky_cut_only_moves_forward_and_in_steps(sizes: list[int], room: int) -> None:
    """As a history grows, the cut never moves back, lands on a safe cut, and the window fits."""
    history = _history(sizes)
    cuts = []
    for end in range(1, len(history) + 1, 2):  # whole rounds: no call left pending
        body = history[:end]
        cut = sticky_cut(body, room, count_tokens)
        window = body[cut:]
        assert cut == 0 or validate_history([HumanMessage("x"), *window]) == []
        if cut > 0 and len(window) > 2:
            assert count_tokens(window) <= room
        cuts.append(cut)
    assert cuts == sorted(cuts)
    assert len(set(cuts)) <= 2 + 2 * count_tokens(history) // max(1, room)


def _grow(app: Any, config: dict[str, Any], rounds: int, lines: int) -> None:
    """Answer the model's pending tool call `rounds` times with `lines`-line outputs."""
    for turn in range(rounds):
        n = len(app.get_state(config).values["messages"])
        output = "\n".join(f"row {i}: {turn * i}" for i in range(lines))
        app.invoke({"messages": [ToolMessage(output, tool_call_id=f"c{n - 1}")]}, config)


def test_the_whole_history_is_sent_until_it_fills_the_budget() -> None:
    """No share is set aside for older turns while there are none: nothing moves early."""
    seen: list[list[BaseMessage]] = []
    budget = 2_000
    app = _graph(seen, budget=budget, harden=True)
    config = {"configurable": {"thread_id": "t"}}
    app.invoke({"messages": [HumanMessage("Read the data files.")]}, config)
    _grow(app, config, rounds=16, lines=12)
    history = app.get_state(config).values["messages"][:-1]  # the model's last input
    assert count_tokens(history) > budget * 3 // 4  # past the old quarter set aside
    last = seen[-1]
    assert count_tokens(last) <= budget
    assert [m.content for m in last[1:]] == [m.content for m in history]
    assert "[Context]" not in last[0].content
    for previous, current in itertools.pairwise(seen):
        assert [m.content for m in current[: len(previous)]] == [m.content for m in previous]


@pytest.mark.parametrize("harden", [True, False])
def test_the_hardening_line_is_there_from_the_start_for_a_model_with_tools(harden: bool) -> None:
    """From the first call with `harden_from_start`: tool output never rewrites the prefix.

    Without it (a model that may have no tools) the line joins at the first tool output.
    """
    seen: list[list[BaseMessage]] = []
    app = _graph(seen, harden=harden)
    config = {"configurable": {"thread_id": "t"}}
    app.invoke({"messages": [HumanMessage("Read one file.")]}, config)
    _grow(app, config, rounds=2, lines=5)
    assert (HARDENING_INSTRUCTION in seen[0][0].content) is harden
    assert HARDENING_INSTRUCTION in seen[-1][0].content
    assert len({view[0].content for view in seen}) == (1 if harden else 2)
