"""Every state shape of the package, with its reducer and renderer.

Mixins are `TypedDict`s meant for multiple inheritance with LangGraph's `MessagesState`
(or LangChain's `AgentState`)::

    class State(MessagesState, PlanStateMixin, NoteStateMixin, PinnedStateMixin):
        pass

Reducers are pure: they accept `None` on either side and never mutate their inputs.

Pinned items hold only *active* entries. An update is a list of entries: an entry
whose `status` is `"active"` is added (or replaces the entry with the same `id`), an
entry whose `status` is `"resolved"` removes the entry with that `id`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired, TypeVar

from langgraph.config import get_config
from typing_extensions import TypedDict

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError

__all__ = [
    "Constraint",
    "HotIssue",
    "NoteStateMixin",
    "PinnedStateMixin",
    "PinnedStatus",
    "PlanItem",
    "PlanStateMixin",
    "PlanStatus",
    "constraint_id",
    "constraint_reducer",
    "get_state_value",
    "hot_issue_id",
    "hot_issue_reducer",
    "normalize_constraint",
    "note_reducer",
    "plan_reducer",
    "render_plan",
    "require_state_keys",
]

PlanStatus = Literal["pending", "in_progress", "done"]
PLAN_STATUSES: tuple[PlanStatus, ...] = ("pending", "in_progress", "done")
PinnedStatus = Literal["active", "resolved"]
PINNED_STATUSES: tuple[PinnedStatus, ...] = ("active", "resolved")


def get_state_value(state: Any, key: str, default: Any = None) -> Any:
    """Return `state[key]` for mappings or `getattr(state, key)` for objects, else `default`.

    Nodes read state through this one helper, so a dict, a TypedDict or a dataclass
    state all work; a stored `None` reads as `default`.
    """
    if isinstance(state, dict):
        value = state.get(key, default)
    else:
        value = getattr(state, key, default)
    return default if value is None else value


def require_state_keys(keys: Mapping[str, str], *, node: str) -> None:
    """Raise if the running graph's state has no channel for one of `keys`.

    LangGraph silently drops a node's write to a key its state schema lacks, so a
    node whose output is its only effect checks here first. `keys` maps each key to
    the mixin that declares it. Outside a graph (a direct `invoke`) nothing is checked.

    Raises:
        InvalidArgumentError: Naming the missing key and the mixin to add.
    """
    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:
        return
    # LangGraph hands each task a reader of the graph's channels; an unknown key is
    # a KeyError there (an empty channel reads as None).
    read = configurable.get("__pregel_read")
    if not callable(read):
        return
    for key, mixin in keys.items():
        try:
            read(key)
        except KeyError:
            msg = (
                f"{node} writes state key {key!r}, which this graph's state schema lacks "
                f"(LangGraph would drop it silently): add {mixin} to the state class"
            )
            raise InvalidArgumentError(msg) from None


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
    return [PlanItem(content=item["content"], status=item["status"]) for item in _plan(chosen)]


_PLAN_SHAPE = 'a list of {"content": str, "status": "pending" | "in_progress" | "done"}'


def _shape_error(key: str, shape: str, got: Any) -> InvalidTypeError:
    """The error for a state value of the wrong shape, naming the key and the shape."""
    shown = repr(got)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return InvalidTypeError(f"state key {key!r} must be {shape}, got {shown}")


def _plan(value: Any) -> list[Any]:
    """`value` if it is a plan (an empty list for `None`); raise naming the shape otherwise."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise _shape_error("plan", _PLAN_SHAPE, value)
    for item in value:
        if not (
            isinstance(item, Mapping)
            and isinstance(item.get("content"), str)
            and item.get("status") in PLAN_STATUSES
        ):
            raise _shape_error("plan", _PLAN_SHAPE, item)
    return list(value)


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
    for side in (left, right):
        if side is not None and not (
            isinstance(side, Mapping)
            and all(isinstance(k, str) and isinstance(v, str | None) for k, v in side.items())
        ):
            raise _shape_error("note", "a dict of note name (str) -> text (str or None)", side)
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


def render_plan(plan: list[PlanItem]) -> str:
    """Render a plan as numbered lines with statuses.

    Example:
        >>> print(render_plan([{"content": "read code", "status": "in_progress"}]))
        1. [in_progress] read code
    """
    if not plan:
        return "(no plan)"
    return "\n".join(f"{i}. [{item['status']}] {item['content']}" for i, item in enumerate(plan, 1))


_SPACES = re.compile(r"\s+")


class Constraint(TypedDict):
    """A standing rule from the user that applies to every later turn.

    Attributes:
        id: Stable identity (`constraint_id(text)` unless the writer chose one).
        text: The rule, as the model or user phrased it.
        status: `active`, or `resolved` in an update that removes it.
        source: Who recorded it: `model`, `user`, `developer`, `extractor` or anything
            custom; only `user` and `developer` are trusted (`pinned.provenance`).
        quoted_from: For a rule `record_constraint` found verbatim in the user's
            message: that message's id.
    """

    id: str
    text: str
    status: PinnedStatus
    source: NotRequired[str]
    quoted_from: NotRequired[str]


class HotIssue(TypedDict):
    """A current blocker: a check tool (tests, linter, build) that is failing.

    Attributes:
        id: Stable identity, `hot_issue_id(check)`.
        check: Name of the failing check tool.
        summary: The key error lines of its latest failing output (sanitized).
        status: `active`, or `resolved` in an update that removes it.
        failures: How many failing runs in a row have been seen.
        last_call_id: The tool call id of the latest run counted, so a replay of the
            same tool round does not count twice.
    """

    id: str
    check: str
    summary: str
    status: PinnedStatus
    failures: NotRequired[int]
    last_call_id: NotRequired[str]


