"""`create_context_agent(checks=...)` refuses names that are not the agent's tools."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from langgraph_context.agents import create_context_agent
from langgraph_context.testing import ScriptedChatModel


@tool
def run_tests() -> str:
    """Run the test suite."""
    return "ok"


def test_a_misspelt_check_name_is_refused() -> None:
    """A typo in `checks` used to be ignored silently; now it names the tools."""
    model = ScriptedChatModel(responses=[AIMessage("x")])
    with pytest.raises(ValueError, match=r"unknown: \['run_testz'\]"):
        create_context_agent(model, [run_tests], checks="run_testz")
    with pytest.raises(ValueError, match=r"unknown: \['lint'\]"):
        create_context_agent(model, [run_tests], checks=["run_tests", "lint"])


def test_known_names_and_predicates_are_accepted() -> None:
    """Tool names (own or state tools) and predicates build."""
    model = ScriptedChatModel(responses=[AIMessage("x")])
    assert create_context_agent(model, [run_tests], checks="run_tests") is not None
    assert create_context_agent(model, [run_tests], checks=["run_tests", "write_plan"]) is not None
    assert create_context_agent(model, checks=lambda m: m.name == "anything") is not None
