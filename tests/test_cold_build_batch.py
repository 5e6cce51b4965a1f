"""A cold build's batch tokenizing and its limited word count equal the plain ones.

`scoring._tokenize_all` tokenizes the ASCII texts the memo lacks in one `translate`
and one `split`; `_sizing.words_over` counts words only as far as the room asks. Both
must answer exactly as the one-text-at-a-time code they replace in a cold build.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from snowballstemmer.english_stemmer import EnglishStemmer  # type: ignore[import-untyped]

from langgraph_context import ContextPacket, scoring
from langgraph_context._memo import SizedMemo
from langgraph_context.context import ContextBuilder, ContextConfig, _sizing, relevance
from langgraph_context.context._sizing import (
    LazyFloors,
    all_words_hold,
    cost_floor,
    words_floor,
    words_over,
)
from langgraph_context.context.select import pack_packets

_WORDS = ["billing", "timeout", "the", "and", "reloaded", "x9", "42", "Ünïcode", "数据", "id=ff"]
_TEXT = st.lists(st.one_of(st.sampled_from(_WORDS), st.text(max_size=8)), max_size=12).map(" ".join)


@pytest.fixture(autouse=True)
def _fresh_caches() -> None:
    scoring._TERMS.clear()
    scoring._WORDS["terms"] = dict(scoring._STOPS)


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(_TEXT, max_size=12), seen=st.lists(_TEXT, max_size=3))
def test_batch_tokens_equal_one_text_at_a_time(texts: list[str], seen: list[str]) -> None:
    scoring._TERMS.clear()
    scoring._WORDS["terms"] = dict(scoring._STOPS)
    for text in seen:  # some texts (and words) known before the batch
        scoring._tokenize_cached(text)
    batch = scoring._tokenize_all(texts)
    scoring._TERMS.clear()
    scoring._WORDS["terms"] = dict(scoring._STOPS)
    assert batch == [scoring._tokenize_uncached(t) for t in texts]


def test_a_text_holding_the_separator_and_a_full_word_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The separator inside a text sends it the slow way; a word cache that fills up
    (and starts again) in the middle of a batch loses none of the batch's terms."""
    monkeypatch.setattr(scoring, "_MAX_WORDS", len(scoring._STOPS) + 3)
    texts = [
        "alpha beta gamma delta",
        "a\x00b painted sunrises",
        "epsilon zeta eta theta",
        "",
        "iota kappa 2022",
    ]
    batch = scoring._tokenize_all(texts)
    scoring._TERMS.clear()
    scoring._WORDS["terms"] = dict(scoring._STOPS)
    assert batch == [scoring._tokenize_uncached(t) for t in texts]
    assert batch[1] == ("b", "paint", "sunris")  # "a" is a stop word


_MARKS = ["<", "&", "%", "\\", "UnTrusted", "untrusted", "5E0C9A7D31B84F26", "\x1c", "\x1f"]
_FLOOR_TEXT = st.lists(
    st.one_of(st.text(max_size=12), st.sampled_from(_MARKS), st.sampled_from(_WORDS)), max_size=10
).map("".join)


@settings(max_examples=400, deadline=None)
@given(content=st.one_of(st.text(max_size=60), _FLOOR_TEXT), room=st.integers(-3, 40))
def test_words_over_is_the_words_floor_over_the_room(content: str, room: int) -> None:
    assert words_over(content, room) == (words_floor(content) > room)


def test_a_pack_over_plain_and_lazy_floors_is_the_same() -> None:
    texts = [f"log line {i} " + "word " * (i % 40) for i in range(120)]
    packets = [ContextPacket(t, type="retrieved", source=f"d{i}") for i, t in enumerate(texts)]
    relevance = [((i * 37) % 101) / 100 for i in range(len(texts))]
    costs = [cost_floor(t) + 6 for t in texts]
    plain = pack_packets(
        packets,
        relevance,
        max_selected_tokens=700,
        costs=costs,
        cost_floors=list(map(cost_floor, texts)),
    )
    lazy = pack_packets(
        packets, relevance, max_selected_tokens=700, costs=costs, cost_floors=LazyFloors(texts)
    )
    assert [s.index for s in plain.selected] == [s.index for s in lazy.selected]
    assert [(d.packet.source, d.reason) for d in plain.dropped] == [
        (d.packet.source, d.reason) for d in lazy.dropped
    ]


def test_a_cold_build_selects_what_a_warm_one_does() -> None:
    """Cold (batch tokenizing) and warm (memo) builds of new packets choose alike."""
    texts = [
        f"[svc-{i % 7}] billing upstream timeout retry {i} " + "queue " * (i % 9)
        for i in range(300)
    ]
    packets = [ContextPacket(t, type="retrieved", source=f"d{i}") for i, t in enumerate(texts)]
    builder = ContextBuilder(config=ContextConfig(max_tokens=800))
    cold = builder.build_result("why does billing time out", custom_packets=packets)
    warm = builder.build_result("why does billing time out", custom_packets=packets)
    assert [p.source for p in cold.selected] == [p.source for p in warm.selected]
    assert cold.text == warm.text


