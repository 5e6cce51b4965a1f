"""Tools for the model to record and resolve the user's standing constraints.

Rules the model can rely on:

* `record_constraint(text)` stores a rule that will be shown on every later turn. It
  is the user's rule (trusted, `source="user"`) only when `text` is whole sentences of
  the user's latest message (`pinned.provenance.user_quote`); otherwise it is kept
  as the model's note (`source="model"`), shown fenced as data.
  Recording a rule that is already active (same text up to case, spacing and final
  punctuation) changes nothing and says which id it already has.
* `resolve_constraint(constraint)` removes an active rule named by its id (`c-...`) or
  its text. An unknown rule is refused with the list of active ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId
from langgraph.prebuilt import InjectedState
from langgraph.types import Command

from langgraph_context.pinned.provenance import user_quote
from langgraph_context.state import (
    Constraint,
    constraint_id,
    get_state_value,
    normalize_constraint,
)
from langgraph_context.toolkit import ToolSpec, error_result

__all__ = [
    "create_record_constraint_tool",
    "create_resolve_constraint_tool",
    "render_constraints",
]

MAX_CONSTRAINT_CHARS = 500

DEFAULT_RECORD_CONSTRAINT_DESCRIPTION = (
    "Record one standing rule the user set, as a short sentence; shown every turn."
)
DEFAULT_RESOLVE_CONSTRAINT_DESCRIPTION = "Drop a withdrawn rule, by id (c-...) or text."

_NOT_QUOTED = (
    " as a note (data): it is not a whole sentence of the user's latest message; to "
    "record the user's rule itself, quote their sentence exactly"
)

_RECORD_CONSTRAINT = ToolSpec("record_constraint", DEFAULT_RECORD_CONSTRAINT_DESCRIPTION)
_RESOLVE_CONSTRAINT = ToolSpec("resolve_constraint", DEFAULT_RESOLVE_CONSTRAINT_DESCRIPTION)


def _active(state: Any) -> list[Constraint]:
    value = get_state_value(state, "constraints", [])
    return [c for c in value if c.get("status", "active") == "active"]


def render_constraints(constraints: Sequence[Constraint]) -> str:
    """Return active constraints as `- [id] text` lines, or `(none)`.

    Args:
        constraints: The constraints to list.

    Returns:
        One line per constraint.

    Example:
        >>> print(render_constraints([{"id": "c-1", "text": "Use uv", "status": "active"}]))
        - [c-1] Use uv
    """
    if not constraints:
        return "(none)"
    return "\n".join(f"- [{c['id']}] {c['text']}" for c in constraints)


def create_record_constraint_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    messages_key: str | None = None,
) -> BaseTool:
    """Create the `record_constraint(text)` tool writing to `PinnedStateMixin.constraints`.

    Args:
        name: Tool name (default `record_constraint`).
        description: Tool description shown to the model.
        messages_key: State key of the messages list (default `messages`).

    Returns:
        A tool returning a `Command` that adds the constraint and its `ToolMessage`, or an
        error `ToolMessage` (empty or over-long text) leaving the state unchanged.

    Raises:
        ValueError: If `name`, `description` or `messages_key` is invalid.
    """
    spec = _RECORD_CONSTRAINT.customize(
        name=name, description=description, messages_key=messages_key
    )

    def record_constraint(
        text: str,
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[Any, InjectedState],
    ) -> Command[Any] | ToolMessage:
        clean = " ".join(text.split()) if isinstance(text, str) else ""
        if not clean:
            return error_result(
                "Error: text is empty; pass the rule as one short sentence.", tool_call_id
            )
        if len(clean) > MAX_CONSTRAINT_CHARS:
            return error_result(
                f"Error: the rule is {len(clean)} characters; keep it under "
                f"{MAX_CONSTRAINT_CHARS} by stating only the rule itself.",
                tool_call_id,
            )
        wanted = normalize_constraint(clean)
        for existing in _active(state):
            if normalize_constraint(existing["text"]) == wanted:
                return ToolMessage(
                    f"Already recorded as [{existing['id']}]; nothing changed.",
                    tool_call_id=tool_call_id,
                )
        entry = Constraint(id=constraint_id(clean), text=clean, status="active", source="model")
        said = user_quote(clean, get_state_value(state, spec.messages_key, []))
        if said is not None:  # the user's own words, checked: a rule, not data
            entry = Constraint(
                id=entry["id"],
                text=clean,
                status="active",
                source="user",
                quoted_from=said.id or "",
            )
        return spec.command(
            {"constraints": [entry]},
            # The rule is not echoed: it may quote injected text, and the model has it.
            f"Recorded constraint [{entry['id']}]{_NOT_QUOTED if said is None else ''}.",
            tool_call_id,
        )

    return spec.build(record_constraint)


def create_resolve_constraint_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    messages_key: str | None = None,
) -> BaseTool:
    """Create the `resolve_constraint(constraint)` tool removing an active constraint.

    Args:
        name: Tool name (default `resolve_constraint`).
        description: Tool description shown to the model.
        messages_key: State key of the messages list (default `messages`).

    Returns:
        A tool returning a `Command` that removes the constraint, or an error
        `ToolMessage` listing the active constraints when none matches.

    Raises:
        ValueError: If `name`, `description` or `messages_key` is invalid.
    """
    spec = _RESOLVE_CONSTRAINT.customize(
        name=name, description=description, messages_key=messages_key
    )

    def resolve_constraint(
        constraint: str,
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[Any, InjectedState],
    ) -> Command[Any] | ToolMessage:
        active = _active(state)
        wanted = constraint.strip() if isinstance(constraint, str) else ""
        match = next((c for c in active if c["id"] == wanted), None)
        if match is None and wanted:
            norm = normalize_constraint(wanted)
            match = next((c for c in active if normalize_constraint(c["text"]) == norm), None)
        if match is None:
            return error_result(
                f"Error: no active constraint matches {wanted!r}; nothing changed. "
                f"Active constraints:\n{render_constraints(active)}",
                tool_call_id,
            )
        return spec.command(
            {"constraints": [{**match, "status": "resolved"}]},
            f"Resolved constraint [{match['id']}]: {match['text']}",
            tool_call_id,
        )

    return spec.build(resolve_constraint)
