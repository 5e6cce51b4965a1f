"""Plan tools: `write_plan` and `update_plan` over `PlanStateMixin.plan`.

Rules the model can rely on:

* `write_plan` replaces the plan; the first step is `in_progress`, the rest `pending`.
* `update_plan` changes statuses by exact step text, atomically: if any requested
  step is unknown or any status is invalid, nothing changes and the error lists the
  problems and the open steps.
* At most one step is `in_progress`. Marking the current step `done` without naming a
  new `in_progress` step promotes the first `pending` step. Naming a new `in_progress`
  step while another one stays `in_progress` is refused.
* Only the first plan call of an AI turn applies; later plan calls in the same turn are
  refused (they would be computed from the same stale plan). Which tool names count as
  plan calls is fixed per tool (`plan_tool_names`, default: both default names and the
  tool's own), never shared through the process: another agent's tool names do not
  change how this one behaves.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated, Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId
from langgraph.prebuilt import InjectedState
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field

from langgraph_context.errors import InvalidArgumentError
from langgraph_context.state import PLAN_STATUSES, PlanItem, get_state_value, render_plan
from langgraph_context.toolkit import ToolSpec, earlier_sibling_calls, error_result

__all__ = [
    "PlanUpdate",
    "apply_plan_updates",
    "create_update_plan_tool",
    "create_write_plan_tool",
]

DEFAULT_WRITE_PLAN_DESCRIPTION = (
    "Replace your plan: short, distinct steps in order. The first becomes in_progress."
)
DEFAULT_UPDATE_PLAN_DESCRIPTION = (
    "Set step statuses by exact step text. At most one in_progress; marking it done "
    "starts the next pending step."
)

_WRITE_PLAN = ToolSpec("write_plan", DEFAULT_WRITE_PLAN_DESCRIPTION)
_UPDATE_PLAN = ToolSpec("update_plan", DEFAULT_UPDATE_PLAN_DESCRIPTION)


def _no_description(schema: dict[str, Any]) -> None:
    # The docstring is for readers; the tool description already tells the model.
    schema.pop("description", None)


class PlanUpdate(BaseModel):
    """A requested status change for one plan step: its exact text and new status."""

    model_config = ConfigDict(json_schema_extra=_no_description)

    content: str
    status: str = Field(json_schema_extra={"enum": list(PLAN_STATUSES)})


def _plan_names(own: str, given: Collection[str] | None) -> frozenset[str]:
    """The tool names this plan tool treats as plan calls (its own always among them)."""
    if given is None:
        return frozenset({own, _WRITE_PLAN.name, _UPDATE_PLAN.name})
    if isinstance(given, str) or not all(isinstance(n, str) and n for n in given):
        msg = f"plan_tool_names must be a collection of non-empty names, got {given!r}"
        raise InvalidArgumentError(msg)
    return frozenset({own, *given})


def _refuse_if_not_first(
    state: Any, tool_call_id: str, messages_key: str, plan_names: frozenset[str]
) -> ToolMessage | None:
    earlier = earlier_sibling_calls(state, tool_call_id, messages_key)
    names = [tc["name"] for tc in earlier if tc["name"] in plan_names]
    if names:
        return error_result(
            f"Refused: an earlier {names[0]} call in this same turn already changes the plan. "
            "Make one plan change per turn; call again after reading its result.",
            tool_call_id,
        )
    return None


def create_write_plan_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    messages_key: str | None = None,
    message_key: str | None = None,
    plan_tool_names: Collection[str] | None = None,
) -> BaseTool:
    """Create the `write_plan(plan: list[str])` tool.

    Args:
        name: Tool name (default `write_plan`).
        description: Tool description shown to the model.
        messages_key: State key of the messages list (default `messages`).
        message_key: Alias of `messages_key` (the spec's spelling); not both.
        plan_tool_names: Names of the agent's plan tools: a call to one of them earlier
            in the same AI turn makes this call be refused (default: this tool's name,
            `write_plan` and `update_plan`). Pass both names when you rename the tools.

    Returns:
        A tool returning a `Command` that sets `plan` and adds its `ToolMessage`.

    Raises:
        ValueError: If `name`, `description` or `messages_key` is invalid.

    Example:
        >>> create_write_plan_tool().name
        'write_plan'
    """
    spec = _WRITE_PLAN.customize(
        name=name, description=description, messages_key=messages_key, message_key=message_key
    )
    plan_names = _plan_names(spec.name, plan_tool_names)

    def write_plan(
        plan: list[str],
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[Any, InjectedState],
    ) -> Command[Any] | ToolMessage:
        refused = _refuse_if_not_first(state, tool_call_id, spec.messages_key, plan_names)
        if refused is not None:
            return refused
        steps = [step.strip() for step in plan]
        if not steps:
            return error_result(
                "Error: the plan is empty. Pass at least one step, in order.", tool_call_id
            )
        if any(not step for step in steps):
            return error_result(
                "Error: plan steps must be non-empty text. Remove the blank steps.", tool_call_id
            )
        duplicates = sorted({s for s in steps if steps.count(s) > 1})
        if duplicates:
            return error_result(
                "Error: plan steps must be distinct (they are updated by their text). "
                f"Repeated: {duplicates}.",
                tool_call_id,
            )
        items = [
            PlanItem(content=step, status="in_progress" if i == 0 else "pending")
            for i, step in enumerate(steps)
        ]
        content = (
            f"Plan written with {len(items)} step(s). Start with: {steps[0]}\n{render_plan(items)}"
        )
        return spec.command({"plan": items}, content, tool_call_id)

    return spec.build(write_plan)


def apply_plan_updates(
    plan: list[PlanItem], updates: list[dict[str, str]]
) -> tuple[list[PlanItem], list[str]]:
    """Apply status updates to a plan without mutating it.

    Args:
        plan: The current plan.
        updates: `{"content": ..., "status": ...}` requests.

    Returns:
        `(new_plan, errors)`; when `errors` is non-empty, `new_plan` is the old plan.
    """
    errors: list[str] = []
    if not plan:
        return plan, ["there is no plan yet; call write_plan first"]
    if not updates:
        return plan, ["no updates were given"]
    by_content = {item["content"]: i for i, item in enumerate(plan)}
    wanted: dict[str, str] = {}
    unknown = [u["content"] for u in updates if u["content"] not in by_content]
    if unknown:
        errors.append(f"unknown step(s) {unknown}")
    bad = [
        f"{u['content']!r}: {u['status']!r}" for u in updates if u["status"] not in PLAN_STATUSES
    ]
    if bad:
        errors.append(f"invalid status for {', '.join(bad)} (use pending, in_progress or done)")
    for u in updates:
        if wanted.get(u["content"], u["status"]) != u["status"]:
            errors.append(f"step {u['content']!r} is given two different statuses")
        wanted[u["content"]] = u["status"]
    if errors:
        return plan, errors
    new_plan = [
        PlanItem(content=item["content"], status=wanted.get(item["content"], item["status"]))  # type: ignore[typeddict-item]
        for item in plan
    ]
    started = [c for c, s in wanted.items() if s == "in_progress"]
    if len(started) > 1:
        return plan, [f"only one step may be in_progress, got {started}"]
    still = [
        item["content"]
        for item in new_plan
        if item["status"] == "in_progress" and item["content"] not in wanted
    ]
    if started and still:
        return plan, [
            f"step {still[0]!r} is still in_progress; mark it done or pending in the same call"
        ]
    finished = any(s == "done" for s in wanted.values())
    if finished and not any(item["status"] == "in_progress" for item in new_plan):
        for i, item in enumerate(new_plan):
            if item["status"] == "pending":
                new_plan[i] = PlanItem(content=item["content"], status="in_progress")
                break
    return new_plan, []


def create_update_plan_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    messages_key: str | None = None,
    message_key: str | None = None,
    plan_tool_names: Collection[str] | None = None,
) -> BaseTool:
    """Create the `update_plan(update_plans: list[PlanUpdate])` tool.

    Args:
        name: Tool name (default `update_plan`).
        description: Tool description shown to the model.
        messages_key: State key of the messages list (default `messages`).
        message_key: Alias of `messages_key` (the spec's spelling); not both.
        plan_tool_names: Names of the agent's plan tools (see `create_write_plan_tool`).

    Returns:
        A tool returning a `Command` with the new `plan` and its `ToolMessage`, or an
        error `ToolMessage` leaving the plan unchanged.

    Raises:
        ValueError: If `name`, `description` or `messages_key` is invalid.
    """
    spec = _UPDATE_PLAN.customize(
        name=name, description=description, messages_key=messages_key, message_key=message_key
    )
    plan_names = _plan_names(spec.name, plan_tool_names)

    def update_plan(
        update_plans: list[PlanUpdate],
        tool_call_id: Annotated[str, InjectedToolCallId],
        state: Annotated[Any, InjectedState],
    ) -> Command[Any] | ToolMessage:
        refused = _refuse_if_not_first(state, tool_call_id, spec.messages_key, plan_names)
        if refused is not None:
            return refused
        plan: list[PlanItem] = list(get_state_value(state, "plan", []))
        updates = [u.model_dump() if isinstance(u, PlanUpdate) else dict(u) for u in update_plans]
        new_plan, errors = apply_plan_updates(plan, updates)
        if errors:
            open_steps = [f"{i['content']} ({i['status']})" for i in plan if i["status"] != "done"]
            return error_result(
                "Error: plan not updated (nothing was changed): "
                + "; ".join(errors)
                + f". Open steps: {open_steps}",
                tool_call_id,
            )
        current = next((i["content"] for i in new_plan if i["status"] == "in_progress"), None)
        if current is not None:
            head = f"Plan updated. Now in progress: {current}"
        elif all(i["status"] == "done" for i in new_plan):
            head = "Plan updated. All steps are done."
        else:
            head = "Plan updated. No step is in progress."
        return spec.command({"plan": new_plan}, f"{head}\n{render_plan(new_plan)}", tool_call_id)

    return spec.build(update_plan)
