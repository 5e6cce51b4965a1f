"""The rerank measurement of benchmarks/locomo, on a tiny conversation and toy embeddings."""

from __future__ import annotations

import math

from langchain_core.embeddings import Embeddings

from benchmarks.locomo.data import Conversation, Question
from benchmarks.locomo.rerank import hook_figures, minilm_reranker, two_stage_figures
from langgraph_context.context import ContextPacket

WORDS = ("dog", "race", "paint", "cake")


class WordEmbeddings(Embeddings):
    """Unit vectors counting four words: a stand-in with a known similarity."""

    def _vector(self, text: str) -> list[float]:
        counts = [float(text.lower().count(w)) + 0.01 for w in WORDS]
        norm = math.sqrt(sum(c * c for c in counts))
        return [c / norm for c in counts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def _conversation() -> Conversation:
    lines = ["I ran a race", "My dog barked", "I paint at night", "I baked a cake"] * 3
    turns = tuple(
        ContextPacket(
            f"Ann: {text} {i}",
            type="message",
            source=f"D1:{i}",
            token_count=8,
            metadata={"speaker": "Ann", "session": 1 + i // 4, "thread": "c"},
        )
        for i, text in enumerate(lines)
    )
    questions = (Question("Which race did Ann run?", frozenset({"D1:0"}), 4),)
    return Conversation("c", ("Ann", "Bob"), turns, questions)


def test_the_reranker_orders_by_similarity_and_drops_nothing() -> None:
    """The MiniLM stand-in reranker returns every packet, the most similar first."""
    conv = _conversation()
    ranked = minilm_reranker(WordEmbeddings())("my dog", conv.turns[:4])
    assert ranked[0].source == "D1:1"
    assert sorted(p.source for p in ranked) == sorted(p.source for p in conv.turns[:4])


def test_the_hook_keeps_recall_and_the_pool_reports_every_stage() -> None:
    """With the hook, recall equals the build without it; the pool figures cover all stages."""
    conv = _conversation()
    hook = hook_figures([conv], WordEmbeddings())
    assert hook["with"]["recall"] == hook["without"]["recall"] == 1.0
    stages = two_stage_figures([conv], WordEmbeddings())
    assert set(stages) == {"first stage", "MiniLM rerank", "mean rerank"}
    assert all(0.0 <= row["all"] <= 1.0 and row["c"] == row["all"] for row in stages.values())


class _PromptedModel:
    """A sentence-transformers stand-in: records what it encodes, defines two prompts."""

    prompts = {"query": "q: ", "document": "doc: "}  # noqa: RUF012 - read-only

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: list[str], **_: object) -> list[list[float]]:
        self.encoded += texts
        return [[float(len(t)), 1.0] for t in texts]


def test_sentence_embeddings_use_the_models_own_prompts_and_cache() -> None:
    from benchmarks.locomo.embeddings import SentenceEmbeddings, load_embeddings

    model = _PromptedModel()
    embeddings = SentenceEmbeddings(model)
    assert embeddings.embed_query("cake") == [7.0, 1.0]  # "q: cake"
    assert embeddings.embed_documents(["cake", "cake"]) == [[9.0, 1.0], [9.0, 1.0]]
    embeddings.embed_documents(["cake"])
    assert model.encoded == ["q: cake", "doc: cake"]  # each text encoded once
    # A directory that holds no model is reported by name, never raised.
    loaded, why = load_embeddings("/nonexistent/model-dir")
    assert loaded is None
    assert "model-dir" in why or "no embedding model installed" in why
