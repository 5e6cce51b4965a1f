"""Lean per call, fifth pass (issue 35): PrefixMemo stays right when its objects die."""

from __future__ import annotations

import builtins
import gc
import weakref

import pytest

from langgraph_context import _memo
from langgraph_context._memo import PrefixMemo


class _Item:
    """A weakly referable object."""


def test_prefix_memo_does_not_take_a_new_object_at_a_freed_address_for_the_old(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A remembered object freed and its id given to a new one: the new one does not match."""
    head, a, b, newcomer = _Item(), _Item(), _Item(), _Item()
    given = {newcomer: builtins.id(b)}  # the address CPython may hand out again
    monkeypatch.setattr(_memo, "id", lambda o: given.get(o) or builtins.id(o), raising=False)
    memo: PrefixMemo[str] = PrefixMemo(4)
    memo.remember([head, a, b], "old")
    del b
    gc.collect()
    assert memo.matched([head, a, newcomer]) == (2, "old")
    memo.remember([head, a, newcomer], "new", known=(2, "old"))
    assert memo.matched([head, a, newcomer]) == (3, "new")


def test_prefix_memo_after_a_death_matches_by_reference_then_by_id_again() -> None:
    """A death elsewhere in an entry: lookups stay right, and a sequence stored after is whole."""
    head, a, b, c = _Item(), _Item(), _Item(), _Item()
    memo: PrefixMemo[str] = PrefixMemo(4)
    memo.remember([head, a], "short")
    memo.remember([head, b, c], "other")
    del c
    gc.collect()
    assert memo.matched([head, a, b]) == (2, "short")
    d = _Item()
    memo.remember([head, a, d], "long", known=(2, "short"))
    assert memo.matched([head, a, d, b]) == (3, "long")
    assert memo.matched([head, b]) == (2, "other")
    assert memo.matched([head, b, d]) == (2, "other")


def test_prefix_memo_is_dropped_with_its_first_object_after_extensions() -> None:
    """Extended sequences keep one first reference: the entry goes when that object does."""
    head, a, b = _Item(), _Item(), _Item()
    memo: PrefixMemo[int] = PrefixMemo(4)
    memo.remember([head, a], 1)
    memo.remember([head, a, b], 2, known=memo.matched([head, a, b]))
    assert len(memo) == 1
    ref = weakref.ref(head)
    del head
    gc.collect()
    assert ref() is None
    assert len(memo) == 0
