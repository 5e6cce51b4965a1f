"""Transcript loaders on small hand-written fixtures (not copies of shared data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_context.compaction import compact_messages
from langgraph_context.messages import validate_history
from langgraph_context.transcripts import load_claude_code_session, load_openai_transcript

FIXTURES = Path(__file__).parent / "fixtures"


def test_claude_code_session_structure() -> None:
    """Streamed assistant lines merge, late parallel results regroup, bookkeeping is skipped."""
    messages = load_claude_code_session(FIXTURES / "claude_code_session.jsonl")
    assert [type(m).__name__ for m in messages] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "AIMessage",
        "ToolMessage",
        "HumanMessage",
        "AIMessage",
    ]
    first_ai = messages[1]
    assert isinstance(first_ai, AIMessage)
    assert first_ai.content == "Reading the router and the test."
    assert [tc["id"] for tc in first_ai.tool_calls] == ["toolu_A", "toolu_B"]
    assert first_ai.tool_calls[0]["args"] == {"file_path": "lib/web/router.ex"}
    assert [m.tool_call_id for m in messages[2:4]] == ["toolu_A", "toolu_B"]  # type: ignore[attr-defined]
    assert messages[3].content == "defmodule Web.RouterTest do\n[image]"
    assert messages[3].name == "Read"
    error = messages[5]
    assert isinstance(error, ToolMessage)
    assert error.status == "error"
    assert error.name == "Bash"
    assert messages[6].content == "Use Plug.Router, not Phoenix."
    assert validate_history(messages) == []


def test_claude_code_thinking_and_sidechains_are_optional() -> None:
    """Thinking blocks and sidechain events are kept only when asked for."""
    lines = (FIXTURES / "claude_code_session.jsonl").read_text().splitlines()
    messages = load_claude_code_session(lines, include_thinking=True, include_sidechains=True)
    assert messages[1].content.startswith("[thinking] Look at the router first.")
    assert any(m.content == "sub-agent chatter" for m in messages)


def test_claude_code_accepts_parsed_events() -> None:
    """Already-parsed dict events are accepted."""
    events = [
        {"type": "user", "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "message": {"id": "m", "content": "plain reply"}},
    ]
    messages = load_claude_code_session(events)
    assert [(m.type, m.content) for m in messages] == [("human", "hi"), ("ai", "plain reply")]


def test_claude_code_bad_json_line_raises() -> None:
    """A broken line raises ValueError with its line number."""
    with pytest.raises(ValueError, match="line 2 of the session is not valid JSON"):
        load_claude_code_session(['{"type": "user"}', "{not json"])


def test_openai_trajectory_with_repeated_ids() -> None:
    """A tau-bench style item loads; results pair with the call right before them."""
    messages = load_openai_transcript(FIXTURES / "openai_trajectory.json")
    assert isinstance(messages[0], SystemMessage)
    assert isinstance(messages[1], HumanMessage)
    calls = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls]
    assert [c.tool_calls[0]["name"] for c in calls] == [
        "get_reservation_details",
        "cancel_reservation",
    ]
    assert calls[0].tool_calls[0]["args"] == {"reservation_id": "QX81ZB"}
    assert [m.tool_call_id for m in messages if isinstance(m, ToolMessage)] == ["call_1", "call_1"]
    assert validate_history(messages) == []


def test_openai_plain_list_and_messages_key() -> None:
    """A bare list and a {'messages': [...]} mapping load alike."""
    data = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": None}]
    assert [m.content for m in load_openai_transcript(data)] == ["hello", ""]
    assert len(load_openai_transcript({"messages": data})) == 2


def test_openai_bad_sources_raise(tmp_path: Path) -> None:
    """Sources without a message list, or with malformed messages, raise ValueError."""
    with pytest.raises(ValueError, match="must be a list of OpenAI-style message dicts"):
        load_openai_transcript({"something": 1})
    with pytest.raises(ValueError, match="could not convert a message"):
        load_openai_transcript([{"role": "wizard", "content": "x"}])
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traj": "not a list"}))
    with pytest.raises(ValueError, match="got str"):
        load_openai_transcript(path)


def test_loaded_session_compacts_validly() -> None:
    """A loaded session can be compacted directly and stays valid."""
    messages = load_claude_code_session(FIXTURES / "claude_code_session.jsonl")
    result = compact_messages(messages, target_tokens=120)
    assert validate_history(result.messages) == []
    assert result.stats.within_budget


def test_claude_reply_split_by_tool_results_gets_unique_ids() -> None:
    """Pieces of one API reply logged around tool results become messages with distinct ids."""
    import json

    from langgraph.graph.message import add_messages

    from langgraph_context.messages import validate_history
    from langgraph_context.transcripts import load_claude_code_session

    def assistant(block: dict) -> str:
        return json.dumps(
            {
                "type": "assistant",
                "message": {"id": "msg_1", "role": "assistant", "content": [block]},
            }
        )

    def result(call_id: str) -> str:
        content = [{"type": "tool_result", "tool_use_id": call_id, "content": "ok"}]
        return json.dumps({"type": "user", "message": {"role": "user", "content": content}})

    lines = [
        json.dumps({"type": "user", "message": {"role": "user", "content": "go"}}),
        assistant({"type": "tool_use", "id": "a", "name": "Read", "input": {"file_path": "x"}}),
        result("a"),
        assistant({"type": "tool_use", "id": "b", "name": "Read", "input": {"file_path": "y"}}),
        result("b"),
    ]
    messages = load_claude_code_session(lines)
    ids = [m.id for m in messages if m.type == "ai"]
    assert len(ids) == 2
    assert len(set(ids)) == 2
    merged = add_messages([], messages)
    assert len(merged) == len(messages)
    assert validate_history(merged) == []
