"""Pinned memory state: standing constraints and open hot issues, with their reducers.

Both lists hold only *active* entries. An update is a list of entries: an entry whose
`status` is `"active"` is added (or replaces the entry with the same `id`), an entry
whose `status` is `"resolved"` removes the entry with that `id`. Reducers are pure:
they accept `None` on either side and never mutate their inputs.

Compose the mixin with `MessagesState`::

    class State(MessagesState, MemoryStateMixin):
        pass
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, NotRequired, TypeVar

from typing_extensions import TypedDict

__all__ = [
    "MEMORY_STATUSES",
    "Constraint",
    "HotIssue",
    "MemoryStateMixin",
    "MemoryStatus",
    "constraint_id",
    "constraint_reducer",
    "hot_issue_id",
    "hot_issue_reducer",
    "normalize_constraint",
]

MemoryStatus = Literal["active", "resolved"]
MEMORY_STATUSES: tuple[MemoryStatus, ...] = ("active", "resolved")

_SPACES = re.compile(r"\s+")


class Constraint(TypedDict):
    """A standing rule from the user that applies to every later turn.

    Attributes:
        id: Stable identity (`constraint_id(text)` unless the writer chose one).
        text: The rule, as the model or user phrased it.
        status: `active`, or `resolved` in an update that removes it.
        source: Who recorded it: `model`, `user`, `extractor` or anything custom.
    """

    id: str
    text: str
    status: MemoryStatus
    source: NotRequired[str]


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
    status: MemoryStatus
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
) -> list[_Entry]:
    merged: list[_Entry] = []
    updates: list[_Entry] = [e for e in left or [] if e.get("status", "active") == "active"]
    updates.extend(right or [])
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
    return _merge(left, right, lambda c: normalize_constraint(c["text"]), refresh=False)


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
    return _merge(left, right, lambda h: h["id"], refresh=True)


class MemoryStateMixin(TypedDict, total=False):
    """Adds pinned memory to a graph state: `constraints` and `hot_issues`."""

    constraints: Annotated[list[Constraint], constraint_reducer]
    hot_issues: Annotated[list[HotIssue], hot_issue_reducer]
