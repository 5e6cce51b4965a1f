"""Compaction's sixth lean pass (issue 35): a firing does less work, byte for byte the same.

The snapshot's round robin stops counting once nothing more can fit (with the
package's own counter), and the id scan of an ASCII text uses ASCII classes. Each
fast path is checked against the plain computation it replaces: alone, and inside a
compiled graph whose compaction node fires over generated tool logs.
"""

from __future__ import annotations

import heapq
import random
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from benchmarks.lean.__main__ import log_text
from langgraph_context.compaction import CompactionStateMixin, create_compaction_node
from langgraph_context.compaction import snapshot as snapshot_module
from langgraph_context.compaction._facts import (
    _ASCII_DELIMITED_ID_RE,
    _DELIMITED_ID_RE,
    IDS_PER_MESSAGE,
    SCAN_CHARS,
    is_identifier,
    text_ids,
)
from langgraph_context.compaction.snapshot import StateSnapshot, _round_robin
from langgraph_context.testing import ai_calls, tool_call
from langgraph_context.tokens import TiktokenCounter


def _plain_round_robin(
    sections: Sequence[tuple[str, list[str], bool]], budget: int, counter: Any
) -> list[list[str]]:
    """The round robin as it was: every item counted, none skipped unseen."""
    chosen: list[list[str]] = [[] for _ in sections]
    cursor = [0] * len(sections)
    titles: dict[int, int] = {}
    spent = 0
    waiting = [(0, s) for s, (_, items, _) in enumerate(sections) if items]
    while waiting:
        used, s = heapq.heappop(waiting)
        items = sections[s][1]
        item = items[cursor[s]]
        cursor[s] += 1
        title_cost = 0
        if not chosen[s]:
            if s not in titles:
                titles[s] = counter(sections[s][0]) + 2
            title_cost = titles[s]
        cost = counter(item) + 2 + title_cost
        if spent + cost <= budget:
            chosen[s].append(item)
            spent += cost
            used += cost
        if cursor[s] < len(items):
            heapq.heappush(waiting, (used, s))
    return chosen


def _plain_text_ids(text: str) -> tuple[str, ...]:
    """`text_ids` without its memo, scanning with the Unicode pattern only."""
    found: dict[str, None] = {}
    for match in _DELIMITED_ID_RE.finditer(" " + text[:SCAN_CHARS]):
        word = match.group(1)
        if word in found or not is_identifier(word):
            continue
        found[word] = None
        if len(found) == IDS_PER_MESSAGE:
            break
    return tuple(found)


_WORDS = ["svc-3", "c077b9b28f", "29Z", "2024-05-21T10", "lib/a.py", "x", "", "\u00e9t\u00e9"]
_ITEMS = st.lists(
    st.one_of(st.sampled_from(_WORDS), st.text(max_size=12)), max_size=30, unique=True
)
_SECTIONS = st.lists(_ITEMS, min_size=6, max_size=6)


@settings(max_examples=300, deadline=None)
@given(_SECTIONS, st.integers(min_value=-5, max_value=400))
def test_the_round_robin_picks_what_the_plain_one_picks(
    items: list[list[str]], budget: int
) -> None:
    """With the package's counter or another one, the same items are picked in order."""
    sections = [(f"Section {s}", section, s % 2 == 1) for s, section in enumerate(items)]
    for counter in (TiktokenCounter(), len):
        assert _round_robin(sections, budget, counter) == _plain_round_robin(
            sections, budget, counter
        )


def test_the_round_robin_stops_counting_once_nothing_fits() -> None:
    """Past the budget's end the newest ids are skipped without being counted."""
    counter = TiktokenCounter()
    ids = [f"id-{k:04d}x" for k in range(400)]
    counted: list[str] = []
    count_text = counter.count_text

    def spy(text: str) -> int:
        counted.append(text)
        return count_text(text)

    with mock.patch.object(counter, "count_text", spy):
        chosen = _round_robin([("Identifiers", ids, True)], 300, counter)
    assert chosen == _plain_round_robin([("Identifiers", ids, True)], 300, TiktokenCounter())
    assert 0 < len(chosen[0]) < 100
    assert len(counted) <= 1 + len(chosen[0]) + 5  # the title, the chosen, a few more


def test_a_custom_counter_still_counts_every_item() -> None:
    """A counter the package does not know gets every item, as before (it promises nothing)."""
    seen: list[str] = []

    def counter(text: str) -> int:
        seen.append(text)
        return 0 if text.startswith("z") else len(text)

    ids = ["abcdef"] * 3 + ["z1", "z2"]
    sections = [("Ids", ids, True)]
    assert _round_robin(sections, 20, counter) == [["abcdef", "z1", "z2"]]
    assert seen == ["Ids", *ids]


