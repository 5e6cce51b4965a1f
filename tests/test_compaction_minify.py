"""JSON tool results minified on entry: lossless, in a real agent and a real graph."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_context.agents import ToolOutputLimitMiddleware, create_context_agent
from langgraph_context.compaction import create_tool_output_limit_node, minify_tool_result
from langgraph_context.compaction.entry import CUT_MARKER
from langgraph_context.compaction.minify import MINIFIED_MARKER, minify_json
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call
from langgraph_context.tokens import count_tokens

USER = {
    "name": {"first_name": "Mia", "last_name": "Li"},
    "address": {"city": "Austin", "zip": "78750", "note": 'said "call me" \\ at 5 pm'},
    "payment_methods": {"credit_card_4421486": {"brand": "visa", "last_four": "7447"}},
    "reservations": ["NO6JO3", "AIXC49"],
    "balance": 1.50e2,
    "text": "two  spaces\tand a tab\nand a newline",
}
PRETTY = json.dumps(USER, indent=2)


@tool
def get_user(user_id: str) -> str:
    """Look a user up."""
    return PRETTY if user_id == "mia" else "no such user: " + user_id


def _agent_run(**limit: Any) -> tuple[ScriptedChatModel, dict[str, Any]]:
    model = ScriptedChatModel(
        responses=[
            ai_calls(tool_call("get_user", {"user_id": "mia"}, "c1")),
            ai_calls(tool_call("get_user", {"user_id": "bob"}, "c2")),
            AIMessage("done"),
        ]
    )
    graph = create_context_agent(
        model, [get_user], plan_tools=False, constraint_tools=False, note_tools=False, **limit
    )
    return model, graph.invoke({"messages": [HumanMessage("Find Mia.")]})


def test_the_context_agent_minifies_json_results_before_the_model_reads_them() -> None:
    model, state = _agent_run()
    mia, bob = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert json.loads(mia.content) == USER
    assert mia.content == json.dumps(USER, separators=(",", ":"))
    assert mia.additional_kwargs[MINIFIED_MARKER] == len(PRETTY)
    assert count_tokens(mia.content) < count_tokens(PRETTY)
    # Strings keep their inner whitespace, escapes and quotes exactly.
    assert '"two  spaces\\tand a tab\\nand a newline"' in mia.content
    # Text that is not JSON is left as the tool wrote it.
    assert bob.content == "no such user: bob"
    assert MINIFIED_MARKER not in bob.additional_kwargs
    # The model read the minified text first, so nothing it was sent is rewritten.
    assert [m.content for m in model.seen[1] if isinstance(m, ToolMessage)] == [mia.content]


def test_minify_json_false_keeps_results_as_the_tool_wrote_them() -> None:
    _, state = _agent_run(tool_output_limit=False)
    mia = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert mia.content == PRETTY


def test_the_middleware_minifies_in_create_agent_and_can_be_turned_off() -> None:
    for minify, expected in ((True, json.dumps(USER, separators=(",", ":"))), (False, PRETTY)):
        model = ScriptedChatModel(
            responses=[ai_calls(tool_call("get_user", {"user_id": "mia"}, "c1")), AIMessage("ok")]
        )
        middleware = ToolOutputLimitMiddleware(1_000, minify_json=minify)
        agent = create_agent(model, [get_user], middleware=[middleware])
        state = agent.invoke({"messages": [HumanMessage("Find Mia.")]})
        [result] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        assert result.content == expected


def test_the_node_minifies_then_cuts_what_is_still_too_long() -> None:
    """In a hand-built graph: minify replaces the message by id; a long one is also cut."""
    rows = [{"flight": f"HAT{i:03d}", "seats": {"economy": i % 17}} for i in range(400)]
    long = json.dumps(rows, indent=1)
    call = {"name": "search", "args": {}, "id": "c1"}
    call2 = {"name": "search", "args": {}, "id": "c2"}
    graph = StateGraph(MessagesState)
    graph.add_node("limit", create_tool_output_limit_node(150))
    graph.add_edge(START, "limit")
    state = graph.compile().invoke(
        {
            "messages": [
                HumanMessage("flights?"),
                AIMessage("", tool_calls=[call, call2]),
                ToolMessage(PRETTY, tool_call_id="c1", id="t1"),
                ToolMessage(long, tool_call_id="c2", id="t2"),
            ]
        }
    )
    first, second = state["messages"][2:]
    assert (first.id, second.id) == ("t1", "t2")
    assert json.loads(first.content) == USER
    assert count_tokens(second.content) <= 150
    assert second.content.startswith('[{"flight":"HAT000"')
    assert second.additional_kwargs[CUT_MARKER] == count_tokens(
        json.dumps(rows, separators=(",", ":"))
    )


_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=20)
)
_JSON = st.recursive(
    _LEAF,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(
            st.text(alphabet=st.characters(codec="utf-8"), max_size=8), inner, max_size=5
        )
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(
    value=st.one_of(st.lists(_JSON, max_size=4), st.dictionaries(st.text(max_size=6), _JSON)),
    indent=st.sampled_from([None, 0, 1, 2, 4, "\t"]),
    ascii_only=st.booleans(),
    pad=st.sampled_from(["", " ", "\n", "  \r\n"]),
)
def test_minify_is_lossless_and_idempotent_on_any_json(
    value: Any, indent: Any, ascii_only: bool, pad: str
) -> None:
    text = pad + json.dumps(value, indent=indent, ensure_ascii=ascii_only) + pad
    short = minify_json(text)
    if short is None:  # nothing to drop: already compact
        assert json.dumps(value, separators=(",", ":"), ensure_ascii=ascii_only) == text
        return
    assert json.loads(short) == json.loads(text)
    assert len(short) < len(text)
    assert minify_json(short) is None
    # Every string literal is kept character for character.
    assert short == json.dumps(value, separators=(",", ":"), ensure_ascii=ascii_only)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_minify_never_changes_text_that_is_not_a_json_object_or_array(text: str) -> None:
    short = minify_json(text)
    if short is not None:
        # only a real object or array, and then losslessly
        assert text.lstrip()[:1] in ("{", "[")
        assert json.loads(short) == json.loads(text)


def test_hostile_and_odd_inputs_are_left_alone() -> None:
    for text in (
        "",
        "   ",
        '"just a string with  spaces"',
        "42",
        '{"a": 1} trailing words',
        '{"a": "unterminated}',
        "[ " * 100_000 + "]" * 100_000,  # deeper than the parser's recursion limit
        '{"a": NaN, "b": 1}',  # accepted by json.loads, kept losslessly
        "[1, 2,]",
    ):
        short = minify_json(text)
        if short is not None:
            assert short == '{"a":NaN,"b":1}'
    block = ToolMessage(content=[{"type": "text", "text": "{ }"}], tool_call_id="x")
    assert minify_tool_result(block) is None
