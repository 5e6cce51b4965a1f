"""Public names of the pinned and safety packages, and their executable docstring examples."""

from __future__ import annotations

import doctest
import importlib

import pytest

import langgraph_context
from langgraph_context import pinned, safety

MODULES = [
    "langgraph_context.state",
    "langgraph_context.pinned.tools",
    "langgraph_context.pinned.watch",
    "langgraph_context.pinned.extract",
    "langgraph_context.pinned.packets",
    "langgraph_context.pinned.provenance",
    "langgraph_context.pinned.store",
    "langgraph_context.safety.sanitize",
    "langgraph_context.safety.boundary",
    "langgraph_context.safety.guard",
    "langgraph_context.safety.detector",
]
TOP_LEVEL = {
    "Constraint",
    "HotIssue",
    "PinnedStateMixin",
    "aextract_constraints",
    "constraint_reducer",
    "create_constraint_extractor_node",
    "create_hot_issue_node",
    "create_record_constraint_tool",
    "create_resolve_constraint_tool",
    "extract_constraints",
    "hot_issue_reducer",
    "pinned_packets",
    "render_pinned",
    "Detector",
    "InjectionFinding",
    "OutputVerdict",
    "PromptInjectionError",
    "SafetyStateMixin",
    "check_output",
    "create_output_guard_node",
    "find_injections",
    "new_boundary",
    "protect_packet",
    "sanitize_untrusted",
    "wrap_untrusted",
}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    """Every `Example:` block in the pinned and safety modules passes as a doctest."""
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0


def test_names_resolve_from_their_packages() -> None:
    """Each pinned and safety name resolves from its subpackage; the tools also at the root."""
    for name in TOP_LEVEL:
        package = pinned if hasattr(pinned, name) else safety
        assert getattr(package, name) is not None, name
    for name in ("create_record_constraint_tool", "create_resolve_constraint_tool"):
        assert getattr(langgraph_context, name) is getattr(pinned, name)


@pytest.mark.parametrize("package", [pinned, safety])
def test_subpackage_all_resolves(package: object) -> None:
    """Each subpackage exports exactly the names it defines, all resolvable."""
    names = package.__all__  # type: ignore[attr-defined]
    assert len(names) == len(set(names))
    assert all(hasattr(package, n) for n in names)
