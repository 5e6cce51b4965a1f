"""The parts `create_context_agent` is assembled from: steps, tools, checks (private)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.memory import (
    create_hot_issue_node,
    create_record_constraint_tool,
    create_resolve_constraint_tool,
)
from langgraph_context.memory.watch import CheckSelector
from langgraph_context.toolkit import check_distinct_tools
from langgraph_context.tools import (
    create_ls_tool,
    create_query_note_tool,
    create_update_note_tool,
    create_update_plan_tool,
    create_write_note_tool,
    create_write_plan_tool,
)

__all__ = [
    "StepsLike",
    "agent_tools",
    "distinct_steps",
    "named_steps",
    "post_tools_steps",
    "state_tools",
]

RESERVED_NODES = frozenset({"model", "tools"})

StepsLike = Mapping[str, Any] | Sequence[Any]
"""Graph nodes to run in order: a name -> node mapping, or a sequence (auto-named)."""


def named_steps(steps: StepsLike | None, prefix: str) -> list[tuple[str, Any]]:
    if not steps:
        return []
    if isinstance(steps, Mapping):
        named = [(str(k), v) for k, v in steps.items()]
    elif isinstance(steps, Sequence) and not isinstance(steps, str):
        named = [(f"{prefix}_{i}", step) for i, step in enumerate(steps, 1)]
    else:
        msg = f"{prefix} must be a mapping of name -> node or a sequence of nodes, got {steps!r}"
        raise InvalidTypeError(msg)
    for step_name, step in named:
        if step_name in RESERVED_NODES:
            msg = f"{prefix} step name {step_name!r} is reserved; avoid {sorted(RESERVED_NODES)}"
            raise InvalidArgumentError(msg)
        if not callable(step) and not hasattr(step, "invoke"):
            msg = f"{prefix} step {step_name!r} must be a node (callable or runnable), got {step!r}"
            raise InvalidTypeError(msg)
    return named


def agent_tools(
    tools: Sequence[BaseTool],
    plan_tools: bool,
    note_tools: bool,
    memory_tools: bool,
    note_prefix: str | None = None,
) -> list[BaseTool]:
    """The agent's tools followed by the state tools switched on; names must differ."""
    own = [(f"tools[{i}]", t) for i, t in enumerate(tools)]
    state = state_tools(plan_tools, note_tools, memory_tools, note_prefix=note_prefix)
    check_distinct_tools([*own, *state])
    return [t for _, t in [*own, *state]]


def post_tools_steps(
    post_tools: StepsLike | None, checks: CheckSelector | None, tool_names: list[str]
) -> list[tuple[str, Any]]:
    """Named steps after each tool round: the check watcher first, then `post_tools`."""
    after = named_steps(post_tools, "post_tools")
    if checks is None:
        return after
    watcher = ("watch_checks", create_hot_issue_node(checks))
    after = with_first_step(after, watcher, kind="post_tools", owner="checks")
    _check_selector(checks, tool_names)
    return after


def with_first_step(
    steps: list[tuple[str, Any]], first: tuple[str, Any], *, kind: str, owner: str
) -> list[tuple[str, Any]]:
    """`first` followed by `steps`, refusing a user step that already took its name.

    Args:
        steps: The user's named steps (`pre_model`, `post_tools`, ...).
        first: The package's own `(name, node)`, which runs before them.
        kind: Which argument the steps came from, for the error message.
        owner: Which argument `first` stands for, for the error message.

    Raises:
        ValueError: If one of `steps` is named like `first`.
    """
    name = first[0]
    if name in {n for n, _ in steps}:
        msg = f"{kind} step name {name!r} is taken by the {owner} argument"
        raise InvalidArgumentError(msg)
    return [first, *steps]


def _check_selector(checks: CheckSelector, names: list[str]) -> None:
    """Refuse check names that are not among the agent's tools (a typo would be silent)."""
    if callable(checks):
        return
    wanted = [checks] if isinstance(checks, str) else list(checks)
    unknown = sorted({str(n) for n in wanted} - set(names))
    if unknown:
        msg = f"checks must name the agent's tools; unknown: {unknown}; tools: {sorted(names)}"
        raise InvalidArgumentError(msg)


def state_tools(
    plan_tools: bool, note_tools: bool, memory_tools: bool, *, note_prefix: str | None = None
) -> list[tuple[str, BaseTool]]:
    """The plan, note and memory tools switched on, each with where it comes from.

    Args:
        plan_tools: `write_plan`, `update_plan`.
        note_tools: `write_note`, `ls`, `query_note`, `update_note`.
        memory_tools: `record_constraint`, `resolve_constraint`.
        note_prefix: Name the note tools `<note_prefix>_<name>` (e.g. `notes_ls`).

    Returns:
        `(origin, tool)` pairs, for `toolkit.check_distinct_tools`.
    """
    tools: list[tuple[str, BaseTool]] = []
    if memory_tools:
        tools += [
            ("memory tool", create_record_constraint_tool()),
            ("memory tool", create_resolve_constraint_tool()),
        ]
    if plan_tools:
        tools += [("plan tool", create_write_plan_tool()), ("plan tool", create_update_plan_tool())]
    if note_tools:
        made = [
            create_write_note_tool(prefix=note_prefix),
            create_ls_tool(prefix=note_prefix),
            create_query_note_tool(prefix=note_prefix),
            create_update_note_tool(prefix=note_prefix),
        ]
        tools += [("note tool", t) for t in made]
    return tools


def distinct_steps(*groups: list[tuple[str, Any]]) -> None:
    """Refuse a step name used in two of the step groups."""
    names = [n for group in groups for n, _ in group]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        msg = f"pre_model, post_model and post_tools step names must differ; repeated: {clash}"
        raise InvalidArgumentError(msg)
