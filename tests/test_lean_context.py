"""Lean per-call work of the context middleware and the shared message walks (issue 35)."""

from __future__ import annotations

import gc
import weakref

import pytest

from langgraph_context._memo import PrefixMemo
from langgraph_context.errors import InvalidArgumentError


class _Item:
    """A weakly referable object."""


def test_prefix_memo_keeps_two_sequences_that_share_only_their_head() -> None:
    """A history and its sent copies share a head: both stay matched, neither evicts."""
    head, stored, copied, later = _Item(), _Item(), _Item(), _Item()
    memo: PrefixMemo[str] = PrefixMemo(4)
    memo.remember([head, stored], "stored")
    memo.remember([head, copied], "copied")
    assert memo.matched([head, stored, later]) == (2, "stored")
    assert memo.matched([head, copied, later]) == (2, "copied")
    assert len(memo) == 2


def test_prefix_memo_replaces_the_sequence_a_new_one_extends() -> None:
    """An appended history replaces the one it extends instead of piling up variants."""
    head, a, b, c = _Item(), _Item(), _Item(), _Item()
    memo: PrefixMemo[int] = PrefixMemo(4, variants=2)
    memo.remember([head, a], 1)
    memo.remember([head, a, b], 2)
    memo.remember([head, a, b, c], 3)
    assert len(memo) == 1
    assert memo.matched([head, a, b, c]) == (4, 3)


def test_prefix_memo_bounds_the_sequences_of_one_head() -> None:
    """Past `variants` sequences under one head, the oldest goes; all go with the head."""
    head = _Item()
    others = [_Item() for _ in range(3)]
    memo: PrefixMemo[int] = PrefixMemo(4, variants=2)
    for k, other in enumerate(others):
        memo.remember([head, other], k)
    assert len(memo) == 2
    assert memo.matched([head, others[0]]) == (1, 2)  # only the head is shared now
    assert memo.matched([head, others[2]]) == (2, 2)
    ref = weakref.ref(head)
    del head
    gc.collect()
    assert ref() is None
    assert len(memo) == 0


def test_prefix_memo_rejects_no_variants() -> None:
    """A head must keep at least one sequence."""
    with pytest.raises(InvalidArgumentError, match="variants must be >= 1, got 0"):
        PrefixMemo(4, variants=0)
