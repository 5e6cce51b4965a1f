"""A deterministic extractive summarizer: the one "model" every summarizing method gets.

It reads the text it is asked to summarize (whatever prompt a method wraps it in) and
answers with a fixed-size selection of its most salient sentences, in their original
order. Salience is the count of specific tokens a later turn is likely to need: paths,
identifiers, numbers, error words. Instruction boilerplate has few of those, so the
prompts of the different methods weigh alike. No randomness, no network: it measures
what each method hands its summarizer and what it does with the answer, not the
quality of a real LLM's summary (that is not measured here).
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langgraph_context.messages import content_text
from langgraph_context.tokens import count_tokens

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_SPECIFIC = re.compile(
    r"[\w.-]*/[\w./-]+|\b\w*\d\w*\b|\b[A-Z][A-Z0-9_-]{2,}\b|\w+\.\w{1,4}\b"
    r"|\b(?:error|failed|exception|traceback|todo|must|never|always)\b",
    re.IGNORECASE,
)
SENTENCE_CHARS = 240


def salient_sentences(text: str, max_tokens: int) -> str:
    """The most specific sentences of `text` that fit `max_tokens`, in text order."""
    sentences: list[str] = []
    for raw in _SPLIT.split(text):
        sentence = " ".join(raw.split())[:SENTENCE_CHARS]
        if len(sentence) >= 12 and sentence not in sentences:
            sentences.append(sentence)
    ranked = sorted(
        range(len(sentences)),
        key=lambda i: (-len(set(_SPECIFIC.findall(sentences[i]))), i),
    )
    chosen: set[int] = set()
    used = 0
    for i in ranked:
        cost = count_tokens(sentences[i]) + 1
        if used + cost > max_tokens:
            continue
        chosen.add(i)
        used += cost
    return " ".join(sentences[i] for i in sorted(chosen))


class ExtractiveSummarizer(BaseChatModel):
    """A chat model answering with `salient_sentences` of every message it is sent."""

    max_tokens: int = 256

    @property
    def _llm_type(self) -> str:
        return "extractive-summarizer"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = "\n".join(content_text(m.content) for m in messages)
        summary = salient_sentences(text, self.max_tokens) or "Nothing to summarize."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(summary))])
