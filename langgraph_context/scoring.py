"""Text relevance: a CJK-aware tokenizer and a BM25 scorer that ranks texts for a query.

The tokenizer turns any text into index terms:

* Latin-script words are lower-cased, NFKC-normalised, stripped of English stop words
  and reduced to their Snowball stem, so "painted", "painting" and "paints" match;
* runs of Chinese, Japanese or Korean characters (which have no spaces) become their
  single characters plus overlapping character bigrams, so a CJK query matches CJK
  text without a dictionary-based segmenter;
* digits stay as they are ("2023" matches "2023").

BM25 is computed here rather than with `rank-bm25` or `bm25s`, for two measured reasons.
`rank-bm25`'s Okapi IDF, `log((N - n + 0.5) / (n + 0.5))`, is zero for a term found in
half the texts and negative (floored at a small epsilon) above that, so on the small
candidate sets a context build often sees (two notes, five retrieved chunks) a real
match scores 0; its BM25+ variant instead credits texts that lack the term. We use the
Lucene IDF, `log(1 + (N - n + 0.5) / (n + 0.5))`, positive for every present term. And
a build indexes a fresh candidate set once per query: counting only the query's terms
scores 1,000 chat turns in about 1 ms once tokenized, where `rank-bm25` took 8 ms and
`bm25s` 23 ms to index the full vocabulary first.

Everything here is pure and dependency-light so other parts of the package (note
search, memory) can reuse it.
"""

from __future__ import annotations

import itertools
import math
import re
import string
import unicodedata
from collections.abc import Sequence

import Stemmer  # type: ignore[import-not-found]

from langgraph_context._memo import SizedMemo
from langgraph_context.errors import InvalidArgumentError

__all__ = [
    "rank_texts",
    "score_passages",
    "score_texts",
    "tokenize",
]

BM25_K1 = 1.2
BM25_B = 0.75

