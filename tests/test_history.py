"""History invariants: validate_history, repair_history, tool rounds."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)

from langgraph_context import compact_messages
from langgraph_context.messages import (
    CANCELLED_TOOL_RESULT,
    group_tool_rounds,
    repair_history,
    safe_cut_points,
    validate_history,
)
from tests.strategies import arbitrary_histories, valid_histories


def calls(*ids: str) -> AIMessage:
    """An AI message calling tool `t` once per id."""
    return AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": i} for i in ids])


def tool(i: str, text: str = "ok") -> ToolMessage:
    """A tool result for call `i`."""
    return ToolMessage(text, tool_call_id=i)


def test_valid_history_has_no_violations() -> None:
    """A paired, parallel tool round is valid."""
    h = [
        SystemMessage("s"),
        HumanMessage("q"),
        calls("1", "2"),
        tool("2"),
        tool("1"),
        AIMessage("a"),
    ]
    assert validate_history(h) == []


def test_ids_may_repeat_across_blocks() -> None:
    """The same id reused in a later round pairs with its own call."""
    h = [HumanMessage("q"), calls("1"), tool("1"), calls("1"), tool("1")]
    assert validate_history(h) == []


def test_each_violation_kind() -> None:
    """Leading, orphan, duplicate and missing results are each reported."""
    h = [
        tool("x"),
        HumanMessage("q"),
        calls("1", "2"),
        tool("1"),
        tool("1"),
        HumanMessage("next"),
        tool("9"),
    ]
    kinds = [(v.kind, v.index, v.tool_call_id) for v in validate_history(h)]
    assert kinds == [
        ("leading_tool_result", 0, "x"),
        ("duplicate_tool_result", 4, "1"),
        ("missing_tool_result", 2, "2"),
        ("orphan_tool_result", 6, "9"),
    ]


def test_result_after_human_message_is_orphan() -> None:
    """A result separated from its call by a user message is an orphan; the call is dangling."""
    h = [HumanMessage("q"), calls("1"), HumanMessage("hey"), tool("1")]
    kinds = sorted(v.kind for v in validate_history(h))
    assert kinds == ["missing_tool_result", "orphan_tool_result"]


def test_pending_calls_allowed_at_the_end_when_asked() -> None:
    """Unanswered calls in the final AI message are accepted only when allowed."""
    h = [HumanMessage("q"), calls("1")]
    assert [v.kind for v in validate_history(h)] == ["missing_tool_result"]
    assert validate_history(h, allow_pending_tool_calls=True) == []


def test_openai_dicts_are_accepted() -> None:
    """OpenAI-style dicts are validated like message objects."""
    h = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "1", "type": "function", "function": {"name": "t", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "1", "content": "r"},
    ]
    assert validate_history(h) == []


def test_repair_synthesizes_and_drops_and_reports() -> None:
    """repair_history adds cancelled results, drops orphans, keeps all user/AI text."""
    h = [tool("x"), HumanMessage("q"), calls("1", "2"), tool("1"), HumanMessage("more"), tool("7")]
    fixed = repair_history(h)
    assert fixed.changed
    assert [m.type for m in fixed.messages] == ["human", "ai", "tool", "tool", "human"]
    synthetic = fixed.messages[3]
    assert isinstance(synthetic, ToolMessage)
    assert (synthetic.tool_call_id, synthetic.status, synthetic.content) == (
        "2",
        "error",
        CANCELLED_TOOL_RESULT,
    )
    assert {v.kind for v in fixed.changes} == {
        "leading_tool_result",
        "missing_tool_result",
        "orphan_tool_result",
    }
    assert validate_history(fixed.messages) == []
    assert [m.content for m in h if isinstance(m, HumanMessage)] == ["q", "more"]


def test_repair_of_valid_history_is_identity() -> None:
    """A valid history comes back unchanged with no changes reported."""
    h = [HumanMessage("q"), calls("1"), tool("1")]
    fixed = repair_history(h)
    assert not fixed.changed
    assert fixed.messages == h


def test_group_tool_rounds_and_cut_points() -> None:
    """Units keep a call with its results; cut points fall between units."""
    h = [
        SystemMessage("s"),
        HumanMessage("q"),
        calls("1", "2"),
        tool("1"),
        tool("2"),
        AIMessage("a"),
    ]
    assert group_tool_rounds(h) == [(0, 1), (1, 2), (2, 5), (5, 6)]
    assert safe_cut_points(h) == [0, 1, 2, 5, 6]
    assert safe_cut_points([]) == [0]


@settings(max_examples=300, deadline=None)
@given(arbitrary_histories())
def test_repair_always_yields_valid_history(history: list) -> None:
    """Whatever the input, repair_history's output passes validate_history."""
    fixed = repair_history(history)
    assert validate_history(fixed.messages) == []
    kept_text = [m for m in fixed.messages if not isinstance(m, ToolMessage)]
    assert kept_text == [m for m in history if not isinstance(m, ToolMessage)]


