"""The compaction package exports exactly its documented public names."""

from __future__ import annotations

import doctest

import langgraph_context
from langgraph_context import compaction, transcripts
from langgraph_context.compaction import (
    _units,
    node,
    options,
    prompts,
    provenance,
    snapshot,
    strategies,
    summarize,
)


def isort_key(name: str) -> tuple[int, str]:
    """Ruff's __all__ order: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_compaction_public_names() -> None:
    """The compaction __all__ is sorted (ruff's order) and every name resolves."""
    assert compaction.__all__ == sorted(compaction.__all__, key=isort_key)
    assert all(hasattr(compaction, name) for name in compaction.__all__)
    assert {"compact_messages", "summarize_history", "asummarize_history"} <= set(
        compaction.__all__
    )
    assert "create_compaction_node" in compaction.__all__


def test_entry_points_resolve() -> None:
    """The main compaction names sit at the package root; transcript loaders in their module."""
    for name in ("compact_messages", "summarize_history", "asummarize_history"):
        assert getattr(langgraph_context, name) is getattr(compaction, name)
    for name in ("create_compaction_node", "CompactionStateMixin"):
        assert getattr(langgraph_context, name) is getattr(compaction, name)
    assert callable(transcripts.load_claude_code_session)
    assert callable(transcripts.load_openai_transcript)


def test_docstring_examples_run() -> None:
    """Every Example block in the compaction and transcript modules executes as written."""
    modules = (strategies, _units, snapshot, summarize, prompts, options, node, provenance)
    for module in (*modules, transcripts):
        result = doctest.testmod(module)
        assert result.failed == 0, module.__name__
