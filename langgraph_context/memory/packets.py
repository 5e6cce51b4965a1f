"""Pinned memory as context packets, for the context builder's [State] section."""

from __future__ import annotations

from typing import Any

from langgraph_context.packet import ContextPacket
from langgraph_context.state import Constraint, HotIssue, get_state_value

__all__ = ["hot_issue_text", "memory_packets", "render_memory"]


def hot_issue_text(issue: HotIssue) -> str:
    """Return how a hot issue reads in context.

    Args:
        issue: The open hot issue.

    Returns:
        One header line naming the check, then its key error lines.

    Example:
        >>> issue = {"id": "check:lint", "check": "lint", "summary": "E501", "status": "active"}
        >>> print(hot_issue_text({**issue, "failures": 2}))
        `lint` is failing (2 runs in a row); fix it before moving on:
        E501
    """
    runs = issue.get("failures", 1)
    plural = "run" if runs == 1 else "runs in a row"
    header = f"`{issue['check']}` is failing ({runs} {plural}); fix it before moving on:"
    return f"{header}\n{issue['summary']}"


def _active(state: Any, key: str) -> list[Any]:
    return [e for e in get_state_value(state, key, []) if e.get("status", "active") == "active"]


def memory_packets(
    state: Any, *, constraints_key: str = "constraints", hot_issues_key: str = "hot_issues"
) -> list[ContextPacket]:
    """Return the active constraints and hot issues as pinned, trusted packets.

    Constraints come first (type `constraint`), then hot issues (type `hot_issue`),
    each in the order it was recorded. Hot issue text was sanitized when recorded.

    Args:
        state: Graph state (dict or object) with `MemoryStateMixin` keys.
        constraints_key: State key of the constraints.
        hot_issues_key: State key of the hot issues.

    Returns:
        Packets with `pinned=True`, `trusted=True`, `source` set to the entry id.

    Example:
        >>> state = {"constraints": [{"id": "c-1", "text": "Use uv", "status": "active"}]}
        >>> [(p.type, p.content, p.pinned) for p in memory_packets(state)]
        [('constraint', 'Use uv', True)]
    """
    constraints: list[Constraint] = _active(state, constraints_key)
    issues: list[HotIssue] = _active(state, hot_issues_key)
    packets = [
        ContextPacket(
            c["text"],
            type="constraint",
            source=c["id"],
            pinned=True,
            trusted=True,
            metadata={"id": c["id"], "origin": c.get("source", "unknown")},
        )
        for c in constraints
    ]
    packets += [
        ContextPacket(
            hot_issue_text(h),
            type="hot_issue",
            source=h["id"],
            pinned=True,
            trusted=True,
            metadata={"id": h["id"], "check": h["check"], "failures": h.get("failures", 1)},
        )
        for h in issues
    ]
    return packets


def render_memory(
    state: Any, *, constraints_key: str = "constraints", hot_issues_key: str = "hot_issues"
) -> str:
    """Return pinned memory as a text block for prompts built without the context builder.

    Args:
        state: Graph state (dict or object) with `MemoryStateMixin` keys.
        constraints_key: State key of the constraints.
        hot_issues_key: State key of the hot issues.

    Returns:
        `Constraints:` and `Hot issues:` sections with bullet lines; empty when both
        lists are empty.

    Example:
        >>> rule = {"id": "c-1", "text": "Use uv", "status": "active"}
        >>> print(render_memory({"constraints": [rule]}))
        Constraints (always follow):
        - Use uv
    """
    packets = memory_packets(state, constraints_key=constraints_key, hot_issues_key=hot_issues_key)
    rules = [p.content for p in packets if p.type == "constraint"]
    issues = [p.content for p in packets if p.type == "hot_issue"]
    parts: list[str] = []
    if rules:
        parts.append("Constraints (always follow):\n" + "\n".join(f"- {r}" for r in rules))
    if issues:
        body = "\n".join("- " + i.replace("\n", "\n  ") for i in issues)
        parts.append("Hot issues (open blockers):\n" + body)
    return "\n\n".join(parts)
