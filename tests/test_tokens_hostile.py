"""Hostile input for the token API: any content LangChain accepts is counted, stably."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.tokens import TiktokenCounter, count_tokens, truncate_text

_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8))
_json = st.recursive(
    _json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)
_blocks = st.one_of(
    st.text(max_size=10),
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=10)),
    st.just({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}),
    st.just({"type": "image", "source_type": "base64", "data": "AAAA", "mime_type": "image/png"}),
    st.just({"type": "file", "file": {"file_data": "JVBERi0x", "filename": "a.pdf"}}),
    st.builds(lambda v: {"type": "custom", "value": v}, _json),
    st.builds(lambda v: {"type": "text", "text": v}, _json),  # a non-str text value
)


@settings(max_examples=800, derandomize=True, deadline=None)
@given(st.lists(_blocks, max_size=4), _json)
def test_any_accepted_content_counts_the_same_everywhere(blocks: list[Any], args: Any) -> None:
    """Content and arguments LangChain accepts count without error, equal across counters."""
    history = [
        HumanMessage(blocks),
        AIMessage("", tool_calls=[{"name": "t", "args": {"v": args}, "id": "1"}]),
        ToolMessage(blocks, tool_call_id="1"),
    ]
    first = TiktokenCounter().count_messages(history)
    assert first == TiktokenCounter().count_messages(history) == count_tokens(history)
    assert first >= 3 + 3 * 4


def test_values_json_cannot_hold_get_a_stable_count() -> None:
    """Sets, bytes, objects, non-str keys and cycles in args are counted, not crashed on."""
    call = AIMessage("", tool_calls=[{"name": "t", "args": {"a": 1}, "id": "1"}])
    args = call.tool_calls[0]["args"]
    args.update({"set": {"b", "a", "c"}, "bytes": b"\x00\x01", "obj": object(), "self": args})
    args[3] = "int key"
    counter = TiktokenCounter()
    first = counter.count_message(call)
    assert first == TiktokenCounter().count_message(call) > 0
    args["more"] = "x" * 50  # edited in place: recounted, not served from the memo
    assert counter.count_message(call) > first


def test_plain_json_args_count_as_json_dumps() -> None:
    """The iterative writer gives json.dumps's exact text, so ordinary counts did not move."""
    args = {"b": [1, 2.5, None, True], "a": {"é": "q\\"}}
    call = AIMessage("", tool_calls=[{"name": "t", "args": args, "id": "1"}])
    bare = AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": "1"}])
    counter = TiktokenCounter()
    text = json.dumps(args, ensure_ascii=False, sort_keys=True)
    assert counter.count_message(call) - counter.count_message(bare) == counter(text) - counter(
        "{}"
    )


def test_invalid_tool_calls_cost_tokens() -> None:
    """An invalid call is sent by langchain-openai, so its raw arguments are counted."""
    bad = {"type": "invalid_tool_call", "name": "t", "args": '{"q": ', "id": "c", "error": "x"}
    with_bad = AIMessage("", invalid_tool_calls=[bad])
    counter = TiktokenCounter()
    extra = 3 + counter("t") + counter("c") + counter('{"q": ')
    assert counter.count_message(with_bad) - counter.count_message(AIMessage("")) == extra


def test_bad_arguments_to_token_functions_are_typed_errors() -> None:
    """Wrong types and misbehaving counters raise the package's errors, naming the problem."""
    counter = TiktokenCounter()
    with pytest.raises(InvalidTypeError, match="text must be a string"):
        counter.count_text(5)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="message must be a BaseMessage"):
        counter.count_message({"role": "user"})  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="encoding must be"):
        TiktokenCounter(5)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="max_text_tokens must be an int"):
        truncate_text("abc", "2")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="text must be a string"):
        truncate_text(None, 2)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="token_counter must return a number"):
        count_tokens("abc", token_counter=lambda _: "3")
    with pytest.raises(InvalidArgumentError, match="finite count >= 0"):
        truncate_text("abcdef", 2, token_counter=lambda _: float("nan"))
