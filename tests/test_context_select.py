"""Tests for the Select stage: relevance, pinning, duplicates, packing under budget."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from langchain_core.embeddings import Embeddings

from langgraph_context.context import (
    ContextConfig,
    ContextPacket,
    aselect_packets,
    relevance_scores,
    select,
    select_packets,
)
from langgraph_context.context.relevance import semantic_query
from langgraph_context.context.select import _KeptTerms


def turn(text: str, speaker: str = "A", **kwargs: object) -> ContextPacket:
    """A conversation turn packet."""
    return ContextPacket(
        f"{speaker}: {text}", type="message", metadata={"speaker": speaker, "thread": "t"}, **kwargs
    )


def test_caller_set_relevance_is_respected() -> None:
    """A packet's own relevance is used as is, overriding the scorer."""
    packets = [
        ContextPacket("exact match words", relevance=0.0),
        ContextPacket("other", relevance=1.0),
    ]
    assert relevance_scores(packets, "exact match words") == [0.0, 1.0]
    chosen = select_packets(
        packets, "exact match words", max_selected_tokens=5, token_counter=lambda s: 5
    )
    assert [p.content for p in chosen.packets] == ["other"]


def test_neighbouring_turns_inherit_relevance() -> None:
    """The answer after a matching question scores above unrelated turns."""
    packets = [
        turn("Nice weather today", "Ann"),
        turn("What have you been researching lately?", "Ann"),
        turn("Mostly adoption agencies, actually.", "Bob"),
        turn("Cool, see you", "Ann"),
        turn("Bye", "Bob"),
    ]
    spread_only = ContextConfig(speaker_boost=0, passage_weight=0)
    scores = relevance_scores(packets, "What did B research?", config=spread_only)
    assert scores[1] == 1.0
    assert scores[2] == pytest.approx(0.7)
    assert scores[3] == pytest.approx(0.35)
    assert scores[0] == pytest.approx(0.7)
    assert scores[4] == 0.0
    flat = relevance_scores(
        packets, "What did B research?", config=ContextConfig(neighbor_window=0, speaker_boost=0)
    )
    assert flat == [0.0, 1.0, 0.0, 0.0, 0.0]


def test_a_turn_is_scored_with_its_passage_within_its_session() -> None:
    """Query terms split over a question and its answer lift the answer, not a later echo."""
    lines = [
        ("I moved last spring, it was a big step.", "Ann", 1),
        ("Oh, from where?", "Bob", 1),
        ("From Sweden, my home country.", "Ann", 1),
        ("Sweden is lovely.", "Bob", 2),
        ("I agree.", "Ann", 2),
    ]
    packets = [
        ContextPacket(f"{who}: {text}", type="message", metadata={"thread": "t", "session": n})
        for text, who, n in lines
    ]
    query = "Who moved here from Sweden?"
    alone = ContextConfig(neighbor_weight=0, speaker_boost=0, segment_weight=0, passage_weight=0)
    with_passage = dataclasses.replace(alone, passage_weight=1.0)
    before = relevance_scores(packets, query, config=alone)
    after = relevance_scores(packets, query, config=with_passage)
    assert before[3] >= before[2]  # the short echo wins on its own words
    assert after[2] > after[3]  # "moved" two turns back is in the answer's passage only
    assert after[4] > 0.0 == before[4]  # the echo's passage lifts its session neighbour
    unsplit = dataclasses.replace(with_passage, neighbor_window=0)
    assert relevance_scores(packets, query, config=unsplit) == before


def test_named_speaker_is_boosted() -> None:
    """Turns by a speaker named in the query outrank equal turns by others."""
    packets = [turn("I love hiking", "Ann"), turn("I love hiking", "Bob")]
    config = ContextConfig(neighbor_window=0, speaker_boost=0.0)
    plain = relevance_scores(packets, "Does Bob love hiking?", config=config)
    boosted = relevance_scores(
        packets, "Does Bob love hiking?", config=ContextConfig(neighbor_window=0, speaker_boost=0.5)
    )
    assert boosted[1] == plain[1] == 1.0
    assert boosted[0] == pytest.approx(plain[0] / 1.5)


def test_cjk_query_selects_matching_packet() -> None:
    """A Japanese query picks the Japanese packet that answers it."""
    packets = [
        ContextPacket("会議は明日の十時です", source="a"),
        ContextPacket("昼ご飯はカレーでした", source="b"),
    ]
    chosen = select_packets(
        packets, "会議はいつですか", max_selected_tokens=1, token_counter=lambda s: 1
    )
    assert [p.source for p in chosen.packets] == ["a"]