@settings(max_examples=200, deadline=None)
@given(valid_histories())
def test_generated_valid_histories_validate(history: list) -> None:
    """The valid-history strategy only produces valid histories (sanity of the generator)."""
    assert validate_history(history) == []


def test_repeated_call_id_in_one_message_accepts_one_result_per_call() -> None:
    """Two calls with id "0" (as some servers send) take two results; a third is a duplicate."""
    h = [HumanMessage("weather?"), calls("0", "0"), tool("0", "Paris"), tool("0", "Rome")]
    assert validate_history(h) == []
    assert repair_history(h).messages == h
    extra = [*h, tool("0", "Oslo")]
    assert [v.kind for v in validate_history(extra)] == ["duplicate_tool_result"]
    short = [HumanMessage("weather?"), calls("0", "0"), tool("0", "Paris"), HumanMessage("hm")]
    fixed = repair_history(short)
    assert [v.kind for v in fixed.changes] == ["missing_tool_result"]
    assert [m.content for m in fixed.messages][2:4] == ["Paris", CANCELLED_TOOL_RESULT]


def _anthropic_history(rounds: int) -> list[BaseMessage]:
    """A history built from Anthropic-native dicts: tool_use / tool_result blocks only."""
    raw: list[dict[str, Any]] = [{"role": "user", "content": "read the files"}]
    for i in range(rounds):
        raw.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"reading f{i}"},
                    {"type": "tool_use", "id": f"toolu_{i}", "name": "read", "input": {}},
                ],
            }
        )
        raw.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x " * 300}
                ],
            }
        )
    raw.append({"role": "user", "content": "summarise"})
    return list(convert_to_messages(raw))


def _native_pairs_intact(messages: list[BaseMessage]) -> bool:
    """Every kept tool_use block is answered by the next message, and vice versa."""
    for i, message in enumerate(messages):
        blocks = message.content if isinstance(message.content, list) else []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                after = messages[i + 1].content if i + 1 < len(messages) else ""
                answers = [b.get("tool_use_id") for b in after if isinstance(b, dict)]
                if isinstance(after, str) or block["id"] not in answers:
                    return False
            if block.get("type") == "tool_result":
                before = messages[i - 1].content if i > 0 else ""
                calls = [b.get("id") for b in before if isinstance(b, dict)]
                if isinstance(before, str) or block["tool_use_id"] not in calls:
                    return False
    return True


def test_anthropic_native_tool_blocks_pair_like_tool_messages() -> None:
    """tool_use and tool_result blocks are one unit; no strategy separates them."""
    history = _anthropic_history(4)
    assert all(not getattr(m, "tool_calls", None) for m in history)  # blocks only
    assert group_tool_rounds(history)[:3] == [(0, 1), (1, 3), (3, 5)]
    orphan = [history[0], history[2]]
    assert [v.kind for v in validate_history(orphan)] == ["orphan_tool_result"]
    assert repair_history(orphan).messages == [history[0]]
    for strategy in ("drop_oldest", "drop_middle", "auto"):
        result = compact_messages(history, target_tokens=500, strategy=strategy, snapshot=False)
        assert _native_pairs_intact(result.messages), strategy
        assert validate_history(result.messages) == []
