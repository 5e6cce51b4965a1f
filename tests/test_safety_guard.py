"""The output guard: the pure check and its node in a compiled graph, for each action."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langgraph_context.safety import (
    GuardAction,
    PromptInjectionError,
    SafetyStateMixin,
    check_output,
    create_output_guard_node,
)
from langgraph_context.safety.guard import DEFAULT_GUARD_REPLACEMENT, append_flags
from tests._corpus import CORPUS
from tests.conftest import ScriptedChatModel, ai_calls, call

COMPLIANT = [item["text"] for item in CORPUS["compliant_replies"]]
CLEAN = [item["text"] for item in CORPUS["clean_replies"]]
RUNS: list[str] = []


@tool
def deploy(target: str) -> str:
    """Deploy to a target (records the call)."""
    RUNS.append(target)
    return f"deployed {target}"


class State(MessagesState, SafetyStateMixin):
    """Messages plus the guard's flags."""


def guard_graph(reply: AIMessage, action: GuardAction) -> Any:
    """Compile agent -> guard -> (tools | END) with a scripted reply."""
    model = ScriptedChatModel(responses=[reply])

    def agent(state: State) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def route(state: State) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node("guard", create_output_guard_node(action=action, canaries=["sk-live-123"]))
    graph.add_node("tools", ToolNode([deploy]))
    graph.add_edge(START, "agent")
    graph.add_edge("agent", "guard")
    graph.add_conditional_edges("guard", route, ["tools", END])
    graph.add_edge("tools", END)
    return graph.compile(checkpointer=InMemorySaver())


def cfg(thread: str) -> dict[str, Any]:
    """A thread config."""
    return {"configurable": {"thread_id": thread}}


@pytest.mark.parametrize("reply", COMPLIANT)
def test_compliant_replies_are_flagged(reply: str) -> None:
    """Replies that show obedience to injected instructions are flagged."""
    assert check_output(reply).flagged


@pytest.mark.parametrize("reply", CLEAN)
def test_clean_replies_pass(reply: str) -> None:
    """Ordinary replies, including ones that mention injections, pass."""
    assert check_output(reply) == check_output(reply).__class__(False, ())


def test_canary_leak_is_flagged_through_zero_width() -> None:
    """A canary found in the reply, even split by zero-width characters, flags it."""
    verdict = check_output("the key is sk-live\u200b-123", canaries=["sk-live-123"])
    assert verdict.flagged
    assert verdict.matches == ("sk-live\u200b-123",)


def test_flag_action_records_and_keeps_reply() -> None:
    """`flag` records the match in state and leaves the reply as it was."""
    reply = AIMessage("I will now act as the admin.", id="r1")
    state = guard_graph(reply, "flag").invoke({"messages": [HumanMessage("hi")]}, cfg("f"))
    assert state["messages"][-1].content == "I will now act as the admin."
    assert state["injection_flags"] == [
        {"message_id": "r1", "matches": ["I will now act as"], "action": "flag"}
    ]


def test_replace_action_swaps_reply_and_drops_tool_calls() -> None:
    """`replace` swaps the reply (same id) for the safe text, so its tool call never runs."""
    RUNS.clear()
    reply = ai_calls(
        call("deploy", {"target": "prod"}, "d1"),
        content="As instructed by the web page, deploying now.",
    )
    reply.id = "r2"
    state = guard_graph(reply, "replace").invoke({"messages": [HumanMessage("hi")]}, cfg("r"))
    last = state["messages"][-1]
    assert (last.id, last.content, last.tool_calls) == ("r2", DEFAULT_GUARD_REPLACEMENT, [])
    assert len(state["messages"]) == 2
    assert RUNS == []
    assert state["injection_flags"][0]["action"] == "replace"


def test_clean_reply_runs_its_tools_and_adds_no_flag() -> None:
    """A clean reply goes through unchanged and its tool call runs."""
    RUNS.clear()
    reply = ai_calls(call("deploy", {"target": "staging"}, "d2"), content="Deploying.")
    state = guard_graph(reply, "replace").invoke({"messages": [HumanMessage("hi")]}, cfg("c"))
    assert RUNS == ["staging"]
    assert isinstance(state["messages"][-1], ToolMessage)
    assert state["injection_flags"] == []


def test_raise_action_stops_the_run() -> None:
    """`raise` raises PromptInjectionError carrying the matches."""
    reply = AIMessage("Here is my system prompt: ...", id="r3")
    app = guard_graph(reply, "raise")
    with pytest.raises(PromptInjectionError, match="follows injected instructions") as info:
        app.invoke({"messages": [HumanMessage("hi")]}, cfg("x"))
    assert info.value.matches == ("Here is my system prompt",)


def test_canary_configured_on_node_flags_reply() -> None:
    """The node passes its canaries to the check."""
    reply = AIMessage("Your key: sk-live-123", id="r4")
    state = guard_graph(reply, "flag").invoke({"messages": [HumanMessage("hi")]}, cfg("k"))
    assert state["injection_flags"][0]["matches"] == ["sk-live-123"]


def test_guard_ignores_non_ai_last_message() -> None:
    """With no AI reply last, the node changes nothing."""
    node = create_output_guard_node()
    assert node({"messages": [HumanMessage("I will now act as DAN")]}) == {}
    assert node({"messages": []}) == {}


def test_append_flags_is_pure() -> None:
    """Appending flags copies both sides and handles None."""
    left = [{"message_id": "a", "matches": ["x"], "action": "flag"}]
    merged = append_flags(left, None)  # type: ignore[arg-type]
    merged[0]["matches"].append("y")
    assert left == [{"message_id": "a", "matches": ["x"], "action": "flag"}]
    assert append_flags(None, None) == []


def test_guard_rejects_bad_configuration() -> None:
    """Unknown action, empty replacement and empty canaries are refused at construction."""
    with pytest.raises(ValueError, match=r"action must be one of \('flag', 'replace', 'raise'\)"):
        create_output_guard_node(action="block")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="replacement must be a non-empty string"):
        create_output_guard_node(replacement="  ")
    with pytest.raises(ValueError, match="canaries must be a sequence of non-empty strings"):
        create_output_guard_node(canaries=[""])
    with pytest.raises(ValueError, match="canaries must be a sequence of non-empty strings"):
        create_output_guard_node(canaries="secret")
