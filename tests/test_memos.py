"""Bounded memos: LRU eviction by size, same answers at any bound, no objects kept alive."""

from __future__ import annotations

import copy
import gc
import weakref
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    convert_to_openai_messages,
)
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_context import scoring
from langgraph_context._memo import PrefixMemo, SizedMemo
from langgraph_context.context import ContextBuilder, ContextConfig, _sizing
from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.packet import ContextPacket
from langgraph_context.safety import sanitize
from langgraph_context.tokens import TiktokenCounter

# -- SizedMemo ---------------------------------------------------------------------


def test_memo_evicts_least_recently_used_first() -> None:
    """A full memo drops the entry read longest ago, not everything."""
    memo: SizedMemo[str, int] = SizedMemo(3)
    for key in "abc":
        memo.put(key, ord(key))
    assert memo.get("a") == ord("a")  # "b" is now the least recently used
    memo.put("d", 4)
    assert [memo.get(k) for k in "abcd"] == [ord("a"), None, ord("c"), 4]
    assert len(memo) == 3


def test_memo_is_bounded_by_the_summed_sizes() -> None:
    """Entries are weighed; the total never passes the bound and a too-heavy one is skipped."""
    memo: SizedMemo[int, str] = SizedMemo(100)
    for i in range(50):
        memo.put(i, "x", size=30)
        assert memo.size <= 100
    assert len(memo) == 3
    memo.put(-1, "huge", size=101)
    assert memo.get(-1) is None
    memo.put(49, "again", size=10)
    assert memo.get(49) == "again"
    assert memo.size == 70
    memo.clear()
    assert (len(memo), memo.size) == (0, 0)


def test_memo_rejects_a_bound_below_one() -> None:
    """A memo needs room for something."""
    with pytest.raises(InvalidArgumentError, match="max_size must be >= 1, got 0"):
        SizedMemo(0)


class _Item:
    """A weakly referable object."""


def test_prefix_memo_matches_the_same_objects_only() -> None:
    """The shared leading objects count; an equal but other object, or a new head, does not."""
    a, b, c = _Item(), _Item(), _Item()
    memo: PrefixMemo[str] = PrefixMemo(4)
    memo.remember([a, b], "ab")
    assert memo.matched([a, b, c]) == (2, "ab")
    assert memo.matched([a, c, b]) == (1, "ab")
    assert memo.matched([b, a]) == (0, None)
    assert memo.matched([]) == (0, None)
    memo.remember([1, 2], "ints")  # not weakly referable: not remembered
    assert memo.matched([1, 2]) == (0, None)


def test_prefix_memo_keeps_nothing_alive_and_is_bounded() -> None:
    """A sequence goes with its first object; at most max_entries sequences are kept."""
    memo: PrefixMemo[int] = PrefixMemo(2)
    heads = [_Item() for _ in range(3)]
    tail = _Item()
    for k, head in enumerate(heads):
        memo.remember([head, tail], k)
    assert len(memo) == 2
    assert memo.matched([heads[0], tail]) == (0, None)  # evicted, least recently used
    ref = weakref.ref(heads[2])
    del heads[2], head
    gc.collect()
    assert ref() is None
    assert len(memo) == 1
    memo.clear()
    assert len(memo) == 0


def test_prefix_memo_rejects_a_bound_below_one() -> None:
    """A prefix memo needs room for one sequence."""
    with pytest.raises(InvalidArgumentError, match="max_entries must be >= 1, got 0"):
        PrefixMemo(0)


