"""The public surface: names, re-exports, and executable docstring examples."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import langgraph_context

EXPECTED_TOP_LEVEL = {
    "CompactionMiddleware",
    "CompactionStateMixin",
    "ContextBuilder",
    "ContextMiddleware",
    "ContextPacket",
    "ContextStateMixin",
    "LangGraphContextError",
    "PinnedStateMixin",
    "NoteStateMixin",
    "PlanStateMixin",
    "asummarize_history",
    "compact_messages",
    "count_tokens",
    "create_codebase_maintainer_graph",
    "create_compaction_node",
    "create_context_agent",
    "create_context_node",
    "create_ls_tool",
    "create_notebook_tools",
    "create_query_note_tool",
    "create_record_constraint_tool",
    "create_resolve_constraint_tool",
    "create_subagent_tool",
    "create_terminal_tool",
    "create_update_note_tool",
    "create_update_plan_tool",
    "create_write_note_tool",
    "create_write_plan_tool",
    "summarize_history",
}


def _modules() -> list[str]:
    names = ["langgraph_context"]
    for info in pkgutil.walk_packages(langgraph_context.__path__, "langgraph_context."):
        if not info.name.endswith("__main__"):  # running it would start the CLI
            names.append(info.name)
    return names


def test_top_level_public_set_is_pinned() -> None:
    """The package exports exactly the pinned public names (ruff RUF022 keeps them sorted)."""
    assert set(langgraph_context.__all__) == EXPECTED_TOP_LEVEL
    assert len(langgraph_context.__all__) <= 30
    for name in langgraph_context.__all__:
        assert hasattr(langgraph_context, name), name


@pytest.mark.parametrize("module_name", _modules())
def test_every_all_is_sorted_and_importable(module_name: str) -> None:
    """Every name in each module's __all__ exists (ruff RUF022 keeps them sorted)."""
    module = importlib.import_module(module_name)
    exported = getattr(module, "__all__", None)
    if exported is None:
        return
    for name in exported:
        assert hasattr(module, name), f"{module_name}.{name}"


@pytest.mark.parametrize("module_name", _modules())
def test_docstring_examples_run(module_name: str) -> None:
    """Every `Example:` block in the package's docstrings executes as written."""
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {module_name}"
