"""`truncate_text` with a tiktoken counter: one encoding, exact budgets, nothing memoized."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage

from langgraph_context.compaction import cut_tool_result
from langgraph_context.compaction.entry import CUT_MARKER
from langgraph_context.errors import InvalidTypeError
from langgraph_context.tokens import TiktokenCounter, truncate_text

PIECES = [
    "abc", " XYZ", "  ", "\n", "\n\n", "\t", ".", ",", "'s", '"', "{", "}", "[", "]", "0", "42",
    "é", "日本", "😀", "\u3000", "\xa0", " the", "\r\n", "   ", "id=7f3a", ":", "-",
]  # fmt: skip
MARKERS = ["", "..", "\n[... {n} characters cut ...]\n", " [cut]", "\n"]

texts = st.lists(st.sampled_from(PIECES), max_size=200).map("".join)


class _Spy:
    """A tiktoken encoding that records the length of each text it encodes."""

    def __init__(self, encoding: object) -> None:
        self.inner = encoding
        self.calls: list[int] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def encode(self, text: str, **kwargs: object) -> list[int]:
        self.calls.append(len(text))
        return self.inner.encode(text, **kwargs)  # type: ignore[attr-defined, no-any-return]

    def encode_ordinary(self, text: str) -> list[int]:
        self.calls.append(len(text))
        return self.inner.encode_ordinary(text)  # type: ignore[attr-defined, no-any-return]


def _log(lines: int) -> str:
    return "\n".join(
        f"2024-05-01T10:{i % 60:02d}:07Z INFO [svc-{i % 9}] request {i} completed status ok"
        f" latency route cache miss id={i * 7919:010x} ms={i * 37 % 9000}"
        for i in range(lines)
    )


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
@settings(max_examples=150, deadline=None)
@given(
    text=texts,
    max_tokens=st.integers(0, 90),
    marker=st.sampled_from(MARKERS),
    keep=st.sampled_from(["head", "ends"]),
)
def test_a_cut_fits_keeps_the_ends_and_memoizes_nothing(
    encoding: str, text: str, max_tokens: int, marker: str, keep: Literal["head", "ends"]
) -> None:
    """Any text, limit and marker: the cut fits, keeps the text's ends, memoizes its exact count."""
    counter = TiktokenCounter(encoding)
    cut = truncate_text(text, max_tokens, token_counter=counter, marker=marker, keep=keep)
    assert len(counter._text_memo) <= 1  # the count of what it returns, nothing else
    assert counter.remembered(cut) == counter.count_fresh(cut) <= max_tokens
    if counter.count_fresh(text) <= max_tokens:
        assert cut is text
        return
    assert _is_cut_of(cut, text, marker, keep)


def _is_cut_of(cut: str, text: str, marker: str, keep: str) -> bool:
    """Whether `cut` is a head (or head and tail) of `text` around the marker."""
    if keep == "head":
        body = cut.removesuffix(marker) if marker and cut.endswith(marker) else cut
        return text.startswith(body)
    if not marker:
        return text.startswith(cut)
    pre, _, post = marker.partition("{n}")
    for i in range(len(cut) + 1):
        head, rest = cut[:i], cut[i:]
        if not (text.startswith(head) and rest.startswith(pre)):
            continue
        digits = rest[len(pre) :]
        number = digits[: len(digits) - len(digits.lstrip("0123456789"))] if "{n}" in marker else ""
        tail = digits[len(number) :]
        if tail.startswith(post) and text.endswith(tail[len(post) :]):
            return True
    return text.startswith(cut)  # too tight for a marker: a head alone


