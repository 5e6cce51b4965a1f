"""Default note ranking: a small tokenizer and BM25+ scores from `rank-bm25`.

This is the single seam through which notes are ranked; swapping in another scorer
means passing a different `(query, texts) -> scores` function.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Sequence

import numpy as np
from rank_bm25 import BM25Plus

__all__ = ["bm25_scores", "tokenize"]

# Runs of letters/digits (any script that uses spaces), or single CJK characters.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+", re.UNICODE)
_CJK_CHAR = re.compile(rf"^[{_CJK}]$")

_cache_lock = threading.Lock()
_cache: dict[int, tuple[tuple[str, ...], BM25Plus, dict[str, np.ndarray]]] = {}
_CACHE_SIZE = 4


def tokenize(text: str) -> list[str]:
    """Split text into lower-case search terms.

    Words are runs of letters and digits; CJK text, which has no spaces, becomes its
    single characters plus adjacent-character bigrams so that `上下文` matches `下文`.

    Args:
        text: Any text.

    Returns:
        The terms, in order.

    Example:
        >>> tokenize("Fix the DB-pool 上下文")
        ['fix', 'the', 'db', 'pool', '上', '下', '文', '上下', '下文']
    """
    words = _TOKEN.findall(text.lower().replace("_", " "))
    terms = [w for w in words if w]
    bigrams = [
        a + b for a, b in itertools.pairwise(terms) if _CJK_CHAR.match(a) and _CJK_CHAR.match(b)
    ]
    return terms + bigrams


def _model(documents: Sequence[str]) -> tuple[BM25Plus, dict[str, np.ndarray]]:
    key = hash(tuple(documents))
    docs = tuple(documents)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == docs:
            return hit[1], hit[2]
    tokens = [tokenize(d) for d in docs]
    model = BM25Plus(tokens)
    lists: dict[str, list[int]] = {}
    for index, terms in enumerate(tokens):
        for term in set(terms):
            lists.setdefault(term, []).append(index)
    postings = {term: np.asarray(ids, dtype=np.intp) for term, ids in lists.items()}
    with _cache_lock:
        if len(_cache) >= _CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[key] = (docs, model, postings)
    return model, postings


def bm25_scores(query: str, documents: Sequence[str]) -> list[float]:
    """Score `documents` against `query` with BM25+; documents sharing no term score 0.

    The fitted model is cached for the last few corpora, so repeated searches over an
    unchanged note set only pay for scoring.

    Args:
        query: The search text.
        documents: Candidate texts.

    Returns:
        One non-negative score per document.

    Example:
        >>> bm25_scores("pool timeout", ["db pool timeout", "ui colours", "pool"])[1]
        0.0
    """
    terms = list(dict.fromkeys(tokenize(query)))
    if not documents or not terms:
        return [0.0] * len(documents)
    model, postings = _model(documents)
    if not postings:
        return [0.0] * len(documents)
    matched = np.zeros(len(documents), dtype=bool)
    for term in terms:
        if term in postings:
            matched[postings[term]] = True
    raw = np.asarray(model.get_scores(terms), dtype=float)
    return np.where(matched, raw, 0.0).tolist()  # type: ignore[no-any-return]
