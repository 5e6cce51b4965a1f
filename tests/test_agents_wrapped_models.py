"""Chat models wrapped by `with_retry`, `with_fallbacks` or `init_chat_model` are models."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.chat_models import init_chat_model
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import Runnable

from langgraph_context.agents import create_context_agent, create_subagent_tool
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call


def _delegate_once(sub: Any) -> str:
    """Run a parent agent that calls the sub-agent tool once; return the tool's result."""
    parent = ScriptedChatModel(
        responses=[ai_calls(tool_call("delegate_task", {"task": "q"}, "r1")), AIMessage("end")]
    )
    out = create_context_agent(
        parent, [sub], plan_tools=False, note_tools=False, constraint_tools=False
    ).invoke({"messages": [("user", "go")]})
    (result,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    return str(result.content)


def _wrappers(model: ScriptedChatModel) -> list[Runnable[Any, Any]]:
    return [model.with_retry(), model.with_fallbacks([model])]


@pytest.mark.parametrize("wrap", [0, 1])
def test_context_agent_runs_a_wrapped_model_with_tools(wrap: int) -> None:
    """Tools are bound through the wrapper and the loop runs."""
    model = ScriptedChatModel(
        responses=[ai_calls(tool_call("write_plan", {"steps": ["a"]}, "p1")), AIMessage("done")]
    )
    graph = create_context_agent(_wrappers(model)[wrap])
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
    assert _delegate_once(sub) == "child says 42"
    assert "Investigate." in str(child.seen[0][0].content)


def test_a_compiled_graph_is_not_a_model() -> None:
    """A compiled graph passed as the agent's model is refused."""
    graph = create_context_agent(ScriptedChatModel(responses=[AIMessage("x")]))
    with pytest.raises(TypeError, match="model must be a chat model"):
        create_context_agent(graph)


@pytest.mark.parametrize("kind", ["graph_with_retry", "lambda"])
def test_wrapped_graphs_and_lambda_agents_stay_sub_agent_graphs(kind: str) -> None:
    """A compiled graph under with_retry, or a RunnableLambda agent, runs as a graph."""
    from langchain_core.runnables import RunnableLambda

    from langgraph_context.providers.models import is_chat_model

    child: Runnable[Any, Any]
    if kind == "lambda":
        child = RunnableLambda(
            lambda state: {"messages": [*state["messages"], AIMessage("child did it")]}
        )
    else:
        child_model = ScriptedChatModel(responses=[AIMessage("child did it")])
        child = create_context_agent(child_model).with_retry()
    assert not is_chat_model(child)
    sub = create_subagent_tool(child)
    assert _delegate_once(sub) == "child did it"


def test_tools_bound_through_bind_and_with_config_keep_their_settings() -> None:
    """bind(stop=...) kwargs and with_config(tags=...) survive binding the tools."""
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.tools import tool

    from langgraph_context.providers.models import bind_model_tools

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.bind(tools=[t.name for t in tools], **kwargs)

    @tool
    def ping(x: str) -> str:
        """Ping."""
        return x

    model = Model(messages=iter([AIMessage("x")]))
    bound: Any = bind_model_tools(model.bind(stop=["STOP"]), [ping])
    assert bound.kwargs == {"stop": ["STOP"]}
    assert bound.bound.kwargs == {"tools": ["ping"]}
    configured: Any = bind_model_tools(model.with_config(tags=["keep-me"]), [ping])
    assert configured.config == {"tags": ["keep-me"]}
    assert configured.bound.kwargs == {"tools": ["ping"]}
