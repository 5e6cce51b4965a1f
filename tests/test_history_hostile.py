"""Hostile input for the history API: the OpenAI oracle, invalid calls, garbage, native blocks."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_context.errors import InvalidArgumentError, InvalidTypeError
from langgraph_context.messages import (
    as_messages,
    group_tool_rounds,
    repair_history,
    safe_cut_points,
    tool_result_ids,
    truncate_messages,
    validate_history,
)
from langgraph_context.messages._history import tool_call_ids
from langgraph_context.tokens import TiktokenCounter, count_tokens, estimate_tokens
from tests._oracle import openai_refusal
from tests.corpus_history import CASES

FAST = settings(
    max_examples=1000,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
_ids = st.sampled_from(["a", "b", "c"])


def _call(tid: str | None) -> dict[str, Any]:
    return {"name": "t", "args": {"q": 1}, "id": tid}


def _bad(tid: str | None) -> dict[str, Any]:
    return {"type": "invalid_tool_call", "name": "t", "args": '{"q": ', "id": tid, "error": "EOF"}


@st.composite
def _openai_histories(draw: st.DrawFn) -> list[BaseMessage]:
    """Mixes of valid, invalid and id-less calls, raw additional_kwargs calls and results."""
    out: list[BaseMessage] = []
    for _ in range(draw(st.integers(0, 10))):
        kind = draw(st.sampled_from(["sys", "human", "ai", "calls", "raw", "tool", "tool"]))
        if kind == "sys":
            out.append(SystemMessage("s"))
        elif kind == "human":
            out.append(HumanMessage("q"))
        elif kind == "ai":
            out.append(AIMessage("a"))
        elif kind == "tool":
            out.append(ToolMessage("r", tool_call_id=draw(_ids)))
        elif kind == "raw":  # tool_calls cleared by model_copy: additional_kwargs is sent
            raw = [
                {"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}}
                for i in draw(st.lists(_ids, min_size=1, max_size=2))
            ]
            out.append(
                AIMessage("", additional_kwargs={"tool_calls": raw}).model_copy(
                    update={"tool_calls": [], "invalid_tool_calls": []}
                )
            )
        else:
            ids = st.one_of(_ids, st.none()) if draw(st.integers(0, 9)) == 0 else _ids
            good = [_call(i) for i in draw(st.lists(ids, max_size=2))]
            bad = [_bad(i) for i in draw(st.lists(ids, max_size=2))]
            out.append(AIMessage("", tool_calls=good, invalid_tool_calls=bad))
    return out


@FAST
@given(_openai_histories(), st.booleans())
def test_valid_means_openai_accepts_and_repair_always_gets_there(
    history: list[BaseMessage], allow_pending: bool
) -> None:
    """validate_history == [] implies the OpenAI oracle accepts; repair output passes both."""
    if not validate_history(history):
        assert openai_refusal(history) is None
    fixed = repair_history(history, allow_pending_tool_calls=allow_pending)
    assert validate_history(fixed.messages, allow_pending_tool_calls=allow_pending) == []
    assert validate_history(fixed.messages) == [] or allow_pending
    if not allow_pending:
        assert openai_refusal(fixed.messages) is None, fixed.messages
    kept = [m.content for m in fixed.messages if not isinstance(m, ToolMessage)]
    assert kept == [m.content for m in history if not isinstance(m, ToolMessage)]
    assert fixed.changed == bool(validate_history(history, allow_pending_tool_calls=allow_pending))


@FAST
@given(_openai_histories(), st.integers(0, 12))
def test_cuts_and_truncation_of_repaired_histories_stay_acceptable(
    history: list[BaseMessage], keep: int
) -> None:
    """Cutting a valid history at a safe point or truncating it never orphans a call or result."""
    fixed = repair_history(history).messages
    for cut in safe_cut_points(fixed):
        assert openai_refusal(fixed[cut:]) is None
        assert openai_refusal(fixed[:cut]) is None
    assert openai_refusal(truncate_messages(fixed, keep=keep)) is None
    units = group_tool_rounds(fixed)
    assert [m for s, e in units for m in fixed[s:e]] == fixed


def test_invalid_call_is_answered_with_an_actionable_error() -> None:
    """repair answers an invalid call with status=error naming the tool and the bad arguments."""
    ai = AIMessage("", invalid_tool_calls=[_bad("c9")])
    assert [v.kind for v in validate_history([HumanMessage("q"), ai])] == ["missing_tool_result"]
    assert validate_history([HumanMessage("q"), ai], allow_pending_tool_calls=True) != []
    fixed = repair_history([HumanMessage("q"), ai, HumanMessage("next")])
    answer = fixed.messages[2]
    assert isinstance(answer, ToolMessage)
    assert (answer.tool_call_id, answer.status, answer.name) == ("c9", "error", "t")
    assert '{"q": ' in str(answer.content)
    assert "EOF" in str(answer.content)
    assert "Call the tool again" in str(answer.content)
    assert tool_call_ids(ai) == ["c9"]
    assert group_tool_rounds(fixed.messages) == [(0, 1), (1, 3), (3, 4)]


def test_pending_valid_call_waits_but_invalid_sibling_is_answered() -> None:
    """With pending calls allowed, the invalid sibling is answered and the valid call left."""
    ai = AIMessage("", tool_calls=[_call("ok")], invalid_tool_calls=[_bad("bad")])
    fixed = repair_history([HumanMessage("q"), ai], allow_pending_tool_calls=True)
    assert [getattr(m, "tool_call_id", None) for m in fixed.messages] == [None, None, "bad"]
    later = [*fixed.messages, ToolMessage("done", tool_call_id="ok")]
    assert validate_history(later) == []
    assert openai_refusal(later) is None


def test_malformed_openai_arguments_become_invalid_calls() -> None:
    """An OpenAI dict whose arguments are not JSON converts to invalid_tool_calls, not an error."""
    raw = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "f", "arguments": "{"}}
        ],
    }
    (message,) = as_messages([raw])
    assert isinstance(message, AIMessage)
    assert [c["id"] for c in message.invalid_tool_calls] == ["x"]
    assert [v.kind for v in validate_history([{"role": "user", "content": "q"}, raw])] == [
        "missing_tool_result"
    ]


def test_call_without_id_is_reported_and_given_one() -> None:
    """A call without an id cannot be answered: validate says so, repair names and answers it."""
    history = [HumanMessage("q"), AIMessage("", tool_calls=[_call(None)])]
    assert [v.kind for v in validate_history(history)] == ["missing_tool_call_id"]
    fixed = repair_history(history).messages
    assert isinstance(fixed[1], AIMessage)
    assert fixed[1].tool_calls[0]["id"] == "call_missing_id_1_0"
    assert history[1].tool_calls[0]["id"] is None  # the input is not mutated
    assert openai_refusal(fixed) is None


# --- garbage ---------------------------------------------------------------------------

_HISTORY_FUNCTIONS = [
    as_messages,
    validate_history,
    repair_history,
    group_tool_rounds,
    safe_cut_points,
    truncate_messages,
]
_COUNTERS = [count_tokens, estimate_tokens, TiktokenCounter()]


@pytest.mark.parametrize(("name", "value", "error", "match"), CASES, ids=[c[0] for c in CASES])
def test_corpus_case_raises_the_named_error(name: str, value: Any, error: type, match: str) -> None:
    """Each hostile corpus case raises the package error naming the bad item, in every function."""
    counts_it = isinstance(value, (str, BaseMessage))  # a text or one message is countable
    for function in _HISTORY_FUNCTIONS + ([] if counts_it else _COUNTERS):
        with pytest.raises(error, match=match):
            function(value)


_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.just("\ud800"),
)
_garbage = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner, inner),
        st.dictionaries(st.sampled_from(["role", "content", "tool_call_id", "type", "x"]), inner),
    ),
    max_leaves=12,
)
_roles = st.sampled_from(["user", "assistant", "tool", "system", "wizard", "", "ai", "human"])
_dict_messages = st.fixed_dictionaries(
    {},
    optional={
        "role": st.one_of(_roles, _leaf),
        "content": st.one_of(st.text(max_size=5), _garbage),
        "tool_call_id": st.one_of(_ids, _leaf),
        "tool_calls": _garbage,
    },
)
_items = st.one_of(_garbage, _dict_messages, st.just(HumanMessage("ok")))


def _deep(depth: int) -> Any:
    value: Any = "x"
    for k in range(depth):
        value = [value] if k % 2 else {"k": value}
    return value


@settings(max_examples=500, derandomize=True, deadline=None)
@given(st.one_of(_garbage, st.lists(_items, max_size=5)))
def test_garbage_raises_only_package_errors_naming_the_position(value: Any) -> None:
    """Whatever the input, each function returns or raises the package's errors with a position."""
    for function in _HISTORY_FUNCTIONS + _COUNTERS:
        error = ""
        try:
            function(value)
        except (InvalidArgumentError, InvalidTypeError) as exc:
            error = str(exc)
        if error and isinstance(value, list):
            assert re.match(r"messages\[\d+\]: ", error), error


