"""Cold builds rank first and measure only what can fit: floors, lazy costs, same picks."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_context import scoring
from langgraph_context.context import ContextBuilder, ContextConfig, _sizing, pack_packets
from langgraph_context.context._sizing import LazyFloors, PacketSizer, cost_floor, words_floor
from langgraph_context.context.structure import render_packet
from langgraph_context.packet import ContextPacket
from langgraph_context.safety.boundary import Fence
from langgraph_context.tokens import TiktokenCounter

ASCII = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=80)
PIECES = ["it's", "'s", " the", "12345678", "0x7f", "id=", "==", "(a", "\n", "\t", "\x1c", "'x"]
MIXED = st.lists(st.one_of(st.sampled_from(PIECES), ASCII), max_size=12).map("".join)
WORDS = [
    "deploy",
    "staging",
    "config",
    "cache",
    "rollback",
    "billing",
    "upstream",
    "timeout",
    "retry",
    "shard",
]


def _texts(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [
        f"[svc-{rng.randint(1, 40)}] " + " ".join(rng.choice(WORDS) for _ in range(20))
        + f" id={rng.getrandbits(40):010x} ms={rng.randint(1, 9999)}"
        for _ in range(n)
    ]  # fmt: skip


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@settings(max_examples=300, deadline=None)
@given(content=MIXED)
def test_a_cost_floor_never_exceeds_the_rendered_cost(encoding: str, content: str) -> None:
    """Whatever the ASCII text, section, trust and fence, the floor is at most the cost."""
    counter = TiktokenCounter(encoding)
    floor = cost_floor(content)
    for packet, section in (
        (ContextPacket(content, type="retrieved", source="doc-1"), "evidence"),
        (ContextPacket(content, type="note", trusted=True), "context"),
        (ContextPacket(content, type="tool"), "context"),
    ):
        for wrap in (None, Fence("5e0c9a7d31b84f26")):
            cost = counter.count_fresh(render_packet(packet, section, wrap_untrusted=wrap)) + 1
            assert floor <= cost


@settings(max_examples=500, deadline=None)
@given(content=st.one_of(MIXED, st.text(max_size=60)))
def test_the_words_floor_is_never_above_the_pieces_floor(content: str) -> None:
    """Any text, control characters and non-ASCII included: words <= pieces."""
    assert words_floor(content) <= cost_floor(content)


def test_lazy_floors_settle_most_packets_with_the_cheap_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 1,000-packet pack runs the pieces' expression on few packets, same picks."""
    texts = _texts(1000)
    calls: list[str] = []
    real = _sizing.cost_floor

    def counted(content: str) -> int:
        calls.append(content)
        return real(content)

    monkeypatch.setattr(_sizing, "cost_floor", counted)
    floors = LazyFloors(texts)
    assert floors.over(0, 0)
    assert not floors.over(0, 10_000)
    assert floors[0] == real(texts[0])
    assert floors[0:2] == [real(t) for t in texts[:2]]
    packets = [ContextPacket(t, type="retrieved", source=f"d{i}") for i, t in enumerate(texts)]
    calls.clear()
    builder = ContextBuilder(config=ContextConfig(max_tokens=1000))
    result = builder.build_result("billing upstream timeout", custom_packets=packets)
    assert result.selected
    assert len(calls) < 100
    monkeypatch.setattr(_sizing, "LazyFloors", lambda texts: [real(t) for t in texts])
    eager = ContextBuilder(config=ContextConfig(max_tokens=1000))
    expected = eager.build_result("billing upstream timeout", custom_packets=packets)
    assert [p.source for p in result.selected] == [p.source for p in expected.selected]
    assert result.text == expected.text


def test_text_rendering_may_change_gets_no_floor() -> None:
    """Non-ASCII text, or text a fence would rewrite, has floor 0."""
    assert cost_floor("naïve café") == 0
    assert cost_floor("a <untrusted-data-1> b") == 0
    assert cost_floor("a &lt; b") == 0
    assert cost_floor("plain words here") == 3
    assert words_floor("plain words here") == 3
    assert words_floor("a\x1cb") == 0  # a separator to split, punctuation to tiktoken


def _spy_counter() -> tuple[TiktokenCounter, list[str]]:
    counter = TiktokenCounter()
    seen: list[str] = []
    inner = counter.count_fresh

    def counting(text: str, /) -> int:
        seen.append(text)
        return inner(text)

    counter.count_fresh = counting  # type: ignore[method-assign]
    return counter, seen


