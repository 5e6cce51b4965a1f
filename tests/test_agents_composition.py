"""The prebuilt agent composes with LangChain's own middleware through real `create_agent`.

After every scenario, every model input the models received is a valid history (each
tool call answered, no orphan result) and fits the agent's budget.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ModelFallbackMiddleware,
    ModelRequest,
)
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel

from langgraph_context.agents import create_context_agent
from langgraph_context.messages import validate_history
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call
from langgraph_context.tokens import count_tokens

BUDGET = 2_000
deleted: list[str] = []


@tool
def delete_file(path: str) -> str:
    """Delete one file."""
    deleted.append(path)
    return f"deleted {path}"


@tool
def read_file(path: str) -> str:
    """Read one file (a long fake body)."""
    return f"{path}: " + "text " * 400


def _assert_inputs_valid(*models: ScriptedChatModel, budget: int = BUDGET) -> None:
    """Every input a model was sent pairs its tool calls and fits the budget."""
    inputs = [seen for model in models for seen in model.seen]
    assert inputs
    for seen in inputs:
        assert validate_history(seen) == []
        assert count_tokens(seen) <= budget


def _hitl_agent(model: ScriptedChatModel) -> Any:
    return create_context_agent(
        model,
        [delete_file, read_file],
        max_tokens=BUDGET,
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"delete_file": True})],
        checkpointer=InMemorySaver(),
    )


def _interrupted(agent: Any, thread: str) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    out = agent.invoke({"messages": [HumanMessage("remove old.txt")]}, config)
    [pending] = out["__interrupt__"]
    assert pending.value["action_requests"][0]["name"] == "delete_file"
    assert deleted == []  # nothing ran before the human decided
    return config


@pytest.mark.parametrize(
    ("decision", "ran", "result"),
    [
        ({"type": "approve"}, ["old.txt"], "deleted old.txt"),
        (
            {"type": "edit", "edited_action": {"name": "delete_file", "args": {"path": "tmp.txt"}}},
            ["tmp.txt"],
            "deleted tmp.txt",
        ),
        ({"type": "reject", "message": "Keep it."}, [], "Keep it."),
    ],
    ids=["approve", "edit", "reject"],
)
def test_human_in_the_loop_interrupts_and_resumes(
    decision: dict[str, Any], ran: list[str], result: str
) -> None:
    """A call to an interrupting tool waits for a human; approve, edit and reject resume."""
    deleted.clear()
    model = ScriptedChatModel(
        responses=[
            ai_calls(tool_call("read_file", {"path": "notes.txt"}, "r1")),
            ai_calls(tool_call("delete_file", {"path": "old.txt"}, "d1")),
            AIMessage("Handled."),
        ]
    )
    agent = _hitl_agent(model)
    config = _interrupted(agent, "hitl")
    out = agent.invoke(Command(resume={"decisions": [decision]}), config)
    assert deleted == ran
    answers = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "d1"]
    assert len(answers) == 1
    assert result in str(answers[0].content)
    assert out["messages"][-1].content == "Handled."
    assert validate_history(out["messages"]) == []
    _assert_inputs_valid(model)


def test_an_interrupted_call_in_state_never_reaches_the_provider() -> None:
    """A call left without its result and an orphan result in state are sent repaired."""
    model = ScriptedChatModel(responses=[AIMessage("OK.")])
    agent = create_context_agent(model, [delete_file], max_tokens=BUDGET)
    history = [
        HumanMessage("remove old.txt"),
        ai_calls(tool_call("delete_file", {"path": "old.txt"}, "d1")),  # interrupted
        ToolMessage("stray result", tool_call_id="gone"),  # its call was compacted away
        HumanMessage("never mind, just say OK"),
    ]
    out = agent.invoke({"messages": history})
    assert out["messages"][-1].content == "OK."
    [sent] = model.seen
    assert "stray result" not in str([m.content for m in sent])
    assert [m.tool_call_id for m in sent if isinstance(m, ToolMessage)] == ["d1"]
    _assert_inputs_valid(model)


class _Down(ScriptedChatModel):
    """A provider that fails every call."""

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        msg = "503 upstream unavailable"
        raise RuntimeError(msg)


def test_model_fallback_takes_over_when_the_first_model_raises() -> None:
    """ModelFallbackMiddleware's model answers each call the first model fails."""
    first = _Down(responses=[])
    backup = ScriptedChatModel(
        responses=[ai_calls(tool_call("read_file", {"path": "a.py"}, "r1")), AIMessage("Read.")]
    )
    agent = create_context_agent(
        first,
        [read_file],
        max_tokens=BUDGET,
        middleware=[ModelFallbackMiddleware(backup)],
    )
    out = agent.invoke({"messages": [HumanMessage("read a.py")]})
    assert out["messages"][-1].content == "Read."
    assert len(first.seen) == len(backup.seen) == 2
    assert all(first.seen[i] == backup.seen[i] for i in range(2))  # the same assembled input
    _assert_inputs_valid(first, backup)


class Verdict(BaseModel):
    """The agent's final answer."""

    answer: str
    confident: bool


def test_response_format_gives_a_structured_response() -> None:
    """`response_format` (a pydantic schema) fills `structured_response` after a tool round."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(tool_call("read_file", {"path": "spec.md"}, "r1")),
            ai_calls(tool_call("Verdict", {"answer": "ship it", "confident": True}, "v1")),
        ]
    )
    agent = create_context_agent(model, [read_file], max_tokens=BUDGET, response_format=Verdict)
    out = agent.invoke({"messages": [HumanMessage("should we ship?")]})
    assert out["structured_response"] == Verdict(answer="ship it", confident=True)
    assert validate_history(out["messages"]) == []
    _assert_inputs_valid(model)


class _Redact(AgentMiddleware):
    """A user's middleware: redacts a secret in every request and counts the calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def wrap_model_call(self, request: ModelRequest, handler: Any) -> Any:
        self.calls += 1
        messages: list[BaseMessage] = [
            m.model_copy(update={"content": str(m.content).replace("hunter2", "[redacted]")})
            for m in request.messages
        ]
        return handler(request.override(messages=messages))


def test_a_users_own_middleware_runs_outside_ours() -> None:
    """The caller's wrap_model_call sees every call; what it sends is assembled and budgeted."""
    model = ScriptedChatModel(
        responses=[
            ai_calls(tool_call("read_file", {"path": "a.py"}, "r1")),
            ai_calls(tool_call("read_file", {"path": "b.py"}, "r2")),
            AIMessage("Both read."),
        ]
    )
    redact = _Redact()
    agent = create_context_agent(
        model,
        [read_file],
        system_prompt="Be brief.",
        max_tokens=BUDGET,
        middleware=[redact],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "own"}}
    out = agent.invoke({"messages": [HumanMessage("my password is hunter2; read a and b")]}, config)
    assert redact.calls == 3
    assert out["messages"][-1].content == "Both read."
    assert "hunter2" in out["messages"][0].content  # the state keeps what the user wrote
    assert all("hunter2" not in str(m.content) for seen in model.seen for m in seen)
    assert all(seen[0].content.startswith("Be brief.") for seen in model.seen)
    _assert_inputs_valid(model)