def normalize_constraint(text: str) -> str:
    """Return the form of a constraint used to spot duplicates.

    Case, runs of whitespace and trailing punctuation do not make two rules different.

    Args:
        text: A constraint's text.

    Returns:
        The case-folded text with single spaces and no trailing `.`, `!` or `;`.

    Example:
        >>> normalize_constraint("  Use   pyproject.toml, never requirements.txt. ")
        'use pyproject.toml, never requirements.txt'
    """
    return _SPACES.sub(" ", text).strip().rstrip(".!;").strip().casefold()


def constraint_id(text: str) -> str:
    """Return the stable id of a constraint: `c-` and 8 hex digits of its normalized hash.

    Args:
        text: The constraint's text.

    Returns:
        The same id for texts that differ only in case, spacing or final punctuation.

    Example:
        >>> constraint_id("Use uv") == constraint_id("use  UV."), constraint_id("Use uv")
        (True, 'c-5f6429b4')
    """
    digest = hashlib.sha256(normalize_constraint(text).encode("utf-8")).hexdigest()
    return f"c-{digest[:8]}"


def hot_issue_id(check: str) -> str:
    """Return the id of the hot issue a failing `check` opens: `check:<name>`.

    Args:
        check: The check tool's name.

    Returns:
        The id; one check has at most one open hot issue.

    Example:
        >>> hot_issue_id("run_tests")
        'check:run_tests'
    """
    return f"check:{check}"


_Entry = TypeVar("_Entry", Constraint, HotIssue)


def _merge(
    left: Sequence[_Entry] | None,
    right: Sequence[_Entry] | None,
    duplicate_key: Callable[[_Entry], str],
    *,
    refresh: bool,
    key: str,
    fields: tuple[str, ...],
) -> list[_Entry]:
    for side in (left, right):
        _check_entries(side, key, fields)
    merged: list[_Entry] = []
    updates: list[_Entry] = [e for e in left or [] if e.get("status", "active") == "active"]
    # Within one update only the last entry per id counts (resolved then re-added is
    # active, in its first place), so applying the same update twice changes nothing.
    latest: dict[str, _Entry] = {}
    for entry in right or []:
        latest[entry["id"]] = entry
    updates.extend(latest.values())
    for update in updates:
        index = next((i for i, e in enumerate(merged) if e["id"] == update["id"]), None)
        if update.get("status") == "resolved":
            if index is not None:
                del merged[index]
            continue
        key = duplicate_key(update)
        duplicate = any(duplicate_key(e) == key and e["id"] != update["id"] for e in merged)
        if index is not None:
            # Replaced in place, unless the new text repeats another rule: then it goes.
            if duplicate:
                del merged[index]
            elif refresh or duplicate_key(merged[index]) != key:
                merged[index] = _copy(update)
        elif not duplicate:
            merged.append(_copy(update))
    return merged


def _check_entries(value: Any, key: str, fields: tuple[str, ...]) -> None:
    """Raise naming `key` unless `value` is `None` or a list of entries with string `fields`."""
    named = ", ".join(f'"{f}": str' for f in fields)
    shape = f'a list of {{{named}, "status": "active" | "resolved", ...}} entries'
    if value is None:
        return
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise _shape_error(key, shape, value)
    for entry in value:
        if not (isinstance(entry, Mapping) and all(isinstance(entry.get(f), str) for f in fields)):
            raise _shape_error(key, shape, entry)


def _copy(entry: Any) -> Any:
    return {**entry}


def constraint_reducer(
    left: Sequence[Constraint] | None, right: Sequence[Constraint] | None
) -> list[Constraint]:
    """Apply constraint updates: add, replace by id, remove when resolved, skip duplicates.

    An active update whose normalized text matches an existing constraint is a
    duplicate and is dropped: the first wording wins. An update that rewords a rule
    under its id replaces it, unless the new wording repeats another rule.

    Args:
        left: The current active constraints.
        right: The updates.

    Returns:
        A new list of new dicts holding only active constraints, oldest first.

    Example:
        >>> a = {"id": "c-1", "text": "Use uv", "status": "active"}
        >>> b = {"id": "c-2", "text": "use UV.", "status": "active"}
        >>> [c["id"] for c in constraint_reducer([a], [b])]
        ['c-1']
        >>> constraint_reducer([a], [{**a, "status": "resolved"}])
        []
    """
    return _merge(
        left,
        right,
        lambda c: normalize_constraint(c["text"]),
        refresh=False,
        key="constraints",
        fields=("id", "text"),
    )


def hot_issue_reducer(
    left: Sequence[HotIssue] | None, right: Sequence[HotIssue] | None
) -> list[HotIssue]:
    """Apply hot issue updates: open or refresh by id, remove when resolved.

    Args:
        left: The current open hot issues.
        right: The updates.

    Returns:
        A new list of new dicts holding only active issues, oldest first.

    Example:
        >>> issue = {"id": "check:lint", "check": "lint", "summary": "E501", "status": "active"}
        >>> len(hot_issue_reducer(None, [issue, issue]))
        1
        >>> hot_issue_reducer([issue], [{**issue, "status": "resolved"}])
        []
    """
    return _merge(left, right, lambda h: h["id"], refresh=True, key="hot_issues", fields=("id",))


class PinnedStateMixin(TypedDict, total=False):
    """Adds pinned items to a graph state: `constraints` and `hot_issues`."""

    constraints: Annotated[list[Constraint], constraint_reducer]
    hot_issues: Annotated[list[HotIssue], hot_issue_reducer]
