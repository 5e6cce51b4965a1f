"""Lean per call in the cut's room, fourth pass: an even text's middle is not encoded."""

from __future__ import annotations

import base64
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage

from langgraph_context.compaction.entry import CUT_MARKER, cut_tool_result, without_cut_notice
from langgraph_context.tokens import TiktokenCounter, _cut, _ends, truncate_text
from tests.test_lean_cut import _texts, _uneven


def _log(seed: int, lines: int = 48) -> str:
    """A log of about 2,000 cl100k tokens, like the lean benchmark's."""
    rng = random.Random(seed)
    words = ["retry", "upstream", "billing", "cache", "route", "worker", "slow", "depth"]
    return "\n".join(
        f"2024-05-01T10:{i % 60:02d}:{rng.randint(0, 59):02d}Z INFO [svc-{rng.randint(1, 9)}] "
        f"{' '.join(rng.choice(words) for _ in range(8))} id={rng.getrandbits(40):010x}"
        for i in range(lines)
    )


def _no_samples(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record each sampling of a middle (the stretches' encode) in the returned list."""
    seen: list[int] = []
    sample = _ends._middle_tokens

    def spy(*args: Any) -> tuple[int, int]:
        seen.append(1)
        return sample(*args)

    monkeypatch.setattr(_ends, "_middle_tokens", spy)
    return seen


@pytest.mark.parametrize("limit", [300, 500, 800])
def test_an_even_text_far_over_is_estimated_without_encoding_its_middle(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Logs, prose and JSON with spaces: no stretch encoded, the total within 5% of exact."""
    seen = _no_samples(monkeypatch)
    counter = TiktokenCounter()
    for i, text in enumerate([_log(7), _log(8), *_texts()]):
        short = cut_tool_result(ToolMessage(text, tool_call_id=f"c{i}"), limit)
        assert short is not None
        exact = counter.count_fresh(text)
        assert abs(short.additional_kwargs[CUT_MARKER] - exact) <= exact // 20
        assert counter.count_fresh(str(short.content)) <= limit
    assert seen == []


def test_an_uneven_text_still_has_its_middle_sampled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dense ends around plain prose: the two cheap estimates disagree, so stretches are read."""
    seen = _no_samples(monkeypatch)
    text = _uneven()
    short = cut_tool_result(ToolMessage(text, tool_call_id="u"), 300)
    assert short is not None
    exact = TiktokenCounter().count_fresh(text)
    assert abs(short.additional_kwargs[CUT_MARKER] - exact) <= exact // 10
    assert seen == [1]


def test_the_notice_rounds_its_total_and_is_still_found() -> None:
    """The notice shows ~two significant digits; new and older notices are both stripped."""
    text = _log(3)
    short = cut_tool_result(ToolMessage(text, tool_call_id="c"), 400)
    assert short is not None
    total = short.additional_kwargs[CUT_MARKER]
    assert f" of this ~{round(total, -2)}-token result were cut" in short.content
    assert without_cut_notice(str(short.content)).count("[...") == 0
    older = "a\n[... 12 characters of this 2013-token result were cut as it arrived, x; y ...]\nb"
    assert without_cut_notice(older) == "a\nb"


def _blob(kind: str, size: int, seed: int) -> str:
    """A text of `size` characters at an extreme of characters per token."""
    rng = random.Random(seed)
    if kind == "run":
        return "a" * size
    if kind == "cjk":
        return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(size))
    if kind == "base64":
        return base64.b64encode(rng.randbytes(size * 3 // 4)).decode()[:size]
    if kind == "emoji":
        return "".join(chr(rng.randint(0x1F600, 0x1F64F)) for _ in range(size))
    return " ".join(rng.choice(["the", "é", "日本", "x1", "{", "\n"]) for _ in range(size // 3))


@settings(max_examples=60, deadline=None)
@given(
    head=st.sampled_from(["run", "cjk", "base64", "emoji", "mixed"]),
    middle=st.sampled_from(["run", "cjk", "base64", "emoji", "mixed"]),
    size=st.integers(200, 20_000),
    limit=st.integers(1, 400),
    seed=st.integers(0, 1_000),
)
def test_any_far_over_text_is_cut_within_its_budget(
    head: str, middle: str, size: int, limit: int, seed: int
) -> None:
    """Extreme characters per token at the ends or the middle: exact count, never over."""
    end = _blob(head, size // 4, seed)
    text = end + _blob(middle, size, seed + 1) + end
    counter = TiktokenCounter()
    marker = "\n[... {n} characters cut ...]\n"
    cut = truncate_text(text, limit, token_counter=counter, marker=marker, keep="ends")
    assert counter.remembered(cut) == counter.count_fresh(cut) <= limit
    assert (cut is text) == (counter.count_fresh(text) <= limit)


_STRETCHES = [
    " of", " this", "~1900-token", " 48", "\n[...", "...]\n", " 12,345", "0x1f", "é", "日本",
    " read_tool_output(handle=\"out-3f2a\",", "\n", "  ", " A", "'s", "9", "1234567", "\t", ".",
]  # fmt: skip


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base", "r50k_base"])
@settings(max_examples=120, deadline=None)
@given(words=st.lists(st.sampled_from(_STRETCHES), max_size=40), digits=st.integers(0, 10**9))
def test_a_notice_counted_from_remembered_stretches_counts_as_encoded(
    encoding: str, words: list[str], digits: int
) -> None:
    """Summed stretch counts (numbers remembered as zeros) equal one encoding, asked twice."""
    tokenizer = TiktokenCounter(encoding).encoding
    enc = _cut._Encoded(tokenizer, "x")
    for text in ("".join(words), "".join(words).replace("9", str(digits))):
        exact = len(tokenizer.encode_ordinary(text))  # type: ignore[union-attr]
        assert enc._pieces(text.encode()) == exact == enc._pieces(text.encode())


def test_the_remembered_stretches_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stretch memo holds at most its bytes; a stretch too long is not kept."""
    monkeypatch.setattr(_cut, "_PIECE_MEMO_BYTES", 4 * (_cut.ENTRY_BYTES + 16))
    monkeypatch.setattr(_cut, "_PIECES", {})
    enc = _cut._Encoded(TiktokenCounter().encoding, "x")
    for i in range(30):
        enc._pieces(f" word{chr(97 + i % 26)}{i} next".encode())
        memo = _cut._PIECES[TiktokenCounter().encoding.name]  # type: ignore[union-attr]
        assert 0 < memo.size <= _cut._PIECE_MEMO_BYTES
    assert memo.get(b" next") == 1  # used by every text: kept while others go
    enc._pieces(b" " + b"x" * 100)
    assert memo.get(b" " + b"x" * 100) is None