@example(ops=[(1, 1), (0, 2), (2, 5), (3, 5), (0, 1)])  # key 1 goes while key 0 is still 2
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(1, 5)), max_size=200))
def test_memo_keeps_exactly_the_most_recent_entries_that_fit(ops: list[tuple[int, int]]) -> None:
    """Against a model: each write replaces its key's entry as the newest, then the
    oldest entries go until the total fits."""
    memo: SizedMemo[int, int] = SizedMemo(12)
    for key, size in ops:
        memo.put(key, key * 10, size=size)
    model: list[tuple[int, int]] = []
    for key, size in ops:
        model = [entry for entry in model if entry[0] != key] + [(key, size)]
        while sum(s for _, s in model) > 12:
            model.pop(0)
    assert list(memo._data) == [key for key, _ in model]
    assert {k for k in range(21) if memo.get(k) is not None} == {key for key, _ in model}
    assert memo.size == sum(s for _, s in model)


# -- counter -----------------------------------------------------------------------


def _history(n: int) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i in range(n):
        out.append(HumanMessage(f"question {i} about the deploy"))
        args: dict[str, Any] = {"path": f"src/{i}.py", "depth": i % 3, "all": i % 2 == 0}
        if i % 4 == 0:
            args["filters"] = {"kinds": ["py", "md"], "limit": 1.5}
        out.append(AIMessage("", tool_calls=[{"name": "read", "args": args, "id": f"c{i}"}]))
        out.append(ToolMessage(f"contents of file {i}\n" * (i % 5 + 1), tool_call_id=f"c{i}"))
    return out


def test_recount_of_reloaded_and_dict_histories_equals_a_cold_count() -> None:
    """Deep copies and OpenAI-style dicts hit the memo and count what a fresh counter counts."""
    history = _history(30)
    dicts = convert_to_openai_messages(history)
    warm = TiktokenCounter()
    first = warm.count_messages(history)
    assert warm.count_messages(copy.deepcopy(history)) == first
    assert warm.count_messages(copy.deepcopy(dicts)) == TiktokenCounter().count_messages(dicts)
    assert warm.count_messages(dicts) == TiktokenCounter().count_messages(dicts)


@pytest.mark.parametrize(
    ("a", "b"),
    [(1, True), (1, 1.0), ("1", 1), ([1], {"0": 1}), (None, "None")],
)
def test_look_alike_arguments_are_counted_apart(a: object, b: object) -> None:
    """Arguments that compare equal in Python but differ in JSON get their own counts."""
    counter = TiktokenCounter()
    for value in (a, b, a):
        message = AIMessage("", tool_calls=[{"name": "f", "args": {"x": value}, "id": "c"}])
        assert counter.count_messages([message]) == TiktokenCounter().count_messages([message])


def test_counter_with_a_tiny_memo_counts_what_an_unbounded_one_does() -> None:
    """Evicting on every call changes no count."""
    history = _history(12)
    tiny, roomy = TiktokenCounter(max_memo_bytes=900), TiktokenCounter()
    for end in range(1, len(history) + 1):
        assert tiny.count_messages(history[:end]) == roomy.count_messages(history[:end])
    assert tiny._text_memo.size <= 900
    assert tiny._message_memo.size <= 900


def test_counted_messages_are_not_kept_alive() -> None:
    """The memo is keyed by content: a dropped history is freed."""
    counter = TiktokenCounter()
    history = _history(20)
    counter.count_messages(history)
    counter.count_messages(convert_to_openai_messages(history))
    refs = [weakref.ref(m) for m in history]
    del history
    gc.collect()
    assert [r for r in refs if r() is not None] == []


def test_a_malformed_message_is_reported_even_after_a_hit() -> None:
    """A memo hit for a neighbour never hides an error, and the position is exact."""
    counter = TiktokenCounter()
    good = [HumanMessage("hi"), {"role": "user", "content": "there"}]
    counter.count_messages(good)
    with pytest.raises(InvalidArgumentError, match=r"messages\[2\]"):
        counter.count_messages([*good, {"content": "no role"}])
    bad = AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c"}])
    bad.tool_calls = ({"name": "f", "args": {}, "id": "c"},)  # type: ignore[assignment]
    with pytest.raises(InvalidTypeError, match=r"messages\[2\]: tool_calls must be a list"):
        counter.count_messages([*good, bad])