# ASCII controls too: `\s` would differ on \x1c-\x1f, `\w` and `\d` do not.
_ID_PIECES = [*"aZx09_-/. =\n:[]()\t\x00\x1c\x1f\x7f", "\u00e9", "\u0663", "\u017f"]
_ID_TEXT = st.lists(st.sampled_from([*_ID_PIECES, "svc-3", "id=0a1b2c", "1e-9"]), max_size=60).map(
    "".join
)


@settings(max_examples=400, deadline=None)
@given(_ID_TEXT)
def test_the_ascii_id_scan_finds_what_the_unicode_one_finds(text: str) -> None:
    """On ASCII text both patterns match alike; `text_ids` agrees with the plain scan."""
    if text.isascii():
        scanned = " " + text
        assert _ASCII_DELIMITED_ID_RE.findall(scanned) == _DELIMITED_ID_RE.findall(scanned)
    assert text_ids.__wrapped__(text) == _plain_text_ids(text)  # type: ignore[attr-defined]


class State(MessagesState, CompactionStateMixin):
    """Messages and the compaction keys."""


def _history(seed: int, rounds: int, accent: bool) -> list[BaseMessage]:
    """A request, then rounds of a log read (distinct ids per seed, accented if asked)."""
    rng = random.Random(seed)
    history: list[BaseMessage] = [HumanMessage(f"why does job {seed} fail?", id="h0")]
    for k in range(rounds):
        text = log_text(seed * 100 + k, lines=rng.randint(4, 30))
        if accent and k % 2:
            text = text.replace("INFO", "INFO caf\u00e9")
        history.append(ai_calls(tool_call("read_log", {"n": k}, f"c{k}")))
        history[-1].id = f"a{k}"
        history.append(ToolMessage(text, tool_call_id=f"c{k}", name="read_log", id=f"t{k}"))
        if k % 4 == 3:
            history.append(HumanMessage(f"and part {k}? see id-{seed}{k}x", id=f"h{k}"))
    history.append(AIMessage("Looking.", id="last"))
    return history


_NONCE = re.compile(
    r"untrusted-data-\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def _compacted(history: list[BaseMessage], trigger: int) -> str:
    """The state after a compiled graph's compaction node ran on `history` (nonces blanked)."""
    graph = StateGraph(State)
    graph.add_node("compaction", create_compaction_node(trigger_tokens=trigger))
    graph.add_edge(START, "compaction")
    graph.add_edge("compaction", END)
    state = graph.compile().invoke({"messages": [m.model_copy() for m in history]})
    return _NONCE.sub("N", repr(state))


@contextmanager
def _plain_paths() -> Iterator[None]:
    """Run compaction through the plain round robin and the unmemoized Unicode id scan."""
    with (
        mock.patch.object(snapshot_module, "_round_robin", _plain_round_robin),
        mock.patch.object(snapshot_module, "text_ids", _plain_text_ids),
    ):
        yield


@settings(max_examples=25, deadline=None)
@given(
    st.integers(min_value=0, max_value=10_000),
    st.integers(min_value=3, max_value=16),
    st.booleans(),
    st.sampled_from([1500, 3000, 6000]),
)
def test_a_firing_returns_what_the_plain_computation_returns(
    seed: int, rounds: int, accent: bool, trigger: int
) -> None:
    """A compaction in a compiled graph writes the very state the plain paths write."""
    history = _history(seed, rounds, accent)
    fast = _compacted(history, trigger)
    with _plain_paths():
        plain = _compacted(history, trigger)
    assert fast == plain
    if "snapshot of" in fast:  # it fired and kept facts: the check saw a snapshot
        assert "Identifiers" in fast or "User requests" in fast


def test_a_snapshot_renders_as_plainly_rendered_at_every_room() -> None:
    """Rendering a many-id snapshot at shrinking rooms gives the plain render's text."""
    snap = StateSnapshot(
        requests=("fix the billing job",),
        identifiers=tuple(f"req-{k:03d}a" for k in range(300)),
        errors=("read_log: Error timeout",),
        message_count=40,
    )
    counter = TiktokenCounter()
    for room in (2000, 500, 120, 60, 30, 10):
        fast = snap.render(max_snapshot_tokens=room, token_counter=counter)
        with _plain_paths():
            plain = snap.render(max_snapshot_tokens=room, token_counter=counter)
        assert _NONCE.sub("N", fast) == _NONCE.sub("N", plain)
