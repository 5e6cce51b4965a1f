"""A fence costs the same tokens in every build and every process.

Boundaries are decimal digits, which the cl100k and o200k vocabularies split into
one-token groups of three; a hex boundary of the same length took 25 to 45 tokens per
fence depending on the draw, so what fit a budget beside a fence (a compaction
snapshot's items, a context's packets) changed from one process to the next.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_context.compaction.provenance import fence
from langgraph_context.safety.boundary import (
    _ATTRIBUTE_UNSAFE,
    _MAX_ATTRIBUTE_CHARS,
    _attribute,
    keyed_boundary,
    new_boundary,
    wrap_untrusted,
)
from langgraph_context.tokens import count_tokens, resolve_counter


def test_fresh_boundaries_all_cost_the_same() -> None:
    """500 fresh boundaries: one fence cost, under both offline encodings."""
    for model in (None, "gpt-4o"):
        counter = resolve_counter(None) if model is None else _counter(model)
        costs = {counter(wrap_untrusted("data", boundary=new_boundary())) for _ in range(500)}
        assert len(costs) == 1, costs


def _counter(model: str) -> object:
    from langgraph_context.tokens.counter import _counter_for_model

    return _counter_for_model(model)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_keyed_fences_cost_the_same_whatever_the_text(text: str) -> None:
    """A keyed boundary of any text costs as many tokens as any other."""
    assert len(keyed_boundary(text)) == 16
    assert keyed_boundary(text).isdigit()
    bare = count_tokens(wrap_untrusted("x", boundary="0" * 16))
    assert count_tokens(wrap_untrusted("x", boundary=keyed_boundary(text))) == bare


_SNAPSHOT = """
import re
from langgraph_context.compaction.provenance import fence
print(re.sub(r"untrusted-data-[0-9]+", "B", fence("ZFA04Y data/res0.json", kind="snapshot")))
from langgraph_context.tokens import count_tokens
print(count_tokens(fence("ZFA04Y data/res0.json", kind="snapshot")))
"""


def test_two_processes_fence_alike() -> None:
    """Two processes (two keys) render the same fence at the same cost."""
    outs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", _SNAPSHOT], capture_output=True, text=True, env=env, check=True
        )
        outs.add(run.stdout)
    assert len(outs) == 1, outs
    assert fence("a", kind="snapshot") == fence("a", kind="snapshot")


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.text(max_size=8), max_size=5),
    other=st.lists(st.text(max_size=8), max_size=5),
)
def test_keyed_boundaries_tell_apart_any_two_lists_of_texts(
    parts: list[str], other: list[str]
) -> None:
    """The keyed message holds each part's length, so no regrouping of the same characters
    (`["ab"]`, `["a", "b"]`, `["a", "", "b"]`) gets the same boundary."""
    assert keyed_boundary(*parts) == keyed_boundary(*list(parts))
    if parts != other:
        assert keyed_boundary(*parts) != keyed_boundary(*other)


_BOUNDARY_CHARS = "abcKkSs0123456789"


@settings(max_examples=300, deadline=None)
@given(
    boundary=st.text(_BOUNDARY_CHARS, min_size=12, max_size=14),
    value=st.lists(
        st.one_of(st.text(max_size=6), st.sampled_from(["KKKK", "\u017f", "\u212a"])), max_size=6
    ),
    swap=st.booleans(),
)
def test_attribute_drops_the_boundary_in_any_case(
    boundary: str, value: list[str], swap: bool
) -> None:
    """The ASCII shortcut answers as the case-blind regular expression does."""
    text = "x".join([*value, boundary.swapcase() if swap else boundary])
    expected = re.sub(
        re.escape(boundary),
        "_",
        _ATTRIBUTE_UNSAFE.sub("_", text)[:_MAX_ATTRIBUTE_CHARS],
        flags=re.IGNORECASE,
    )
    assert _attribute(text, boundary) == expected
