"""The `Example:` blocks in the notes, tool and terminal modules run and pass."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "langgraph_context.notebook.model",
    "langgraph_context.notebook.files",
    "langgraph_context.notebook.langgraph_store",
    "langgraph_context.notebook.search",
    "langgraph_context.notebook.packets",
    "langgraph_context.notebook.tool",
    "langgraph_context.tools.plan",
    "langgraph_context.tools.state_notes",
    "langgraph_context.tools.terminal.tool",
    "langgraph_context.tools.terminal._terminal",
    "langgraph_context.tools.terminal._names",
    "langgraph_context.tools.terminal._state",
    "langgraph_context.toolkit",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name: str) -> None:
    """Every docstring example in the module runs and prints what it shows."""
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