def test_a_log_near_the_limit_is_cut_from_one_encoding_of_it() -> None:
    """Over by a little: the full text is encoded once; the checks encode short stretches."""
    text = _log(60)
    counter = TiktokenCounter()
    limit = counter.count_fresh(text) * 4 // 5
    spy = _Spy(counter.encoding)
    counter._encoding = spy  # type: ignore[assignment]
    cut = truncate_text(
        text, limit, token_counter=counter, marker="\n[... {n} cut ...]\n", keep="ends"
    )
    calls = list(spy.calls)
    assert counter.count_fresh(cut) <= limit < counter.count_fresh(text)
    assert [n for n in calls if n >= len(text)] == [len(text)]  # one encoding of the text
    assert sum(calls) - len(text) < len(text) // 4  # the checks encode short stretches


def test_a_log_far_over_the_limit_is_cut_without_encoding_its_middle() -> None:
    """Far over: only its two ends (and short checks) are encoded, and the cut is exact."""
    text = _log(60)
    counter = TiktokenCounter()
    spy = _Spy(counter.encoding)
    counter._encoding = spy  # type: ignore[assignment]
    cut = truncate_text(
        text, 400, token_counter=counter, marker="\n[... {n} cut ...]\n", keep="ends"
    )
    calls = list(spy.calls)
    counter._encoding = spy.inner  # type: ignore[assignment]
    assert counter.remembered(cut) == counter.count_fresh(cut)
    assert 398 <= counter.count_fresh(cut) <= 400 < counter.count_fresh(text)
    assert max(calls) < len(text) // 2
    assert sum(calls) < len(text) * 3 // 5


def test_a_cut_uses_the_budget_like_the_binary_search_did() -> None:
    """On a realistic log the ends keep at least as many tokens as a char-by-char search."""
    counter = TiktokenCounter()
    text = _log(80)
    for limit in (100, 400, 1000):
        cut = truncate_text(
            text, limit, token_counter=counter, marker="\n[... {n} ...]\n", keep="ends"
        )
        assert limit - 2 <= counter.count_fresh(cut) <= limit


def test_a_tool_result_cut_leaves_only_the_kept_texts_count_in_the_shared_memo() -> None:
    """The output limit's cut stores neither the full result nor a candidate: the cut's count."""
    counter = TiktokenCounter()  # the shared one may be full from other tests: same code
    assert cut_tool_result(ToolMessage(_log(70), tool_call_id="c0"), 300) is not None
    before = (len(counter._text_memo), len(counter._message_memo))
    text = _log(70)
    short = cut_tool_result(ToolMessage(text, tool_call_id="c1"), 300, token_counter=counter)
    assert short is not None
    total = short.additional_kwargs[CUT_MARKER]  # estimated: only the ends were encoded
    assert abs(total - counter.count_fresh(text)) <= counter.count_fresh(text) // 10
    assert f"this ~{round(total, -2)}-token result" in short.content
    assert (len(counter._text_memo), len(counter._message_memo)) == (before[0] + 1, before[1])
    assert counter.remembered(text) is None
    assert counter.remembered(short.content) == counter.count_fresh(short.content)


def test_exact_counters_keep_the_searched_cut() -> None:
    """With `len` as the counter the cut is character-exact, as before."""
    text = "abcdefghij" * 3
    assert truncate_text(text, 10, token_counter=len, marker="|", keep="ends") == "abcd|ghij"
    got = truncate_text(text, 11, token_counter=len, marker="<{n}>", keep="ends")
    assert got == "abc<24>hij"


def test_a_marker_callable_gets_the_size_and_must_return_text() -> None:
    """A callable marker is asked with the text's count, only when it cuts."""
    seen: list[int] = []

    def marker(size: int) -> str:
        seen.append(size)
        return f"[{size}]"

    assert truncate_text("short", 10, token_counter=len, marker=marker) == "short"
    assert seen == []
    assert truncate_text("a" * 20, 10, token_counter=len, marker=marker) == "a" * 6 + "[20]"
    assert seen == [20]
    with pytest.raises(InvalidTypeError, match="marker must return a string, got int"):
        truncate_text("a" * 20, 10, token_counter=len, marker=lambda n: n)  # type: ignore[arg-type, return-value]