def test_pinned_first_then_score_and_drop_reasons() -> None:
    """Pinned packets are kept first; others by score; drops carry reasons."""
    packets = [
        ContextPacket("unrelated chatter here", source="u"),
        ContextPacket("the deploy failed on friday", source="d"),
        ContextPacket("the deploy failed on friday", source="dup"),
        ContextPacket("Never deploy on weekends", type="constraint", pinned=True, source="c"),
        ContextPacket("zzz", source="low", relevance=0.05),
    ]
    config = ContextConfig(min_relevance=0.1, recency_weight=0.0, relevance_weight=1.0)
    chosen = select_packets(
        packets,
        "why did the deploy fail",
        max_selected_tokens=30,
        config=config,
        token_counter=lambda s: 10,
    )
    assert [p.source for p in chosen.packets] == ["dup", "c"]  # the newer copy wins a tie
    assert {d.packet.source: d.reason for d in chosen.dropped} == {
        "u": "below_min_relevance",
        "d": "duplicate",
        "low": "below_min_relevance",
    }
    assert chosen.tokens == 20


def test_near_duplicates_removed_by_threshold() -> None:
    """Texts with the same terms in another order are near-duplicates at 0.9."""
    packets = [ContextPacket("alpha beta gamma delta"), ContextPacket("delta gamma beta alpha!")]
    kept = select_packets(packets, "alpha", max_selected_tokens=100, token_counter=len)
    assert len(kept.packets) == 1
    assert Counter(d.reason for d in kept.dropped) == {"duplicate": 1}


def test_recency_breaks_ties_between_irrelevant_packets() -> None:
    """With no matching text, the newest packets are kept (a sliding window)."""
    packets = [ContextPacket(f"turn {i}", source=str(i)) for i in range(5)]
    kept = select_packets(packets, "zebra", max_selected_tokens=2, token_counter=lambda s: 1)
    assert [p.source for p in kept.packets] == ["3", "4"]


def test_select_rejects_negative_budget() -> None:
    """A negative budget is a programmer error."""
    with pytest.raises(ValueError, match="max_selected_tokens must be >= 0, got -1"):
        select_packets([], "q", max_selected_tokens=-1)


class KeywordEmbeddings(Embeddings):
    """Two-dimensional embeddings: does the text mention animals or vehicles?"""

    def _vec(self, text: str) -> list[float]:
        lowered = text.lower()
        return [float(any(w in lowered for w in ("dog", "pet", "puppy"))), float("car" in lowered)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


async def test_hybrid_embeddings_find_paraphrases_sync_and_async() -> None:
    """Embeddings surface a paraphrase BM25 cannot match, in both twins."""
    packets = [
        ContextPacket("We got a puppy", source="p"),
        ContextPacket("My car broke", source="c"),
    ]
    plain = select_packets(
        packets, "tell me about the pet", max_selected_tokens=1, token_counter=lambda s: 1
    )
    hybrid = select_packets(
        packets,
        "tell me about the pet",
        max_selected_tokens=1,
        token_counter=lambda s: 1,
        embeddings=KeywordEmbeddings(),
    )
    ahybrid = await aselect_packets(
        packets,
        "tell me about the pet",
        max_selected_tokens=1,
        token_counter=lambda s: 1,
        embeddings=KeywordEmbeddings(),
    )
    assert [p.source for p in plain.packets] == ["c"]  # no term overlap: recency decides
    assert [p.source for p in hybrid.packets] == ["p"]
    assert [p.source for p in ahybrid.packets] == ["p"]


def session_turn(text: str, session: int, speaker: str = "A") -> ContextPacket:
    """A turn of a numbered chat session."""
    return ContextPacket(
        f"{speaker}: {text}",
        type="message",
        source=f"{session}:{text}",
        metadata={"speaker": speaker, "thread": "t", "session": session},
    )


def test_segment_of_a_strong_match_lifts_its_other_packets() -> None:
    """Of two equally weak matches, the one in the strong match's session ranks first."""
    packets = [
        session_turn("the garden grows tomatoes", 1),
        session_turn("we talked about the garden and roses for the garden", 2),
        session_turn("the garden grows tomatoes", 2),
    ]
    config = ContextConfig(neighbor_window=0, duplicate_threshold=1.0)
    scores = relevance_scores(packets, "garden roses", config=config)
    assert scores[1] == 1.0
    assert scores[2] > scores[0] > 0.0
    flat = relevance_scores(
        packets, "garden roses", config=ContextConfig(neighbor_window=0, segment_weight=0.0)
    )
    assert flat[2] == pytest.approx(flat[0])


def test_segment_boost_needs_two_segments_and_respects_the_key() -> None:
    """One segment, or packets without the key, leave relevance exactly as without it."""
    one_session = [session_turn("red apples", 1), session_turn("green pears", 1)]
    off = ContextConfig(segment_weight=0.0)
    assert relevance_scores(one_session, "apples") == relevance_scores(
        one_session, "apples", config=off
    )
    # Passages follow the segment key too; this test is about the boost alone.
    other_key = ContextConfig(segment_key="document", passage_weight=0.0)
    two_sessions = [session_turn("red apples", 1), session_turn("green pears", 2)]
    assert relevance_scores(two_sessions, "apples", config=other_key) == relevance_scores(
        two_sessions, "apples", config=dataclasses.replace(off, passage_weight=0.0)
    )


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Nate cook?", "What did they cook?"),
        ("Which pet does nate's sister own?", "Which pet does their sister own?"),
        ("Did Ann Lee meet Ann?", "Did they meet they?"),
        ("Is Natalie here?", "Is Natalie here?"),  # a longer word is not the name
        ("What about the user?", "What about the user?"),  # unknown speakers untouched
    ],
)
def test_semantic_query_masks_known_speakers(query: str, expected: str) -> None:
    """Names of the packets' speakers, and their possessives, become they/their."""
    packets = [turn("hi", "Nate"), turn("hello", "Ann Lee"), turn("hey", "Ann")]
    assert semantic_query(query, packets) == expected


