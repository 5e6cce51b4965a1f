"""Lean per call in the cut's room: checks done once at build, not wrapped around every call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from deepagents.middleware import FilesystemMiddleware
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from langgraph_context.agents import (
    PinnedMiddleware,
    StateToolsMiddleware,
    create_context_agent,
)
from langgraph_context.agents._tool_check import check_tools_at_build
from tests.conftest import ScriptedChatModel, ai_calls, call


@tool
def ls() -> str:
    """List the user's files."""
    return "files"


def _wraps(middleware: AgentMiddleware[Any, Any]) -> bool:
    return type(middleware).wrap_model_call is not AgentMiddleware.wrap_model_call


def test_checked_at_build_our_tool_middleware_wraps_no_model_call() -> None:
    """After the build check, ours add no model-call wrapper and the agent still runs them."""
    ours = [StateToolsMiddleware(), PinnedMiddleware()]
    assert all(_wraps(m) for m in ours)
    check_tools_at_build([], [], ours)
    assert not any(_wraps(m) for m in ours)
    assert isinstance(ours[0], StateToolsMiddleware)
    model = ScriptedChatModel(responses=[ai_calls(call("notes_ls", {}, "a")), AIMessage("done")])
    app = create_agent(model, [], middleware=ours)
    out = app.invoke({"messages": [HumanMessage("list")]})
    results = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert results == ["No notes yet."]


def test_a_user_middleware_tool_shadowing_ours_is_refused_at_build() -> None:
    """deepagents' `ls` beside bare note tools is refused when the agent is built."""
    with pytest.raises(
        ValueError,
        match=r"two tools are named 'ls': FilesystemMiddleware tool 'ls'.*state_tools tool",
    ):
        create_context_agent(
            ScriptedChatModel(responses=[AIMessage("x")]),
            [],
            middleware=[FilesystemMiddleware()],
            note_prefix=None,
        )


class _AddsTool(AgentMiddleware[Any, Any]):
    """A user wrapper that adds a tool to each request (so names change per call)."""

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(request.override(tools=[*request.tools, ls]))


def test_a_user_model_call_wrapper_keeps_our_per_call_check() -> None:
    """A tool a user wrapper adds at call time, named like one of ours, is refused then."""
    app = create_context_agent(
        ScriptedChatModel(responses=[AIMessage("x")]), [], middleware=[_AddsTool()]
    )
    with pytest.raises(ValueError, match=r"two tools are named 'ls'"):
        app.invoke({"messages": [HumanMessage("hi")]})
