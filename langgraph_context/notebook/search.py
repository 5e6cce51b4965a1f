"""Default note ranking: the package's BM25 scorer (`langgraph_context.scoring`).

This is the single seam through which notes are ranked; swapping in another scorer
means passing a different `(query, texts) -> scores` function to the store.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["bm25_scores"]


def bm25_scores(query: str, documents: Sequence[str]) -> list[float]:
    """Score `documents` against `query` with the context module's BM25; 0 means no match.

    Args:
        query: The search text.
        documents: The texts to rank.

    Returns:
        One non-negative score per document, in order.

    Example:
        >>> scores = bm25_scores("flaky test", ["the test is flaky", "release notes"])
        >>> scores[0] > scores[1] == 0.0
        True
    """
    # Imported here: the tools package is imported by the context package (plan
    # rendering), so a module-level import would make the two packages circular.
    from langgraph_context.scoring import score_texts  # noqa: PLC0415

    return score_texts(query, documents)
