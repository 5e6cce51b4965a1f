"""Chat models wrapped by `with_retry`, `with_fallbacks` or `init_chat_model` are models."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.chat_models import init_chat_model
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import Runnable

from langgraph_context.agents import create_context_agent, create_subagent_tool
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call


def _wrappers(model: ScriptedChatModel) -> list[Runnable[Any, Any]]:
    return [model.with_retry(), model.with_fallbacks([model])]


@pytest.mark.parametrize("wrap", [0, 1])
def test_context_agent_runs_a_wrapped_model_with_tools(wrap: int) -> None:
    """Tools are bound through the wrapper and the loop runs."""
    model = ScriptedChatModel(
        responses=[ai_calls(tool_call("write_plan", {"steps": ["a"]}, "p1")), AIMessage("done")]
    )
    graph = create_context_agent(_wrappers(model)[wrap]).compile()
    out = graph.invoke({"messages": [("user", "plan it")]})
    assert out["messages"][-1].content == "done"
    assert [m.type for m in out["messages"]].count("tool") == 1


def test_a_configurable_init_chat_model_is_accepted() -> None:
    """A configurable `init_chat_model` builds (the model is chosen at run time)."""
    configurable = init_chat_model(configurable_fields="any", config_prefix="m")
    assert create_context_agent(configurable) is not None
    assert create_subagent_tool(configurable, tools=[]).name == "delegate_task"


@pytest.mark.parametrize("wrap", [0, 1])
def test_subagent_runs_a_wrapped_model(wrap: int) -> None:
    """A wrapped model is run as a sub-agent (with its prompt), not as a compiled graph."""
    child = ScriptedChatModel(responses=[AIMessage("child says 42")])
    sub = create_subagent_tool(_wrappers(child)[wrap], system_prompt="Investigate.")
    parent = ScriptedChatModel(
        responses=[ai_calls(tool_call("delegate_task", {"task": "q"}, "r1")), AIMessage("end")]
    )
    out = (
        create_context_agent(parent, [sub], plan_tools=False, note_tools=False, memory_tools=False)
        .compile()
        .invoke({"messages": [("user", "go")]})
    )
    (result,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert result.content == "child says 42"
    assert "Investigate." in str(child.seen[0][0].content)


def test_a_compiled_graph_is_not_a_model() -> None:
    """A compiled graph passed as the agent's model is refused."""
    graph = create_context_agent(ScriptedChatModel(responses=[AIMessage("x")])).compile()
    with pytest.raises(TypeError, match="model must be a chat model"):
        create_context_agent(graph)
