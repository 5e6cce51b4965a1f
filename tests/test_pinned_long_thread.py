"""Pinned items survive a 50-turn thread whose history is trimmed with RemoveMessage.

The full target (pinned items present in the context builder's output after 50 turns with the
compaction node) needs the builder and compaction branches; this test covers what this
branch owns: state through the pinned nodes, checkpointed turns, and history trimming,
with `render_pinned` standing in for the builder's [State] section.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context import (
    PinnedStateMixin,
    create_record_constraint_tool,
    create_resolve_constraint_tool,
)
from langgraph_context.pinned import create_hot_issue_node, pinned_packets, render_pinned
from langgraph_context.safety.boundary import HARDENING_INSTRUCTION
from langgraph_context.state import constraint_id
from tests.conftest import ScriptedChatModel, ai_calls, call

TURNS = 50
PYPROJECT = "Use pyproject.toml, never requirements.txt"
RUFF = "Run ruff before committing"
ENGLISH = "Answer in English"


@tool
def run_tests(outcome: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
    """Run the tests (scripted)."""
    if outcome == "fail":
        return ToolMessage(
            "FAILED tests/test_api.py::test_get - KeyError: 'id'\n1 failed, 9 passed",
            tool_call_id=tool_call_id,
            name="run_tests",
        )
    return ToolMessage("10 passed", tool_call_id=tool_call_id, name="run_tests")


# Turn number -> the tool calls the model makes in that turn.
SCRIPT: dict[int, list[tuple[str, dict[str, Any]]]] = {
    1: [("record_constraint", {"text": PYPROJECT})],
    5: [("record_constraint", {"text": RUFF})],
    10: [("run_tests", {"outcome": "fail"})],
    12: [("record_constraint", {"text": "use pyproject.toml, never requirements.txt."})],
    20: [("run_tests", {"outcome": "fail"})],
    25: [("record_constraint", {"text": ENGLISH})],
    30: [("resolve_constraint", {"constraint": constraint_id(ENGLISH)})],
    35: [("run_tests", {"outcome": "pass"})],
    41: [("run_tests", {"outcome": "fail"})],
}


def expected_after(turn: int) -> tuple[list[str], int]:
    """Return the active constraint texts and open test failures after `turn`."""
    rules = [PYPROJECT] if turn >= 1 else []
    if turn >= 5:
        rules.append(RUFF)
    if 25 <= turn < 30:
        rules.append(ENGLISH)
    failures = 1 if 10 <= turn < 20 else 2 if 20 <= turn < 35 else 1 if turn >= 41 else 0
    return rules, failures


class State(MessagesState, PinnedStateMixin):
    """Messages plus pinned items."""


def responses() -> list[AIMessage]:
    """The scripted model replies for all turns, in order."""
    replies: list[AIMessage] = []
    for turn in range(1, TURNS + 1):
        if turn in SCRIPT:
            calls = [call(name, args, f"{turn}-{i}") for i, (name, args) in enumerate(SCRIPT[turn])]
            replies.append(ai_calls(*calls))
        replies.append(AIMessage(f"turn {turn} done"))
    return replies


def long_graph(model: ScriptedChatModel) -> Any:
    """agent -> tools -> watch -> agent; a final reply goes to trim, which keeps 2 messages."""

    def agent(state: State) -> dict[str, Any]:
        system = SystemMessage(f"{HARDENING_INSTRUCTION}\n\n{render_pinned(state)}")
        return {"messages": [model.invoke([system, *state["messages"]])]}

    def route(state: State) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "trim"

    def trim(state: State) -> dict[str, list[BaseMessage]]:
        old = state["messages"][:-2]
        return {"messages": [RemoveMessage(id=m.id) for m in old if m.id is not None]}

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node(
        "tools",
        ToolNode([create_record_constraint_tool(), create_resolve_constraint_tool(), run_tests]),
    )
    graph.add_node("watch", create_hot_issue_node("run_tests"))
    graph.add_node("trim", trim)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", "trim"])
    graph.add_edge("tools", "watch")
    graph.add_edge("watch", "agent")
    graph.add_edge("trim", END)
    return graph.compile(checkpointer=InMemorySaver())


def test_pinned_items_survive_fifty_trimmed_turns() -> None:
    """After every one of 50 turns, all active rules and blockers are in state and prompt."""
    model = ScriptedChatModel(responses=responses())
    app = long_graph(model)
    cfg = {"configurable": {"thread_id": "long"}}
    for turn in range(1, TURNS + 1):
        state = app.invoke({"messages": [HumanMessage(f"step {turn}")]}, cfg)
        rules, failures = expected_after(turn)
        assert [c["text"] for c in state["constraints"]] == rules, turn
        assert [i.get("failures") for i in state["hot_issues"]] == ([failures] if failures else [])
        assert len(state["messages"]) == 2
        assert state["messages"][-1].content == f"turn {turn} done"
        prompt = model.seen[-1][0].content
        packets = pinned_packets(state)
        assert len(packets) == len(rules) + (1 if failures else 0)
        assert all(p.pinned and not p.is_trusted for p in packets)  # the model recorded them
        lines = [line.strip() for p in packets for line in p.content.splitlines()]
        assert all(line in prompt for line in lines), turn
    assert "KeyError: 'id'" in prompt
    assert ENGLISH not in prompt
