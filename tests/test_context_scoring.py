"""Tests for the tokenizer and BM25 scorer in `context.scoring`."""

from __future__ import annotations

import doctest
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from snowballstemmer.english_stemmer import EnglishStemmer  # type: ignore[import-untyped]

from langgraph_context import scoring
from langgraph_context.scoring import (
    STOP_WORDS,
    rank_texts,
    score_passages,
    score_texts,
    tokenize,
)


def test_tokenize_stems_and_drops_stop_words() -> None:
    """Inflected forms share a stem and function words disappear."""
    assert tokenize("She painted the sunrise") == ["paint", "sunris"]
    assert tokenize("painting paints") == ["paint", "paint"]


def test_tokenize_splits_cjk_into_characters_and_bigrams() -> None:
    """A CJK run yields its characters and overlapping bigrams; a lone character itself."""
    assert tokenize("東京") == ["東", "京", "東京"]
    assert tokenize("猫") == ["猫"]


def test_tokenize_keeps_digits_and_mixed_scripts() -> None:
    """Digits stay as they are and Latin words inside CJK text are still found."""
    assert tokenize("2023年 Python学习") == ["2023", "年", "python", "学", "习", "学习"]


def test_score_texts_is_zero_without_shared_terms() -> None:
    """A text sharing no term with the query scores exactly 0."""
    scores = score_texts("adoption agency", ["We baked bread", "An adoption agency"])
    assert scores[0] == 0.0
    assert isinstance(scores[0], float)
    assert scores[1] > 0.0


def test_score_texts_positive_on_tiny_candidate_sets() -> None:
    """A term present in half of two texts still scores (Lucene IDF, not Okapi's)."""
    scores = score_texts("dog", ["I adopted a dog", "Nice weather"])
    assert scores[0] > 0.0
    assert scores[1] == 0.0


def test_score_texts_matches_chinese_query() -> None:
    """A Chinese query ranks the Chinese text that contains its words first."""
    texts = ["今天天气很好", "我们讨论了数据分析的方法", "The meeting is at noon"]
    ranked = rank_texts("数据分析", texts)
    assert [i for i, _ in ranked] == [1]


def test_score_texts_empty_inputs() -> None:
    """No texts gives no scores; a query of stop words scores everything 0."""
    assert score_texts("dog", []) == []
    assert score_texts("the of and", ["a dog", "a cat"]) == [0.0, 0.0]


def test_rank_texts_orders_and_limits() -> None:
    """Results come best first, omit non-matches and honour the limit."""
    texts = ["lunch", "camping trip in june", "a camping trip to the camping site"]
    assert [i for i, _ in rank_texts("camping", texts)] == [2, 1]
    assert len(rank_texts("camping", texts, limit=1)) == 1


def test_rank_texts_rejects_negative_limit() -> None:
    """A negative limit is a programmer error."""
    with pytest.raises(ValueError, match="limit must be >= 0"):
        rank_texts("x", ["x"], limit=-1)


def test_scoring_docstring_examples() -> None:
    """The module's docstring examples run as written."""
    assert doctest.testmod(scoring, optionflags=doctest.ELLIPSIS).failed == 0


def test_a_passage_scores_as_its_texts_joined_into_one() -> None:
    """Passage BM25 from per-text counts equals BM25 of the joined texts; texts score alone."""
    texts = ["Where did you move from?", "From Sweden, last year.", "Nice!", "Sweden again"]
    groups = [(0, 1), (1, 2), (2,), (0, 1, 2, 3)]
    own, passages = score_passages("moved from Sweden", texts, groups)
    joined = score_texts("moved from Sweden", [" ".join(texts[i] for i in g) for g in groups])
    assert passages == pytest.approx(joined)
    assert own == score_texts("moved from Sweden", texts)
    assert passages[0] > 0.0 == passages[2]
    with pytest.raises(ValueError, match="indices"):
        score_passages("x", texts, [(4,)])


@settings(max_examples=100)
@given(
    texts=st.lists(
        st.sampled_from(["from Sweden", "moved", "Nice!", "sweden moves", ""]), max_size=6
    )
)
def test_texts_that_are_their_own_passages_score_the_same_as_passages(texts: list[str]) -> None:
    """With every text its own passage, passage scores are exactly the texts' scores."""
    own, passages = score_passages("moved from Sweden", texts, [[i] for i in range(len(texts))])
    assert own == passages == score_texts("moved from Sweden", texts)


ascii_words = st.sampled_from(
    ["The", "painted", "PAINTING", "sunrises", "2022", "id=8b65fb", "x_y", "don't", "a-b", "\x1c"]
)


@settings(max_examples=200)
@given(
    text=st.one_of(
        st.text(alphabet=st.characters(max_codepoint=127), max_size=40),
        st.lists(ascii_words, max_size=8).map(" ".join),
    )
)
def test_ascii_text_tokenizes_to_its_stemmed_words(text: str) -> None:
    """ASCII text: lower-cased letter-digit runs, stop words dropped, letter-only words stemmed."""
    stemmer = EnglishStemmer()  # Snowball's pure-Python stemmer, the one we used before PyStemmer
    words = re.findall(r"[a-z0-9]+", text.lower())
    terms = [w if not w.isalpha() else stemmer.stemWord(w) for w in words if w not in STOP_WORDS]
    assert tokenize(text) == [t for t in terms if t]


def _reference_bm25(query: str, texts: list[str]) -> list[float]:
    """BM25 (Lucene IDF) written out term by term, in text order, over `tokenize`."""
    wanted = set(tokenize(query))
    docs = [tokenize(t) for t in texts]
    counts = []
    for doc in docs:
        found: dict[str, int] = {}
        for term in doc:
            if term in wanted:
                found[term] = found.get(term, 0) + 1
        counts.append(found)
    n = len(docs)
    df: dict[str, int] = {}
    for found in counts:
        for term in found:
            df[term] = df.get(term, 0) + 1
    idf = {t: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    average = (sum(len(d) for d in docs) / n) or 1.0
    k1, b = scoring.BM25_K1, scoring.BM25_B
    scores = []
    for found, doc in zip(counts, docs, strict=True):
        norm = k1 * (1.0 - b + b * len(doc) / average)
        scores.append(sum(idf[t] * tf * (k1 + 1.0) / (tf + norm) for t, tf in found.items()))
    return [float(s) for s in scores]


_WORDS = st.sampled_from(["river", "rivers", "boat", "the", "42", "数据", "Zoë", "x-ray", "boat."])
_TEXT = st.lists(_WORDS, max_size=25).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(query=_TEXT, texts=st.lists(_TEXT, min_size=1, max_size=12))
def test_score_texts_equals_term_by_term_bm25(query: str, texts: list[str]) -> None:
    """Generated queries and texts: the fast count gives the written-out BM25, bit for bit."""
    expected = _reference_bm25(query, texts) if tokenize(query) else [0.0] * len(texts)
    assert score_texts(query, texts) == expected
