"""Smoke tests of the bill benchmark: its arithmetic and one replay through real graphs."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from benchmarks.bill.__main__ import load_sessions
from benchmarks.bill.configs import configurations
from benchmarks.bill.generated import generated_session
from benchmarks.bill.meter import Meter, price, request_chunks
from benchmarks.bill.replay import ReplayTool, run_session

SONNET = {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0}


def test_prefix_and_price_of_a_hand_made_pair() -> None:
    """The cached part is the token-level common prefix; uncached tokens pay the write rate."""
    meter = Meter(encode=list)  # one token per character: the arithmetic is exact
    first = meter.measure(["TOOLS", "sys-1", "hello"])
    second = meter.measure(["TOOLS", "sys-2", "hello", "world"])
    assert first == (15, 0)
    assert second == (20, 9)  # "TOOLS" (5) + "sys-" (4), then the prefix breaks
    assert price(*second, SONNET) == pytest.approx((11 * 3.75 + 9 * 0.3) / 1e6)


def test_a_request_extending_the_previous_one_is_all_cached() -> None:
    """An append-only request repeats the whole previous request."""
    meter = Meter(encode=list)
    meter.measure(["ab", "cd"])
    assert meter.measure(["ab", "cd", "ef"]) == (6, 4)


def test_requests_serialize_as_openai_chat_messages() -> None:
    """Messages become compact OpenAI chat dicts; the tool list comes first."""
    chunks, system = request_chunks([SystemMessage("s"), HumanMessage("hi")], [{"t": 1}])
    assert chunks == [
        '[{"t":1}]',
        '{"content":"s","role":"system"}',
        '{"content":"hi","role":"user"}',
    ]
    assert system == [True, True, False]


def test_replay_through_compiled_graphs() -> None:
    """The bare agent caches every previous request whole; ours replays the same script."""
    session = generated_session(12, seed=3, window=2_000)
    by_name = {c.name: c for c in configurations()}
    log, _, state = run_session(session, by_name["bare create_agent"].build)
    assert len(log.tokens) == session.calls == 12
    assert log.cached[0] == 0
    assert log.cached[1:] == log.tokens[:-1]
    assert log.rewrites == 0
    assert all(f in log.texts[session.probe] for f in session.facts)
    ours = by_name["ours create_context_agent"]
    log, _, state = run_session(session, ours.build, skip=ours.native_tools)
    assert len(log.tokens) == 12
    assert log.exhausted == 0
    assert [p["content"] for p in state["plan"]][:1] == ["Map the ingest pipeline modules"]


def test_a_session_without_tools_is_still_metered() -> None:
    """An agent with no tools never binds them; its calls are still agent calls."""
    session = generated_session(12, seed=3, window=2_000)
    session.tool_args = {}
    session.script = [m.model_copy(update={"tool_calls": []}) for m in session.script]
    session.turns = [[f"question {i}"] for i in range(12)]
    log, summarizer, _ = run_session(session, configurations()[0].build)
    assert len(log.tokens) == 12
    assert summarizer.calls == 0


def test_replay_tool_refuses_plain_runs() -> None:
    """A replay tool only answers tool calls (it needs the call id)."""
    tool = ReplayTool(name="t", description="d", args_schema={"type": "object"}, outputs={})
    with pytest.raises(NotImplementedError, match="tool calls only"):
        tool._run()


def test_missing_data_stops_with_a_hint(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """Without the shared data the run stops and names LGC_DATA_DIR."""
    monkeypatch.setenv("LGC_DATA_DIR", str(tmp_path))
    with pytest.raises(SystemExit, match="LGC_DATA_DIR"):
        load_sessions(quick=True, tau=1)