@pytest.mark.parametrize("depth", [10, 3_000, 12_000])
def test_deeply_nested_content_and_args_are_counted_not_crashed(depth: int) -> None:
    """Nesting far beyond the recursion limit is validated and counted, deterministically."""
    nested = _deep(depth)
    history = [
        HumanMessage([{"type": "custom", "value": nested}]),
        AIMessage("", tool_calls=[{"name": "t", "args": {"v": nested}, "id": "1"}]),
        ToolMessage([{"type": "custom", "value": nested}], tool_call_id="1"),
    ]
    assert validate_history(history) == []
    assert group_tool_rounds(history) == [(0, 1), (1, 3)]
    first = count_tokens(history)
    assert first == TiktokenCounter().count_messages(history) > depth // 10


def test_huge_history_is_linear() -> None:
    """Fifty thousand messages validate and repair without blowing up."""
    history: list[BaseMessage] = []
    for i in range(10_000):
        history += [HumanMessage("q"), AIMessage("", tool_calls=[_call(f"c{i}")])]
    fixed = repair_history(history)
    assert len(fixed.changes) == 10_000
    assert validate_history(fixed.messages) == []


def test_non_bool_flags_and_bad_keep_are_type_errors() -> None:
    """Keyword options with the wrong type raise InvalidTypeError naming the option."""
    with pytest.raises(InvalidTypeError, match="allow_pending_tool_calls must be a bool"):
        validate_history([], allow_pending_tool_calls="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="keep must be an int"):
        truncate_messages([], keep="3")  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="preserve_system must be a bool"):
        truncate_messages([], preserve_system=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="message must be a BaseMessage"):
        tool_result_ids({"role": "tool"})  # type: ignore[arg-type]


