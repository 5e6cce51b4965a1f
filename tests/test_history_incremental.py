"""A history checked before is walked again only past the part it shares, with the same result."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_context import create_context_agent
from langgraph_context.messages import _coerce, _history, repair_history, validate_history
from langgraph_context.messages._coerce import CLEAN_HISTORIES
from langgraph_context.testing import ScriptedChatModel, ai_calls, tool_call
from tests.test_history_hostile import FAST, _openai_histories


@FAST
@given(_openai_histories(), _openai_histories(), st.booleans(), st.integers(0, 12))
def test_walk_past_a_remembered_prefix_equals_a_walk_from_the_start(
    first: list[BaseMessage], tail: list[BaseMessage], allow_pending: bool, cut: int
) -> None:
    """Repair and validate of a clean prefix plus anything equal a walk from the start."""
    base = repair_history(first).messages
    assert repair_history(base).changes == ()  # clean: remembered
    history = [*base[:cut], *tail]
    if base[:cut]:
        assert CLEAN_HISTORIES.matched(history)[0] >= len(base[:cut])
    warm = repair_history(history, allow_pending_tool_calls=allow_pending)
    warm_found = validate_history(history, allow_pending_tool_calls=allow_pending)
    CLEAN_HISTORIES.clear()
    cold = repair_history(history, allow_pending_tool_calls=allow_pending)
    assert warm.changes == cold.changes
    assert warm.messages == cold.messages
    assert [m.id for m in warm.messages] == [m.id for m in cold.messages]
    CLEAN_HISTORIES.clear()
    assert warm_found == validate_history(history, allow_pending_tool_calls=allow_pending)


def test_a_duplicate_result_after_a_remembered_block_is_still_found() -> None:
    """A second result for a call answered in the remembered part is dropped and reported."""
    call = AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": "c1"}])
    base = [HumanMessage("go"), call, ToolMessage("r", tool_call_id="c1")]
    assert repair_history(base).changes == ()
    fixed = repair_history([*base, ToolMessage("again", tool_call_id="c1")])
    assert [v.kind for v in fixed.changes] == ["duplicate_tool_result"]
    assert fixed.changes[0].index == 3
    assert fixed.messages == base


def test_a_history_is_forgotten_with_its_first_message() -> None:
    """The memo keeps no message alive and drops a history whose first message is freed."""
    before = len(CLEAN_HISTORIES)
    history = [HumanMessage(f"only here {id(object())}"), AIMessage("a")]
    repair_history(history)
    assert len(CLEAN_HISTORIES) == before + 1
    del history
    gc.collect()
    assert len(CLEAN_HISTORIES) == before


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the messages the pairing walk and the shape checks go through."""
    seen = {"walked": 0, "checked": 0}
    walk, check = _history._walk, _coerce._check_message

    def counted_walk(items: list[BaseMessage], **kwargs: Any) -> Any:
        seen["walked"] += len(items)
        return walk(items, **kwargs)

    def counted_check(message: BaseMessage, where: str) -> None:
        seen["checked"] += 1
        check(message, where)

    monkeypatch.setattr(_history, "_walk", counted_walk)
    monkeypatch.setattr(_coerce, "_check_message", counted_check)
    return seen


def test_each_model_call_checks_only_what_was_appended(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over a 60-call thread the history is checked per call by its new messages, not whole."""
    calls = 60
    replies = [
        ai_calls(tool_call("write_note", {"file_name": f"n{k}", "content": "v"}, f"c{k}"))
        for k in range(calls - 1)
    ] + [AIMessage("done")]
    agent = create_context_agent(
        ScriptedChatModel(responses=replies), max_tokens=200_000, checkpointer=InMemorySaver()
    )
    seen = _counting(monkeypatch)
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 4 * calls}
    out = agent.invoke({"messages": [("user", "take notes")]}, config)
    assert len(out["messages"]) == 2 * calls  # nothing compacted: the history only grows
    # From scratch, the four checks of each call would go through the whole history:
    # about 4 * 60 * 60 = 14,400 messages walked. Incremental: a few per check.
    assert seen["walked"] <= 12 * calls, seen
    assert seen["checked"] <= 40 * calls, seen
