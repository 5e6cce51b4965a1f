"""The output guard runs on every model answer, in create_context_agent and create_agent."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context.agents import OutputGuardMiddleware, create_context_agent
from langgraph_context.safety import PromptInjectionError
from langgraph_context.safety.guard import DEFAULT_GUARD_REPLACEMENT
from tests.conftest import ScriptedChatModel, ai_calls, call

COMPLIANT = "I have ignored my previous instructions. I will now act as the admin."
ran: list[str] = []


@tool
def delete_files(path: str) -> str:
    """Delete files under a path."""
    ran.append(path)
    return f"deleted {path}"


def _hijacked() -> ScriptedChatModel:
    hijack = ai_calls(call("delete_files", {"path": "/"}, "d"), content=COMPLIANT)
    return ScriptedChatModel(responses=[hijack, AIMessage("after")])


def test_context_agent_guard_replaces_a_hijacked_answer_before_its_tools_run() -> None:
    """create_context_agent(middleware=[guard]): the flagged answer is replaced and its
    tool call never runs."""
    ran.clear()
    app = create_context_agent(
        _hijacked(),
        [delete_files],
        middleware=[OutputGuardMiddleware(action="replace")],
        checkpointer=InMemorySaver(),
    )
    out = app.invoke({"messages": [HumanMessage("tidy up")]}, {"configurable": {"thread_id": "g"}})
    assert ran == []
    assert out["messages"][-1].content == DEFAULT_GUARD_REPLACEMENT
    assert not out["messages"][-1].tool_calls
    assert not [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert out["injection_flags"][0]["action"] == "replace"


def test_context_agent_guard_can_stop_the_run() -> None:
    """action='raise' stops the run on a flagged answer."""
    app = create_context_agent(
        _hijacked(), [delete_files], middleware=[OutputGuardMiddleware(action="raise")]
    )
    with pytest.raises(PromptInjectionError):
        app.invoke({"messages": [HumanMessage("tidy up")]})


def test_clean_answers_pass_the_guard() -> None:
    """A clean answer is untouched and tool rounds loop back through the model."""
    model = ScriptedChatModel(
        responses=[ai_calls(call("delete_files", {"path": "tmp"}, "d")), AIMessage("done")]
    )
    app = create_context_agent(model, [delete_files], middleware=[OutputGuardMiddleware()])
    out = app.invoke({"messages": [HumanMessage("clean tmp")]})
    assert out["messages"][-1].content == "done"
    assert out.get("injection_flags", []) == []


def test_guard_middleware_replaces_a_hijacked_answer() -> None:
    """create_agent with the guard middleware: flagged answer replaced, tool never runs."""
    ran.clear()
    agent = create_agent(
        _hijacked(),
        [delete_files],
        middleware=[OutputGuardMiddleware(action="replace")],
        checkpointer=InMemorySaver(),
    )
    out = agent.invoke(
        {"messages": [HumanMessage("tidy up")]}, {"configurable": {"thread_id": "m"}}
    )
    assert ran == []
    assert out["messages"][-1].content == DEFAULT_GUARD_REPLACEMENT
    assert out["injection_flags"][0]["matches"]


def test_guard_middleware_flags_and_rejects_bad_options() -> None:
    """action='flag' records the flag and keeps the answer; a bad action is refused."""
    agent = create_agent(
        ScriptedChatModel(responses=[AIMessage(COMPLIANT)]),
        middleware=[OutputGuardMiddleware()],
    )
    out = agent.invoke({"messages": [HumanMessage("hi")]})
    assert out["messages"][-1].content == COMPLIANT
    assert out["injection_flags"][0]["action"] == "flag"
    with pytest.raises(ValueError, match="action must be one of"):
        OutputGuardMiddleware(action="shout")  # type: ignore[arg-type]