# Function words that carry no topical signal in questions or chat turns. Kept short on
# purpose: BM25's IDF already discounts frequent words, this list only removes the
# ones that would otherwise add noise to short texts.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his
    how i if in into is it its itself just me more most my myself no nor not of off on
    once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through
    to too under until up very was we were what when where which while who whom why
    will with would you your yours yourself yourselves s t d ll m re ve don didn doesn
    isn wasn aren weren hasn haven hadn won wouldn shouldn couldn hey hi oh yeah wow
    """.split()  # noqa: SIM905 - a word list reads better as text
)

_CJK = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
)
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
# `_TOKEN_RE` on ASCII text as a table for `str.translate`: capitals to lower case, every
# other character but a letter or digit to a space, so `split` gives the words (faster
# than a regular expression's `findall`).
_NOT_ALNUM = "".join(c for c in map(chr, range(128)) if not c.isalnum())
_ASCII_WORDS = str.maketrans(
    string.ascii_uppercase + _NOT_ALNUM, string.ascii_lowercase + " " * len(_NOT_ALNUM)
)
_CJK_RUN_RE = re.compile(rf"[{_CJK}]")
# PyStemmer: Snowball's English stemmer in C, ~20x faster than the pure-Python
# `snowballstemmer` (same stems: tests/test_context_scoring.py compares the two). Its
# own word cache is off: `_WORDS` below is the one cache, bounded and documented.
_STEMMER = Stemmer.Stemmer("english")
_STEMMER.maxCacheSize = 0

# Term of each English word seen lately (stop words map to ""): a dict lookup instead
# of a stemmer call per word. Holds words only (no texts, no ids): at most
# `_MAX_WORDS` entries, about 1.5 MB; when full it starts again from the stop words.
_MAX_WORDS = 8_192
_STOPS = dict.fromkeys(STOP_WORDS, "")
_WORDS = {"terms": dict(_STOPS)}


def _new_term(word: str) -> str:
    """The term of a word not in `_WORDS` (remembered if it is an English word)."""
    if not (word.isascii() and word.isalpha()):
        return word  # digits, ids and non-Latin words are terms as they are
    return _remember([word])[word]


def _remember(words: list[str]) -> dict[str, str]:
    """The stems of new English words (ASCII letters only), added to `_WORDS`.

    A batch that would overflow the cache starts a new one holding as many of its
    words as fit (which ones: set order); the stems returned are all of them.
    """
    stems = dict(zip(words, _STEMMER.stemWords(words), strict=True))
    known = _WORDS["terms"]
    if len(known) + len(stems) > _MAX_WORDS:
        known = _WORDS["terms"] = dict(_STOPS)  # a new dict: readers keep a whole one
        room = _MAX_WORDS - len(known)
        known.update(itertools.islice(stems.items(), room))  # a batch over the bound: a part
    else:
        known.update(stems)
    return stems


def _cjk_terms(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return list(run) + [run[i : i + 2] for i in range(len(run) - 1)]


# Terms of every text scored lately: a context build re-scores the same packets on
# every turn. Keyed by the text's hash and length (the text itself is not kept),
# weighed in bytes (the entry and its tuple of terms), at most `_TERMS_MEMO_BYTES`
# (2 MB: about 3,700 texts of 30 terms), least recently used out first.
_TERMS_MEMO_BYTES = 2_000_000
_TERMS: SizedMemo[tuple[int, int], tuple[str, ...]] = SizedMemo(_TERMS_MEMO_BYTES)


def _tokenize_cached(text: str) -> tuple[str, ...]:
    key = (hash(text), len(text))
    terms = _TERMS.get(key)
    return _tokenize_kept(text, key) if terms is None else terms


# Joins the ASCII texts a build has not seen, for one `translate` and one `split` over
# all of them; it becomes a word of its own, which ends each text's words. A text that
# holds it is tokenized alone.
_SEPARATOR = "\x00"
# One character for one (the table of `str.translate`'s fast path): the joint carries
# the spaces around the separator, which the table keeps.
_ASCII_BATCH = {**_ASCII_WORDS, ord(_SEPARATOR): ord(_SEPARATOR)}
_JOINT = f" {_SEPARATOR} "


def _tokenize_all(texts: Sequence[str]) -> list[tuple[str, ...]]:
    """`_tokenize_cached` of each text, the ASCII texts the memo lacks tokenized together.

    The same terms as one text at a time (`_tokenize_uncached`), with the Python work
    per text cut to a slice: a cold build tokenizes a thousand new texts.
    """
    keys = [(hash(text), len(text)) for text in texts]
    found: list[tuple[str, ...] | None] = list(map(_TERMS.get, keys))
    batch = [
        i
        for i, terms in enumerate(found)
        if terms is None and texts[i].isascii() and _SEPARATOR not in texts[i]
    ]
    if len(batch) > 1:
        joined = _JOINT.join([texts[i] for i in batch]).translate(_ASCII_BATCH)
        words = joined.split()
        words.append(_SEPARATOR)  # the last text's end
        # Each distinct word the word cache lacks is settled once (a set difference in
        # C): the new English words are stemmed in one call and join a copy of the
        # cache; any other (a word with a digit: an id, a number) is its own term, the
        # lookup's default (the cache keeps no ids).
        known = _WORDS["terms"]
        missing = set(words).difference(known)
        english = [w for w in missing if w.isalpha()]
        # `known` itself: remembering may start a new cache (full), which lacks the
        # words this batch found known
        lookup = {**known, **_remember(english)}
        terms = list(map(lookup.get, words, words))  # the separator: itself, not kept
        start = 0
        made: list[tuple[tuple[int, int], tuple[str, ...], int]] = []
        for i in batch:
            end = words.index(_SEPARATOR, start)
            found[i] = text_terms = tuple(filter(None, terms[start:end]))
            made.append((keys[i], text_terms, _terms_size(text_terms)))
            start = end + 1
        _TERMS.put_many(made)
    return [
        _tokenize_kept(texts[i], keys[i]) if terms_of is None else terms_of
        for i, terms_of in enumerate(found)
    ]


def _tokenize_kept(text: str, key: tuple[int, int]) -> tuple[str, ...]:
    """`_tokenize_uncached(text)`, kept in the memo under `key`."""
    terms = _tokenize_uncached(text)
    _TERMS.put(key, terms, size=_terms_size(terms))
    return terms


def _terms_size(terms: tuple[str, ...]) -> int:
    """The memo weight of a text's terms: the entry, and the tuple's slots."""
    return 300 + 8 * len(terms)


def _tokenize_uncached(text: str) -> tuple[str, ...]:
    if text.isascii():  # NFKC leaves ASCII as it is, and no CJK is possible
        words = text.translate(_ASCII_WORDS).split()
        known = _WORDS["terms"]
        terms: list[str | None] = list(map(known.get, words))
        # Only the unknown words are visited (`index` runs in C): a word with a digit
        # (an id, a number) is its own term, a new English word is stemmed.
        at = -1
        for _ in range(terms.count(None)):
            at = terms.index(None, at + 1)
            terms[at] = _new_term(words[at])
        return tuple(filter(None, terms))
    normalized = unicodedata.normalize("NFKC", text).lower()
    found: list[str] = []
    for match in _TOKEN_RE.finditer(normalized):
        word = match.group()
        if _CJK_RUN_RE.match(word):
            found.extend(_cjk_terms(word))
        else:
            term = _WORDS["terms"].get(word)
            term = _new_term(word) if term is None else term
            if term:
                found.append(term)
    return tuple(found)


def tokenize(text: str) -> list[str]:
    """Split `text` into index terms for relevance scoring.

    Args:
        text: Any text, in any script.

    Returns:
        The terms, in order: stemmed Latin words without stop words, digits as they
        are, and CJK characters plus their bigrams.

    Example:
        >>> tokenize("She painted two sunrises in 2022")
        ['paint', 'two', 'sunris', '2022']
        >>> tokenize("数据分析")
        ['数', '据', '分', '析', '数据', '据分', '分析']
    """
    return list(_tokenize_cached(text))


def _query_counts(
    query: str, texts: Sequence[str]
) -> tuple[list[dict[str, int]], list[int]] | None:
    """Each text's counts of the query's terms, and its length in terms (`None`: no terms)."""
    wanted = set(_tokenize_cached(query))
    if not wanted:
        return None
    counts: list[dict[str, int]] = []
    docs = _tokenize_all(texts)
    is_wanted = wanted.__contains__
    for doc in docs:
        # `filter` walks the terms in C and hands over only the query's; the counts
        # are keyed in text order, so score sums are added in the same order whatever
        # the string hash seed
        found: dict[str, int] = {}
        for term in filter(is_wanted, doc):
            found[term] = found.get(term, 0) + 1
        counts.append(found)
    return counts, list(map(len, docs))


def _bm25(counts: list[dict[str, int]], lengths: list[int], k1: float, b: float) -> list[float]:
    """BM25 of documents given their query-term counts and lengths (Lucene IDF)."""
    n = len(counts)
    document_frequency: dict[str, int] = {}
    for found in counts:
        for term in found:
            document_frequency[term] = document_frequency.get(term, 0) + 1
    idf = {
        term: math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for term, df in document_frequency.items()
    }
    average = (sum(lengths) / n) or 1.0
    scores: list[float] = []
    for found, length in zip(counts, lengths, strict=True):
        if not found:
            scores.append(0.0)
            continue
        norm = k1 * (1.0 - b + b * length / average)
        scores.append(float(sum(idf[t] * tf * (k1 + 1.0) / (tf + norm) for t, tf in found.items())))
    return scores


def score_texts(
    query: str,
    texts: Sequence[str],
    *,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> list[float]:
    """Score every text against `query` with BM25 over `tokenize` terms.

    Scores are raw BM25 values (0 when no query term occurs, otherwise positive and
    unbounded); compare them within one call only.

    Args:
        query: What the texts should be relevant to.
        texts: The candidate texts.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.

    Returns:
        One score per text, in the order of `texts`.

    Example:
        >>> scores = score_texts("charity race", ["I ran a charity race", "Nice day"])
        >>> scores[0] > scores[1] == 0.0
        True
    """
    if not texts:
        return []
    counted = _query_counts(query, texts)
    if counted is None:
        return [0.0] * len(texts)
    return _bm25(*counted, k1, b)


def score_passages(
    query: str,
    texts: Sequence[str],
    passages: Sequence[Sequence[int]],
    *,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> tuple[list[float], list[float]]:
    """Score each text and each passage (a group of texts read as one document) with BM25.

    A chat turn's answer is often split over the turn and its neighbours (a
    question, then its answer): scoring the turn with its neighbours as one passage
    credits query terms found on either side. Each text is tokenized and counted
    once; a passage's term counts and length are the sums over its texts, and IDF and
    the average length are taken over the passages.

    Args:
        query: What the texts should be relevant to.
        texts: The texts.
        passages: For each passage, the indices of its texts.
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.

    Returns:
        `(text scores, passage scores)`: `score_texts` of the texts, and one score per
        passage in the order of `passages`.

    Raises:
        ValueError: If a passage names an index outside `texts`.

    Example:
        >>> texts = ["Where did you go?", "To Paris, by train", "Nice"]
        >>> _, scores = score_passages("go to Paris", texts, [(0, 1), (1, 2), (2,)])
        >>> scores[0] > scores[1] > scores[2] == 0.0
        True
    """
    if any(i < 0 or i >= len(texts) for group in passages for i in group):
        msg = "passages must hold indices into texts"
        raise InvalidArgumentError(msg)
    counted = _query_counts(query, texts) if texts else None
    if counted is None:
        return [0.0] * len(texts), [0.0] * len(passages)
    counts, lengths = counted
    own = _bm25(counts, lengths, k1, b)
    if len(passages) == len(texts) and all(
        len(group) == 1 and group[0] == i for i, group in enumerate(passages)
    ):
        # Each text is its own passage (no thread neighbours): the same sums, same scores.
        return own, list(own)
    merged_counts: list[dict[str, int]] = []
    merged_lengths: list[int] = []
    for group in passages:
        merged: dict[str, int] = {}
        length = 0
        for i in group:
            length += lengths[i]
            if counts[i]:  # most texts hold no query term
                for term, tf in counts[i].items():
                    merged[term] = merged.get(term, 0) + tf
        merged_counts.append(merged)
        merged_lengths.append(length)
    passage_scores = _bm25(merged_counts, merged_lengths, k1, b) if passages else []
    return own, passage_scores


def rank_texts(
    query: str,
    texts: Sequence[str],
    *,
    limit: int | None = None,
) -> list[tuple[int, float]]:
    """Rank texts by BM25 relevance to `query`, best first, omitting non-matches.

    Args:
        query: What the texts should be relevant to.
        texts: The candidate texts.
        limit: Keep at most this many results (all when `None`).

    Returns:
        `(index into texts, score)` pairs with a positive score, best first; ties
        keep the order of `texts`.

    Raises:
        ValueError: If `limit` is negative.

    Example:
        >>> [i for i, _ in rank_texts("camping trip", ["lunch", "a camping trip", "a trip"])]
        [1, 2]
    """
    if limit is not None and limit < 0:
        msg = f"limit must be >= 0 or None, got {limit}"
        raise InvalidArgumentError(msg)
    scores = score_texts(query, texts)
    ranked = sorted(
        ((i, s) for i, s in enumerate(scores) if s > 0.0), key=lambda item: (-item[1], item[0])
    )
    return ranked if limit is None else ranked[:limit]
