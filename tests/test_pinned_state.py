"""Pinned reducers: add, replace, resolve, dedupe; pure and idempotent."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_context.pinned import Constraint, HotIssue, constraint_reducer, hot_issue_reducer
from langgraph_context.state import constraint_id, normalize_constraint


def rule(text: str, status: str = "active", id_: str | None = None) -> Constraint:
    """Build a constraint entry."""
    return {"id": id_ or constraint_id(text), "text": text, "status": status}  # type: ignore[typeddict-item]


def issue(check: str, summary: str = "boom", status: str = "active") -> HotIssue:
    """Build a hot issue entry."""
    return {"id": f"check:{check}", "check": check, "summary": summary, "status": status}  # type: ignore[typeddict-item]


def test_constraint_add_and_none_handling() -> None:
    """None on either side is an empty list; adds append in order."""
    a, b = rule("Use uv"), rule("Never touch setup.cfg")
    assert constraint_reducer(None, None) == []
    assert constraint_reducer(None, [a]) == [a]
    assert constraint_reducer([a], None) == [a]
    assert constraint_reducer([a], [b]) == [a, b]


def test_constraint_duplicate_text_is_dropped() -> None:
    """The same rule in another case or spacing under another id is not added twice."""
    a = rule("Use pyproject.toml, never requirements.txt")
    dup = rule("use  PYPROJECT.toml, never requirements.txt.", id_="c-other")
    assert constraint_reducer([a], [dup]) == [a]


def test_constraint_same_id_replaces_in_place() -> None:
    """An update with an existing id replaces that entry where it stands."""
    a, b = rule("Use uv", id_="c-1"), rule("Use black")
    new = rule("Use uv and pin versions", id_="c-1")
    assert constraint_reducer([a, b], [new]) == [new, b]


def test_constraint_resolve_removes_and_unknown_resolve_is_noop() -> None:
    """A resolved update removes its id; resolving an unknown id changes nothing."""
    a, b = rule("Use uv"), rule("Use black")
    assert constraint_reducer([a, b], [rule("Use uv", "resolved")]) == [b]
    assert constraint_reducer([b], [rule("Use uv", "resolved")]) == [b]


def test_constraint_readd_after_resolve() -> None:
    """A rule resolved and recorded again in later updates is active again."""
    a = rule("Use uv")
    left = constraint_reducer([a], [rule("Use uv", "resolved")])
    assert constraint_reducer(left, [a]) == [a]


def test_replacing_with_a_duplicate_text_drops_the_entry() -> None:
    """Rewording a rule into the text of another rule leaves only the other rule."""
    a, b = rule("Use uv", id_="c-1"), rule("Run ruff", id_="c-2")
    assert constraint_reducer([a, b], [rule("use UV", id_="c-2")]) == [a]


def test_duplicates_already_in_left_are_collapsed() -> None:
    """Duplicated entries in the stored value collapse to the first one."""
    a = rule("Use uv")
    assert constraint_reducer([a, a, rule("use uv.", id_="c-z")], None) == [a]


def test_resolved_entries_in_left_are_dropped() -> None:
    """A stored resolved entry (from older data) is not carried forward."""
    assert constraint_reducer([rule("x", "resolved")], []) == []


def test_hot_issue_refresh_and_resolve() -> None:
    """A new failure of the same check refreshes its issue; a resolve removes it."""
    first, again = issue("tests", "1 failed"), issue("tests", "2 failed")
    assert hot_issue_reducer([first], [again]) == [again]
    assert hot_issue_reducer([first, issue("lint")], [issue("tests", status="resolved")]) == [
        issue("lint")
    ]


def test_normalize_constraint() -> None:
    """Normalization folds case, whitespace and trailing punctuation only."""
    assert normalize_constraint(" Never\tpush  to MAIN!! ") == "never push to main"
    assert constraint_id("Never push to main") == constraint_id("never push to main.")
    assert constraint_id("Never push to main") != constraint_id("Always push to main")


texts = st.sampled_from(["Use uv", "use UV.", "Never push", "Run ruff", "run  ruff!"])
entries = st.builds(
    lambda t, s, custom: rule(t, s, "c-x" if custom else None),
    texts,
    st.sampled_from(["active", "active", "resolved"]),
    st.booleans(),
)
updates = st.lists(entries, max_size=6)


@settings(max_examples=80, deadline=None)
@given(updates, updates)
def test_constraint_reducer_invariants(left: list[Any], right: list[Any]) -> None:
    """Inputs are never mutated; output is active, unique by id and by text, and idempotent."""
    before = copy.deepcopy((left, right))
    out = constraint_reducer(left, right)
    assert (left, right) == before
    assert all(c["status"] == "active" for c in out)
    assert len({c["id"] for c in out}) == len(out)
    assert len({normalize_constraint(c["text"]) for c in out}) == len(out)
    assert constraint_reducer(out, right) == constraint_reducer(
        constraint_reducer(out, right), right
    )
    assert constraint_reducer(out, None) == out
    assert all(o is not i for o in out for i in left + right)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=5), st.lists(st.booleans(), max_size=5))
def test_hot_issue_reducer_one_issue_per_check(checks: list[str], resolved: list[bool]) -> None:
    """Whatever the updates, each check has at most one open issue, and the last word wins."""
    ups = [
        issue(c, status="resolved" if r else "active")
        for c, r in zip(checks, resolved, strict=False)
    ]
    out = hot_issue_reducer(None, ups)
    assert len({i["check"] for i in out}) == len(out)
    last = {u["check"]: u["status"] for u in ups}
    assert {i["check"] for i in out} == {c for c, s in last.items() if s == "active"}
