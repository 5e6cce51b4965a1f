"""The `Example:` blocks in the notes and terminal modules run and pass."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "langgraph_context.tools._note_model",
    "langgraph_context.tools._note_files",
    "langgraph_context.tools._note_langgraph",
    "langgraph_context.tools._note_search",
    "langgraph_context.tools.note_packets",
    "langgraph_context.tools.note_tool",
    "langgraph_context.tools.terminal",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name: str) -> None:
    """Every docstring example in the module runs and prints what it shows."""
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