def test_anthropic_rule_one_rule_for_validate_repair_and_grouping() -> None:
    """tool_use blocks merge with tool_calls by id; a human tool_result message is a result."""
    use = {"type": "tool_use", "id": "u1", "name": "read", "input": {}}
    ai = AIMessage([{"type": "text", "text": "t"}, use], tool_calls=[_call("u1"), _call("u2")])
    assert tool_call_ids(ai) == ["u1", "u2"]  # u1 once: the block and the call are one
    result = HumanMessage(
        [
            {"type": "tool_result", "tool_use_id": "u1", "content": "x"},
            {"type": "text", "text": "and"},
        ]
    )
    history = [HumanMessage("q"), ai, result, ToolMessage("y", tool_call_id="u2")]
    assert validate_history(history) == []
    assert group_tool_rounds(history) == [(0, 1), (1, 4)]
    stray = HumanMessage(
        [{"type": "tool_result", "tool_use_id": "zz"}, {"type": "text", "text": "hi"}]
    )
    broken = [HumanMessage("q"), ai, stray, ToolMessage("y", tool_call_id="u2")]
    assert {v.kind for v in validate_history(broken)} == {
        "orphan_tool_result",
        "missing_tool_result",
    }
    fixed = repair_history(broken).messages
    assert validate_history(fixed) == []
    assert [m.type for m in fixed] == ["human", "ai", "tool", "tool", "human"]
    assert fixed[4].content == [{"type": "text", "text": "hi"}]  # the user's text is kept
    assert group_tool_rounds(fixed) == [(0, 1), (1, 4), (4, 5)]
