"""The faster exact encoder (`tokens._fast`, the `fast` extra): tiktoken's tokens, or tiktoken."""

from __future__ import annotations

import copy
import importlib
import logging
import pickle
import threading
from typing import Any

import pytest
import rs_bpe.bpe  # noqa: F401  (the dev extra installs it: its absence is a failure here)
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage

from langgraph_context.compaction.entry import cut_tool_result
from langgraph_context.tokens import TiktokenCounter
from langgraph_context.tokens import _fast as fast_module
from langgraph_context.tokens._encodings import load_encoding

NAMES = ("cl100k_base", "o200k_base")
FAST = {name: load_encoding(name) for name in NAMES}
PLAIN = {name: getattr(enc, "_base", None) for name, enc in FAST.items()}

_PIECES = st.sampled_from(
    [" ", "   ", "\n", "\n\n\n", "\t", "\r\n", "\u00a0", "\u3000", "'s", "'LL", "\u2019", "a",
     "Z", "\u00e9", "e\u0301", "\u00df", "\u4e2d\u6587", "\U0001f600", "\u200d", "7", "123",
     "45678", ".", "!!", "?\n", "/", "<|endoftext|>", "{\"k\": [1]}", "id=de7814e8a2", "\u0627",
     "\u0939", "\\", "0x1F"]
)  # fmt: skip


def _log(seed: int) -> str:
    words = ["request", "cache", "miss", "shard", "fallback", "upstream", "TimeoutError"]
    return "\n".join(
        f"2024-05-{seed % 28 + 1:02d}T10:{i % 60:02d}:{(seed * 7 + i) % 60:02d}Z INFO "
        + f"[svc-{i % 9}] "
        + " ".join(words[(seed + i * k) % len(words)] for k in range(8))
        + f" id={(seed * 2654435761 + i) % 16**10:010x} ms={(seed + i * 37) % 9000}"
        for i in range(48)
    )


def test_both_encodings_encode_with_the_faster_encoder() -> None:
    """With rs-bpe installed, both offline encodings are the faster copy of tiktoken's."""
    for name in NAMES:
        assert type(FAST[name]).__name__ == "_FastEncoding"
        assert isinstance(FAST[name], tiktoken.Encoding)
        assert isinstance(PLAIN[name], tiktoken.Encoding)
        assert type(PLAIN[name]) is tiktoken.Encoding
    assert TiktokenCounter().encoding.__class__.__name__ == "_FastEncoding"  # type: ignore[union-attr]


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES | st.text(max_size=12), max_size=60).map("".join))
def test_same_tokens_as_tiktoken_on_generated_text(text: str) -> None:
    """Any text (whitespace runs, digits, marks, emoji, special tokens) gets tiktoken's tokens."""
    for name in NAMES:
        assert FAST[name].encode_ordinary(text) == PLAIN[name].encode_ordinary(text)  # type: ignore[union-attr]


@pytest.mark.parametrize("name", NAMES)
def test_same_tokens_on_logs_and_lone_surrogates(name: str) -> None:
    """Long logs match, and a lone surrogate (which Rust cannot take) goes to tiktoken."""
    for seed in range(40):
        text = _log(seed)
        assert FAST[name].encode_ordinary(text) == PLAIN[name].encode_ordinary(text)  # type: ignore[union-attr]
    odd = "before \ud800 after \udfff"
    assert FAST[name].encode_ordinary(odd) == PLAIN[name].encode_ordinary(odd)  # type: ignore[union-attr]


def test_cuts_and_counts_are_unchanged() -> None:
    """A tool-result cut and a count are the same with the faster encoder as with tiktoken."""
    fast, plain = TiktokenCounter(), TiktokenCounter()
    plain._encoding = PLAIN["cl100k_base"]
    for seed in range(12):
        result = ToolMessage(_log(seed) * (1 + seed % 3), tool_call_id=f"c{seed}", name="logs")
        for limit in (60, 500, 1500):
            a = cut_tool_result(result, limit, token_counter=fast)
            b = cut_tool_result(result, limit, token_counter=plain)
            assert (a and (a.content, a.additional_kwargs)) == (
                b and (b.content, b.additional_kwargs)
            )
        assert fast.count_fresh(result.content) == plain.count_fresh(result.content)  # type: ignore[arg-type]


def test_threads_get_the_same_tokens() -> None:
    """Fresh threads (as ToolNode runs tools) encode as the caller's thread does."""
    texts = [_log(seed) for seed in range(8)]
    want = [PLAIN["cl100k_base"].encode_ordinary(t) for t in texts]  # type: ignore[union-attr]
    got: dict[int, list[int]] = {}

    def run(i: int) -> None:
        got[i] = FAST["cl100k_base"].encode_ordinary(texts[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [got[i] for i in range(len(texts))] == want


def test_pickled_and_copied_it_stays_fast() -> None:
    """Pickling or copying the faster encoding gives a faster encoding of the same tables."""
    for made in (pickle.loads(pickle.dumps(FAST["o200k_base"])), copy.deepcopy(FAST["o200k_base"])):
        assert type(made).__name__ == "_FastEncoding"
        assert made.encode_ordinary("héllo wörld 123") == PLAIN["o200k_base"].encode_ordinary(  # type: ignore[union-attr]
            "héllo wörld 123"
        )


def test_the_environment_switch_keeps_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    """`LGC_TOKENIZER=tiktoken` leaves the encoding as tiktoken made it."""
    base = PLAIN["cl100k_base"]
    monkeypatch.setenv(fast_module.TOKENIZER_ENV, "tiktoken")
    assert fast_module.fast_encoding(base) is base  # type: ignore[arg-type]
    assert type(load_encoding("cl100k_base")) is tiktoken.Encoding
    monkeypatch.setenv(fast_module.TOKENIZER_ENV, "")
    assert fast_module.fast_encoding(base) is not base  # type: ignore[arg-type]


def test_an_encoder_that_disagrees_is_not_used(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An encoder giving other tokens on the self-check is refused, with a warning."""
    base = PLAIN["cl100k_base"]

    def wrong(family: str) -> Any:
        return lambda text: [0] * len(text)

    monkeypatch.setattr(fast_module, "_encoder", wrong)
    with caplog.at_level(logging.WARNING, logger="langgraph_context.tokens"):
        assert fast_module.fast_encoding(base) is base  # type: ignore[arg-type]
    assert "differs from tiktoken" in caplog.text


def test_without_rs_bpe_tiktoken_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the package (or for another encoding) tiktoken encodes, silently."""
    real = importlib.import_module

    def missing(name: str, *args: Any) -> Any:
        if name.startswith("rs_bpe"):
            raise ImportError(name)
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", missing)
    assert fast_module._encoder.__wrapped__("cl100k_base") is None
    monkeypatch.setattr(fast_module, "_encoder", fast_module._encoder.__wrapped__)
    assert fast_module.fast_encoding(PLAIN["cl100k_base"]) is PLAIN["cl100k_base"]  # type: ignore[arg-type]
    other = tiktoken.Encoding(
        name="tiny", pat_str=r"\S+|\s+", mergeable_ranks={b"a": 0}, special_tokens={}
    )
    assert fast_module.fast_encoding(other) is other