class RecordingEmbeddings(KeywordEmbeddings):
    """Keyword embeddings that remember the queries they embedded."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return super().embed_query(text)


async def test_embeddings_see_the_query_without_speaker_names() -> None:
    """Sync and async selection embed the masked query, BM25 still sees the names."""
    packets = [turn("We got a puppy", "Nate"), turn("My car broke", "Joanna")]
    embeddings = RecordingEmbeddings()
    select_packets(
        packets,
        "Which pet did Nate get?",
        max_selected_tokens=1,
        token_counter=len,
        embeddings=embeddings,
    )
    await aselect_packets(
        packets,
        "Which pet did Nate get?",
        max_selected_tokens=1,
        token_counter=len,
        embeddings=embeddings,
    )
    assert embeddings.queries == ["Which pet did they get?"] * 2


packet_strategy = st.builds(
    ContextPacket,
    st.text(alphabet="abc xyz数据", max_size=30),
    type=st.sampled_from(["message", "note", "retrieved", "constraint"]),
    pinned=st.booleans(),
    relevance=st.none() | st.floats(0, 1),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(packet_strategy, max_size=25),
    st.integers(0, 200),
    st.text(alphabet="abc xyz数", max_size=10),
)
def test_selection_never_exceeds_budget_and_keeps_fitting_pinned(
    packets: list[ContextPacket], budget: int, query: str
) -> None:
    """Selected tokens never exceed the budget; pinned packets are kept while they fit."""
    chosen = select_packets(packets, query, max_selected_tokens=budget, token_counter=len)
    assert chosen.tokens == sum(len(p.content) for p in chosen.packets) <= budget
    assert len(chosen.packets) + len(chosen.dropped) == len(packets)
    room = budget
    for packet in packets:
        if packet.pinned and len(packet.content) <= room:
            assert packet.with_token_count(len) in chosen.packets
            room -= len(packet.content)


def test_pack_packets_uses_costs_and_checks_lengths() -> None:
    """Explicit costs override token counts; mismatched lengths are rejected."""
    from langgraph_context.context import pack_packets

    packets = [ContextPacket("a", token_count=1), ContextPacket("b", token_count=1)]
    chosen = pack_packets(packets, [1.0, 0.5], max_selected_tokens=5, costs=[5, 5])
    assert [p.content for p in chosen.packets] == ["a"]
    assert chosen.tokens == 5
    with pytest.raises(ValueError, match="one value per packet"):
        pack_packets(packets, [1.0], max_selected_tokens=5)


term_sets = st.frozensets(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), min_size=1, max_size=12)
wide_sets = st.frozensets(st.text("abcdefghij", min_size=1, max_size=2), min_size=1, max_size=40)


@settings(max_examples=400)
@example(  # 0.28 * 25 rounds up past 7: the old size shortcut missed this pair
    sets=[frozenset(f"x{i}" for i in range(25)), frozenset(f"x{i}" for i in range(7))],
    threshold=0.28,
    max_bits=4096,
)
@given(
    sets=st.one_of(st.lists(term_sets, min_size=1, max_size=12), st.lists(wide_sets, min_size=1)),
    threshold=st.one_of(
        st.sampled_from([0.01, 0.5, 0.75, 0.9, 0.95, 1.0]),
        st.floats(min_value=0.001, max_value=1.0),
    ),
    max_bits=st.sampled_from([4096, 30, 5]),
)
def test_near_duplicate_check_matches_plain_jaccard(
    sets: list[frozenset[str]], threshold: float, max_bits: int
) -> None:
    """The pack's duplicate test is exactly: seen before, or Jaccard >= threshold with a
    kept set, for each set in turn; by masks, by sets past the mask bound, or both."""
    kept_terms = _KeptTerms(threshold)
    kept: list[frozenset[str]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(select, "_MAX_MASK_BITS", max_bits)
        for terms in sets:
            duplicate = terms in kept or (
                threshold < 1.0 and any(len(terms & o) / len(terms | o) >= threshold for o in kept)
            )
            assert kept_terms.keep(terms) == (not duplicate)
            if not duplicate:
                kept.append(terms)