def test_a_cold_build_measures_only_the_packets_near_the_budget() -> None:
    """2,000 new packets, a 1,000-token budget: few are tokenized, the pick is the eager one."""
    packets = [
        ContextPacket(t, type="retrieved", source=f"doc-{i}") for i, t in enumerate(_texts(2000))
    ]
    counter, seen = _spy_counter()
    builder = ContextBuilder(config=ContextConfig(max_tokens=1000), token_counter=counter)
    result = builder.build_result("billing upstream timeout", custom_packets=packets)
    assert 0 < len(result.selected) < 40
    assert len(seen) < 200  # not one count per packet (let alone two)
    assert all(p.token_count is not None for p in result.selected)
    exact = TiktokenCounter()
    plain = ContextBuilder(  # a plain callable: no floors, every reached cost measured
        config=ContextConfig(max_tokens=1000),
        token_counter=lambda value: exact(value),  # noqa: PLW0108 - hides the type
    )
    expected = plain.build_result("billing upstream timeout", custom_packets=packets)
    assert result.text == expected.text
    assert [p.source for p in result.selected] == [p.source for p in expected.selected]
    assert [(d.packet.source, d.reason) for d in result.dropped] == [
        (d.packet.source, d.reason) for d in expected.dropped
    ]


def test_a_lazy_build_in_a_graph_keeps_the_budget() -> None:
    """Inside a compiled graph the lazily measured context still fits its budget."""
    packets = [ContextPacket(t, type="tool", source=f"t{i}") for i, t in enumerate(_texts(800))]
    builder = ContextBuilder(config=ContextConfig(max_tokens=600))

    def assemble(state: MessagesState) -> dict[str, list[AIMessage]]:
        result = builder.build_result(str(state["messages"][-1].content), custom_packets=packets)
        assert result.tokens <= 600
        return {"messages": [AIMessage(result.text)]}

    graph = StateGraph(MessagesState)
    graph.add_node("assemble", assemble)
    graph.add_edge(START, "assemble")
    out = graph.compile().invoke({"messages": [HumanMessage("which shard timed out")]})
    assert TiktokenCounter().count_fresh(out["messages"][-1].content) <= 600


def test_pack_with_floors_reads_no_cost_whose_floor_cannot_fit() -> None:
    """A floor over the room drops the packet as over budget without reading its cost."""
    packets = [ContextPacket(c) for c in "abc"]
    read: list[int] = []

    class Costs(list[int]):
        def __getitem__(self, i):  # type: ignore[no-untyped-def, override]
            read.append(i)
            return super().__getitem__(i)

    chosen = pack_packets(
        packets,
        [1.0, 0.9, 0.8],
        max_selected_tokens=5,
        costs=Costs([4, 3, 1]),
        cost_floors=[4, 3, 1],
    )
    assert [p.content for p in chosen.packets] == ["a", "c"]
    assert read == [0, 2]
    assert [d.reason for d in chosen.dropped] == ["over_budget"]
    with pytest.raises(ValueError, match="one value per packet"):
        pack_packets(packets, [1.0, 0.9, 0.8], max_selected_tokens=5, cost_floors=[1])


def test_lazy_costs_are_measured_once_and_indexed_like_a_list() -> None:
    """`LazyCosts` measures on first access, caches, slices, and refuses bad indices."""
    packets = [ContextPacket(t) for t in ("one", "two words", "three more words")]
    costs = PacketSizer().costs(
        packets, None, token_counter=TiktokenCounter(), section_for=lambda _: "context"
    )
    assert costs.measured == 0
    assert costs[1] == costs[1] == TiktokenCounter().count_fresh("two words") + 1
    assert costs.measured == 1
    assert costs[0:2] == [costs[0], costs[1]]
    assert costs.floors is not None
    assert list(costs.floors) == [1, 2, 3]
    with pytest.raises(IndexError):
        costs[3]


def test_the_word_table_is_bounded_and_keeps_stop_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its bound the stem table starts again, and stop words stay out of the terms."""
    monkeypatch.setattr(scoring, "_MAX_WORDS", len(scoring._STOPS) + 5)
    monkeypatch.setitem(scoring._WORDS, "terms", dict(scoring._STOPS))
    for i in range(50):
        word = "".join(chr(97 + (i * 7 + j) % 26) for j in range(6))
        assert scoring._tokenize_uncached(f"the {word} of painting") == (word_term(word), "paint")
        assert len(scoring._WORDS["terms"]) <= len(scoring._STOPS) + 5


def word_term(word: str) -> str:
    """The stem the scorer gives one word."""
    return str(scoring._STEMMER.stemWord(word))
