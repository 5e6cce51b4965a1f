"""State mixins and their reducers.

Mixins are `TypedDict`s meant for multiple inheritance with LangGraph's `MessagesState`
(or LangChain's `AgentState`)::

    class State(MessagesState, PlanStateMixin, NoteStateMixin):
        pass

Reducers are pure: they accept `None` on either side and never mutate their inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Literal

from typing_extensions import TypedDict

__all__ = [
    "PLAN_STATUSES",
    "NoteStateMixin",
    "PlanItem",
    "PlanStateMixin",
    "PlanStatus",
    "note_reducer",
    "plan_reducer",
]

PlanStatus = Literal["pending", "in_progress", "done"]
PLAN_STATUSES: tuple[PlanStatus, ...] = ("pending", "in_progress", "done")


class PlanItem(TypedDict):
    """One step of a plan.

    Attributes:
        content: What the step is; also its identity when updating the plan.
        status: `pending`, `in_progress` or `done`.
    """

    content: str
    status: PlanStatus


def plan_reducer(
    left: Sequence[PlanItem] | None, right: Sequence[PlanItem] | None
) -> list[PlanItem]:
    """Replace the plan with the newest value; `None` keeps the current plan.

    A plan is rewritten whole by the plan tools, so the newest write wins. Unlike a
    plain channel, two writes in one step do not raise.

    Args:
        left: The current plan.
        right: The update.

    Returns:
        A new list of new items.

    Example:
        >>> plan_reducer(None, [{"content": "a", "status": "pending"}])
        [{'content': 'a', 'status': 'pending'}]
    """
    chosen = right if right is not None else left
    return [PlanItem(content=item["content"], status=item["status"]) for item in chosen or []]


def note_reducer(
    left: Mapping[str, str | None] | None, right: Mapping[str, str | None] | None
) -> dict[str, str]:
    """Merge note updates into the notes; a `None` value deletes that note.

    Args:
        left: The current notes (name -> content).
        right: The update (name -> new content, or `None` to delete).

    Returns:
        A new dict; neither input is modified.

    Example:
        >>> note_reducer({"a": "1", "b": "2"}, {"b": None, "c": "3"})
        {'a': '1', 'c': '3'}
    """
    merged: dict[str, str] = {k: v for k, v in (left or {}).items() if v is not None}
    for key, value in (right or {}).items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


class PlanStateMixin(TypedDict, total=False):
    """Adds `plan`, the agent's ordered list of `PlanItem`s, to a graph state."""

    plan: Annotated[list[PlanItem], plan_reducer]


class NoteStateMixin(TypedDict, total=False):
    """Adds `note`, the agent's scratch notes (name -> text), to a graph state."""

    note: Annotated[dict[str, str], note_reducer]