def test_words_known_before_a_full_cache_starts_again_stay_in_the_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stemming a new word may start a new word cache (full); the words the batch found
    known in the old one keep their terms (a review found them dropped)."""
    monkeypatch.setattr(scoring, "_MAX_WORDS", len(scoring._STOPS) + 4)
    for word in ("alpha", "beta", "gamma"):
        scoring._new_term(word)
    texts = ["alpha beta", "gamma zzzqnewone zzzqnewtwo"]
    batch = scoring._tokenize_all(texts)
    assert batch == [("alpha", "beta"), ("gamma", "zzzqnewon", "zzzqnewtwo")]


# Letters and endings that exercise the Snowball English rules (step 1a-5, exceptions).
_ENDINGS = ["ing", "ed", "ly", "ness", "ational", "izer", "fulness", "ies", "ss", "eed", "ement"]
_ENGLISH = st.builds(
    str.__add__,
    st.text(alphabet="abcdeilmnorstuyg", min_size=1, max_size=12),
    st.sampled_from(["", *_ENDINGS]),
)


@settings(max_examples=500, deadline=None)
@given(words=st.lists(_ENGLISH, min_size=1, max_size=20))
def test_the_c_stemmer_stems_as_snowballs_pure_python_one(words: list[str]) -> None:
    """PyStemmer (C) gives the stems the pure-Python `snowballstemmer` gave: the switch
    changes no term, so no score."""
    python = EnglishStemmer()
    assert scoring._STEMMER.stemWords(words) == [python.stemWord(w) for w in words]
    assert [scoring._new_term(w) for w in words] == [python.stemWord(w) for w in words]


def test_a_batch_of_new_words_larger_than_the_word_cache_keeps_it_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(scoring, "_MAX_WORDS", len(scoring._STOPS) + 5)
    words = [f"zq{'x' * i}ing" for i in range(1, 40)]
    stems = scoring._remember(words)
    assert list(stems) == words
    assert stems == {w: EnglishStemmer().stemWord(w) for w in words}
    assert len(scoring._WORDS["terms"]) <= scoring._MAX_WORDS
    assert scoring._tokenize_all([" ".join(words), "painted"])[0] == tuple(stems.values())


_OPS = st.lists(st.tuples(st.integers(0, 15), st.integers(1, 6)), max_size=30)


@given(before=_OPS, batch=_OPS, reads=st.lists(st.integers(0, 15), max_size=10))
def test_put_many_is_put_one_at_a_time(
    before: list[tuple[int, int]], batch: list[tuple[int, int]], reads: list[int]
) -> None:
    """Same entries, same order of recency, same total, whatever was there before."""
    one: SizedMemo[int, int] = SizedMemo(14)
    many: SizedMemo[int, int] = SizedMemo(14)
    for memo in (one, many):
        for key, size in before:
            memo.put(key, key, size=size)
        for key in reads:
            memo.get(key)
    for key, size in batch:
        one.put(key, -key, size=size)
    many.put_many((key, -key, size) for key, size in batch)
    assert list(one._data.items()) == list(many._data.items())
    assert one.size == many.size <= 14


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.one_of(st.text(max_size=30), _FLOOR_TEXT), max_size=8))
def test_all_words_hold_is_each_text_checked_alone(texts: list[str]) -> None:
    assert all_words_hold(texts) == all(_sizing._words_hold(t) for t in texts)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.one_of(st.text(max_size=30), _FLOOR_TEXT), min_size=1, max_size=8),
    rooms=st.lists(st.integers(-2, 12), min_size=1, max_size=8),
)
def test_lazy_floors_over_is_the_floor_over_the_room(texts: list[str], rooms: list[int]) -> None:
    """With a mark in some texts or none (the one-pass check's two answers)."""
    floors = LazyFloors(texts)
    for n, room in enumerate(rooms):
        i = n % len(texts)
        assert floors.over(i, room) == (cost_floor(texts[i]) > room)


@settings(max_examples=100, deadline=None)
@given(
    texts=st.lists(_TEXT, min_size=1, max_size=10),
    types=st.lists(st.sampled_from(["retrieved", "tool", "message", "note"]), min_size=10),
    query=_TEXT,
)
def test_relevance_skips_the_thread_passes_only_where_they_change_nothing(
    texts: list[str], types: list[str], query: str
) -> None:
    packets = [ContextPacket(t, type=types[i]) for i, t in enumerate(texts)]
    fast = relevance.relevance_scores(packets, query)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(relevance, "_loose", lambda packets: False)
        assert relevance.relevance_scores(packets, query) == fast