@pytest.mark.parametrize("attr", ["tool_calls", "invalid_tool_calls"])
def test_an_empty_call_list_that_is_not_a_list_is_reported(attr: str) -> None:
    """A new message is counted unchecked only when its key vouches for the check.

    The key is built for an AI message whose call lists are both empty, whatever
    their type: one built without validation with `None` there is checked (and
    refused) as before, on a miss and beside a vouched neighbour.
    """
    counter = TiktokenCounter()
    bad = AIMessage.model_construct(content="fresh text", tool_calls=[], invalid_tool_calls=[])
    setattr(bad, attr, None)
    for messages in ([bad], [HumanMessage("also new"), bad]):
        with pytest.raises(InvalidTypeError, match=rf"{attr} must be a list"):
            counter.count_each(messages)


@given(st.lists(st.sampled_from(range(40)), max_size=12))
def test_unchecked_misses_count_what_checked_ones_do(picks: list[int]) -> None:
    """Misses a key vouches for (no second check) count what the checked path counts."""
    pool = _history(20)
    messages = [pool[i] for i in picks]
    counter = TiktokenCounter()
    assert counter.count_each(messages) == [TiktokenCounter().count_message(m) for m in messages]
    assert counter.count_each(messages) == counter.count_each(list(reversed(messages)))[::-1]


def test_counter_rejects_a_bad_memo_bound() -> None:
    """The bound is checked at construction and named."""
    with pytest.raises(InvalidArgumentError, match=r"max_memo_bytes must be >= 300 \(one entry\)"):
        TiktokenCounter(max_memo_bytes=0)
    with pytest.raises(InvalidTypeError, match="max_memo_bytes must be an int"):
        TiktokenCounter(max_memo_bytes="big")  # type: ignore[arg-type]


# -- builder -------------------------------------------------------------------------


def _packets(n: int) -> list[ContextPacket]:
    words = ["deploy", "staging", "config", "cache", "rollback", "ignore", "system:", "note"]
    return [
        ContextPacket(
            " ".join(words[(i * 7 + j) % len(words)] for j in range(3 + i % 9)) + f" #{i}",
            type="tool" if i % 2 else "note",
            source=f"p{i}",
            trusted=None if i % 2 else True,
        )
        for i in range(n)
    ]


def _graph(builder: ContextBuilder, packets: list[ContextPacket]) -> Any:
    def assemble(state: MessagesState) -> dict[str, Any]:
        query = str(state["messages"][-1].content)
        result = builder.build_result(query, custom_packets=packets)
        return {"messages": [AIMessage(result.text)]}

    graph = StateGraph(MessagesState)
    graph.add_node("assemble", assemble)
    graph.add_edge(START, "assemble")
    return graph.compile()


def test_builder_with_tiny_memos_selects_exactly_what_an_unbounded_one_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every memo bounded to a few entries: same text, same selections, build after build."""
    packets = _packets(300)
    roomy = ContextBuilder(config=ContextConfig(max_tokens=600))
    expected = [roomy.build_result(q, custom_packets=packets) for q in ("deploy cache",) * 2]
    monkeypatch.setattr(_sizing, "COST_MEMO_BYTES", 900)
    monkeypatch.setattr(sanitize, "_MEMO", SizedMemo(500))
    monkeypatch.setattr(scoring, "_TERMS", SizedMemo(500))
    tiny = ContextBuilder(
        config=ContextConfig(max_tokens=600), token_counter=TiktokenCounter(max_memo_bytes=900)
    )
    app = _graph(tiny, packets)
    for want in expected:
        got = tiny.build_result("deploy cache", custom_packets=packets)
        assert got.text == want.text
        assert [p.source for p in got.selected] == [p.source for p in want.selected]
        assert [(d.packet.source, d.reason) for d in got.dropped] == [
            (d.packet.source, d.reason) for d in want.dropped
        ]
        out = app.invoke({"messages": [HumanMessage("deploy cache")]})
        assert out["messages"][-1].content == want.text
    assert tiny._sizer._memo.size <= 900
